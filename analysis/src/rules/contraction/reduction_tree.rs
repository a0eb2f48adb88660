//! The reduction tree of `.contract()`: it removes the innermost 2^n positions of the packet
//! (CON-011), and the Reducer keeps 32 columns of each Row's output (CON-012). Its max mode
//! (CON-013) has no API the manual documents.

use super::layouts::{at, layout, m, spatial_depth, strip, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::{Slot, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_011: Rule = Rule {
    code: "CON-011",
    name: "spatial-reduction-innermost",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "contract::<OutPacket>() removes the innermost 2^n packet positions, n <= tree depth",
    docs: "The reduction tree sums pairs level by level: depth n removes the innermost \
           `Packet % 2^n` and leaves `Packet / 2^n` (bf16 depth <= 5, i8/f8 <= 6, i4 <= 7). \
           The contract OutPacket must be one of these: from `m![L, K]` (L = 2, K = 16) the \
           outputs are `m![L, K]`, ..., `m![L]` (depth 4), `m![1]` (depth 5); `m![K]` removes an \
           outer factor and cannot be built.",
    bad: "input.align::<m![M], m![L, K], _, _>(&trf).contract::<m![K]>()",
    good: "input.align::<m![M], m![L, K], _, _>(&trf).contract::<m![L]>()",
    manual: "L4384-L4392, L4530-L4531",
    generations: Generations::Both,
};

pub const CON_012: Rule = Rule {
    code: "CON-012",
    name: "spatial-output-32",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Reducer outputs at most 32 i32/f32 elements per Row per cycle",
    docs: "After the tree each Row's output is resized to 32 columns; with tree depth 0 (no \
           spatial reduction) the outer elements are truncated, so a contract OutPacket of more \
           than 32 elements (64 i8, 128 i4) is invalid. Reduce at least `Packet % 2` (i8) or \
           `Packet % 4` (i4).",
    bad: "axes![K = 64]; // i8\ninput.align::<m![M], m![K], _, _>(&trf).contract::<m![K]>()",
    good: "axes![K = 64]; // i8\ninput.align::<m![M], m![K], _, _>(&trf).contract::<m![K / 2]>()",
    manual: "L4396-L4398, L4531-L4532",
    generations: Generations::Both,
};

pub const CON_013: Rule = Rule {
    code: "CON-013",
    name: "reduce-max-single-row",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the manual documents no API that selects the Reducer's max mode: `contract()` takes only \
         OutPacket and dumps show only reduce_op = Add (L3715; constraints.md §22 A-20)",
    ),
    summary: "Reduce-max contraction uses only Row 0 (Row::SIZE must be 1)",
    docs: "The reduction tree's max mode supports a single Row, at 1/8 of the add throughput. No \
           operation selector exists in the documented API, so visa-lint cannot see a max \
           contraction.",
    bad: "",
    good: "",
    manual: "L4394-L4395, L4533",
    generations: Generations::Both,
};

/// CON-011 and CON-012 on a `.contract()`.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let Some(d) = input.dtype else {
        return;
    };
    let Some(depth) = cx
        .target
        .tree_depth(cx.conversions().contraction_operand(d))
    else {
        return;
    };
    let (Some(p), Some(q)) = (layout(input, Slot::Packet), layout(output, Slot::Packet)) else {
        return;
    };
    if d.size_bytes(p.size) != Some(cx.target.mac_width_bytes) {
        return; // CON-004 reports the packet
    }
    let options: Vec<(u32, Layout)> = (0..=depth)
        .filter_map(|n| {
            let s = 1u64.checked_shl(n)?;
            p.size.is_multiple_of(s).then(|| (n, p.stride(s)))
        })
        .collect();
    let span = at(step, 0, Slot::Packet);
    let cols = cx.target.reducer_columns;
    match spatial_depth(p, q, depth) {
        Some(n) => {
            if q.size > cols {
                out.push(at_arg(
                    &CON_012,
                    step,
                    span,
                    format!(
                        "contract OutPacket {} has {} elements (tree depth {n}); the Reducer resizes \
                         each Row's output to {cols} columns and truncates the rest: reduce at least \
                         the innermost {} positions",
                        text(output, Slot::Packet),
                        q.size,
                        q.size.div_ceil(cols)
                    ),
                ));
            }
        }
        None => {
            let shown: Vec<String> = options
                .iter()
                .rev()
                .filter(|(_, l)| l.size <= cols)
                .take(4)
                .map(|(n, l)| format!("{} (depth {n})", strip(l).map_or_else(|| m(l), |s| m(&s))))
                .collect();
            out.push(at_arg(
                &CON_011,
                step,
                span,
                format!(
                    "the reduction tree removes the innermost 2^n positions of the packet {} (n ≤ {depth} \
                     for {d}), leaving Packet / 2^n; contract OutPacket {} is not one of them: {}",
                    text(input, Slot::Packet),
                    text(output, Slot::Packet),
                    shown.join(", ")
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layouts::spatial_depth;
    use super::super::tests::lay;
    use crate::model::Dtype;
    use crate::target::RNGD;

    #[test]
    fn tree_depths_golden() {
        // L4388: i4 depth 7 (128 elements), i8/f8 6 (64), bf16 5 (32): a full 64-byte packet.
        for (d, depth, elems) in [
            (Dtype::I4, 7, 128),
            (Dtype::I8, 6, 64),
            (Dtype::F8, 6, 64),
            (Dtype::Bf16, 5, 32),
        ] {
            assert_eq!(RNGD.tree_depth(d), Some(depth));
            assert_eq!(1u64 << depth, elems);
            assert_eq!(d.elems_for(RNGD.mac_width_bytes), Some(elems));
        }
        assert_eq!(RNGD.tree_depth(Dtype::F32), None);
        // L4351: 32 bf16 of B reduce to one value with depth 5.
        assert_eq!(
            spatial_depth(&lay("B = 32", "B"), &lay("B = 32", "1"), 5),
            Some(5)
        );
        // L4467-L4468: K % 16 # 32 reduces to K % 16 / 4 with depth 2.
        let k = "K = 64";
        assert_eq!(
            spatial_depth(&lay(k, "K % 16 # 32"), &lay(k, "K % 16 / 4"), 5),
            Some(2)
        );
        // L3870: [L, K] contracts to L (depth 4); K is an outer factor.
        let a = "K = 16, L = 2";
        assert_eq!(spatial_depth(&lay(a, "L, K"), &lay(a, "L"), 5), Some(4));
        assert_eq!(spatial_depth(&lay(a, "L, K"), &lay(a, "K"), 5), None);
    }
}

//! VEC-006: the Narrow and Widen steps come in pairs. `vector_split` moves the upper half of
//! each 8-lane packet into Time and `vector_concat` undoes it; `vector_trim_way4` keeps lanes
//! 0-3 and `vector_pad_way8` pads them back to 8. Mixing the pairs, widening a stream nothing
//! narrowed, or a Narrow packet that is not 4 lanes (Widen: 8) does not describe the hardware
//! flit. One mix is accepted: `vector_pad_way8` after a split whose Time factor an op in
//! between has reduced away. The fixes derive the packet trim keeps, pad a Widen packet to 8
//! lanes, and turn a `vector_pad_way8` after a split into the `vector_concat` that reverses it.

use super::ops::{layout, valid_lanes};
use super::pass::Pass;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::{Arg, Method, Slot, Step, pad_edit};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_006: Rule = Rule {
    code: "VEC-006",
    name: "vector-narrow-widen-pairing",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`vector_concat` reverses `vector_split`, `vector_pad_way8` reverses `vector_trim_way4`; Way4 packets have 4 lanes, Way8 packets 8",
    docs: "Split moves the upper half of each 8-lane packet into Time ([T],[P] → [T, P / 2],[P % 4]) \
           and concat undoes it; trim keeps lanes 0-3 ([P] → [P = 4]) and pad_way8 pads them back \
           to 8 ([P] → [P # 8]). Mixing the two pairs, widening a stream that was never narrowed, \
           or a Narrow packet that is not 4 lanes (Widen: 8 lanes) does not describe the hardware \
           flit. Pad the packet: `m![A % 2 # 4]` after trim, `m![A % 2 # 8]` after pad_way8. \
           One mix is accepted: `vector_pad_way8` after `vector_split` once an op in between \
           (such as `vector_intra_slice_reduce`) has removed the Time factor the split made, so \
           there is nothing left for concat to join. The library checks the shapes only \
           (\"vector_pad_way8: input Packet must have 4 elements\", \"Packet2 must be Packet padded \
           to 8\", \"Concat requires Packet of 4 elements\"), not the pairing; the pairing stays an \
           error here because a pad_way8 that leaves the split's lanes in Time (or a concat that \
           joins a Time factor trim never made) produces a different layout from the one the \
           narrowing started from, which is what the manual's pairs are for.",
    bad: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 2]>()",
    good: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4843-L4873, L4919-L4947",
    generations: Generations::Both,
};

/// VEC-006 packet of a Narrow step: at most 4 lanes (the manual's reduce examples narrow to
/// packets of 2 or 3 positions, so smaller ones are accepted).
pub(super) fn narrow_shape(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n4 = cx.target.ve_way4_lanes;
    let arg = match step.method {
        Method::VectorTrimWay4 => step.generics.first(),
        _ => step.generics.get(1),
    };
    if let (Some(a), Some(l)) = (arg, layout(step.output.as_ref(), Slot::Packet))
        && l.size > n4
    {
        let d = Diagnostic::new(
            &VEC_006,
            a.span,
            format!(
                "a Way4 packet has {n4} lanes; `{}` has {} positions",
                a.text.trim(),
                l.size
            ),
        );
        out.push(trim_fix(d, step, a, n4));
    }
}

/// VEC-006's fix of a `vector_trim_way4` packet wider than 4 lanes: the packet trim derives
/// (`[P]` → `[P = 4]`), when the lanes it drops hold only padding (otherwise trimming loses
/// data, VEC-007, and the stream needs `vector_split` instead: no fix). Unsafe: later steps
/// may spell out the packet as written.
fn trim_fix(diag: Diagnostic, step: &Step, arg: &Arg, n4: u64) -> Diagnostic {
    let kept = (|| {
        if step.method != Method::VectorTrimWay4 {
            return None;
        }
        let input = layout(step.input.as_ref(), Slot::Packet)?;
        let lanes = valid_lanes(input)?;
        Some(if lanes.iter().all(|&i| i < n4) {
            Ok(input.window(n4))
        } else {
            Err(())
        })
    })();
    let kept = match kept {
        Some(Ok(kept)) => kept,
        Some(Err(())) => {
            let mut diag = diag;
            diag.message.push_str(&format!(
                "; no {n4}-lane packet fits, because the incoming packet holds data beyond lane \
                 {}: trimming would drop it (VEC-007), so split the stream with `vector_split` \
                 and widen it back with `vector_concat`",
                n4 - 1
            ));
            return diag;
        }
        None => return diag,
    };
    let text = format!("m![{}]", kept.to_expr());
    diag.with_edit(
        format!("keep the {n4} lanes `vector_trim_way4` keeps: `{text}`"),
        false,
        arg.span,
        text,
    )
}

/// VEC-006 at a Widen step: it reverses the step that narrowed the stream (`vector_concat` a
/// split, `vector_pad_way8` a trim), and something narrowed it.
pub(super) fn pairing(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    match p.narrow {
        Some(n) if p.way4 => {
            let want = if n.method == Method::VectorSplit {
                Method::VectorConcat
            } else {
                Method::VectorPadWay8
            };
            let split_gone = n.method == Method::VectorSplit
                && *m == Method::VectorPadWay8
                && !split_lanes_in_time(n, step);
            if *m != want && !split_gone {
                let diag = Diagnostic::new(
                    &VEC_006,
                    step.span,
                    format!(
                        "`{m}` does not reverse `{}`: widen a split with \
                         `vector_concat` and a trim with `vector_pad_way8`",
                        n.method
                    ),
                )
                .with_related(n.span, "the stream was narrowed here");
                out.push(concat_fix(diag, n, step));
            }
        }
        _ if !p.way4 => {
            out.push(Diagnostic::new(
                &VEC_006,
                step.span,
                format!(
                    "`{m}` widens a Way4 stream back to Way8, but this stream is Way8 \
                     (nothing narrowed it)"
                ),
            ));
        }
        _ => {}
    }
}

/// Whether the Time that reaches `widen` still ends with the factor `split` moved out of the
/// packet (its output Time's innermost 2 positions), i.e. whether `vector_concat` could put
/// lanes 4-7 back. An op in between (`vector_intra_slice_reduce`) may have reduced it away;
/// then `vector_pad_way8` is the only widen. Unknown layouts count as gone (no finding).
fn split_lanes_in_time(split: &Step, widen: &Step) -> bool {
    let (Some(after_split), Some(now)) = (
        layout(split.output.as_ref(), Slot::Time),
        layout(widen.input.as_ref(), Slot::Time),
    ) else {
        return false;
    };
    if !after_split.size.is_multiple_of(2) || !now.size.is_multiple_of(2) {
        return false;
    }
    after_split.window(2) == now.window(2)
}

/// VEC-006's fix of a `vector_pad_way8` after a `vector_split`: `vector_concat` back to the
/// Time and Packet the split started from. Unsafe: the stream after it has the split's Time
/// undone, which later steps may spell out.
fn concat_fix(diag: Diagnostic, split: &Step, widen: &Step) -> Diagnostic {
    let fix = (|| {
        if split.method != Method::VectorSplit || widen.method != Method::VectorPadWay8 {
            return None;
        }
        let arg = widen.generics.first()?;
        let t = layout(split.input.as_ref(), Slot::Time)?;
        let p = layout(split.input.as_ref(), Slot::Packet)?;
        let args = format!("m![{}], m![{}]", t.to_expr(), p.to_expr());
        Some((arg.span, args))
    })();
    let Some((at, args)) = fix else { return diag };
    diag.with_fix(
        format!("widen with `vector_concat::<{args}>()`, which reverses the split"),
        false,
        vec![
            Edit {
                span: widen.span,
                new_text: "vector_concat".to_string(),
            },
            Edit {
                span: at,
                new_text: args,
            },
        ],
    )
}

/// VEC-006 packet of a Widen step (8 lanes).
pub(super) fn widen_shape(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n8 = cx.target.ve_way8_lanes;
    let arg = match step.method {
        Method::VectorPadWay8 => step.generics.first(),
        _ => step.generics.get(1),
    };
    if let (Some(a), Some(l)) = (arg, layout(step.output.as_ref(), Slot::Packet))
        && l.size != n8
    {
        let mut d = Diagnostic::new(
            &VEC_006,
            a.span,
            format!(
                "a Way8 packet has {n8} lanes; `{}` has {} positions",
                a.text.trim(),
                l.size
            ),
        );
        // Padded where it is written: in place, or an alias replaced at this use.
        if l.size < n8
            && let Some(edit) = pad_edit(cx.scope, a, n8)
        {
            d = d.with_edit(
                format!("pad the packet to {n8} lanes: `{}`", edit.new_text),
                true,
                edit.span,
                edit.new_text,
            );
        }
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pad_way8_after_split_fix_concats() {
        use crate::rules::fix_testing::assert_fix_clears;
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/VEC-006.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains(".vector_concat::<m![1], m![A % 8]>()"),
            "{fixed}"
        );
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/VEC-006-reduced-split.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains(".vector_concat::<m![G % 2, K / 8], m![K % 8]>()"),
            "{fixed}"
        );
    }

    #[test]
    fn trim_way4_fix_keeps_the_padded_lanes() {
        use crate::rules::fix_testing::assert_fix_clears;
        // L6003: the trim keeps lanes 0-3 of `m![R # 24 / 8 # 8]`, whose lanes 3-7 are padding.
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/manual/6003_vcg_packet_not_innermost_err.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains("vector_trim_way4::<m![R # 24 / 8 # 4]>()"),
            "{fixed}"
        );
        // L6072: A's lanes lie past lane 3; no trim keeps them, and the message says so.
        let diags = crate::check_text(include_str!(
            "../../../../fixtures/manual/6072_vcg_mixed_packet_axes_err.rs"
        ));
        let d = diags.iter().find(|d| d.code() == "VEC-006");
        assert!(
            d.is_some_and(|d| d.fixes.is_empty() && d.message.contains("vector_split")),
            "{d:?}"
        );
    }
}

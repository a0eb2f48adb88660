//! VEC-016: Logic, Fxp and Clip process 8 lanes per cycle, the Float cluster and the reduce 4
//! (cost-model.md P19). `vector_split` moves lanes 4-7 into Time, so the Way4 section carries
//! twice the packets. Reported where that cost can be avoided: a `vector_split` whose Packet
//! holds data in lanes 0-3 only (`vector_trim_way4` keeps the packet count), and a split/concat
//! pair with no float, reduce or FpDiv op between them (drop both).

use super::ops::{layout, valid_lanes, with_pad};
use super::pass::Pass;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Slot, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_016: Rule = Rule {
    code: "VEC-016",
    name: "float-path-throughput",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "The Way4 float path halves Vector Engine throughput; each ALU adds one cycle of latency",
    docs: "Logic, Fxp and Clip process 8 lanes per cycle, the Float cluster and the reduce 4 \
           (cost-model.md P19). `vector_split` moves lanes 4-7 into Time, so the Way4 section \
           carries twice the packets; `vector_trim_way4` keeps the packet count but needs lanes \
           4-7 to be padding. Reported where the cost can be avoided: a `vector_split` whose \
           Packet holds data in lanes 0-3 only (trim instead), and a split/concat pair with no \
           float, reduce or FpDiv op between them (drop both). A float path that needs both \
           halves is not reported.",
    bad: "// Packet m![A % 2 # 8]\n.vector_split::<m![B, 1 # 2], m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_concat::<m![B], m![A % 2 # 8]>()",
    good: "// Packet m![A % 2 # 8]\n.vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4847-L4851, L5257, L5272-L5277",
    generations: Generations::Both,
};

/// Flits per slice of a stream: its Time size, when known.
fn flits(ty: Option<&TensorTy>) -> Option<u64> {
    layout(ty, Slot::Time).map(|l| l.size)
}

/// VEC-016: `vector_split` moves lanes 4-7 into Time, doubling the packets of the Way4 section
/// (cost-model.md P19, L4847, L5257); when those lanes are padding, `vector_trim_way4` keeps the
/// packet count.
pub(super) fn split_where_trim_suffices(
    cx: &FnContext<'_>,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    let n4 = cx.target.ve_way4_lanes;
    if step.method != Method::VectorSplit {
        return;
    }
    let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet)) else {
        return;
    };
    let Some(lanes) = pk.layout.as_deref().and_then(valid_lanes) else {
        return;
    };
    if lanes.is_empty() || lanes.iter().any(|&i| i >= n4) {
        return;
    }
    let Some(t) = flits(step.input.as_ref()) else {
        return;
    };
    let trim = with_pad(&pk.text, n4).unwrap_or_else(|| "m![..]".to_string());
    let pad = with_pad(&pk.text, cx.target.ve_way8_lanes).unwrap_or_else(|| "m![..]".to_string());
    let msg = format!(
        "lanes {n4}-{} of Packet `{}` are padding, yet `vector_split` moves them into Time: the \
         {t} flit(s) per slice become {} packets in the Way4 section, half of them empty ({} \
         lanes per cycle instead of {}). `vector_trim_way4::<{trim}>()` keeps {t} (widen with \
         `vector_pad_way8::<{pad}>()`)",
        cx.target.ve_way8_lanes - 1,
        pk.text.trim(),
        t.saturating_mul(2),
        n4,
        cx.target.ve_way8_lanes,
    );
    out.push(Diagnostic::new(&VEC_016, step.span, msg));
}

/// VEC-016: a split/concat pair with no Way4 op between them only doubles the packet count.
pub(super) fn empty_detour(p: &Pass<'_>, widen: &Step, out: &mut Vec<Diagnostic>) {
    let Some(narrow) = p.narrow else {
        return;
    };
    if !p.way4
        || narrow.method != Method::VectorSplit
        || widen.method != Method::VectorConcat
        || p.way4_ops != 0
    {
        return;
    }
    let t = flits(narrow.input.as_ref());
    let cost = match t {
        Some(t) => format!(
            " ({t} flit(s) per slice become {} packets)",
            t.saturating_mul(2)
        ),
        None => String::new(),
    };
    let msg = format!(
        "the stream is split to Way4 and concatenated back with no float, intra-slice reduce or \
         FpDiv op in between: the detour doubles the packets{cost} and halves Vector Engine \
         throughput for nothing. Drop both `vector_split` and `vector_concat`"
    );
    out.push(
        Diagnostic::new(&VEC_016, widen.span, msg).with_related(narrow.span, "split to Way4 here"),
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::vector::tests::vec_codes;

    #[test]
    fn l4847_split_of_a_half_empty_packet_and_empty_detour() {
        // L4847-L4851: split doubles the packets; with lanes 4-7 padding trim keeps them.
        let d = vec_codes(
            "f32",
            ".vector_split::<m![1 # 2], m![A % 4]>().vector_fp_unary(FpUnaryOp::Exp)\
             .vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(!d.iter().any(|(c, _)| c == "VEC-016"), "{d:?}");
        let d = vec_codes(
            "i32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(
            d.iter()
                .any(|(c, s)| c == "VEC-016" && s == "vector_concat"),
            "{d:?}"
        );
    }
}

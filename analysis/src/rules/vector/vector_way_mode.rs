//! VEC-005: Way8 carries 8 lanes per flit, Way4 carries 4. The Float and FpDiv stages run in
//! Way4, after a Narrow step (`vector_split`, `vector_trim_way4`); Logic, Fxp, FxpToFp,
//! FpToFxp, Clip, Filter and the output run in Way8, after a Widen step (`vector_concat`,
//! `vector_pad_way8`). An op on a stream in the other mode has no hardware path; where the
//! packet allows a trim, or a trim is to be undone, the fix inserts the missing step.

use super::ops::{valid_lanes, with_pad};
use super::pass::Pass;
use super::stages::stage_name;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Method, Slot, Step, VeStage};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_005: Rule = Rule {
    code: "VEC-005",
    name: "vector-way-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Float and FpDiv run in Way4 (after Narrow); Logic, Fxp, FxpToFp, FpToFxp, Clip, Filter and Output in Way8",
    docs: "Way8 carries 8 lanes per flit, Way4 carries 4. `vector_split`/`vector_trim_way4` \
           narrow to Way4 for the float path, `vector_concat`/`vector_pad_way8` widen back. A float \
           op on a Way8 stream, or a Way8 stage (or `vector_final`) on a Way4 stream, has no \
           hardware path. (The Way4 requirement of `vector_intra_slice_reduce` is ISR-001.)",
    bad: ".vector_intra_slice_branch(BranchMode::Unconditional).vector_fp_unary(FpUnaryOp::Sigmoid)",
    good: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4731, L4733-L4747, L4804, L4822, L4845-L4847, L4875-L4876, L4915, L4954",
    generations: Generations::Both,
};

/// VEC-005: the lane mode each stage runs in.
pub(super) fn check(
    cx: &FnContext<'_>,
    p: &Pass<'_>,
    stage: VeStage,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    match stage {
        VeStage::Fp | VeStage::FpDiv if !p.way4 => float_on_way8(cx, step, out),
        VeStage::Logic
        | VeStage::Fxp
        | VeStage::FxpToFp
        | VeStage::FpToFxp
        | VeStage::Clip
        | VeStage::Filter
        | VeStage::Final
            if p.way4 =>
        {
            way8_on_way4(cx, p, stage, step, out)
        }
        _ => {}
    }
}

/// A Float or FpDiv op on a Way8 stream; the fix trims to Way4 when lanes 4-7 are padding.
fn float_on_way8(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    let way4_lanes = cx.target.ve_way4_lanes;
    let way8_lanes = cx.target.ve_way8_lanes;
    let mut d = Diagnostic::new(
        &VEC_005,
        step.span,
        format!(
            "`{m}` runs in Way4 ({way4_lanes} lanes per packet), but the stream is Way8 \
             ({way8_lanes} lanes): narrow it first with `vector_trim_way4` or `vector_split`"
        ),
    );
    if let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet))
        && let Some(l) = pk.layout.as_deref()
        && let Some(lanes) = valid_lanes(l)
        && lanes.iter().all(|&i| i < way4_lanes)
        && let Some(p4) = with_pad(&pk.text, way4_lanes)
        && let Some(p8) = with_pad(&pk.text, way8_lanes)
    {
        d = d.with_edit(
            format!(
                "narrow with `vector_trim_way4::<{p4}>()` (widen later with \
                 `vector_pad_way8::<{p8}>()`)"
            ),
            false,
            Span::new(step.span.start as usize, step.span.start as usize),
            format!("vector_trim_way4::<{p4}>()."),
        );
    }
    out.push(d);
}

/// A Way8 stage (or `vector_final`) on a Way4 stream; after a trim, the fix pads back to Way8.
fn way8_on_way4(
    cx: &FnContext<'_>,
    p: &Pass<'_>,
    stage: VeStage,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    let m = &step.method;
    let way8_lanes = cx.target.ve_way8_lanes;
    let mut d = Diagnostic::new(
        &VEC_005,
        step.span,
        format!(
            "`{m}` ({} stage) runs in Way8 ({way8_lanes} lanes per packet), but the stream is \
             still Way4: widen it first with `vector_pad_way8` or `vector_concat`",
            stage_name(stage)
        ),
    );
    if let Some(n) = p.narrow {
        d = d.with_related(n.span, "narrowed to Way4 here");
        if n.method == Method::VectorTrimWay4
            && let Some(g) = n.generics.first()
            && let Some(p8) = with_pad(&g.text, way8_lanes)
        {
            d = d.with_edit(
                format!("widen with `vector_pad_way8::<{p8}>()`"),
                false,
                Span::new(step.span.start as usize, step.span.start as usize),
                format!("vector_pad_way8::<{p8}>()."),
            );
        }
    }
    out.push(d);
}

#[cfg(test)]
mod tests {
    use crate::rules::vector::tests::vec_codes;

    #[test]
    fn way_modes_l4733() {
        // Clip after a narrow without widening: Way8 stage on a Way4 stream.
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_clip(ClipBinaryOpF32::Max, 0.0f32)",
        );
        assert_eq!(
            got,
            vec![
                ("VEC-005".into(), "vector_clip".into()),
                ("VEC-005".into(), "vector_final".into())
            ]
        );
    }
}

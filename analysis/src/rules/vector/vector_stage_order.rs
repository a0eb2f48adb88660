//! VEC-003: the intra-slice block is a fixed pipeline (Branch → Logic → Fxp → FxpToFp → Narrow →
//! Float → IntraSliceReduce → FpDiv → Widen → FpToFxp → Clip → Filter → Output), and a pass only
//! moves forward through it. Logic, Fxp, Float and Clip take several ops (on distinct ALUs,
//! VEC-004), every other stage runs once. An op that needs an earlier stage needs a second
//! Tensor Unit pass, which VEC-015 offers to split.

use super::pass::Pass;
use super::stages::{has_alu_pool, rank, stage_name};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_003: Rule = Rule {
    code: "VEC-003",
    name: "vector-stage-order",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Intra-slice stages run in hardware order, each at most once per pass (only ALU stages take several ops)",
    docs: "The intra-slice block is a fixed pipeline: Branch → Logic → Fxp → FxpToFp → Narrow → \
           Float → IntraSliceReduce → FpDiv → Widen → FpToFxp → Clip → Filter → Output. Every \
           stage is optional, but a pass only moves forward; Logic, Fxp, Float and Clip accept \
           several ops as long as they use distinct ALUs (VEC-004), the other stages run once. An \
           op that needs an earlier stage needs a second Tensor Unit pass: end the pass with \
           `vector_final()` and `commit`, then `begin` again from the intermediate in DM. VEC-015 offers the split as a quick fix.",
    bad: ".vector_clip(ClipBinaryOpI32::Max, 0).vector_fxp(FxpBinaryOp::AddFxp, 1)",
    good: ".vector_fxp(FxpBinaryOp::AddFxp, 1).vector_clip(ClipBinaryOpI32::Max, 0)",
    manual: "L4678, L4686-L4718, L4730, L4733-L4747, L4750",
    generations: Generations::Both,
};

/// VEC-003: stages move forward; non-ALU stages run once. True when the step was reported (the
/// lane mode is then not checked: it would only repeat the misorder).
pub(super) fn check<'a>(
    p: &Pass<'a>,
    stage: VeStage,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let cur = p.stage;
    if matches!(cur, VeStage::Init | VeStage::InterSliceReduce) {
        return false;
    }
    let m = &step.method;
    let back = rank(stage) < rank(cur);
    let again = stage == cur && !has_alu_pool(stage);
    if !back && !again {
        return false;
    }
    let prev = p.stage_step;
    let prev_name = prev.map_or("the chain's input".to_string(), |s| {
        format!("`{}`", s.method)
    });
    let msg = if back {
        format!(
            "`{m}` ({} stage) cannot follow {prev_name} ({} stage) in one pass: the intra-slice \
             stages run Branch → Logic → Fxp → FxpToFp → Narrow → Float → IntraSliceReduce → FpDiv → \
             Widen → FpToFxp → Clip → Filter → Output; split into two Tensor Unit passes (vector_final \
             + commit, then begin again from the intermediate)",
            stage_name(stage),
            stage_name(cur)
        )
    } else {
        format!(
            "the {} stage runs once per pass and {prev_name} already used it; split into two Tensor \
             Unit passes (vector_final + commit, then begin again from the intermediate)",
            stage_name(stage)
        )
    };
    let mut d = Diagnostic::new(&VEC_003, step.span, msg);
    if let Some(s) = prev {
        d = d.with_related(
            s.span,
            format!("the pass is already in the {} stage here", stage_name(cur)),
        );
    }
    out.push(d);
    true
}

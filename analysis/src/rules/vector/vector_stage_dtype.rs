//! VEC-008: the Fxp cluster computes on i32, the Float cluster and FpDiv on f32;
//! `vector_fxp_to_fp` converts i32 to f32 and `vector_fp_to_fxp` back, so each takes the other
//! type. Clip ops come in `ClipBinaryOpI32` and `ClipBinaryOpF32`, which must match the
//! stream's element type. (Narrow and Widen take both, constraints.md §22 A-11.)

use super::ops::parse_op;
use super::stages::stage_name;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_008: Rule = Rule {
    code: "VEC-008",
    name: "vector-stage-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Fxp and FxpToFp take i32; Float, FpDiv and FpToFxp take f32; op enums match the stream type",
    docs: "The Fxp cluster computes on i32, the Float cluster and FpDiv on f32. `vector_fxp_to_fp(w)` \
           converts i32 → f32 and `vector_fp_to_fxp(w)` converts back. Clip ops come in \
           `ClipBinaryOpI32` and `ClipBinaryOpF32`, which must match the stream's element type. \
           (The Narrow/Widen table says f32 but the manual's examples split i32 streams, \
           constraints.md §22 A-11: both are accepted.)",
    bad: "// f32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 1)",
    good: "// f32 stream\n.vector_trim_way4::<P4>().vector_fp_binary(FpBinaryOp::AddF, 1.0f32)",
    manual: "L4735-L4747, L4822, L4837-L4842, L4875, L4948-L4972",
    generations: Generations::Both,
};

/// VEC-008: the stream type a stage takes and the type of a Clip op. True when the stream's
/// type is wrong for the stage (the op is then not checked further).
pub(super) fn check(
    stage: VeStage,
    d: Option<Dtype>,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(d) = d else {
        return false;
    };
    if stream_type(stage, d, step, out) {
        return true;
    }
    if stage == VeStage::Clip {
        clip_type(d, step, out);
    }
    false
}

/// The stage's stream type: Fxp and FxpToFp take i32, Float, FpDiv and FpToFxp f32. True when
/// reported.
fn stream_type(stage: VeStage, d: Dtype, step: &Step, out: &mut Vec<Diagnostic>) -> bool {
    let m = &step.method;
    let need = match stage {
        VeStage::Fxp | VeStage::FxpToFp => Some(Dtype::I32),
        VeStage::Fp | VeStage::FpDiv | VeStage::FpToFxp => Some(Dtype::F32),
        _ => None,
    };
    let Some(need) = need else {
        return false;
    };
    if d == need || !d.is_ve_scalar() {
        return false;
    }
    let hint = match stage {
        VeStage::Fxp => "convert with `vector_fp_to_fxp(int_width)` first, or use the Float stage",
        VeStage::FxpToFp => "the stream is already f32: drop the conversion",
        VeStage::FpToFxp => "the stream is already i32: drop the conversion",
        _ => "convert with `vector_fxp_to_fp(int_width)` before narrowing",
    };
    out.push(Diagnostic::new(
        &VEC_008,
        step.span,
        format!(
            "`{m}` ({} stage) takes {need}; this stream is {d}: {hint}",
            stage_name(stage)
        ),
    ));
    true
}

/// A Clip op's enum (`ClipBinaryOpI32`, `ClipBinaryOpF32`) is the stream's type.
fn clip_type(d: Dtype, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(a) = step.args.first() else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    let want = match op.ty {
        "ClipBinaryOpI32" => Dtype::I32,
        "ClipBinaryOpF32" => Dtype::F32,
        _ => return,
    };
    if want != d && d.is_ve_scalar() {
        let other = if d == Dtype::F32 {
            "ClipBinaryOpF32"
        } else {
            "ClipBinaryOpI32"
        };
        out.push(Diagnostic::new(
            &VEC_008,
            a.span,
            format!(
                "`{}` is a {want} op; this stream is {d}: use `{other}`",
                op.ty
            ),
        ));
    }
}

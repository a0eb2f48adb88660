//! VEC-009: the Logic cluster's shifts (`LeftShift`, `LogicRightShift`, `ArithRightShift`)
//! exist for i32 only; on the bit patterns of an f32 stream it offers bitwise and, or and xor.
//! A shift is converted first (`vector_fp_to_fxp` in an earlier pass) or done in the Fxp stage
//! on an i32 stream.

use super::ops::parse_op;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_009: Rule = Rule {
    code: "VEC-009",
    name: "logic-f32-shift",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "On f32 the Logic stage only has BitAnd, BitOr and BitXor",
    docs: "The Logic cluster's shifts (`LeftShift`, `LogicRightShift`, `ArithRightShift`) exist for \
           i32 only; on f32 bit patterns it offers bitwise and/or/xor. Convert with \
           `vector_fp_to_fxp` in an earlier pass, or shift in the Fxp stage on an i32 stream.",
    bad: "// f32 stream\n.vector_logic(LogicBinaryOp::LeftShift, 1)",
    good: "// f32 stream\n.vector_logic(LogicBinaryOp::BitAnd, 0x7fff_ffff)",
    manual: "L4806-L4820",
    generations: Generations::Both,
};

/// VEC-009: no shifts in the Logic stage of an f32 stream.
pub(super) fn check(stage: VeStage, d: Option<Dtype>, step: &Step, out: &mut Vec<Diagnostic>) {
    if stage != VeStage::Logic || d != Some(Dtype::F32) {
        return;
    }
    let Some(a) = step.args.first() else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    if matches!(
        op.variant,
        "LeftShift" | "LogicRightShift" | "ArithRightShift"
    ) {
        out.push(Diagnostic::new(
            &VEC_009,
            a.span,
            format!(
                "`{}` is an i32-only Logic op; on f32 the Logic stage has BitAnd, BitOr and BitXor",
                op.variant
            ),
        ));
    }
}

//! VEC-014: a `*_with_mode` op takes the argument-mode enum of its arity: `UnaryArgMode` for
//! unary ops, `BinaryArgMode` for binary and `_zip` ops, `TernaryArgMode` for ternary ops, and
//! one of that enum's variants. A mode with a `1` reads the operand, so a single-stream op
//! given such a mode needs one.

use super::ops::{operands, parse_op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Step};
use crate::rule::{Generations, Rule, Status};

pub const VEC_014: Rule = Rule {
    code: "VEC-014",
    name: "argument-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`*_with_mode` takes the mode enum of its arity (Unary/Binary/TernaryArgMode), and a mode that reads the operand needs one",
    docs: "Unary ops take `UnaryArgMode::{Mode0, Mode1}`, binary ops (and `_zip` ops) \
           `BinaryArgMode::{Mode00, Mode01, Mode10, Mode11}`, ternary ops \
           `TernaryArgMode::{Mode012, Mode002, Mode102, Mode112, Mode020, Mode021, Mode120}`. A \
           mode with a `1` reads the operand, so a single-stream binary op with such a mode needs \
           one.",
    bad: ".vector_fxp_with_mode(FxpBinaryOp::SubFxp, UnaryArgMode::Mode1, 7)",
    good: ".vector_fxp_with_mode(FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7)",
    manual: "L5083-L5117",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no `vector_fp_unary_with_mode`: a guarded unary op is \
         `vector_fp_unary((guard, op))` \
         (`furiosa-opt-std/src/engine/vector/tensor/vector_tensor.rs:1295-1303`), so only its \
         other `*_with_mode` ops can break the rule there",
    ),
};

/// VEC-014: the mode enum of `*_with_mode` ops.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    if !m.is_with_mode() {
        return;
    }
    let Some(a) = step
        .args
        .iter()
        .find(|a| a.value_text().contains("ArgMode::"))
    else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    let (want, variants): (&str, &[&str]) = if *m == Method::VectorFpUnaryWithMode {
        ("UnaryArgMode", &["Mode0", "Mode1"])
    } else if *m == Method::VectorFpTernaryWithMode {
        (
            "TernaryArgMode",
            &[
                "Mode012", "Mode002", "Mode102", "Mode112", "Mode020", "Mode021", "Mode120",
            ],
        )
    } else {
        ("BinaryArgMode", &["Mode00", "Mode01", "Mode10", "Mode11"])
    };
    if op.ty != want {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!("`{m}` takes a `{want}`, not a `{}`", op.ty),
        ));
        return;
    }
    if !variants.contains(&op.variant) {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!(
                "`{want}::{}` is not a mode; the modes are {}",
                op.variant,
                variants.join(", ")
            ),
        ));
        return;
    }
    let zip = m.is_zip();
    if !zip && op.variant.contains('1') && operands(step).next().is_none() {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!(
                "`{want}::{}` reads the operand, but `{m}` is given none",
                op.variant
            ),
        ));
    }
}

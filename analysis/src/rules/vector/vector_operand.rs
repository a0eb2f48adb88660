//! VEC-011: a binary or ternary op's operand is a scalar constant of the stream's type
//! (broadcast to every lane), a `VrfTensor` loaded with `.to_vrf(addr)` on the stream's Chip,
//! Cluster and Slice, or `Stash` (VEC-010). A DM tensor is loaded into the VRF first. Logic ops
//! read bit patterns, so an integer mask is a valid operand on f32 there; an integer constant
//! on an f32 stream is fixed by writing it as an f32 literal.

use super::ops::{Lit, layout, literal, operand_var};
use super::stages::stage_of;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Arg, Dtype, Kind, Slot, Step, VeStage};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_011: Rule = Rule {
    code: "VEC-011",
    name: "vector-operand",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Operands are a constant of the stream's type, a VRF tensor loaded with `to_vrf`, or `Stash`",
    docs: "A binary or ternary op's operand is a scalar constant broadcast to every lane (an i32 \
           literal for i32 streams, an f32 literal for f32 streams), a `VrfTensor` pre-loaded with \
           `.to_vrf(addr)` (`VeRhs::vrf(&v)` or `&v`) on the same Chip, Cluster and Slice as the \
           stream, or `Stash`. A DM tensor cannot be an operand: load it into the VRF first. \
           (The manual's \"FxpMul operand must come from the VRF\" is contradicted by its own \
           examples, constraints.md §22 A-10, and is not enforced.)",
    bad: "// i32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 1.5f32)",
    good: "// i32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 2)",
    manual: "L223, L5052-L5063, L5065-L5080, L5256",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 writes an operand bare (a constant, `&vrf` or `Stash`) or through \
         `Branched::imm(guard, v).rf(guard, &vrf)`, and has no `VeRhs` \
         (`furiosa-opt-std/src/engine/vector/operand.rs:370-418`; CHANGES.md:46); visa-lint reads \
         the bare forms under both",
    ),
};

/// VEC-011 at an operand other than `Stash` of an op on a `d` stream: a constant of the
/// stream's type, or a VRF tensor.
pub(super) fn check(
    cx: &FnContext<'_>,
    step: &Step,
    d: Option<Dtype>,
    a: &Arg,
    out: &mut Vec<Diagnostic>,
) {
    // Logic ops read bit patterns: an integer mask is a valid f32 Logic operand.
    let d = if stage_of(&step.method) == Some(VeStage::Logic) {
        None
    } else {
        d
    };
    match (literal(&a.text), d) {
        (Some(Lit::Float), Some(Dtype::I32)) => out.push(Diagnostic::new(
            &VEC_011,
            a.span,
            format!(
                "`{}` is a float constant, but this stream is i32: constants have the stream's type",
                a.text.trim()
            ),
        )),
        (Some(Lit::Int), Some(Dtype::F32)) => {
            let t = a.text.trim();
            let fixed = format!("{}.0f32", t.trim_end_matches("i32"));
            out.push(
                Diagnostic::new(
                    &VEC_011,
                    a.span,
                    format!(
                        "`{t}` is an integer constant, but this stream is f32: constants have \
                         the stream's type"
                    ),
                )
                .with_edit(format!("write `{fixed}`"), true, a.span, fixed.clone()),
            );
        }
        _ => {}
    }
    vrf_operand(cx, step, a, out);
}

/// VEC-011: a tensor operand must be a VRF tensor on the stream's Chip, Cluster and Slice.
fn vrf_operand(cx: &FnContext<'_>, step: &Step, a: &Arg, out: &mut Vec<Diagnostic>) {
    let Some(name) = operand_var(&a.text) else {
        return;
    };
    let Some(var) = cx
        .model
        .tensors
        .iter()
        .rev()
        .find(|t| t.name == name && t.span.start <= step.span.start)
    else {
        return;
    };
    if var.ty.kind != Kind::Vrf {
        out.push(
            Diagnostic::new(
                &VEC_011,
                a.span,
                format!(
                    "`{name}` is a {}; tensor operands are read from the VRF: load it with \
                     `.to_vrf(addr)` (in `ctx.sub`) and pass the VrfTensor",
                    var.ty.kind.type_name()
                ),
            )
            .with_related(var.span, format!("`{name}` is declared here")),
        );
        return;
    }
    for slot in [Slot::Chip, Slot::Cluster, Slot::Slice] {
        let (Some(v), Some(s)) = (
            layout(Some(&var.ty), slot),
            layout(step.input.as_ref(), slot),
        ) else {
            continue;
        };
        if v != s {
            out.push(
                Diagnostic::new(
                    &VEC_011,
                    a.span,
                    format!(
                        "the VRF operand `{name}` has {} `{}`, the stream `{}`: each slice reads \
                         its own VRF, so both must place data on the same {}",
                        slot.name(),
                        v.to_expr(),
                        s.to_expr(),
                        slot.name()
                    ),
                )
                .with_related(var.span, format!("`{name}` is declared here")),
            );
            return;
        }
    }
}

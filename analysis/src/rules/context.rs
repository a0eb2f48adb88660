//! What every rule family's check reads of one function: its model, the facts derived from
//! it once for every family (and the simulator), its scope and the target. Families import
//! this and the layers below, never one another.

use crate::diagnostic::{Diagnostic, Span};
use crate::mapping::Scope;
use crate::model::{FnModel, Step, in_call};
use crate::rule::Rule;
use crate::target::Target;

/// What a rule family's check sees of one function.
pub struct FnContext<'a> {
    pub model: &'a FnModel,
    /// The derived sequencer operations of the function (computed once for every family).
    pub ops: Vec<crate::derive::Op<'a>>,
    /// The derived DMA transfers (read/write sequencer pairs) of the function, also once.
    pub dma_ops: Vec<crate::derive::dma::DmaOp<'a>>,
    /// The axes and aliases in scope for the function.
    pub scope: &'a Scope,
    pub target: &'a Target,
}

impl<'a> FnContext<'a> {
    /// The context of one function, with its derivations computed once for every family.
    pub fn new(model: &'a FnModel, scope: &'a Scope, target: &'a Target) -> Self {
        FnContext {
            model,
            ops: crate::derive::ops(model, target),
            dma_ops: crate::derive::dma::ops(model, target),
            scope,
            target,
        }
    }
}

/// A diagnostic of `rule` about what `step` does, whose fault lies in the argument written at
/// `at` (ARCHITECTURE.md, "Where a diagnostic points"): the primary span is `at`, with the call
/// as a related span when `at` is written away from it (a `let` annotation, the signature,
/// another call); the call's method name when the argument is written nowhere (`None`).
pub fn at_arg(
    rule: &'static Rule,
    step: &Step,
    at: Option<Span>,
    message: impl Into<String>,
) -> Diagnostic {
    match at {
        Some(span) if !in_call(step, span) => Diagnostic::new(rule, span, message)
            .with_related(step.span, format!("checked at this `{}`", step.method)),
        Some(span) => Diagnostic::new(rule, span, message),
        None => Diagnostic::new(rule, step.span, message),
    }
}

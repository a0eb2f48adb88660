//! What every rule family's check reads of one function: its model, the facts derived from
//! it once for every family (and the simulator), its scope and the target. Families import
//! this and the layers below, never one another.

use crate::mapping::Scope;
use crate::model::FnModel;
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

//! VEC-002: a `VectorInitTensor` only offers the three block entries. After `vector_init()`
//! the stream enters the intra-slice block with `vector_intra_slice_branch()`, two-group mode
//! with `vector_intra_slice_unzip()` (only there) or the inter-slice reduce; after
//! `vector_inter_slice_reduce()` only a branch or `vector_final()` follow. An op written where
//! no block is open is reported once, and the pass continues as if a branch had opened one.

use super::pass::Pass;
use super::stages::stage_name;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_002: Rule = Rule {
    code: "VEC-002",
    name: "vector-block-entry",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "After `vector_init()` enter a block: `vector_intra_slice_branch`, `vector_intra_slice_unzip` or `vector_inter_slice_reduce`",
    docs: "A `VectorInitTensor` only offers the three block entries. `vector_intra_slice_unzip()` \
           is available only directly from `vector_init()`; `vector_intra_slice_branch()` enters \
           the intra-slice block from `vector_init()` or continues after \
           `vector_inter_slice_reduce()`; after an inter-slice reduce only \
           `vector_intra_slice_branch()` or `vector_final()` follow. Insert \
           `.vector_intra_slice_branch(BranchMode::Unconditional)` after `vector_init()`.",
    bad: "input.vector_init().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_final()",
    good: "input.vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_fxp(FxpBinaryOp::AddFxp, 100).vector_final()",
    manual: "L4581, L4722-L4726, L4748-L4749, L6610",
    generations: Generations::Both,
};

/// VEC-002 at any step after `vector_init()` or `vector_inter_slice_reduce()`: only a block
/// entry follows the one, a branch or `vector_final()` the other. True when reported.
pub(super) fn check(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) -> bool {
    let m = &step.method;
    let entry = matches!(
        m,
        Method::VectorIntraSliceBranch
            | Method::VectorIntraSliceUnzip
            | Method::VectorInterSliceReduce
    );
    let msg = match p.stage {
        VeStage::Init if !entry => format!(
            "`{m}` needs an intra-slice block: after `vector_init()` call \
             `vector_intra_slice_branch(BranchMode::..)`, `vector_intra_slice_unzip()` or \
             `vector_inter_slice_reduce()` first"
        ),
        VeStage::InterSliceReduce
            if !matches!(m, Method::VectorIntraSliceBranch | Method::VectorFinal) =>
        {
            format!(
                "after `vector_inter_slice_reduce()` continue with \
                 `vector_intra_slice_branch(BranchMode::..)` or `vector_final()`, not `{m}`"
            )
        }
        _ => return false,
    };
    out.push(Diagnostic::new(&VEC_002, step.span, msg));
    true
}

/// VEC-002 at `vector_intra_slice_unzip()`: directly after `vector_init()` only.
pub(super) fn unzip(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    if p.stage != VeStage::Init {
        out.push(Diagnostic::new(
            &VEC_002,
            step.span,
            "`vector_intra_slice_unzip()` is available only directly after `vector_init()`",
        ));
    }
}

/// VEC-002 at `vector_intra_slice_branch()`: after `vector_init()` or
/// `vector_inter_slice_reduce()` only.
pub(super) fn branch(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    if !matches!(p.stage, VeStage::Init | VeStage::InterSliceReduce) {
        out.push(Diagnostic::new(
            &VEC_002,
            step.span,
            format!(
                "`vector_intra_slice_branch()` enters the intra-slice block after \
                 `vector_init()` or `vector_inter_slice_reduce()`; this stream is already in \
                 the {} stage",
                stage_name(p.stage)
            ),
        ));
    }
}

/// VEC-002 at `vector_stash()` right after `vector_init()`. True when reported.
pub(super) fn stash(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) -> bool {
    if p.stage != VeStage::Init {
        return false;
    }
    out.push(Diagnostic::new(
        &VEC_002,
        step.span,
        "`vector_stash()` needs an intra-slice block: call \
         `vector_intra_slice_branch(BranchMode::..)` after `vector_init()` first",
    ));
    true
}

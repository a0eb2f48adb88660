//! The intra-slice pipeline as the manual's stage table gives it (L4686-L4750): which stage a
//! method belongs to, the stages' order and names, and which stages pool ALUs, run in Way4 or
//! may be stashed.

use crate::model::{Method, VeStage};

/// The intra-slice stage a method belongs to (L4733-L4747); `None` for the block entries
/// other than Branch, `vector_stash` and non-vector methods.
pub(super) fn stage_of(method: &Method) -> Option<VeStage> {
    method
        .ve_stage()
        .filter(|s| !matches!(s, VeStage::Init | VeStage::Pair | VeStage::InterSliceReduce))
}

/// Position in the intra-slice pipeline (L4686-L4718); a two-group pair sits at Branch.
pub(super) fn rank(s: VeStage) -> u8 {
    match s {
        VeStage::Init => 0,
        VeStage::Branch | VeStage::Pair | VeStage::InterSliceReduce => 1,
        VeStage::Logic => 2,
        VeStage::Fxp => 3,
        VeStage::FxpToFp => 4,
        VeStage::Narrow => 5,
        VeStage::Fp => 6,
        VeStage::IntraSliceReduce => 7,
        VeStage::FpDiv => 8,
        VeStage::Widen => 9,
        VeStage::FpToFxp => 10,
        VeStage::Clip => 11,
        VeStage::Filter => 12,
        VeStage::Final => 13,
    }
}

/// The stage's name in the manual's stage table.
pub(super) fn stage_name(s: VeStage) -> &'static str {
    match s {
        VeStage::Init => "Init",
        VeStage::Branch => "Branch",
        VeStage::Logic => "Logic",
        VeStage::Fxp => "Fxp",
        VeStage::FxpToFp => "FxpToFp",
        VeStage::Narrow => "Narrow",
        VeStage::Fp => "Float",
        VeStage::IntraSliceReduce => "IntraSliceReduce",
        VeStage::FpDiv => "FpDiv",
        VeStage::Widen => "Widen",
        VeStage::FpToFxp => "FpToFxp",
        VeStage::Clip => "Clip",
        VeStage::Filter => "Filter",
        VeStage::InterSliceReduce => "InterSliceReduce",
        VeStage::Pair => "two-group Branch",
        VeStage::Final => "Output",
    }
}

/// Stages with a pool of ALUs, which may take several ops in one pass (L4750).
pub(super) fn has_alu_pool(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Logic | VeStage::Fxp | VeStage::Fp | VeStage::Clip
    )
}

/// Stages that run in Way4 (L4733-L4747).
pub(super) fn is_way4(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Narrow | VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv
    )
}

/// Stages a `vector_stash()` may follow (L4983).
pub(super) fn stashable(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Branch
            | VeStage::Logic
            | VeStage::Fxp
            | VeStage::Narrow
            | VeStage::Fp
            | VeStage::FpDiv
            | VeStage::Clip
    )
}

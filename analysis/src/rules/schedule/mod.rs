//! SCH: scheduling and memory hazards between live tensors (constraints.md §20).
//!
//! The scheduler never reorders: the function body's textual order is the issue order
//! (L7043-L7044). Main, sub and the DMA are three resources that each run one operation at a
//! time, and the scheduler serializes on data and address hazards (L7058-L7070). [`Timeline`]
//! models exactly that, one node per chain, and the BNK family reads it to decide which
//! fetch/commit commands may run while a DMA is active.
//!
//! Each rule is one file, named after the rule, holding its declaration and its check; this
//! module only says in which order they run and which silence the rest. [`writes`] names a
//! write in the rules' messages.

mod address_reuse_serializes;
mod carried_tensor;
mod checks_skipped;
mod live_tensors_must_not_overlap;
mod load_on_sub_context;
mod occupies_dma_context;
#[cfg(test)]
mod tests;
mod writes;

pub use address_reuse_serializes::SCH_002;
pub use checks_skipped::VL_007;
pub use live_tensors_must_not_overlap::{CallWrite, SCH_001, scratch_over_live};
pub use load_on_sub_context::SCH_003;
pub use occupies_dma_context::SCH_004;

use super::context::FnContext;
use crate::derive::timeline::{MAX_NODES, Timeline, scan};
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[SCH_001, SCH_002, SCH_003, SCH_004, VL_007];

/// Checks a device function's writes against its live tensors (SCH-001); then, unless it has
/// more chains than the hazard checks relate (VL-007), relates them on a [`Timeline`] and checks
/// the address reuse (SCH-002), the TRF/VRF loads (SCH-003) and the CustomBroadcast switches
/// (SCH-004).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    // A kernel, or a helper traced at a kernel's call (its own chains, in its own order).
    if cx.device().is_none() {
        return;
    }
    let (nodes, vars) = scan(cx.model);
    let clashed = live_tensors_must_not_overlap::check(cx, &nodes, &vars, out);
    // After the other SCH-001 reports, which it does not repeat.
    carried_tensor::check(cx, out);
    if nodes.len() > MAX_NODES {
        checks_skipped::report(cx, nodes.len(), out);
        return;
    }
    let t = Timeline::relate(nodes, vars);
    address_reuse_serializes::check(&t, &clashed, out);
    load_on_sub_context::check(cx, &t, out);
    occupies_dma_context::check(&t, out);
}

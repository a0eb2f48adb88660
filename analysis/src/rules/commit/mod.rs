//! CMT: the Commit Engine, which writes flits back to DM (constraints.md §17). The packet check
//! is decided from types; commit_in_size / commit_size need the commit-sequencer derivation.

//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and
//! check. `element` reads the Element a commit writes, and `commit_op` derives once what the
//! rules of one derived commit sequencer (CMT-002, CMT-003, CMT-005, CMT-009) read. This file
//! only says in which order the rules run and which silence the rest.

mod commit_input_flit;
mod commit_op;
mod commit_sequencer_limits;
mod commit_size_per_context;
mod commit_slice_bitmap;
mod commit_stores_every_factor;
mod commit_truncation;
mod commit_within_tensor;
mod element;
mod full_flit_commit;
mod sub_commit_restrictions;

#[cfg(test)]
mod tests;

pub use commit_input_flit::CMT_001;
pub use commit_sequencer_limits::CMT_005;
pub use commit_size_per_context::CMT_003;
pub use commit_slice_bitmap::CMT_008;
pub use commit_stores_every_factor::CMT_006;
pub use commit_truncation::CMT_002;
pub use commit_within_tensor::CMT_007;
pub use full_flit_commit::CMT_009;
pub use sub_commit_restrictions::CMT_004;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;
use commit_op::CommitOp;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    CMT_001, CMT_002, CMT_003, CMT_004, CMT_005, CMT_006, CMT_007, CMT_008, CMT_009,
];

/// The trims (CMT-002 under furiosa-opt-std), stride-0 commits (CMT-006), the derived commit
/// sequencers (CMT-002, CMT-003, CMT-005, CMT-009), dummy tails (CMT-007), then each commit's
/// input flit (CMT-001).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    commit_truncation::check_trims(cx, out);
    commit_stores_every_factor::check(cx, out);
    commit_ops(cx, out);
    commit_within_tensor::check(cx, out);
    commit_input_flit::check(cx, out);
}

/// CMT-002, CMT-003, CMT-005 and CMT-009 on the derived commit sequencer, at most one finding
/// per commit: a committed Element that is not whole 8-byte units is ALN-007's (or CMT-007's).
fn commit_ops(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some((allowed, unit)) = commit_op::widths(cx) else {
        return;
    };
    let flit = cx.target.flit_bytes;
    for op in &cx.ops {
        let Some(c) = CommitOp::of(op, unit) else {
            continue;
        };
        if commit_truncation::check(cx, op, &c, allowed, flit, out)
            || commit_size_per_context::check(cx, op, &c, out)
            || commit_sequencer_limits::check(cx, op, &c, out)
        {
            continue;
        }
        full_flit_commit::check(op, c.cfg, c.cin, c.span, out);
    }
}

//! VEC: the Vector Engine's intra-slice block (constraints.md §11): block entries, the stage
//! order, Way8/Way4 lane modes, per-stage data types, single use of each ALU per pass, the
//! stash, operands, branch modes, argument modes and two-group mode. Each chain is walked as one
//! Vector Engine pass from `vector_init()` (or from the typestate of a helper's input tensor)
//! to `vector_final()`; ops and operands are read from the arguments as written.
//!
//! The Way4 requirement of `vector_intra_slice_reduce` is ISR-001 and the stages an IntraFirst
//! `vector_inter_slice_reduce` may follow are XSL-002 (other families), so they are not
//! reported here.
//!
//! Each rule is one file, named after the rule, holding its declaration and its check. The
//! rules share `walk`, which walks a chain as passes and hands every step, with the state of
//! its pass (`pass`), to the rules' checks in a fixed order; `stages` is the manual's stage
//! table and `ops` reads ops, constants and operands as written.

mod argument_mode;
mod branch_mode;
mod float_path_throughput;
mod logic_f32_shift;
mod ops;
mod pass;
mod split_into_passes;
mod stages;
mod trim_way4_drops_data;
mod two_group_mode;
mod vector_alu_single_use;
mod vector_block_entry;
mod vector_dtype;
mod vector_narrow_widen_pairing;
mod vector_operand;
mod vector_stage_dtype;
mod vector_stage_order;
mod vector_stash;
mod vector_way_mode;
mod walk;

#[cfg(test)]
mod tests;

pub use argument_mode::VEC_014;
pub use branch_mode::VEC_012;
pub use float_path_throughput::VEC_016;
pub use logic_f32_shift::VEC_009;
pub use split_into_passes::VEC_015;
pub use trim_way4_drops_data::VEC_007;
pub use two_group_mode::VEC_013;
pub use vector_alu_single_use::VEC_004;
pub use vector_block_entry::VEC_002;
pub use vector_dtype::VEC_001;
pub use vector_narrow_widen_pairing::VEC_006;
pub use vector_operand::VEC_011;
pub use vector_stage_dtype::VEC_008;
pub use vector_stage_order::VEC_003;
pub use vector_stash::VEC_010;
pub use vector_way_mode::VEC_005;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    VEC_001, VEC_002, VEC_003, VEC_004, VEC_005, VEC_006, VEC_007, VEC_008, VEC_009, VEC_010,
    VEC_011, VEC_012, VEC_013, VEC_014, VEC_015, VEC_016,
];

/// Walks each chain as Vector Engine passes, which checks VEC-001..014 and VEC-016 step by step,
/// then offers VEC-015's split for the chain's first stage-order or ALU conflict.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        let before = out.len();
        let cuts = walk::chain(cx, chain, out);
        split_into_passes::check(cx, chain, &cuts, before, out);
    }
}

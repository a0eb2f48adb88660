//! MAP: well-formedness of mapping expressions (constraints.md §3). MAP-001..008 are found
//! while a mapping is lowered to its normal form (`crate::mapping::lower`), which records an
//! [`Invalid`] problem; [`diagnostic`] reports it. MAP-009 (tile views), MAP-010 (storage
//! coverage) and MAP-011 (DMA factorization) read the function's model.
//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and the
//! function that reports it. `divide` holds the diagnostics MAP-001 and MAP-002 share,
//! `placed` what MAP-010 reads of a type's mappings and `macro_body` where a mapping's body
//! sits in its text. This file only says which rule reports each problem lowering finds, and
//! in which order the rules that read the model run.

mod divide;
pub use divide::pad_together;
mod factorization_compatibility;
mod macro_body;
mod mapping_equivalence;
mod modulo_must_divide;
mod padding_must_not_shrink;
mod placed;
mod resize_must_shrink;
mod skew_and_linear_combination;
mod storage_coverage;
mod stride_must_divide;
mod tile_view_consistency;
mod undeclared_axis;
mod unknown_mapping_alias;

#[cfg(test)]
mod tests;

pub use factorization_compatibility::MAP_011;
pub use mapping_equivalence::MAP_007;
pub use modulo_must_divide::MAP_002;
pub use padding_must_not_shrink::MAP_003;
pub use resize_must_shrink::MAP_004;
pub use skew_and_linear_combination::MAP_008;
pub use storage_coverage::MAP_010;
pub use stride_must_divide::MAP_001;
pub use tile_view_consistency::MAP_009;
pub use undeclared_axis::MAP_005;
pub use unknown_mapping_alias::MAP_006;

use super::context::FnContext;
use crate::derive::DeriveError;
use crate::derive::dma::Media;
use crate::diagnostic::Diagnostic;
use crate::mapping::problem::Invalid;
use crate::model::Method;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    MAP_001, MAP_002, MAP_003, MAP_004, MAP_005, MAP_006, MAP_007, MAP_008, MAP_009, MAP_010,
    MAP_011,
];

/// The diagnostic of a mapping that breaks the notation's rules (MAP-001..006, MAP-008), as
/// lowering found it.
pub fn diagnostic(p: &Invalid) -> Diagnostic {
    match p {
        Invalid::ZeroSizeAxis { name, at } => undeclared_axis::zero_size(name, *at),
        Invalid::AxisRedeclared {
            name,
            at,
            size,
            was,
            first,
        } => undeclared_axis::redeclared(name, *at, *size, *was, *first),
        Invalid::Undeclared {
            name,
            alias,
            generic,
        } => undeclared_axis::undeclared(name, *alias, *generic),
        Invalid::UnsizedSkew { name, size } => {
            skew_and_linear_combination::unsized_skew(name, *size)
        }
        Invalid::DivideByZero { op, at } => divide::by_zero(*op, *at),
        Invalid::NotDivisible {
            op,
            at,
            op_span,
            operand,
            operand_end,
            size,
            n,
        } => divide::not_divisible(*op, *at, *op_span, operand, *operand_end, *size, *n),
        Invalid::ShortPad {
            at,
            arg,
            op_span,
            operand,
            size,
            n,
        } => padding_must_not_shrink::short_pad(*at, *arg, *op_span, operand, *size, *n),
        Invalid::ZeroResize { at } => resize_must_shrink::zero(*at),
        Invalid::GrowingResize {
            at,
            op_span,
            operand,
            size,
            n,
        } => resize_must_shrink::growing(*at, *op_span, operand, *size, *n),
        Invalid::UnknownAlias { at, name, axis } => {
            unknown_mapping_alias::unknown(*at, name, *axis)
        }
        Invalid::SizeOfOwnAlias { name } => unknown_mapping_alias::size_of_own(name),
        Invalid::SizeOfUnknown { name } => undeclared_axis::size_of_unknown(name),
        Invalid::AliasCycle { at, cycle } => unknown_mapping_alias::alias_cycle(*at, cycle),
    }
}

/// The MAP rules that need a function's model (views, storage coverage, moves between
/// layouts); MAP-001..008 are found while mappings are lowered ([`diagnostic`]).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method == Method::Tile {
                tile_view_consistency::check(cx, step, out);
            }
        }
    }
    storage_coverage::check(cx, out);
    check_moves(cx, out);
}

/// MAP-010 (moves) and MAP-011 for DMA transfers (`to_dm`, `to_hbm`): the fetch/commit and
/// `BufTensor` read/write cases are SEQ-006/SEQ-007's.
fn check_moves(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.dma_ops {
        let what = match (op.src_media, op.dst_media) {
            (Media::Hbm, Media::Dm) => "HBM-to-DM",
            (Media::Dm, Media::Hbm) => "DM-to-HBM",
            (Media::Dm, Media::Dm) => "DM-to-DM",
            (Media::Hbm, Media::Hbm) => "HBM-to-HBM",
        };
        match &op.pair {
            Err(DeriveError::Incompatible {
                axis,
                buf_split,
                stream_split,
            }) => out.push(factorization_compatibility::incompatible(
                op,
                what,
                axis,
                *buf_split,
                *stream_split,
            )),
            Err(DeriveError::Insufficient {
                axis, needed, have, ..
            }) => out.push(storage_coverage::broadcast(op, what, axis, needed, have)),
            _ => {}
        }
    }
}

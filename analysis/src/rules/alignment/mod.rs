//! ALN: address and packet alignment (constraints.md §5). The checks here are decided from
//! dtypes, mapping sizes and constant addresses; the ones that need the compiler's sequencer
//! derivation (strides, contiguous runs) stay planned until `crate::derive` provides it.
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run and which silence the rest. [`addresses`] reads the constant
//! address of a step and holds the fix that rounds a misaligned address up.

mod addresses;
mod commit_8_byte_units;
mod commit_address_alignment;
mod dma_address_alignment;
mod element_address_alignment;
mod fetch_address_alignment;
mod fetch_packet_32_bytes;
mod fetch_packet_alignment;
mod hbm_256_byte_alignment;
mod hbm_read_address;
mod tail_padding_32_bytes;
#[cfg(test)]
mod tests;
mod trf_64_byte_alignment;

pub use commit_8_byte_units::ALN_007;
pub use commit_address_alignment::ALN_008;
pub use dma_address_alignment::ALN_002;
pub use element_address_alignment::ALN_001;
pub use fetch_address_alignment::ALN_006;
pub use fetch_packet_32_bytes::ALN_011;
pub use fetch_packet_alignment::ALN_005;
pub use hbm_256_byte_alignment::ALN_010;
pub use tail_padding_32_bytes::ALN_012;
pub use trf_64_byte_alignment::ALN_009;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::{Method, Placement, Step};
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    ALN_001, ALN_002, ALN_005, ALN_006, ALN_007, ALN_008, ALN_009, ALN_010, ALN_011, ALN_012,
];

/// Checks each step's constant address, the HBM address each `to_dm` reads (ALN-002), each fetch's packet (ALN-005, else ALN-011) and each
/// commit's Element (ALN-007, unless its dummy tail clobbers a neighbour, CMT-007's); then the
/// addresses constructors place tensors at, the padded rows (ALN-012) and the TRF reads
/// (ALN-009).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            check_address(cx, step, out);
            match step.method {
                Method::Fetch
                | Method::FetchWithTable
                | Method::FetchWithZeroPoint
                | Method::FetchWithZeroPoints
                    if !fetch_packet_alignment::check(cx, chain, step, out) =>
                {
                    fetch_packet_32_bytes::check(cx, step, chain.steps.get(i + 1), out);
                }
                Method::Commit
                    if crate::derive::commit_tail_victim(
                        cx.model,
                        cx.target,
                        chain.binding.as_deref(),
                        step,
                    )
                    .is_none() =>
                {
                    commit_8_byte_units::check(cx, chain, step, out);
                }
                // A commit into a view writes the view's Element (no tail can follow it).
                Method::CommitView => commit_8_byte_units::check(cx, chain, step, out),
                _ => {}
            }
        }
    }
    hbm_read_address::check(cx, out);
    for p in &cx.model.placements {
        check_placement(cx, p, out);
    }
    tail_padding_32_bytes::check(cx, out);
    trf_64_byte_alignment::check(cx, out);
}

/// ALN-001 and ALN-010 on a tensor a constructor placed (`Input::from_addr(0x1000)`), as on
/// the address of a transfer that writes it: its element's alignment, and HBM's 256-byte
/// units (below 8 bytes, a DMA reading it into DM is ALN-002's error).
fn check_placement(cx: &FnContext<'_>, p: &Placement, out: &mut Vec<Diagnostic>) {
    if let Some(dtype) = p.ty.dtype
        && element_address_alignment::check(&p.arg, p.address, dtype, out)
    {
        return;
    }
    hbm_256_byte_alignment::check_placement(cx, p, out);
}

/// The constant address of a step: a `to_dm`'s is ALN-002's; the others' are ALN-001's, and
/// when element-aligned ALN-008's (a commit) or ALN-010's (a `to_hbm`).
fn check_address(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(addr), Some(k)) = (step.address, step.method.address_arg()) else {
        return;
    };
    let Some(arg) = step.args.get(k) else { return };
    let Some(dtype) = step.output.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    if step.method == Method::ToDm {
        dma_address_alignment::check(cx, arg, addr, out);
        return;
    }
    if element_address_alignment::check(arg, addr, dtype, out) {
        return;
    }
    match step.method {
        Method::Commit => commit_address_alignment::check(cx, arg, addr, out),
        Method::ToHbm => hbm_256_byte_alignment::check_to_hbm(cx, step, arg, addr, out),
        _ => {}
    }
}

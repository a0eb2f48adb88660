//! DMA: the DMA engines between HBM and DM (constraints.md §18). Address alignment is ALN-002 (DMA-003 points there).
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run and which silence the rest. [`padding`] is what the fixes of
//! ALN-003 and DMA-010 share: the DM Element a DMA writes, and its innermost axis padded.

mod dm_spatial_dimensions;
mod dma_aggregate_media;
mod dma_bad_divisor;
mod dma_descriptor_ranges;
mod dma_dtype;
mod dma_hbm_read_alignment;
mod dma_interleaving;
mod dma_packet_alignment;
mod dma_packet_limit;
mod dma_sequencer_limits;
mod dma_startup_cost;
mod dma_structural_forms;
mod dma_tensor_to_tensor;
mod dma_uneven_distribution;
mod dma_unneeded_hop;
mod padding;
mod spm_same_chip;

pub use dm_spatial_dimensions::DMA_002;
pub use dma_aggregate_media::DMA_005;
pub use dma_bad_divisor::DMA_010;
pub use dma_descriptor_ranges::DMA_007;
pub use dma_dtype::DMA_013;
pub use dma_hbm_read_alignment::DMA_003;
pub use dma_interleaving::DMA_011;
pub use dma_packet_alignment::ALN_003;
pub use dma_packet_limit::ALN_004;
pub use dma_sequencer_limits::SEQ_012;
pub use dma_startup_cost::DMA_009;
pub use dma_structural_forms::DMA_001;
pub use dma_tensor_to_tensor::DMA_004;
pub use dma_uneven_distribution::DMA_008;
pub use dma_unneeded_hop::DMA_012;
pub use spm_same_chip::DMA_006;

use super::context::FnContext;
use crate::derive::dma::{DmaOp, DmaPair};
use crate::diagnostic::Diagnostic;
use crate::model::{Kind, Method};
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    DMA_001, DMA_002, DMA_003, DMA_004, DMA_005, DMA_006, DMA_007, DMA_008, DMA_009, DMA_010,
    DMA_011, DMA_012, DMA_013, SEQ_012, ALN_003, ALN_004,
];

/// Checks each derived DMA pair, each step's segmentation, back-to-
/// back transfers, then each `to_dm`'s written Cluster and Slice and each DM transfer's dtype.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.dma_ops {
        if let Ok(p) = &op.pair {
            check_pair(cx, op, p, out);
        }
    }
    for step in cx.model.chains.iter().flat_map(|c| c.steps.iter()) {
        dma_uneven_distribution::check(cx, step, out);
    }
    dma_startup_cost::check(cx, out);
    for chain in &cx.model.chains {
        for step in &chain.steps {
            dm_spatial_dimensions::check(step, out);
        }
    }
    for chain in &cx.model.chains {
        for step in &chain.steps {
            let dma = match step.method {
                Method::ToDm => true,
                Method::ToHbm => step.input.as_ref().is_some_and(|t| t.kind == Kind::Dm),
                _ => false,
            };
            if !dma {
                continue;
            }
            let Some(d) = step
                .input
                .as_ref()
                .and_then(|t| t.dtype)
                .or_else(|| step.output.as_ref().and_then(|t| t.dtype))
            else {
                continue;
            };
            dma_dtype::check(cx, step, d, out);
        }
    }
}

/// SEQ-012, ALN-003, DMA-010, ALN-004 and DMA-011 on the derived DMA pair, the first that fires
/// silencing the rest: the sequencer limits; then, no 8-byte packet dividing the run, ALN-003;
/// a run over the packet limit cut into small packets, DMA-010 (below one request) or ALN-004;
/// else the HBM stack bit (DMA-011).
fn check_pair(cx: &FnContext<'_>, op: &DmaOp<'_>, p: &DmaPair, out: &mut Vec<Diagnostic>) {
    let t = cx.target;
    if dma_sequencer_limits::check(cx, op, p, out) {
        return;
    }
    let run = p.run_bytes;
    let Some(stride0) = p.stride0 else {
        dma_packet_alignment::check(cx, op, p, out);
        return;
    };
    if run > t.dma_packet_max_bytes && stride0 < t.dma_packet_max_bytes {
        if stride0 < t.dma_request_bytes {
            dma_bad_divisor::report(cx, op, p, stride0, out);
        } else {
            dma_packet_limit::check(cx, op, p, stride0, out);
        }
        return;
    }
    dma_interleaving::check(cx, op, p, stride0, out);
}

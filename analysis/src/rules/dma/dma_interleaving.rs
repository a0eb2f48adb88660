//! DMA-011: a DMA that reads HBM in small packets must toggle the stack bit (address bit 8) in
//! an inner loop, or its requests reach only half of the HBM channels.

use crate::derive::dma::{DmaOp, DmaPair, Media, toggles_stack_bit};
use crate::derive::{Config, bytes};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const DMA_011: Rule = Rule {
    code: "DMA-011",
    name: "dma-interleaving",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Toggle the HBM stack bit (address bit 8) in the DMA's inner loops",
    docs: "HBM channel selection uses address bits 9-28 and the stack bit is bit 8; an access \
           pattern that never toggles bit 8 uses 16 of the 32 channels and halves the bandwidth \
           (the manual's Example 5: 1,857 instead of about 1,000 cycles). visa-lint derives the \
           HBM read side of every DMA and reports packets of at most 256 bytes when no loop of the \
           stream toggles bit 8 (any loop counts: Example 4's `C / 256` loop of stride 256 gives \
           all 32 channels although the slice loops are inside it). Reorder the stream (an HBM stride of 256 in an inner \
           loop) or make the contiguous run at least 512 bytes. DM-side DMN interleaving is not \
           checked.",
    bad: "axes![B = 64, C = 8, D = 512]; // HBM m![B, C, D], DM element m![C, D % 256]",
    good: "axes![B = 64, C = 8, D = 512]; // HBM m![B, C, D], DM element m![C, D]",
    manual: "L2720-L2756, L2854-L2861, L2987-L2988",
    generations: Generations::Both,
};

/// DMA-011: the HBM side never toggles address bit 8 (the stack bit, L2744-L2746).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &DmaOp<'_>,
    p: &DmaPair,
    stride0: u64,
    out: &mut Vec<Diagnostic>,
) {
    let req = cx.target.dma_request_bytes;
    let stack = req.saturating_mul(2);
    // Reads (the manual's Example 5); partial HBM writes are ALN-010's read-modify-write.
    if op.src_media != Media::Hbm {
        return;
    }
    let cfg: &Config = &p.read;
    if stride0 > req || p.packets.unwrap_or(0) < 2 {
        return;
    }
    if toggles_stack_bit(cfg, op.bits, stride0, cx.target.hbm_stack_bit) {
        return;
    }
    let n = cfg.entries.len();
    // The innermost loop, named in the message.
    let Some(inner) = cfg.entries[..n.saturating_sub(cfg.packet_entries)]
        .iter()
        .rev()
        .find(|e| e.size > 1)
    else {
        return;
    };
    let b = bytes(inner.stride, op.bits);
    out.push(Diagnostic::new(
        &DMA_011,
        op.span,
        format!(
            "the DMA reads HBM in {stride0}-byte packets and no loop of its stream toggles address \
             bit 8 (the stack bit; the innermost steps {b} bytes, {} : {} in {cfg}), so the \
             requests reach 16 of the 32 HBM channels and the bandwidth halves; make a loop's HBM \
             stride {req} bytes or the contiguous run at least {stack} bytes",
            inner.size, inner.stride
        ),
    ));
}

//! SEQ-012: a DMA's read and write sequencers have at most 8 entries, each of at most 65,536
//! iterations, once the contiguous innermost run is cut into packets.

use crate::derive::contiguous_elements;
use crate::derive::dma::{DmaOp, DmaPair};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const SEQ_012: Rule = Rule {
    code: "SEQ-012",
    name: "dma-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "DMA sequencers have 8 entries of at most 65,536 iterations",
    docs: "The DMA engine chains a read and a write sequencer with shared loop sizes and their \
           own strides (one DmaSequencer); they obey the sequencer limits (8 entries, 65,536 \
           iterations each) and `stride0` is 1..=4,096 bytes dividing the last consecutive \
           entry (visa-lint derives it that way, ALN-004 and DMA-010 report poor choices). \
           visa-lint derives the pair for `to_dm`/`to_hbm` and reports an entry count or size \
           over the limit (SEQ-001/SEQ-002 cover the fetch and commit sequencers). Merge axes \
           that are contiguous on both sides or split the transfer.",
    bad: "axes![A = 131072, B = 2]; h.to_dm::<m![1], m![1], m![B, A]>(..) // HBM m![A, B]: entry 131072",
    good: "axes![A = 131072, B = 2]; h.to_dm::<m![1], m![1], m![A, B]>(..)",
    manual: "L1225, L2512, L2545, seed 000 L69, L94, L157-L158, L191",
    generations: Generations::Both,
};

/// SEQ-012 on the read, then the write sequencer of the DMA pair `p`; returns whether it fired
/// (once, for the first side over a limit).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &DmaOp<'_>,
    p: &DmaPair,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let t = cx.target;
    // SEQ-012: the sequencer limits.
    for (side, cfg) in [("read", &p.read), ("write", &p.write)] {
        if cfg.entries.len() > t.sequencer_entries {
            out.push(Diagnostic::new(
                &SEQ_012,
                op.span,
                format!(
                    "the DMA {side} sequencer needs {} entries ({cfg}); a DMA sequencer has {}",
                    cfg.entries.len(),
                    t.sequencer_entries
                ),
            ));
            return true;
        }
        // The innermost contiguous entry is cut into stride0 packets, and so are the packet's
        // entries when they are one run (`m![M, C]` like `m![Y]`); the loops must fit.
        let n = cfg.entries.len();
        let p = cfg.packet_entries.min(n);
        let loops = match cfg.entries.last() {
            Some(e)
                if e.stride == 1
                    && contiguous_elements(&cfg.entries[n - p..]) == cfg.packet_size =>
            {
                &cfg.entries[..n - p.max(1)]
            }
            Some(e) if e.stride == 1 => &cfg.entries[..n - 1],
            _ => &cfg.entries[..],
        };
        if let Some(e) = loops.iter().find(|e| e.size > t.sequencer_entry_size) {
            out.push(Diagnostic::new(
                &SEQ_012,
                op.span,
                format!(
                    "the DMA {side} sequencer ({cfg}) has an entry of {} iterations ({} : {}); an \
                     entry counts at most {}: make the axis contiguous on both sides so it becomes \
                     part of the packet, or split the transfer",
                    e.size, e.size, e.stride, t.sequencer_entry_size
                ),
            ));
            return true;
        }
    }
    false
}

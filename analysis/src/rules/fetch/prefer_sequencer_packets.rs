//! FET-011: prefer large packets from the sequencer over adapter batching. When the layout
//! splits a packet of at most one flit into non-contiguous pieces, the adapter batches
//! several smaller fetches per packet; storing the Element with the Packet's axes innermost
//! reads it in fewer cycles, and the message gives both cycle counts.

use super::main_fetch::MainFetch;
use crate::derive;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const FET_011: Rule = Rule {
    code: "FET-011",
    name: "prefer-sequencer-packets",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Prefer large packets from the sequencer over adapter batching",
    docs: "When the layout splits a packet of at most one flit into non-contiguous pieces, the \
           adapter batches several smaller fetches per packet (`fetches_per_packet > 1`). Batching \
           is for packets that cannot be read in one cycle because of the layout (L2058-L2059); \
           storing the Element with the Packet's axes innermost, in the Packet's order, reads the \
           packet in one fetch. The message gives both cycle counts. Multi-flit packets are \
           SEQ-005's.",
    bad: "// a: DmTensor<i8, .., m![B, C, A]>, A = 4\n.fetch::<i8, m![C], m![B, A]>() // 8-byte packets in 4-byte pieces",
    good: "// a: DmTensor<i8, .., m![C, B, A]>\n.fetch::<i8, m![C], m![B, A]>()",
    manual: "L2058-L2059",
    generations: Generations::Both,
};

/// FET-011 on a main-context fetch whose one-flit packet the layout splits.
pub(super) fn check(op: &derive::Op<'_>, m: &MainFetch<'_>, out: &mut Vec<Diagnostic>) {
    let (cfg, allowed, f) = (m.cfg, &m.allowed, &m.sizes);
    let (fetch, per, cycles, steps) = (m.fetch, m.per, m.cycles, m.steps);
    let best_fetch =
        derive::largest_divisor(f.packet_bytes, f.packet_bytes, allowed).unwrap_or(fetch);
    let best = steps.saturating_mul(f.packet_bytes.div_ceil(best_fetch));
    if best < cycles {
        out.push(Diagnostic::new(
            &FET_011,
            op.span,
            format!(
                "the {}-byte packet lies in {}-byte contiguous pieces in DM (sequencer {cfg}), so the adapter batches {per} fetches of {fetch} bytes per packet: {cycles} cycles; stored with the Packet's axes innermost it would be read {best_fetch} bytes at a time: {best} cycles",
                f.packet_bytes, f.contiguous_bytes
            ),
        ));
    }
}

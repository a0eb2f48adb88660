//! SEQ-003: a base packet is a whole number of bytes, so no base packet reads a run of
//! sub-byte elements that ends inside a byte.

use super::ops::who;
use super::read_packet::ReadPacket;
use crate::derive::Op;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const SEQ_003: Rule = Rule {
    code: "SEQ-003",
    name: "sequencer-packet-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The sequencer's base packet (fetch_size) is 1, 2, 4, 8, 16 or 32 bytes",
    docs: "The sequencer reads base packets of 1, 2, 4, 8, 16 or 32 bytes; larger stream packets \
           are built by adapter batching (`fetches_per_packet`). The compiler always picks the \
           largest legal size dividing gcd(packet, contiguous run) (FET-003), so this fails only \
           when no whole-byte size divides them: a 4-bit tensor whose contiguous DM run is an odd \
           number of elements (a strided innermost entry reads single 4-bit elements). Store the \
           Element so the packet's axis is innermost, or fetch an even number of contiguous \
           elements. A packet that is itself not a whole number of 8-byte units is ALN-005's; \
           the tail padding page's 24-byte fetch (L7795) is treated as a commit size \
           (constraints.md §22 A-4).",
    bad: "// a: DmTensor<i4, .., m![W, H]>, W = H = 16\n.fetch::<i4, m![H], m![W]>() // W is strided by 16: 4-bit reads",
    good: "// a: DmTensor<i4, .., m![H, W]>\n.fetch::<i4, m![H], m![W]>() // 8-byte contiguous packets",
    manual: "L1632, L2104, L2118",
    generations: Generations::Both,
};

/// SEQ-003 on the base packet of a sub-byte read.
pub(super) fn check(op: &Op<'_>, p: &ReadPacket<'_>, out: &mut Vec<Diagnostic>) {
    let (cfg, bits, run, packet_bits, dtype) = (p.cfg, p.bits, p.run, p.packet_bits, p.dtype);
    let run_bits = run.saturating_mul(u64::from(bits));
    if packet_bits.is_multiple_of(8) && !run_bits.is_multiple_of(8) {
        out.push(Diagnostic::new(
            &SEQ_003,
            op.span,
            format!(
                "{} reads runs of {run} contiguous {dtype} element{} ({run_bits} bits; sequencer {cfg}): a base packet is 1, 2, 4, 8, 16 or 32 bytes, so no fetch size reads it. Store the Element with the packet's axis innermost",
                who(op),
                if run == 1 { "" } else { "s" },
            ),
        ));
    }
}

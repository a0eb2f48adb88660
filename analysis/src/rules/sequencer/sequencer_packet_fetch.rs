//! SEQ-004: a packet whose innermost entry is strided is read one element at a time
//! (discrete access): an error on the sub context, whose fetch size is fixed, and a
//! performance finding on the main context.

use super::ops::{choices, who};
use super::read_packet::ReadPacket;
use crate::derive::{self, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const SEQ_004: Rule = Rule {
    code: "SEQ-004",
    name: "sequencer-packet-fetch",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The innermost entry is contiguous (`(s == 0 || s == 1) && n % packet_size == 0`) or packets are single elements",
    docs: "The innermost loop entry `n : s` either reads contiguously (`s` is 0 or 1) or the \
           sequencer's base packet is one element (discrete access). `packet_size` here is the \
           base packet the sequencer reads (fetch_size): the stream packet may be larger, built \
           by batching, as in the manual's own fetch_batch_2/3 (innermost entry `8 : 1` with \
           16- or 32-element packets, L2076-L2097). A Packet whose innermost axis is strided in \
           the buffer (`Packet = m![A]` while the Element is `m![A, B]`) forces one-element reads: \
           in the sub context, whose fetch size is fixed at 8 bytes (4 for i4 → i32), that is an \
           error; in the main context it is legal but costs one cycle per element, reported as \
           a perf hint with the cycle counts. Store the Element with the packet's axes \
           innermost, or swap the Time and Packet axes. (4-bit elements are SEQ-003's: a single \
           one is not a whole byte.)",
    bad: "// a: DmTensor<i8, .., m![A, B]>, B = 32\nctx.sub.begin(a.view()).fetch::<i8, m![B], m![A]>()",
    good: "ctx.sub.begin(a.view()).fetch::<i8, m![A], m![B]>()",
    manual: "L1633-L1636",
    generations: Generations::Both,
};

/// SEQ-004 on a read packet whose innermost entry is strided.
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    p: &ReadPacket<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (cfg, bits, last, dtype, sub) = (p.cfg, p.bits, p.last, p.dtype, p.sub);
    let steps = derive::time_steps(cfg);
    let per = derive::bytes(1, bits);
    let per = if per == 1 {
        "1 byte".to_string()
    } else {
        format!("{per} bytes")
    };
    if sub {
        let need = choices(cx, op).first().copied().unwrap_or(8);
        out.push(Diagnostic::new(
            &SEQ_004,
            op.span,
            format!(
                "the packet's innermost entry `{} : {}` is strided, so {} would read one {dtype} element ({per}) at a time; the sub context fetches {need} bytes, so neither contiguous nor single-element access holds (sequencer {cfg}). Store the Element with the packet's axis innermost, or fetch on ctx.main",
                last.size,
                last.stride,
                who(op)
            ),
        ));
    } else {
        let packet_bytes = derive::bytes(cfg.packet_size, bits);
        let now = steps.saturating_mul(cfg.packet_size);
        let best = steps.saturating_mul(packet_bytes.div_ceil(cx.target.flit_bytes));
        let mut d = Diagnostic::new(
            &SEQ_004,
            op.span,
            format!(
                "the packet's innermost entry `{} : {}` is strided: {} reads single {dtype} elements, {} fetches per {packet_bytes}-byte packet, {now} cycles (sequencer {cfg}); with the packet's axes innermost in the Element it would take {best}",
                last.size,
                last.stride,
                who(op),
                cfg.packet_size
            ),
        );
        d.severity = Severity::Perf;
        out.push(d);
    }
}

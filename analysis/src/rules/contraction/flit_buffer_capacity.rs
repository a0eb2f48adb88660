//! CON-018: the Stream Adapter's Flit Buffer holds 96 bytes, three flits: a packet collected
//! from more flits cannot be built.

use super::align::Align;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_018: Rule = Rule {
    code: "CON-018",
    name: "flit-buffer-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Stream Adapter collects at most 3 flits (96-byte Flit Buffer)",
    docs: "The Flit Buffer holds 96 bytes, 3 single-channel flits; a packet built from more \
           collected flits (for example `m![L, K]` with L = 4, 128 bytes of bf16) cannot be \
           buffered. The shift and transpose limits of the Stream Adapter are on a page the manual \
           does not include (constraints.md §22 A-34), so only this capacity is checked.",
    bad: "axes![L = 4, K = 16]; input(Time m![M, L], Packet m![K]).align::<m![M], m![L, K], _, _>(&trf)",
    good: "axes![L = 4, K = 16]; input(Time m![M, L], Packet m![K]).align::<m![M, L / 2], m![L % 2, K], _, _>(&trf)",
    manual: "L3781, L3928, L3951",
    generations: Generations::Both,
};

/// CON-018: the `.align()`'s OutPacket collects `c` flits, more than the Flit Buffer holds.
pub(super) fn report(cx: &FnContext<'_>, a: &Align<'_>, c: u64, out: &mut Vec<Diagnostic>) {
    let (op_span, op_text) = a.out_packet_at();
    let (flit, max_flits) = (cx.target.flit_bytes, a.max_flits);
    out.push(at_arg(
        &CON_018,
        a.step,
        op_span,
        format!(
            "OutPacket {op_text} collects {c} flits ({} bytes) of the stream; the Stream \
             Adapter's Flit Buffer holds {} bytes ({max_flits} flits)",
            c.saturating_mul(flit),
            cx.target.flit_buffer_bytes
        ),
    ));
}

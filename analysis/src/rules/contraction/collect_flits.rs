//! CON-005: the Stream Adapter builds the packet from the collected flit alone (zero padded)
//! or preceded by the innermost Time factor of size 2, never from other Time factors.

use super::align::Align;
use super::layouts::{m, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_005: Rule = Rule {
    code: "CON-005",
    name: "collect-flits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet collects 1 or 2 flits, from the innermost Time factor only",
    docs: "The Stream Adapter buffers collect_flits consecutive 32-byte flits, i.e. the innermost \
           Time factor, into the packet: `Time [M, O, L = 2], Packet [K]` gives OutTime `[M, O]`, \
           OutPacket `[L, K]`. A 64-byte OutPacket that is neither the collected packet padded \
           (collect_flits = 1) nor the innermost Time factor of size 2 followed by the packet \
           (collect_flits = 2) cannot be built. (3 flits are for shift-reuse convolutions, whose \
           API the manual does not show; more than 3 is CON-018.)",
    bad: "input: CollectTensor<.., m![L, M], m![K]>; input.align::<m![M], m![L, K], _, _>(&trf)",
    good: "input: CollectTensor<.., m![M, L], m![K]>; input.align::<m![M], m![L, K], _, _>(&trf)",
    manual: "L3908, L3916-L3928, L3948-L3951",
    generations: Generations::Both,
};

/// CON-005: the `.align()`'s OutPacket is no collection of the stream's flits.
pub(super) fn report(cx: &FnContext<'_>, a: &Align<'_>, out: &mut Vec<Diagnostic>) {
    let (t, p, input) = (a.time, a.packet, a.input);
    let mac = cx.target.mac_width_bytes;
    let (op_span, op_text) = a.out_packet_at();
    let two = t
        .size
        .is_multiple_of(2)
        .then(|| t.window(2).pair(p).ok())
        .flatten();
    out.push(at_arg(
        &CON_005,
        a.step,
        op_span,
        format!(
            "the Stream Adapter builds the {mac}-byte packet from the collected flit {} alone \
             (collect_flits = 1, zero padded) or preceded by the innermost Time positions \
             (collect_flits = 2{}), never from other Time factors; OutPacket {op_text} is \
             neither (collected Time {})",
            text(input, Slot::Packet),
            two.map_or_else(String::new, |l| format!(": {}", m(&l))),
            text(input, Slot::Time)
        ),
    ));
}

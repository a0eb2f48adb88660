//! VCG-001: the VCG marks a contiguous prefix `[0, vc)` of each flit valid, so a
//! `BranchMode::ValidCount` branch needs the data of its stream's Packet in a prefix of the
//! flit: padding goes outermost, never inside.

use super::layouts::text_of;
use super::valid_count::ValidCount;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_001: Rule = Rule {
    code: "VCG-001",
    name: "vcg-prefix-valid-count",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Valid elements of a flit form a contiguous prefix",
    docs: "Element p of a flit is valid iff p < vc; the VCG cannot mark lanes 0, 1, 3 valid and 2 \
           invalid. `BranchMode::ValidCount` takes its ExecutionIds from that count, so the \
           Packet of the stream it branches must hold its data in a prefix of the flit: padding \
           goes outermost (`m![A # 8]`), never inside (`m![A, 1 # 2]` puts data in lanes 0, 2, \
           4, 6). For a padded reduce axis the same property is checked as VCG-002 (another axis \
           in the packet) and VCG-009 (padding inside R's packet part).",
    bad: "// A = 4\n.vector_init() // Packet m![A, 1 # 2]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    good: "// A = 4\n.vector_init() // Packet m![A # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    manual: "L4800, L6177-L6179, L6558",
    generations: Generations::Both,
};

/// VCG-001 on a `BranchMode::ValidCount` branch whose Packet (of at most 64 lanes) holds data
/// in lanes that are not a prefix.
pub(super) fn check(cx: &FnContext<'_>, v: &ValidCount<'_>, out: &mut Vec<Diagnostic>) {
    let packet = v.packet;
    if packet.size > 64 {
        return;
    }
    let lanes: Vec<u64> = (0..packet.size)
        .filter(|&i| packet.map(i).is_some())
        .collect();
    let prefix = lanes.iter().enumerate().all(|(i, &l)| l == i as u64);
    if prefix {
        return;
    }
    let packet_txt = text_of(v.step.input.as_ref(), Slot::Packet, packet);
    let shown: Vec<String> = lanes.iter().map(u64::to_string).collect();
    let msg = format!(
        "`BranchMode::ValidCount` reads the VCG's valid count, which marks a contiguous \
         prefix [0, vc) of each flit valid; Packet {packet_txt} holds data in lanes {{{}}}, \
         not a prefix. Put the padding outermost in Packet (pad the whole packet, `m![.. \
         # {}]`), or branch with another mode",
        shown.join(", "),
        cx.target.ve_way8_lanes
    );
    out.push(Diagnostic::new(&VCG_001, v.arg.span, msg));
}

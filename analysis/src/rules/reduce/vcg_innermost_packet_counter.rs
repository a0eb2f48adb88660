//! VCG-009: the packet dim counts lanes from the innermost Packet counter, so a padded reduce
//! axis R in Packet must be the innermost Packet digit: padding inside R's part puts R in
//! lanes that no packet count describes.

use super::placement::{Placement, RPart};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_009: Rule = Rule {
    code: "VCG-009",
    name: "vcg-innermost-packet-counter",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The innermost Packet counter is assigned to the packet dim: R's Packet part is the innermost Packet digit",
    docs: "The packet dim counts lanes from the innermost Packet counter (its stride is \
           stride_p). When a padded reduce axis R is in Packet, R's part must therefore be the \
           innermost Packet digit: padding inside it (`m![[R # 4 % 2, 1 # 2] # 8]`) puts R in \
           every other lane, which no packet count describes. Pad the whole packet outside R's \
           part instead (`m![R # 4 % 2 # 8]`). Another axis sharing the packet is VCG-002.",
    bad: "// R = 3\nTime m![R # 4 / 2], Packet m![[R # 4 % 2, 1 # 2] # 8]",
    good: "// R = 3\nTime m![R # 4 / 2], Packet m![R # 4 % 2 # 8]",
    manual: "L6284-L6288",
    generations: Generations::Both,
};

/// VCG-009 on a padded R whose Packet part `pp` has padding inside it (`R # 8 % 4, 1 # 2`):
/// whether it fired. Only padding may follow R's part in Packet.
pub(super) fn check(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    pp: &RPart,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (r, p_size, packet_txt, more) = (p.r, p.p_size, &p.packet_txt, &p.more);
    let Some(Dim::Factor(inner)) = p.packet.dims.last() else {
        return false;
    };
    if !(pp.pos + 1 < p.packet.dims.len() && inner.axis.is_none() && !inner.is_broadcast()) {
        return false;
    }
    let radix = p.packet_radix(pp);
    let part = if radix < p_size {
        format!("{r} # {p_size} % {radix}")
    } else {
        format!("{r} # {p_size}")
    };
    let msg = format!(
        "the innermost Packet counter must be the VCG's packet dim, but the innermost \
         digit of Packet {packet_txt} is padding ({} lanes) inside {r}'s part, so {r}'s \
         lanes are not a prefix of the flit. Put {r}'s part innermost and the padding \
         outside it: Packet m![{part} # {}]{more}",
        inner.extent, cx.target.ve_way8_lanes,
    );
    out.push(Diagnostic::new(&VCG_009, p.step.span, msg));
    true
}

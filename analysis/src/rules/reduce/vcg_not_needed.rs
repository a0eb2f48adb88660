//! VCG-010: when |R| is a multiple of R's Packet size, or fits one packet, no packet is
//! partial and the VCG is not needed. A permission, not a finding: VCG-005 and VCG-006 stay
//! silent then ([`super::placement::Placement::partial_packet`]), and nothing is reported under
//! this code.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const VCG_010: Rule = Rule {
    code: "VCG-010",
    name: "vcg-not-needed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "No VCG is needed when |R| divides evenly (no partial packets)",
    docs: "When |R| is a multiple of R's Packet size every packet is full or empty, and Slice + \
           Packet reduces to Slice only (Slice + Time + Packet to Slice + Time); when |R| fits \
           one packet it is Packet only. This rule is a permission, not a finding: VCG-005 and \
           VCG-006 stay silent in these cases, and nothing is reported under this code.",
    bad: "// a partial last packet (2045 % 8 = 5) does need the VCG: VCG-005\naxes![R = 2045]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    good: "axes![R = 2040]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    manual: "L6111-L6118, L6540-L6542, L6547",
    generations: Generations::Both,
};

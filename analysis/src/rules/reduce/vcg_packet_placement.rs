//! VCG-002: in Packet Reduce mode the VCG gives each flit a prefix valid count, so a padded
//! reduce axis R appears in Packet at most once, as its innermost part, and alone: another
//! axis sharing the packet falls outside the valid prefix and drops out of the result.

use super::placement::{Placement, RPart};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::{Dim, Factor};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_002: Rule = Rule {
    code: "VCG-002",
    name: "vcg-packet-placement",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded R in Packet appears once, as its innermost `% k` part, alone in the packet prefix",
    docs: "In Packet Reduce mode the VCG gives each flit a prefix valid count. R may appear at most \
           once in Packet, its Packet part must be R's innermost part (`R # 24 % 8`, with the outer \
           part `R # 24 / 8` in Time), and the lanes after it must be padding: another axis \
           sharing the packet falls outside the valid prefix and silently drops out of the result. \
           (Padding inside R's packet part is VCG-009; a non-prefix packet under \
           `BranchMode::ValidCount` is VCG-001.)",
    bad: "Time m![R # 24 % 8], Packet m![R # 24 / 8 # 8]",
    good: "Time m![R # 24 / 8], Packet m![R # 24 % 8]",
    manual: "L5612-L5613, L6009, L6025-L6026, L6046, L6078, L6087-L6091",
    generations: Generations::Both,
};

/// VCG-002 on a padded R in Packet, `pp` its first Packet part: whether it fired.
pub(super) fn check(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    pp: &RPart,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(msg) = repeated(p)
        .or_else(|| not_innermost(p, pp))
        .or_else(|| shared(cx, p))
    else {
        return false;
    };
    out.push(Diagnostic::new(&VCG_002, p.step.span, msg));
    true
}

/// R appears more than once in Packet.
fn repeated(p: &Placement<'_>) -> Option<String> {
    let (r, packet_txt, more) = (p.r, &p.packet_txt, &p.more);
    let pk = &p.packet_parts;
    (pk.len() > 1).then(|| {
        format!(
            "{r} appears {} times in Packet {packet_txt}; the VCG's prefix valid count allows \
             R at most once in Packet, as its innermost part{more}",
            pk.len()
        )
    })
}

/// R's Packet part `pp` is not its innermost part: an outer part of R is in Time or Slice.
fn not_innermost(p: &Placement<'_>, pp: &RPart) -> Option<String> {
    let (r, p_size, more) = (p.r, p.p_size, &p.more);
    if pp.coef == p.min_coef {
        return None;
    }
    let inner = pp.coef;
    Some(format!(
        "{r}'s Packet part m![{}] is not its innermost part: a prefix valid count cannot \
         describe it. Put the inner part in Packet and the outer part in Time: Time \
         m![{r} # {p_size} / {inner}], Packet m![{r} # {p_size} % {inner}]{more}",
        p.render(pp)
    ))
}

/// Other axes share the Packet with R.
fn shared(cx: &FnContext<'_>, p: &Placement<'_>) -> Option<String> {
    let (r, packet_txt, more) = (p.r, &p.packet_txt, &p.more);
    let others: Vec<String> = p
        .packet
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name != r => Some(a.name.to_string()),
            _ => None,
        })
        .collect();
    if others.is_empty() {
        return None;
    }
    Some(format!(
        "{} shares Packet {packet_txt} with the padded reduce axis {r}: lanes after R's \
         valid prefix count as padding, so {}'s values silently drop out of the result. \
         Move {} out of Packet, or pad {r} to fill all {} lanes{more}",
        others.join(", "),
        others.join(", "),
        others.join(", "),
        cx.target.ve_way8_lanes,
    ))
}

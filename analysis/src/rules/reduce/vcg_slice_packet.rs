//! VCG-005: the packet valid count depends on the time step only, never on the slice, so a
//! padded reduce axis split over Slice and Packet with a partial last packet cannot be counted.

use super::placement::Placement;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const VCG_005: Rule = Rule {
    code: "VCG-005",
    name: "vcg-slice-packet",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded R split over Slice and Packet needs a slice-dependent packet count: unsupported",
    docs: "The packet valid count depends on the time step only, never on the slice, so the \
           boundary slice cannot get a partial count while the others get 8. It works only when \
           |R| is a multiple of R's Packet size or fits one packet. Move R's Packet part into \
           Time (Slice + Time is supported) or fill the padding with the reduce's identity element.",
    bad: "axes![R = 2045]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    good: "axes![R = 2045]; Slice m![R # 2048 / 8], Time m![R # 2048 % 8], Packet m![A # 8]",
    manual: "L5597, L6138-L6153, L6520-L6543",
    generations: Generations::Both,
};

/// VCG-005 on a padded R in Slice and Packet (not Time) whose last packet is partial,
/// `stride_p` its lanes per packet.
pub(super) fn report(p: &Placement<'_>, stride_p: u64, out: &mut Vec<Diagnostic>) {
    let (r, n, p_size, more) = (p.r, p.n, p.p_size, &p.more);
    let slice_txt: Vec<String> = p.slice_parts.iter().map(|q| p.render(q)).collect();
    let msg = format!(
        "the padded reduce axis {r} ({n}) spans Slice and Packet: the last valid \
         slice needs a packet valid count of {} while the others need {stride_p}, \
         but the packet count cannot vary by slice. Put {r}'s Packet part in Time \
         instead ({r}'s factors: `{}` in Slice, `{r} # {p_size} % {stride_p}` in \
         Time){more}",
        n % stride_p,
        slice_txt.join(", "),
    );
    out.push(Diagnostic::new(&VCG_005, p.step.span, msg));
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, kernel};

    #[test]
    fn l6153_slice_packet_2045_partial_count_5() {
        // L6132-L6153: R = 2045 in Slice R # 2048 / 8 and Packet R # 2048 % 8: last slice vc 5.
        let src = kernel(
            "R = 2045",
            "i32",
            "R # 2048 / 8",
            "1",
            "R # 2048 % 8",
            "R # 2048 % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-005")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(
            m.contains("packet valid count of 5 while the others need 8"),
            "{m}"
        );
        assert!(m.contains("`R # 2048 % 8` in Time"), "{m}");
        // L6540: n % stride_p == 0 (2040 = 255 * 8) is Slice only in disguise.
        let ok = kernel(
            "R = 2040",
            "i32",
            "R # 2048 / 8",
            "1",
            "R # 2048 % 8",
            "R # 2048 % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(!codes(&ok).iter().any(|(c, _)| c.starts_with("VCG")));
    }
}

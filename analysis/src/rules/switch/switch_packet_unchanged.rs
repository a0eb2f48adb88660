//! SWI-008: the switch neither pads nor reshapes the packet, so the `SwitchTensor` a chain
//! ending in a switch declares has the FetchTensor's Packet.

use super::call::Switch;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};

pub const SWI_008: Rule = Rule {
    code: "SWI-008",
    name: "switch-packet-unchanged",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet passes the switch unchanged (and Chip, Cluster)",
    docs: "The switch neither pads nor reshapes the packet: the `SwitchTensor`'s Packet is the \
           FetchTensor's. Normalize it afterwards with `.collect::<Time2, Packet2>()`. (A changed \
           Chip or Cluster is reported by KRN-004 for every engine, the switch included.)",
    bad: "let s: SwitchTensor<'_, T, i8, m![1], m![1 # 2], m![A], m![B], m![C # 32]> = fetched_with_packet_c.switch(..);",
    good: "let s: SwitchTensor<'_, T, i8, m![1], m![1 # 2], m![A], m![B], m![C]> = fetched_with_packet_c.switch(..);",
    manual: "L3065-L3067, L3087-L3088",
    generations: Generations::Both,
};

/// Reports a declared result Packet that is not the switch's input Packet.
pub(super) fn check(sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    if sw.index + 1 != sw.chain.steps.len() {
        return;
    }
    let Some(declared) = sw.chain.declared.as_ref() else {
        return;
    };
    if declared.kind != crate::model::Kind::Switch {
        return;
    }
    let (Some(want), Some(have)) = (declared.get(Slot::Packet), sw.input.get(Slot::Packet)) else {
        return;
    };
    let (Some(a), Some(b)) = (&want.layout, &have.layout) else {
        return;
    };
    if a == b {
        return;
    }
    let span = want.span.unwrap_or(sw.step.span);
    let mut d = Diagnostic::new(
        &SWI_008,
        span,
        format!(
            "the switch passes the packet through unchanged: its Packet is the FetchTensor's `{}`, not `{}`; pad or split it afterwards with `.collect::<Time2, Packet2>()`",
            have.text, want.text
        ),
    )
    .with_related(sw.step.span, "the switch");
    if want.span.is_some() {
        d = d.with_edit("keep the fetched packet", false, span, have.text.clone());
    }
    out.push(d);
}

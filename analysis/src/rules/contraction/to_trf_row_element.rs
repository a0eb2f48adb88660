//! CON-010: `.to_trf()` stores the collected stream in arrival order, its outermost factors as
//! the Row and the rest as the Element, so Row ++ Element is the stream.

use super::layouts::{layout, m, same_data, strip, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Slot, Step};
use crate::rule::{Generations, Rule, Status};

pub const CON_010: Rule = Rule {
    code: "CON-010",
    name: "to-trf-row-element",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "to_trf::<Row, Element>: Row is the outermost part of the collected Time ++ Packet, Element the rest",
    docs: "`.to_trf()` stores the collected stream as it arrives: the outermost axes become Row \
           and the remaining inner axes the Element (`collect::<m![N, K / 16], m![K % 16]>()` \
           stores `Row = m![N]`, `Element = m![K]`). Row ++ Element must be the collected Time ++ \
           Packet (padding aside); reorder the collect or the TRF types.",
    bad: "collect::<m![N, K / 16], m![K % 16]>().to_trf::<m![K / 16], m![N, K % 16]>(TrfAddress::Full)",
    good: "collect::<m![N, K / 16], m![K % 16]>().to_trf::<m![N], m![K]>(TrfAddress::Full)",
    manual: "L4053-L4055, L503-L508",
    generations: Generations::Both,
};

/// CON-010 on a TRF load.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let (Some(t), Some(p), Some(r), Some(e)) = (
        layout(input, Slot::Time),
        layout(input, Slot::Packet),
        layout(output, Slot::Row),
        layout(output, Slot::Element),
    ) else {
        return;
    };
    let (Ok(stream), Ok(stored)) = (t.pair(p), r.pair(e)) else {
        return;
    };
    if same_data(&stream, &stored) {
        return;
    }
    let (Some(s), Some(_)) = (strip(&stream), strip(&stored)) else {
        return;
    };
    let mut msg = format!(
        "`.to_trf()` stores the collected stream (Time {}, Packet {}) in arrival order: the outermost \
         factors become Row and the rest the Element, so Row ++ Element must be `{}`, but Row {} ++ \
         Element {} is `{}`",
        text(input, Slot::Time),
        text(input, Slot::Packet),
        m(&s),
        text(output, Slot::Row),
        text(output, Slot::Element),
        strip(&stored).map_or_else(|| "?".into(), |l| m(&l)),
    );
    if r.size > 0 && s.size.is_multiple_of(r.size) && r.size <= s.size {
        let inner = s.size / r.size;
        if s.size.is_multiple_of(inner) {
            msg.push_str(&format!(
                " (with {} Rows: Row `{}`, Element `{}`)",
                r.size,
                m(&s.stride(inner)),
                m(&s.window(inner))
            ));
        }
    }
    out.push(Diagnostic::new(&CON_010, step.span, msg));
}

//! COL: the Collect Engine, which normalizes packets to 32-byte flits (constraints.md §9).

use super::FnContext;
use super::alignment::{elems_for, pad_edit, slot_bytes, written};
use super::registry::{Rule, Status};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;

pub const RULES: &[Rule] = &[
    Rule {
        code: "COL-001",
        name: "collect-one-flit",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "The collect output packet is exactly one 32-byte flit",
        docs: "Collect pads a smaller packet to the 32-byte flit and splits a larger one at the flit \
               boundary, moving the outer flit count into Time; every engine downstream consumes \
               exactly one flit per step. So the Packet of `.collect::<Time2, Packet2>()` is 32 bytes: \
               pad a small packet (`m![B # 32]` for 16 × i8) or split a large one (`m![B % 16]` with \
               `B / 16` added to Time, for 32 × bf16). The manual's GEMV collects a 64-byte packet \
               (constraints.md §22 A-12).",
        bad: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B]>()",
        good: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B # 32]>()",
        manual: "L3039, L3544, L3549, L3561-L3564",
    },
    Rule {
        code: "COL-002",
        name: "collect-time-packet",
        severity: Severity::Error,
        status: Status::Planned("needs flit splitting of mappings (crate::derive, issue 4)"),
        summary: "Time2 = Time followed by the outer flit count; Packet2 = the inner 32 bytes",
        docs: "For packets over 32 bytes the flit index becomes the innermost Time factor \
               (`m![A]`, bf16 `m![B]` with B = 32 → `m![A, B / 16]`, `m![B % 16]`); smaller packets \
               keep Time and pad the packet.",
        bad: "",
        good: "",
        manual: "L3563-L3564, L3589-L3603, L3636-L3668",
    },
    Rule {
        code: "COL-003",
        name: "collect-mandatory",
        severity: Severity::Error,
        status: Status::Planned("reported as KRN-002 (collect-is-mandatory)"),
        summary: "Collect comes before every downstream engine",
        docs: "See KRN-002.",
        bad: "",
        good: "",
        manual: "L3605",
    },
    Rule {
        code: "COL-004",
        name: "collect-padding-waste",
        severity: Severity::Perf,
        status: Status::Planned("perf hint; scheduled after the error rules (issue 4)"),
        summary: "Packets that are not multiples of 32 bytes waste flit bandwidth on zero padding",
        docs: "A 40-byte packet becomes two flits (64 bytes) with 24 bytes of zeros; see ALN-011.",
        bad: "",
        good: "",
        manual: "L2123-L2124, L2128",
    },
    Rule {
        code: "COL-005",
        name: "single-channel-flits",
        severity: Severity::Info,
        status: Status::Planned("no user API for dual channel mode is documented"),
        summary: "Flits are 32 bytes; 64-byte dual channel flits only by explicit configuration",
        docs: "See FET-012.",
        bad: "",
        good: "",
        manual: "L1997, L2125-L2127",
    },
];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for step in chain.steps.iter().filter(|s| s.method == "collect") {
            let Some(ty) = step.output.as_ref() else {
                continue;
            };
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes == flit {
                continue;
            }
            let arg = written(step, 1);
            let span = arg.map_or(step.span, |a| a.span);
            let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
            let mut diag = if bytes < flit {
                Diagnostic::new(
                    "COL-001",
                    span,
                    format!(
                        "the collect output packet {text} is {bytes} bytes ({n} × {d}); it must be \
                         exactly one {flit}-byte flit: pad it to {} elements",
                        elems_for(d, flit)
                            .map_or_else(|| "a full flit of".to_string(), |m| m.to_string())
                    ),
                )
            } else {
                let per = elems_for(d, flit);
                Diagnostic::new(
                    "COL-001",
                    span,
                    format!(
                        "the collect output packet {text} is {bytes} bytes ({n} × {d}); it must be \
                         exactly one {flit}-byte flit: keep {} elements in the packet and move the \
                         {} outer flits into Time",
                        per.map_or_else(|| "one flit of".to_string(), |m| m.to_string()),
                        bytes.div_ceil(flit)
                    ),
                )
            };
            if bytes < flit
                && let Some(edit) = arg
                    .zip(elems_for(d, flit))
                    .and_then(|(a, m)| pad_edit(a, m))
            {
                diag = diag.with_fix(format!("pad the packet to {flit} bytes"), false, vec![edit]);
            }
            out.push(diag);
        }
    }
}

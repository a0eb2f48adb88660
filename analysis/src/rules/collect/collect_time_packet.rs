//! COL-002: the written Time2 and Packet2 of a collect are what collect derives from its
//! input (the inner flit in the packet, the outer flit count as the innermost Time factor);
//! the fix writes the derived ones.

use super::flits::Collected;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::{Slot, Step, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const COL_002: Rule = Rule {
    code: "COL-002",
    name: "collect-time-packet",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Time2 = Time followed by the outer flit count; Packet2 = the inner 32 bytes",
    docs: "`collect()` pads the packet to the flit boundary and, for packets over 32 bytes, moves \
           the outer flit index to the innermost position of Time (`m![A]`, bf16 `m![B]` with B = \
           32 → `m![A, B / 16]`, `m![B % 16]`); smaller packets keep Time and are padded \
           (`m![B # 32]`). A written `.collect::<Time2, Packet2>()` (or CollectTensor annotation) \
           with a one-flit Packet2 that is not this derivation (reordered, the flit factor \
           elsewhere in Time, another split) does not type-check against `verify_collect`. \
           visa-lint compares by meaning (MAP-007) and offers the derived mappings. A Packet2 \
           that is not one flit is COL-001's.",
    bad: "// fetch Time m![A], Packet m![B], bf16, B = 32\n.collect::<m![B / 16, A], m![B % 16]>()",
    good: ".collect::<m![A, B / 16], m![B % 16]>()",
    manual: "L3561-L3564, L3589-L3603, L3622-L3668",
    generations: Generations::Both,
};

/// COL-002: the written Time2/Packet2 against the derivation.
pub(super) fn check(step: &Step, c: &Collected<'_>, flit: u64, out: &mut Vec<Diagnostic>) {
    let (t, p, outp, f) = (c.t, c.p, c.outp, &c.f);
    let (Some(t2), Some(p2)) = (outp.get(Slot::Time), outp.get(Slot::Packet)) else {
        return;
    };
    let mut edits = Vec::new();
    let mut first = None;
    for (k, mv, want) in [(0, t2, &f.time2), (1, p2, &f.packet2)] {
        let Some(l) = mv.layout.as_deref() else {
            continue;
        };
        let span = written(step, k).map(|a| a.span).or(mv.span);
        let Some(span) = span else { continue };
        if l == want {
            continue;
        }
        first.get_or_insert((span, mv.text.clone(), want.to_expr(), k));
        edits.push(Edit {
            span,
            new_text: format!("m![{}]", want.to_expr()),
        });
    }
    let Some((span, text, want, k)) = first else {
        return;
    };
    let slot = if k == 0 { "Time2" } else { "Packet2" };
    out.push(
        at_arg(
            &COL_002,
            step,
            Some(span),
            format!(
                "collect derives {slot} = `m![{want}]` from Time `{}` and the {}-byte Packet `{}` ({} flit{}: the outer flit count is the innermost Time factor, the inner {flit} bytes the packet), not `{text}`",
                t.text,
                f.packet_bytes,
                p.text,
                f.flits,
                if f.flits == 1 { "" } else { "s" }
            ),
        )
        .with_fix("use the derived Time2 and Packet2", false, edits),
    );
}

//! CON-006: the Stream Adapter broadcasts one packet to every Row, so the activation stream
//! cannot vary along an axis of the TRF's Row.

use super::align::Align;
use super::layouts::{layout, overlaps, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};

pub const CON_006: Rule = Rule {
    code: "CON-006",
    name: "row-broadcast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Stream Adapter broadcasts one packet to all Rows: Row axes are not in the stream",
    docs: "The Stream Adapter copies the same collected packet to the 1, 2, 4 or 8 Rows of the \
           computation mapping; only the TRF Sequencer gives each Row different (weight) data. So \
           the activation stream cannot depend on a Row axis: a factor of the TRF's Row that also \
           appears in the collected Time or Packet would need a different packet per Row. The Row \
           count itself (1, 2, 4 or 8, padded with `#`) is checked where the Row is written \
           (CAP-004).",
    bad: "input: CollectTensor<.., m![M, N], m![K]>; trf Row m![N]; input.align::<m![M, N], m![K # 32], _, _>(trf)",
    good: "input: CollectTensor<.., m![M], m![K]>; trf Row m![N]; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L3799-L3801, L3909, L3929-L3933, L3953",
    generations: Generations::Both,
};

/// CON-006 on an `.align()`; whether it fired.
pub(super) fn check(a: &Align<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (Some(var), input) = (a.trf, a.input) else {
        return false;
    };
    let Some(r) = layout(&var.ty, Slot::Row) else {
        return false;
    };
    let (t, p) = (a.time, a.packet);
    let shared: Vec<String> = r
        .dims
        .iter()
        .filter(|d| t.dims.iter().chain(p.dims.iter()).any(|s| overlaps(d, s)))
        .map(Dim::to_expr)
        .collect();
    if shared.is_empty() {
        return false;
    }
    out.push(
        Diagnostic::new(
            &CON_006,
            a.step.span,
            format!(
                "the Stream Adapter broadcasts the same packet to all {} Rows (Row {} of the \
                 TRF tensor `{}`), so the stream cannot vary along the Row: `{}` is also in \
                 the collected stream (Time {}, Packet {}); keep Row axes out of the \
                 activation, or move them out of Row",
                r.size,
                text(&var.ty, Slot::Row),
                var.name,
                shared.join("`, `"),
                text(input, Slot::Time),
                text(input, Slot::Packet)
            ),
        )
        .with_related(var.span, "the TRF tensor is declared here"),
    );
    true
}

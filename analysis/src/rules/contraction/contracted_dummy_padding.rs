//! CON-019: a contracted axis padded with dummies on both sides, in the stream packet and in
//! the TRF Element, adds dummy × dummy to every sum unless the TRF padding holds zeros.

use super::align::{Align, TrfSide};
use super::layouts::text;
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};

pub const CON_019: Rule = Rule {
    code: "CON-019",
    name: "contracted-dummy-padding",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Padding contracted on both sides must be zero in the TRF (1+1# x 1+1z)",
    docs: "Dummy padding `#` holds arbitrary values. When the stream packet and the TRF Element \
           both pad the same contracted axis, the padded positions multiply dummy by dummy and the \
           tree adds garbage to every sum; the TRF side must hold zeros (`1z`). Make sure the TRF \
           padding is loaded as zeros, or pad only one side.",
    bad: "stream packet m![K # 16] (i8), TRF Element m![K # 16]: both pad K",
    good: "stream packet m![K # 16], TRF Element m![K] with zero fill by the Stream Adapter",
    manual: "L3769-L3772",
    generations: Generations::Both,
};

/// CON-019 on an `.align()`: the first contracted axis both sides pad.
pub(super) fn check(a: &Align<'_>, side: &TrfSide<'_>, out: &mut Vec<Diagnostic>) {
    let (p, op, e) = (a.packet, a.out_packet, side.element);
    for dim in &p.dims {
        if let Dim::Factor(f) = dim
            && f.valid < f.extent
            && let Some(axis) = &f.axis
            && op.axis_names().contains(&axis.name)
            && e.dims.iter().any(|x| {
                matches!(x, Dim::Factor(g) if g.valid < g.extent
                    && g.axis.as_ref().is_some_and(|b| b.name == axis.name))
            })
        {
            out.push(Diagnostic::new(
                &CON_019,
                a.step.span,
                format!(
                    "the stream packet {} and the TRF Element {} both pad {} with dummies; the padded \
                     positions multiply dummy by dummy and add garbage to every sum unless the TRF \
                     padding holds zeros (1+1# × 1+1z)",
                    text(a.input, Slot::Packet),
                    text(&side.var.ty, Slot::Element),
                    axis.name
                ),
            ));
            break;
        }
    }
}

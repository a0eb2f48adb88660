//! SWI-006: routers buffer about one packet and forward in arrival order, so the factors a
//! custom topology moves from Slice into Time keep the order they had in Slice. The fix
//! reorders them.

use super::call::Switch;
use super::layouts::text;
use super::moved::{MoveKey, digit, reordered};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const SWI_006: Rule = Rule {
    code: "SWI-006",
    name: "switch-order-preservation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Axes moving from Slice to Time keep their relative order from the input Slice",
    docs: "Routers buffer about one packet and forward in arrival order, so the factors of the \
           input Slice that a custom topology moves into Time appear in Time in the order they \
           had in Slice (outermost first). Checked for CustomBroadcast; a regular topology's \
           output is checked exactly by SWI-002. The fix reorders the moved factors.",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 2, B / 2 % 2]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B / 2 % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3460, L3488-L3492, L3505-L3510",
    generations: Generations::Both,
};

/// Whether two of the moved factors `digits` ([`super::moved::moved`]) come in reversed
/// order; reported when so.
pub(super) fn check(
    sw: &Switch<'_>,
    digits: &[(usize, Option<MoveKey>)],
    out: &mut Vec<Diagnostic>,
) -> bool {
    let keys: Vec<(usize, MoveKey)> = digits
        .iter()
        .filter_map(|(k, key)| key.map(|v| (*k, v)))
        .collect();
    let span = sw.time_span();
    let written = output_arg(sw.step, Some(1), Slot::Time);
    // SWI-006: order preservation.
    if let Some(w) = keys.windows(2).find(|w| w[0].1 > w[1].1) {
        let mut sorted = keys.clone();
        sorted.sort_by_key(|(_, key)| *key);
        let mut order: Vec<usize> = Vec::new();
        let mut it = sorted.iter().map(|(k, _)| *k);
        for (k, key) in digits {
            if key.is_some() {
                order.extend(it.next());
            } else {
                order.push(*k);
            }
        }
        let mut d = at_arg(
            &SWI_006,
            sw.step,
            Some(span),
            format!(
                "`{}` and `{}` move from Slice `{}` into Time in reversed order: axes moving from Slice to Time keep their input Slice order, the routers cannot reorder",
                digit(sw.out_time, w[0].0),
                digit(sw.out_time, w[1].0),
                text(sw.input, Slot::Slice),
            ),
        );
        if written.is_some()
            && let Some(t) = reordered(sw.out_time, &order)
        {
            d = d.with_fix(
                "keep the input Slice order",
                false,
                sw.out_edits(1, Slot::Time, &t),
            );
        }
        out.push(d);
        return true;
    }
    false
}

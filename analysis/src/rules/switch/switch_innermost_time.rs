//! SWI-007: data from other slices arrives last within each packet, so the factors a custom
//! topology moves from Slice into Time are the innermost Time positions. The fix moves them
//! to the tail.

use super::call::Switch;
use super::layouts::text;
use super::moved::{MoveKey, digit, reordered};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const SWI_007: Rule = Rule {
    code: "SWI-007",
    name: "switch-innermost-time",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Axes moving from Slice to Time take the innermost positions of the output Time",
    docs: "Data from other slices arrives last within each packet, so the moved factors are the \
           innermost Time dimensions. Custom topologies must place them there; Broadcast01 can \
           interleave them through `time0`, which SWI-002 checks. The fix moves them to the tail.",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![A % 2, C, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    manual: "L3472, L3481-L3482, L3511-L3519",
    generations: Generations::Both,
};

/// Whether a Time factor that is neither moved nor padding sits inside the moved factors
/// `digits` ([`super::moved::moved`]); reported when so.
pub(super) fn check(
    sw: &Switch<'_>,
    digits: &[(usize, Option<MoveKey>)],
    out: &mut Vec<Diagnostic>,
) -> bool {
    let span = sw.time_span();
    let written = output_arg(sw.step, Some(1), Slot::Time);
    let first = digits.iter().position(|(_, key)| key.is_some());
    if let Some(first) = first
        && let Some((k, _)) = digits[first..].iter().find(|(k, key)| {
            key.is_none()
                && !matches!(
                    sw.out_time.dims.get(*k),
                    Some(Dim::Factor(Factor { axis: None, .. }))
                )
        })
    {
        let mut order: Vec<usize> = digits
            .iter()
            .filter(|(_, key)| key.is_none())
            .map(|(k, _)| *k)
            .collect();
        order.extend(
            digits
                .iter()
                .filter(|(_, key)| key.is_some())
                .map(|(k, _)| *k),
        );
        let mut d = at_arg(
            &SWI_007,
            sw.step,
            Some(span),
            format!(
                "`{}` sits inside the axes moved from Slice `{}` (`{}` …): data from other slices arrives last within each packet, so the moved axes must be the innermost Time positions",
                digit(sw.out_time, *k),
                text(sw.input, Slot::Slice),
                digit(sw.out_time, digits[first].0),
            ),
        );
        if written.is_some()
            && let Some(t) = reordered(sw.out_time, &order)
        {
            d = d.with_fix(
                "move the moved axes innermost",
                false,
                sw.out_edits(1, Slot::Time, &t),
            );
        }
        out.push(d);
        return true;
    }
    false
}

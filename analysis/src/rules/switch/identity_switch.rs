//! KRN-003: a valid switch that gives back its input Slice and Time unchanged is forwarding,
//! the cheapest switch of all: drop it and collect the FetchTensor directly.

use super::call::Switch;
use super::layouts::text;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};

pub const KRN_003: Rule = Rule {
    code: "KRN-003",
    name: "identity-switch",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A switch that does not redistribute slices can be dropped (forwarding)",
    docs: "Forwarding has no topology: skip `.switch()` and call `collect()` on the FetchTensor \
           directly (ring size 1, the cheapest switch). Reported (by the switch checks) when a \
           valid switch gives back its input Slice and Time unchanged, such as \
           `Transpose { slice1: 1, slice0: 256 }` or `Broadcast01 { slice1: 1, slice0: 1, .. }`.",
    bad: "fetched.switch::<m![A], m![B]>(SwitchConfig::Transpose { slice1: 1, slice0: 256 }).collect::<m![B], m![C]>()",
    good: "fetched.collect::<m![B], m![C]>()",
    manual: "L3123, L363",
    generations: Generations::Both,
};

/// KRN-003: a switch whose output is its input.
pub(super) fn check(sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    if sw.out_slice != sw.in_slice || sw.out_time != sw.in_time {
        return;
    }
    out.push(Diagnostic::new(
        &KRN_003,
        sw.step.span,
        format!(
            "{} leaves Slice `{}` and Time `{}` as they are: this is forwarding; drop `.switch()` and call `.collect()` on the FetchTensor (ring size 1)",
            sw.config.topo.describe(),
            text(sw.input, Slot::Slice),
            text(sw.input, Slot::Time),
        ),
    ));
}

//! SWI-005: the ring of a CustomBroadcast is a power-of-two group of consecutive slices, up
//! to the cluster's, that spans every slice exchanging data ([`needed_ring`]): a smaller one
//! cannot route the data.

use super::call::Switch;
use super::layouts::{text, tiled};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::{Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use std::collections::BTreeSet;

pub const SWI_005: Rule = Rule {
    code: "SWI-005",
    name: "custom-ring-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "CustomBroadcast ring_size is a power of two up to the cluster's slices (256) that covers the slices exchanging data",
    docs: "Rings are power-of-two groups of consecutive slices. The slices that exchange data are \
           found from the mappings: the outermost part of the Slice that is the same in input and \
           output stays put, so the ring must span the rest (`m![A, B]` → `m![A / 2, X, B / 2, Y]` \
           keeps `A / 2`: 256 / 8 = 32 slices). A ring that is too small cannot route the data; \
           one that is larger than needed only costs cycles (SWI-011).",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 16 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    manual: "L3364, L3401, L3441",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 a cluster has the slices of the kernel's `#[device(pe)]` grid, \
         64, 128 or 256 (`furiosa-opt-examples/src/pe_count.rs:14-20`): the ring is bounded by \
         that count",
    ),
};

/// The outermost part of the Slice that input and output share (slices that keep their data
/// group); the ring must span the rest. Both sizes are the cluster's (a power of two).
pub(super) fn needed_ring(
    in_slice: &Layout,
    out_slice: &Layout,
    known: &BTreeSet<String>,
) -> Option<u64> {
    let a = tiled(in_slice, known)?;
    let b = tiled(out_slice, known)?;
    let n = a.size;
    if n != b.size || !n.is_power_of_two() {
        return None;
    }
    let mut prefix = n;
    while prefix > 1 {
        let s = n / prefix;
        if a.stride(s) == b.stride(s) {
            return Some(s);
        }
        prefix /= 2;
    }
    Some(n)
}

/// Whether `ring_size` is a power of two up to the cluster's slices; reported when not.
pub(super) fn is_ring(sw: &Switch<'_>, ring_size: u64, out: &mut Vec<Diagnostic>) -> bool {
    let slices = sw.cluster_slices();
    let ring_span = sw.config.span("ring_size", sw.step.span);
    if !ring_size.is_power_of_two() || ring_size > slices {
        out.push(Diagnostic::new(
            &SWI_005,
            ring_span,
            format!(
                "ring_size {ring_size} is not a power of two up to {slices}: rings are 1, 2, 4, …, {slices} consecutive slices"
            ),
        ));
        return false;
    }
    true
}

/// Whether the ring is smaller than the `needed` slices that exchange data; reported when so.
pub(super) fn check_covers(
    sw: &Switch<'_>,
    ring_size: u64,
    needed: Option<u64>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let slices = sw.cluster_slices();
    let ring_span = sw.config.span("ring_size", sw.step.span);
    if let Some(n) = needed
        && ring_size < n
    {
        out.push(Diagnostic::new(
            &SWI_005,
            ring_span,
            format!(
                "ring_size {ring_size} is too small: from Slice `{}` to `{}` only the outer {} slice groups keep their data, so data crosses {n} consecutive slices; use ring_size: {n}",
                text(sw.input, Slot::Slice),
                output_arg(sw.step, Some(0), Slot::Slice).map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
                slices / n,
            ),
        ));
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::switch::tests::l;

    #[test]
    fn needed_ring_l3401_l3441() {
        let axes = "A = 16, B = 16, X = 2, Y = 2";
        let known: BTreeSet<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
        let inn = l(axes, "A, B");
        assert_eq!(
            needed_ring(&inn, &l(axes, "A / 2, X, B / 2, Y"), &known),
            Some(32)
        );
        assert_eq!(
            needed_ring(&inn, &l("A = 16, B = 16, X = 4", "A, B / 4, X"), &known),
            Some(4)
        );
        assert_eq!(
            needed_ring(&inn, &l(axes, "B % 4, B / 4, A % 4, A / 4"), &known),
            Some(256)
        );
    }
}

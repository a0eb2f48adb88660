//! The size check the Chip, Cluster and Slice rules (CAP-001/002/003) share: a mapping of
//! one of those slots has exactly as many positions as the kernel's chips or the chip's grid,
//! with the padding fix when it has fewer.

use super::sites::{Site, alias, pad_fix, shown};
use crate::diagnostic::Diagnostic;
use crate::library::Generation;
use crate::model::{FnKind, Slot};
use crate::rule::Rule;
use crate::rules::context::FnContext;

/// CAP-001/002/003: the Chip, Cluster or Slice mappings of a device kernel have exactly `want`
/// positions.
pub(super) fn spatial(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    slot: Slot,
    code: &'static Rule,
    want: u64,
    out: &mut Vec<Diagnostic>,
) {
    for site in sites.iter().filter(|s| s.slot == slot) {
        let Some(n) = site.map.layout.as_deref().map(|l| l.size) else {
            continue;
        };
        if n == want {
            continue;
        }
        let what = shown(cx, site.map);
        let unit = grid_unit(cx, slot, want);
        let head = match slot {
            Slot::Chip => format!("Chip size must be {want}, got {n}"),
            Slot::Cluster => format!("Cluster size must be {want}, got {n}"),
            _ => format!("Slice size must be {want}, got {n}"),
        };
        let advice = if n < want {
            match alias(cx, site.map) {
                Some(a) => format!("pad it with `# {want}` where `type {a}` is defined"),
                None => format!("pad it with `# {want}` to fill the unused positions"),
            }
        } else {
            let instead = match slot {
                Slot::Chip => "move factors into Element (or run on more chips)",
                _ => "move factors into Time or Element",
            };
            format!(
                "padding only adds positions, so no padding brings {n} down to {want}; {instead}"
            )
        };
        let msg = format!(
            "{head}: the {} mapping {what} of this {} has size {n}; {unit}: {advice}",
            title(slot),
            site.kind.type_name()
        );
        let d = Diagnostic::new(code, site.at, msg);
        let d = if n < want {
            pad_fix(
                cx,
                d,
                site,
                want,
                format!("pad the {} mapping to {want}", title(slot)),
            )
        } else {
            d
        };
        out.push(d);
    }
}

/// What sets the size `want` of a Chip, Cluster or Slice mapping, for CAP-001/002/003's
/// messages: the kernel's `chip`, or the chip's (under furiosa-opt-std, the `pe` device's) grid.
fn grid_unit(cx: &FnContext<'_>, slot: Slot, want: u64) -> String {
    let plural = if want == 1 { "" } else { "s" };
    let (chips, pe) = match cx.model.kind {
        FnKind::Device { chips, pe } => (chips, pe),
        _ => (None, None),
    };
    let device = match (cx.model.library, pe) {
        (Generation::OptStd, Some(pe)) => format!(" of this `#[device(pe = {pe})]` kernel"),
        (Generation::OptStd, None) => format!(
            " of this kernel (`#[device]` without `pe` runs on {} processing elements)",
            crate::target::DEFAULT_PE
        ),
        _ => String::new(),
    };
    match slot {
        Slot::Chip if chips.is_none() => {
            format!("the kernel runs on {want} chip{plural} (`#[device]` without `chip`)")
        }
        Slot::Chip => {
            format!("the kernel runs on {want} chip{plural} (`#[device(chip = {want})]`)")
        }
        Slot::Cluster => format!("a chip{device} has {want} cluster{plural}"),
        _ => format!("a cluster{device} has {want} slices"),
    }
}

/// How a message names a slot.
pub(super) fn title(slot: Slot) -> &'static str {
    match slot {
        Slot::Chip => "Chip",
        Slot::Cluster => "Cluster",
        Slot::Slice => "Slice",
        _ => slot.name(),
    }
}

//! The size check the Chip, Cluster and Slice rules (CAP-001/002/003) share: a mapping of
//! one of those slots has exactly as many positions as the kernel's chips or the chip's grid,
//! with the padding fix when it has fewer.

use super::sites::{Site, alias, move_into_element, pad_fix, shown};
use crate::diagnostic::{Diagnostic, Edit};
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
                Some(a) => format!("pad it with `# {want}` where {}", defined_at(a)),
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
            let d = pad_fix(
                cx,
                d,
                site,
                want,
                format!("pad the {} mapping to {want}", title(slot)),
            );
            match slot {
                Slot::Chip => fewer_chips(d, n),
                _ => d,
            }
        } else {
            match into_element(site, want) {
                Some((title, edits)) => d.with_fix(title, false, edits),
                None => d,
            }
        };
        out.push(d);
    }
}

/// CAP-001's other fix for a Chip mapping of `n` positions, fewer than the kernel's chips:
/// the kernel runs on `n` chips, as its mapping says (`#[device(chip = 2)]` → `chip = 1`), which
/// fixes every Chip mapping of that size at once. It changes where the kernel runs, so it is
/// offered for review after the padding.
///
/// It comes before a padding of the alias's definition: that one is offered only when the
/// crate analysed with it has no new error ([`crate::fix_check`] then puts it first), and the
/// Chip alias is most often shared with the kernels that run on fewer chips.
fn fewer_chips(d: Diagnostic, n: u64) -> Diagnostic {
    let plural = if n == 1 { "" } else { "s" };
    let mut d = d.with_kernel_chips(
        format!("run the kernel on {n} chip{plural}, as its Chip mappings say: `chip = {n}`"),
        n,
    );
    if let Some(fix) = d.fixes.pop() {
        let at = d.fixes.iter().position(|f| f.edits_definition);
        d.fixes.insert(at.unwrap_or(d.fixes.len()), fix);
    }
    d
}

/// What sets the size `want` of a Chip, Cluster or Slice mapping, for CAP-001/002/003's
/// messages: the kernel's `chip`, or the chip's (under furiosa-opt-std, the `pe` device's) grid.
fn grid_unit(cx: &FnContext<'_>, slot: Slot, want: u64) -> String {
    let plural = if want == 1 { "" } else { "s" };
    let (chips, pe) = match cx.device() {
        Some(FnKind::Device { chips, pe }) => (chips, pe),
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

/// The fix for a spatial mapping with more than `want` positions: the slot keeps `want` of
/// them, its outer factor when `want` divides its size (`m![A]`, A = 1024 → `m![A / 4]`),
/// else none (`m![1]`, `m![1 # 2]`), and the factors it no longer holds move to the outside
/// of the same tensor's Element, so every element keeps a place (`HbmTensor<i8, m![A],
/// m![B]>` under `chip = 1` → `HbmTensor<i8, m![1], m![A, B]>`, the catalog's example). A
/// mapping of padding only is written smaller.
fn into_element(site: &Site<'_>, want: u64) -> Option<(String, Vec<Edit>)> {
    let layout = site.map.layout.as_deref()?;
    let none_kept = if want == 1 {
        "m![1]".to_string()
    } else {
        format!("m![1 # {want}]")
    };
    if layout.axis_names().is_empty() {
        if site.map.in_tensor_alias {
            return None;
        }
        let title = format!(
            "write the {} as `{none_kept}`: it holds padding only",
            title(site.slot)
        );
        let edit = Edit {
            span: site.at,
            new_text: none_kept,
        };
        return Some((title, vec![edit]));
    }
    if want > 1 && layout.size.is_multiple_of(want) {
        let inner = layout.size / want;
        let kept = format!("m![{}]", layout.stride(inner).to_expr());
        return move_into_element(site, kept, &layout.window(inner));
    }
    move_into_element(site, none_kept, layout)
}

/// Where the alias `a` is defined, as a message says it: `type Slice` is defined, or for an
/// associated type (`<Paged as KvLayout>::Slice`, `Paged::Slice`) the `impl` block defines it.
fn defined_at(a: &str) -> String {
    let assoc = a
        .strip_prefix('<')
        .and_then(|r| r.split_once(">::"))
        .and_then(|(ty_trait, item)| {
            let (ty, tr) = ty_trait.split_once(" as ")?;
            Some(format!("`impl {tr} for {ty}` defines `type {item}`"))
        });
    let inherent = || {
        a.rsplit_once("::")
            .filter(|(ty, _)| ty.chars().next().is_some_and(char::is_uppercase))
            .map(|(ty, item)| format!("`{ty}`'s `impl` block defines `type {item}`"))
    };
    assoc
        .or_else(inherent)
        .unwrap_or_else(|| format!("`type {a}` is defined"))
}

//! The Cluster and Slice sizes of a `#[device]` kernel (CAP-002/003) as the library checks
//! them: an error where the Tensor Unit reads the mapping ([`tensor_unit_sites`]), a warning
//! where only DMA, views and tiles do, and under furiosa-opt-std a warning for a size of
//! another topology's grid ([`other_topology`]).

use super::sites::{Site, alias};
use super::spatial_size::{spatial, title};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::model::{Engine, Kind, Slot, TensorTy};
use crate::rule::Rule;
use crate::rules::context::FnContext;
use std::collections::HashSet;

/// `rule` (CAP-002 or CAP-003) on the `slot` mappings of `sites`, which must have `want`
/// positions: `reached` holds the spans of the mappings that reach the Tensor Unit.
pub(super) fn check(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    reached: &HashSet<Span>,
    slot: Slot,
    rule: &'static Rule,
    want: u64,
    out: &mut Vec<Diagnostic>,
) {
    let mut found = Vec::new();
    spatial(cx, sites, slot, rule, want, &mut found);
    for d in found {
        if let Some(d) = other_topology(cx, sites, slot, &d) {
            out.push(d);
            continue;
        }
        let at_tu = reached.contains(&d.span)
            || sites.iter().any(|s| {
                s.at == d.span
                    && (!is_dma_kind(s.kind)
                        || alias(cx, s.map).is_some_and(|a| reached_alias(cx, reached, a, slot)))
            });
        out.push(if at_tu {
            d
        } else {
            let mut d = d.with_severity(Severity::Warning);
            d.message.push_str(if cx.model.traced_in.is_some() {
                // A helper checked with its caller's kernel: what the caller does with the
                // tensor is not seen here.
                "; this function only moves the tensor by DMA, views and tiles, which the \
                 library does not check: a Tensor Unit step that reads it panics"
            } else {
                "; only DMA, views and tiles use this tensor, which the library does not \
                 check: fetching it would panic"
            });
            d
        });
    }
}

/// `d` (a CAP-002/003 finding) as a warning, when the size it found is one furiosa-opt-std
/// accepts for the slot (a Cluster of 1 or 2, a Slice of 64, 128 or 256: the library's const
/// assertion, `furiosa-opt-std/src/constraints.rs:35-56` at ebb846a) but belongs to another
/// `pe` topology than the kernel's. The library accepts it; the grid of each topology comes
/// from the vendor's examples, not from a published check (`library-v06.md` P1), so a
/// mismatch is flagged, not refused.
fn other_topology(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    slot: Slot,
    d: &Diagnostic,
) -> Option<Diagnostic> {
    if cx.model.library != Generation::OptStd {
        return None;
    }
    let site = sites.iter().find(|s| s.at == d.span && s.slot == slot)?;
    let n = site.map.layout.as_deref()?.size;
    let accepted = match slot {
        Slot::Cluster => crate::target::is_pe_cluster_count(n),
        _ => crate::target::is_pe_slice_count(n),
    };
    accepted.then(|| {
        let mut d = d.clone().with_severity(Severity::Warning);
        d.message.push_str(&format!(
            "; furiosa-opt-std accepts a {} of {n} (another `pe` topology's), so the library \
             does not refuse it, but the kernel's tensors are laid out over its own grid",
            title(slot)
        ));
        d
    })
}

/// A memory tensor kind (HBM, DM, host): the library checks its Cluster and Slice only when
/// it enters the Tensor Unit.
fn is_dma_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::Host | Kind::Hbm | Kind::HbmView | Kind::Dm | Kind::DmView | Kind::DmViewMut
    )
}

/// The spans of the mappings that reach the Tensor Unit, where `furiosa_visa_std` checks the
/// Cluster and Slice sizes (CAP-002/003): every mapping of a Tensor Unit step's input and
/// output (types flow with their written spans, so the `to_dm` turbofish that made a fetched
/// tensor is among them), and the declared type of a chain that runs a Tensor Unit step (the
/// annotation of a commit's result).
pub(super) fn tensor_unit_sites(cx: &FnContext<'_>) -> HashSet<Span> {
    let mut out = HashSet::new();
    let mut add = |ty: &TensorTy| {
        out.extend(ty.maps.values().filter_map(|m| m.span));
    };
    for chain in &cx.model.chains {
        let mut tu = false;
        for step in &chain.steps {
            if step.engine.is_some_and(|e| e != Engine::Memory) {
                tu = true;
                step.input
                    .iter()
                    .chain(step.output.iter())
                    .for_each(&mut add);
            }
        }
        if tu && let Some(d) = &chain.declared {
            add(d);
        }
    }
    out
}

/// Whether some use of the alias `name` in `slot` reaches the Tensor Unit.
fn reached_alias(cx: &FnContext<'_>, reached: &HashSet<Span>, name: &str, slot: Slot) -> bool {
    let types = cx.model.tensors.iter().map(|t| &t.ty).chain(
        cx.model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .filter_map(|s| s.output.as_ref()),
    );
    types
        .filter_map(|ty| ty.get(slot))
        .filter(|m| m.text.trim() == name)
        .filter_map(|m| m.span)
        .any(|sp| reached.contains(&sp))
}

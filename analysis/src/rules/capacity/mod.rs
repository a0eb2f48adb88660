//! CAP: the chip, cluster, slice and row sizes and the DM/TRF/VRF/HBM capacities (constraints.md §4),
//! and KRN-010 (the chip count of `#[device(chip = N)]`, catalog §2).
//!
//! Every mapping is checked once, where it is written: a parameter type, a `let` annotation or
//! a turbofish argument (`MapVal::span`). A mapping inferred from elsewhere is checked where it
//! is written; a mapping alias (`type Slice = m![...]`) is reported once per function, at its
//! first use, naming the alias (its definition is what to edit).
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run. [`sites`] derives once the mappings written in the function, which
//! the size rules read, and [`stores`] the tensors stored in a memory, which the capacity rules
//! read; [`spatial_size`] and [`grid`] are the size check the Chip, Cluster and Slice rules
//! share, and [`footprint`] the capacity check the DM, TRF, VRF and HBM rules share.

mod chip_size;
mod cluster_size;
mod device_chip_count;
mod dm_capacity;
mod footprint;
mod grid;
mod hbm_capacity;
mod sites;
mod slice_size;
mod spatial_size;
mod split_reduce_vrf;
mod stores;
#[cfg(test)]
mod tests;
mod time_unbounded;
mod trf_capacity;
mod trf_region_overlap;
mod trf_row_count;
mod vrf_capacity;

pub use chip_size::CAP_001;
pub use cluster_size::CAP_002;
pub use device_chip_count::KRN_010;
pub use dm_capacity::CAP_005;
pub use hbm_capacity::CAP_008;
pub use slice_size::CAP_003;
pub use split_reduce_vrf::CAP_011;
pub use time_unbounded::CAP_009;
pub use trf_capacity::CAP_006;
pub use trf_region_overlap::CAP_010;
pub use trf_row_count::CAP_004;
pub use vrf_capacity::CAP_007;

use sites::{Site, written_sites};
use stores::{Store, stores};

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::library::Generation;
use crate::model::{FnKind, Kind};
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    CAP_001, CAP_002, CAP_003, CAP_004, CAP_005, CAP_006, CAP_007, CAP_008, CAP_009, CAP_010,
    CAP_011, KRN_010,
];

/// Checks the sizes of the mappings written in the function (in a `#[device]` kernel, the
/// chip count and the Chip, Cluster and Slice sizes; everywhere, the Row sizes), then the
/// footprint of each stored tensor and the TRF regions of its loads.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let sites = written_sites(cx);
    if cx.device().is_some() {
        match cx.chips() {
            Some(n) if n > 0 => chip_size::check(cx, &sites, n, out),
            // The kernel's own attribute: reported at the kernel, not in its helpers.
            chips if matches!(cx.model.kind, FnKind::Device { .. }) => {
                out.push(device_chip_count::report(cx, chips));
            }
            _ => {}
        }
        check_grid(cx, &sites, out);
    }
    trf_row_count::check(cx, &sites, out);
    for s in stores(cx) {
        check_store(cx, &s, out);
    }
    for p in &cx.model.placements {
        hbm_capacity::check_placement(cx, p, out);
    }
    trf_region_overlap::check(cx, out);
}

/// CAP-002, then CAP-003: the Cluster and Slice mappings of a `#[device]` kernel have its
/// grid's sizes ([`FnContext::grid`]).
fn check_grid(cx: &FnContext<'_>, sites: &[Site<'_>], out: &mut Vec<Diagnostic>) {
    let Some(grid) = cx.grid() else {
        return;
    };
    let reached = grid::tensor_unit_sites(cx);
    cluster_size::check(cx, sites, &reached, grid.clusters, out);
    slice_size::check(cx, sites, &reached, grid.slices, out);
}

/// The footprint of one stored tensor, by its memory: under furiosa-opt-std a TRF tensor is
/// checked whole (CAP-006); otherwise DM (CAP-005), a TRF Row or half (CAP-006), VRF (CAP-011
/// for an interleaved load, CAP-007 otherwise) or HBM (CAP-008).
fn check_store(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    if s.kind == Kind::Trf && cx.model.library == Generation::OptStd {
        trf_capacity::check_total(cx, s, out);
        return;
    }
    match s.kind {
        Kind::Dm => dm_capacity::check(cx, s, out),
        Kind::Trf => trf_capacity::check(cx, s, out),
        Kind::Vrf if s.interleaved => split_reduce_vrf::check(cx, s, out),
        Kind::Vrf => vrf_capacity::check(cx, s, out),
        Kind::Hbm => hbm_capacity::check(cx, s, out),
        _ => {}
    }
}

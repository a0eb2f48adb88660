//! SWI: the Switch Engine's ring through a cluster's slices, 256 (or the 64 or 128 of a smaller
//! furiosa-opt-std device) (constraints.md §8), and KRN-003 (a switch that redistributes
//! nothing is forwarding: skip it).
//!
//! `.switch::<Slice2, Time2>(config)` turns the FetchTensor's (Slice, Time) into (Slice2,
//! Time2). For the four regular topologies the manual defines the output from the input and
//! the config's parameters ([`switch_topology_pattern::expected`]): the input Slice is read as
//! `[slice2, slice1, slice0]` and the Time as `[time1, time0]` (or `[time2, time1, time0]`), and
//! the parts are moved as the topology's table says, with broadcast positions (`tile`, written
//! as a new axis such as `X` or as padding `1 # n`) where data is replicated. Layouts are
//! compared by equivalence (MAP-007). Custom topologies (`CustomBroadcast { ring_size }`)
//! accept any output that follows the two custom constraints (order preservation, innermost
//! Time position) and conserves the data.
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run and which silence the rest. [`call`] derives once what the rules of
//! one `.switch()` read, [`config`] reads its `SwitchConfig` argument, [`layouts`] is the
//! layout reading and rendering the rules share, [`unfit`] says why a regular topology's
//! parameters do not fit its input, and [`moved`] finds the factors a custom topology moves
//! from Slice into Time.

mod call;
mod config;
mod custom_ring_size;
mod custom_topology_preempts;
mod identity_switch;
mod inter_transpose_equal_chunks;
mod layouts;
mod moved;
mod switch_conservation;
mod switch_full_cluster;
mod switch_innermost_time;
mod switch_order_preservation;
mod switch_packet_unchanged;
mod switch_parameters_divide;
mod switch_ring_cost;
mod switch_topology_pattern;
#[cfg(test)]
mod tests;
mod unfit;

pub use custom_ring_size::SWI_005;
pub use custom_topology_preempts::SWI_010;
pub use identity_switch::KRN_003;
pub use inter_transpose_equal_chunks::SWI_004;
pub use switch_conservation::SWI_009;
pub use switch_full_cluster::SWI_001;
pub use switch_innermost_time::SWI_007;
pub use switch_order_preservation::SWI_006;
pub use switch_packet_unchanged::SWI_008;
pub use switch_parameters_divide::SWI_003;
pub use switch_ring_cost::SWI_011;
pub use switch_topology_pattern::SWI_002;

use call::Switch;
use config::Topology;
use custom_ring_size::needed_ring;
use switch_topology_pattern::expected;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::Method;
use crate::rule::Rule;
use std::collections::BTreeSet;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    SWI_001, SWI_002, SWI_003, SWI_004, SWI_005, SWI_006, SWI_007, SWI_008, SWI_009, SWI_010,
    SWI_011, KRN_003,
];

/// Checks each `.switch()` of the function whose config and layouts are written out.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (index, step) in chain.steps.iter().enumerate() {
            if step.method != Method::Switch {
                continue;
            }
            let Some(sw) = Switch::of(chain, index, step) else {
                continue;
            };
            check_switch(cx, &sw, out);
        }
    }
}

/// Checks one switch: its packet (SWI-008), then the full cluster (SWI-001), which silences
/// the rest; then, when the input's axes are plain, the rules of its topology.
fn check_switch(cx: &FnContext<'_>, sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    switch_packet_unchanged::check(sw, out);
    if switch_full_cluster::check(cx, sw, out) {
        return;
    }
    let Some(known) = sw.known_axes() else {
        return;
    };
    match sw.config.topo {
        Topology::Custom { ring_size } => check_custom(cx, sw, ring_size, &known, out),
        topo => check_regular(cx, sw, topo, &known, out),
    }
}

/// A regular topology: parameters that fit the input (SWI-003, SWI-004), then the output its
/// table defines (SWI-002); a switch that writes it is checked for forwarding (KRN-003) and its
/// ring's cost (SWI-011).
fn check_regular(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    topo: Topology,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let exp = match expected(topo, sw.in_slice, sw.in_time) {
        Ok(Some(e)) => e,
        Ok(None) => return,
        Err(u) => {
            out.push(u.diagnostic(sw, topo));
            return;
        }
    };
    let Some(matched) = switch_topology_pattern::compare(sw, topo, &exp, known) else {
        return;
    };
    if matched.slice_ok && matched.time_ok {
        identity_switch::check(sw, out);
        switch_ring_cost::check(cx, sw, topo, None, out);
        return;
    }
    switch_topology_pattern::report(sw, topo, &exp, known, &matched, out);
}

/// A custom topology: its ring (SWI-005), the order (SWI-006) and place (SWI-007) of the
/// factors it moves into Time, then conservation (SWI-009), each silencing the rest; a valid
/// one that forwards is KRN-003, else its cost (SWI-011) and a regular topology that does the
/// same (SWI-010).
fn check_custom(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    ring_size: u64,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    if !custom_ring_size::is_ring(sw, ring_size, out) {
        return;
    }
    let needed = needed_ring(sw.in_slice, sw.out_slice, known);
    if custom_ring_size::check_covers(sw, ring_size, needed, out) {
        return;
    }
    // Order first: the manual's order and innermost examples (L3459-L3483) write `B / 2` for
    // the moved `B / 2 % 2`, which would otherwise read as duplicated data.
    let digits = moved::moved(sw);
    if switch_order_preservation::check(sw, &digits, out)
        || switch_innermost_time::check(sw, &digits, out)
    {
        return;
    }
    if switch_conservation::check(sw, known, out) {
        return;
    }
    if sw.out_slice == sw.in_slice && sw.out_time == sw.in_time {
        identity_switch::check(sw, out);
        return;
    }
    if let Some(n) = needed
        && ring_size > n
    {
        switch_ring_cost::check(cx, sw, sw.config.topo, Some(n), out);
    } else {
        switch_ring_cost::check(cx, sw, sw.config.topo, None, out);
    }
    custom_topology_preempts::check(cx, sw, ring_size, known, out);
}

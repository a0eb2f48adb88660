//! SWI-010: a custom topology writes its snoop bitmap to SFRs, preempting DMA and the sub
//! context; when a regular topology with no larger ring gives the same output, the hint names
//! it, with its ring cycles.

use super::call::Switch;
use super::config::Topology;
use super::layouts::tiled;
use super::switch_topology_pattern::expected;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;
use std::collections::BTreeSet;

pub const SWI_010: Rule = Rule {
    code: "SWI-010",
    name: "custom-topology-preempts",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "A CustomBroadcast that a regular topology expresses pays for writing the bitmap",
    docs: "Custom topologies write their snoop bitmap to SFRs, preempting DMA and the sub \
           context. When the same (Slice2, Time2) comes out of a regular topology, that \
           topology avoids the setup; the hint names it, with the ring cycles \
           (`ring_size × input_time × packet_bytes / 32`).",
    bad: "fetched /* Slice m![A], Time m![B] */ .switch::<m![A / 64, A % 2, A / 2 % 32], m![B]>(SwitchConfig::CustomBroadcast { ring_size: 64 })",
    good: "fetched /* Slice m![A], Time m![B] */ .switch::<m![A / 64, A % 2, A / 2 % 32], m![B]>(SwitchConfig::Transpose { slice1: 32, slice0: 2 })",
    manual: "L3336, L3524-L3526, L3533-L3537",
    generations: Generations::Both,
};

/// SWI-010: a regular topology that gives the same output as this custom one.
pub(super) fn check(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    ring_size: u64,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(have_slice), slices) = (tiled(sw.out_slice, known), sw.cluster_slices()) else {
        return;
    };
    for topo in candidates(sw, slices) {
        let Some(ring) = topo.ring_size() else {
            continue;
        };
        if ring <= 1 || ring > ring_size.max(1) {
            continue;
        }
        let Ok(Some((s, t2))) = expected(topo, sw.in_slice, sw.in_time) else {
            continue;
        };
        if t2 != *sw.out_time || tiled(&s, known).as_ref() != Some(&have_slice) {
            continue;
        }
        let flit = cx.target.flit_bytes;
        let cost = sw
            .cycles(ring, flit)
            .map_or_else(String::new, |(c, _)| format!(" ({c} ring cycles)"));
        out.push(
            Diagnostic::new(
                &SWI_010,
                sw.config.span("ring_size", sw.step.span),
                format!(
                    "this CustomBroadcast is the regular {}{cost}: a custom topology preempts DMA and the sub context to write its bitmap to the SFRs, a regular one does not",
                    topo.describe()
                ),
            )
            .with_related(sw.step.span, "the switch"),
        );
        return;
    }
}

/// The regular topologies that could stand for a custom one on a cluster of `slices`, in the
/// order they are tried: Transpose, Broadcast1, then Broadcast01 with each `time0` that divides
/// the input Time (up to 64 of them), for each power-of-two `slice1` and `slice0`.
fn candidates(sw: &Switch<'_>, slices: u64) -> Vec<Topology> {
    let mut pows = Vec::new();
    let mut p = 1u64;
    while p <= slices {
        pows.push(p);
        p = p.saturating_mul(2);
        if p == 0 {
            break;
        }
    }
    let mut time0s: Vec<u64> = Vec::new();
    let t = sw.in_time.size;
    let mut d = 1u64;
    while d <= t && time0s.len() < 64 && d <= 1 << 16 {
        if t.is_multiple_of(d) {
            time0s.push(d);
        }
        d += 1;
    }
    let mut candidates = Vec::new();
    for &s1 in &pows {
        for &s0 in &pows {
            if s1.saturating_mul(s0) > slices {
                continue;
            }
            candidates.push(Topology::Transpose {
                slice1: s1,
                slice0: s0,
            });
            candidates.push(Topology::Broadcast1 {
                slice1: s1,
                slice0: s0,
            });
            for &t0 in &time0s {
                candidates.push(Topology::Broadcast01 {
                    slice1: s1,
                    slice0: s0,
                    time0: t0,
                });
            }
        }
    }
    candidates
}

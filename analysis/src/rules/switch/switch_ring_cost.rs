//! SWI-011: a ring costs `ring_size × input_time × flits` cycles, so a CustomBroadcast ring
//! larger than the slices that exchange data is wasted, and a whole-cluster regular ring that
//! only feeds collect and commit may lose to a DMA of the same bytes.

use super::call::Switch;
use super::config::Topology;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const SWI_011: Rule = Rule {
    code: "SWI-011",
    name: "switch-ring-cost",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Switch cost grows with the ring size; a whole-cluster ring that only moves data may lose to DMA",
    docs: "A ring costs `ring_size × input_time × packet_bytes / 32` cycles. Reported when a \
           CustomBroadcast ring is larger than the slices that exchange data (the smaller ring \
           is as correct and cheaper), and when a regular topology whose ring spans the cluster \
           (slice1·slice0 = 256, or the 64 or 128 slices of a smaller furiosa-opt-std device) feeds \
           collect and commit with no compute: a DMA of the same bytes at 256 B/cycle is then \
           estimated faster. (A CustomBroadcast is left to SWI-010 and SCH-004: its bitmap setup \
           preempts the DMA itself.)",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 256 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3207-L3210, L3524-L3532, L3542, L2554",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 a whole-cluster ring has the slices of the kernel's \
         `#[device(pe)]` grid, 64, 128 or 256 (`furiosa-opt-examples/src/pe_count.rs:14-20`)",
    ),
};

/// SWI-011: a ring larger than needed, or a whole-cluster ring that only moves data.
pub(super) fn check(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    topo: Topology,
    smaller: Option<u64>,
    out: &mut Vec<Diagnostic>,
) {
    let flit = cx.target.flit_bytes;
    let Some(ring) = topo.ring_size() else { return };
    if let Some(n) = smaller {
        let (Some((now, _)), Some((then, _))) = (sw.cycles(ring, flit), sw.cycles(n, flit)) else {
            return;
        };
        out.push(Diagnostic::new(
            &SWI_011,
            sw.config.span("ring_size", sw.step.span),
            format!(
                "ring_size {ring} is larger than needed: only {n} consecutive slices exchange data here, and the ring costs ring_size × input_time × flits = {now} cycles; ring_size: {n} takes {then}"
            ),
        ));
        return;
    }
    if ring < sw.cluster_slices() || matches!(topo, Topology::Custom { .. }) {
        return;
    }
    // A whole-cluster ring that feeds collect and commit directly: a DMA copy.
    let rest: Vec<&Method> = sw.chain.steps[sw.index + 1..]
        .iter()
        .map(|s| &s.method)
        .collect();
    if rest != [&Method::Collect, &Method::Commit] {
        return;
    }
    let Some((cycles, bytes)) = sw.cycles(ring, flit) else {
        return;
    };
    let total = u128::from(sw.cluster_slices()) * u128::from(sw.in_time.size) * u128::from(bytes);
    let dma = total.div_ceil(u128::from(cx.target.dma_dm_bytes_per_cycle.max(1)));
    if u128::from(cycles) <= dma {
        return;
    }
    out.push(Diagnostic::new(
        &SWI_011,
        sw.step.span,
        format!(
            "this switch runs a {ring}-slice ring only to move data into DM: ring_size × input_time × flits = {cycles} cycles, while a DMA of the same {total} bytes at {} B/cycle takes about {dma}",
            cx.target.dma_dm_bytes_per_cycle
        ),
    ));
}

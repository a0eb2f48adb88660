//! ISR and VCG: the intra-slice reduce `vector_intra_slice_reduce::<R, OTime, OPacket>(op)` and
//! the Valid Count Generator placement of a padded reduce axis (constraints.md §12-§13).
//!
//! Everything is read from the kernel model: the reduce axis is the first turbofish argument,
//! its factors are the `Factor` digits of the step input's Slice, Time and Packet layouts whose
//! axis is `R`. The VCG sees 8-way flits, so its Time and Packet are taken before the Narrow
//! stage (`vector_trim_way4` / `vector_split`) that precedes the reduce.
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run and which silence the rest. [`placement`] derives once where the
//! padded reduce axis of one reduce lies, as the VCG sees it, and [`valid_count`] what the
//! rules of one `BranchMode::ValidCount` branch read; [`layouts`] is the layout reading the
//! rules share and [`mapping_edits`] the edits with which their fixes rewrite a mapping.

mod intra_slice_reduce_ops;
mod layouts;
mod mapping_edits;
mod padded_reduce_axis;
mod placement;
mod reduce_accumulator_slots;
mod reduce_output_shape;
#[cfg(test)]
mod tests;
mod valid_count;
mod vcg_counter_limit;
mod vcg_dimension_budget;
mod vcg_innermost_packet_counter;
mod vcg_not_needed;
mod vcg_packet_placement;
mod vcg_prefix_valid_count;
mod vcg_slice_order;
mod vcg_slice_packet;
mod vcg_slice_time_packet;
mod vcg_time_any_order;
mod vcg_transposed_time_size;

pub use intra_slice_reduce_ops::ISR_001;
pub use padded_reduce_axis::ISR_004;
pub use reduce_accumulator_slots::ISR_003;
pub use reduce_output_shape::ISR_002;
pub use vcg_counter_limit::SEQ_011;
pub use vcg_dimension_budget::VCG_008;
pub use vcg_innermost_packet_counter::VCG_009;
pub use vcg_not_needed::VCG_010;
pub use vcg_packet_placement::VCG_002;
pub use vcg_prefix_valid_count::VCG_001;
pub use vcg_slice_order::VCG_003;
pub use vcg_slice_packet::VCG_005;
pub use vcg_slice_time_packet::VCG_006;
pub use vcg_time_any_order::VCG_004;
pub use vcg_transposed_time_size::VCG_007;

use placement::{Placement, RPart, SliceTime};
use valid_count::ValidCount;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::{Chain, Method, Step};
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    ISR_001, ISR_002, ISR_003, ISR_004, VCG_001, VCG_002, VCG_003, VCG_004, VCG_005, VCG_006,
    VCG_007, VCG_008, VCG_009, VCG_010, SEQ_011,
];

/// Checks each intra-slice reduce of the function, and each branch on the VCG's valid count.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (k, step) in chain.steps.iter().enumerate() {
            match step.method {
                Method::VectorIntraSliceBranch => check_valid_count(cx, step, out),
                Method::VectorIntraSliceReduce => check_reduce(cx, chain, k, out),
                _ => {}
            }
        }
    }
}

/// Checks the reduce `chain.steps[k]`: its stream and op (ISR-001); then, when its reduce axis
/// R names a declared axis, its output shape (ISR-002), its accumulator slots (ISR-003) and
/// the placement of a padded R, whose diagnostics become ISR-004 for a sum over Exp, NegExp or
/// Sigmoid.
fn check_reduce(cx: &FnContext<'_>, chain: &Chain, k: usize, out: &mut Vec<Diagnostic>) {
    let Some(step) = chain.steps.get(k) else {
        return;
    };
    let lanes = cx.target.ve_way4_lanes;
    intra_slice_reduce_ops::check(step, lanes, out);
    // `R` (or a path ending in it, or an associated type naming it) must name a declared
    // axis, or nothing is decided.
    let Some(r) = step
        .generics
        .first()
        .and_then(|a| reduce_axis(cx, a.text.trim()))
    else {
        return;
    };
    reduce_output_shape::check(step, &r, lanes, out);
    reduce_accumulator_slots::check(cx, step, &r, out);
    let mut vcg = Vec::new();
    if let Some(p) = Placement::of(chain, k, &r) {
        check_placement(cx, &p, &mut vcg);
    }
    padded_reduce_axis::check(chain, k, &r, vcg, out);
}

/// The declared axis the reduce's `R` argument names: itself or a path ending in it
/// (`layouts::R`), or an associated type a call bound to one (`W::Tap` with `type Tap = DY;`).
fn reduce_axis(cx: &FnContext<'_>, written: &str) -> Option<String> {
    use crate::mapping::ast::Expr;
    let last = written.rsplit("::").next()?.trim();
    if cx.scope.axes.contains_key(last) {
        return Some(last.to_string());
    }
    let alias = cx.scope.alias_through_renames(written)?;
    let name = match alias.body.as_ref()? {
        Expr::Symbol(n) | Expr::Escape(n, _) => &n.text,
        _ => return None,
    };
    cx.scope.axes.contains_key(name).then(|| name.clone())
}

/// Checks where a padded reduce axis lies: the VCG's counters (SEQ-011), then R in Packet
/// (Packet Reduce mode) or not (Time Reduce mode).
fn check_placement(cx: &FnContext<'_>, p: &Placement<'_>, out: &mut Vec<Diagnostic>) {
    let what = format!("the padded reduce axis {}", p.r);
    let packet_counter = !p.packet_parts.is_empty();
    vcg_counter_limit::check(cx, p.step, &what, p.time, packet_counter, out);
    match p.packet_parts.first() {
        Some(pp) => check_packet_reduce(cx, p, pp, out),
        None => check_time_reduce(cx, p, out),
    }
}

/// Packet Reduce mode, `pp` R's Packet part: R once in Packet, innermost and alone (VCG-002),
/// with no padding inside its part (VCG-009); then, R in Slice too, a last packet partial
/// (VCG-005 over Slice and Packet, VCG-006 over Slice, Time and Packet) or not (VCG-010).
fn check_packet_reduce(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    pp: &RPart,
    out: &mut Vec<Diagnostic>,
) {
    if vcg_packet_placement::check(cx, p, pp, out)
        || vcg_innermost_packet_counter::check(cx, p, pp, out)
    {
        return;
    }
    let Some(stride_p) = p.partial_packet(pp) else {
        return;
    };
    if p.time_parts.is_empty() {
        vcg_slice_packet::report(p, stride_p, out);
    } else {
        vcg_slice_time_packet::partial_packet(p, stride_p, out);
    }
}

/// Time Reduce mode: R's Slice factors ordered outer to inner (VCG-003); then, R in Slice and
/// Time, the standard split (always supported), the transposed one (VCG-007) or a
/// Time-Slice-Time interleave (VCG-006). The order of R's Time factors is free (VCG-004).
fn check_time_reduce(cx: &FnContext<'_>, p: &Placement<'_>, out: &mut Vec<Diagnostic>) {
    if vcg_slice_order::check(cx, p, out) {
        return;
    }
    match p.slice_time() {
        None | Some(SliceTime::Standard) => {}
        Some(SliceTime::Transposed {
            slice_size,
            time_size,
        }) => vcg_transposed_time_size::check(cx, p, slice_size, time_size, out),
        Some(SliceTime::Interleave { time_size }) => {
            vcg_slice_time_packet::interleave(cx, p, time_size, out);
        }
    }
}

/// `BranchMode::ValidCount` takes each flit's valid count from the VCG: the flit's validity
/// must be a prefix (VCG-001), need at most 1 packet dim + 3 gates (VCG-008) and at most 8
/// counters (SEQ-011).
fn check_valid_count(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(v) = ValidCount::of(step) else {
        return;
    };
    vcg_prefix_valid_count::check(cx, &v, out);
    vcg_dimension_budget::check(cx, &v, out);
    if !v.axes.is_empty() {
        let what = format!("the padded axes {}", v.names().join(", "));
        vcg_counter_limit::check(cx, step, &what, v.time, v.packet_dim, out);
    }
}

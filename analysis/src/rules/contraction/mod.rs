//! CON: the Contraction Engine: Aligner (Stream Adapter, TRF Sequencer) and Reducer
//! (constraints.md §10), with the TRF sequencer limits (SEQ-010).
//!
//! Per `.align()` the stream side is checked against the collected stream (packet collection,
//! tiling axes, Time order) and the TRF side against the TRF Element (reg_read_size, the
//! sequencer's time loop, derived with [`crate::derive::configure`]); `.contract()` against the
//! reduction tree and `.accumulate()` against the accumulator's modes and 1024 slots.
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run. [`align`] derives once what the rules of one `.align()` read (its
//! layouts, the flits it collects, the TRF tensor), [`accumulate`] what those of one
//! `.accumulate()` read, and [`layouts`] is the layout arithmetic they share.

mod accumulate;
mod accumulator_slots;
mod align;
mod collect_flits;
mod computation_mapping_match;
mod computation_packet_64_bytes;
mod contracted_dummy_padding;
mod flit_buffer_capacity;
mod interleaved_output;
mod interleaved_slice_padding_only;
mod layouts;
mod mandatory_widening;
mod reducer_input_dtype;
mod reduction_tree;
mod row_broadcast;
mod row_utilization;
mod sequential_output;
#[cfg(test)]
mod tests;
mod time_broadcast_innermost;
mod to_trf_row_element;
mod trf_matches_stream;
mod trf_read_write_conflict;
mod trf_reg_read_size;
mod trf_sequencer_limits;

pub use accumulator_slots::CON_014;
pub use collect_flits::CON_005;
pub use computation_mapping_match::CON_008;
pub use computation_packet_64_bytes::CON_004;
pub use contracted_dummy_padding::CON_019;
pub use flit_buffer_capacity::CON_018;
pub use interleaved_output::CON_015;
pub use interleaved_slice_padding_only::CON_017;
pub use mandatory_widening::CON_002;
pub use reducer_input_dtype::CON_001;
pub use reduction_tree::{CON_011, CON_012, CON_013};
pub use row_broadcast::CON_006;
pub use row_utilization::CON_020;
pub use sequential_output::CON_016;
pub use time_broadcast_innermost::CON_007;
pub use to_trf_row_element::CON_010;
pub use trf_matches_stream::CON_003;
pub use trf_read_write_conflict::CON_021;
pub use trf_reg_read_size::CON_009;
pub use trf_sequencer_limits::SEQ_010;

use accumulate::{Accumulate, Mode};
use align::{Align, TrfSide};
use layouts::layout;

use super::context::FnContext;
use crate::derive::{Direction, configure, trf};
use crate::diagnostic::Diagnostic;
use crate::mapping::layout::Dim;
use crate::model::{Kind, Method, Slot, Step};
use crate::rule::Rule;

pub const RULES: &[Rule] = &[
    CON_001, CON_002, CON_003, CON_004, CON_005, CON_006, CON_007, CON_008, CON_009, CON_010,
    CON_011, CON_012, CON_013, CON_014, CON_015, CON_016, CON_017, CON_018, CON_019, CON_020,
    CON_021, SEQ_010,
];

/// Checks each TRF load, `.align()`, `.contract()` and `.accumulate()` of the function, and
/// the type each chain's result is declared with.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (k, step) in chain.steps.iter().enumerate() {
            match step.method {
                Method::ToTrf => check_to_trf(cx, step, out),
                Method::Align => check_align(cx, step, out),
                Method::Contract => reduction_tree::check(cx, step, out),
                Method::Accumulate => {
                    let reduced_by = chain.steps[..k]
                        .iter()
                        .rev()
                        .find(|s| s.method == Method::ContractTime);
                    check_accumulate(cx, step, reduced_by, out)
                }
                _ => {}
            }
        }
        mandatory_widening::check(chain, out);
    }
}

/// A TRF load: the type it loads (CON-001), then the Row and Element it stores the stream in
/// (CON-010).
fn check_to_trf(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    if !reducer_input_dtype::check_load(cx, step, out) {
        to_trf_row_element::check(step, out);
    }
}

/// Checks one `.align()`. A rule that finds the step broken at its root (the operand type, the
/// TRF tensor, the Row broadcast) silences the rules after it; the stream side and the TRF side
/// are each checked where what they read is known.
fn check_align(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let d = input.dtype.or(output.dtype);
    if reducer_input_dtype::check_stream(cx, step, d, out) {
        return;
    }
    let trf = cx.model.first_arg_tensor(step, Kind::Trf);
    if trf_matches_stream::check(cx, step, input, d, trf, out) {
        return;
    }
    let Some(a) = d.and_then(|d| Align::of(cx, step, d, trf)) else {
        return;
    };
    let packet_ok = check_packet(cx, &a, out);
    if row_broadcast::check(&a, out) {
        return;
    }
    if let Some(c) = a.flits.filter(|&c| c <= a.max_flits) {
        check_stream_time(cx, &a, c, out);
    }
    let Some(side) = trf.and_then(|var| {
        let element = layout(&var.ty, Slot::Element)?;
        Some(TrfSide { var, element })
    }) else {
        return;
    };
    let reads_64_bytes = packet_ok && check_trf_read(cx, &a, &side, out);
    check_trf_time_loop(cx, &a, &side, out);
    contracted_dummy_padding::check(&a, &side, out);
    row_utilization::check(cx, &a, &side, out);
    if reads_64_bytes {
        trf_read_write_conflict::check(cx, &a, &side, out);
    }
}

/// The computation packet (CON-018, CON-004, CON-005; one of them at most): whether OutPacket
/// is a packet the Stream Adapter builds.
fn check_packet(cx: &FnContext<'_>, a: &Align<'_>, out: &mut Vec<Diagnostic>) -> bool {
    match a.flits {
        Some(c) if c > a.max_flits => flit_buffer_capacity::report(cx, a, c, out),
        _ if !computation_packet_64_bytes::holds(cx, a) => {
            computation_packet_64_bytes::report(cx, a, out);
        }
        None => collect_flits::report(cx, a, out),
        Some(_) => return true,
    }
    false
}

/// The stream side of the computation mapping, `c` flits collected: tiling axes innermost
/// (CON-007), then in the TRF, then the collected Time order (CON-008).
fn check_stream_time(cx: &FnContext<'_>, a: &Align<'_>, c: u64, out: &mut Vec<Diagnostic>) {
    if a.out_time.dims.iter().any(|d| matches!(d, Dim::Opaque(_))) {
        return;
    }
    let element = a.trf.and_then(|v| layout(&v.ty, Slot::Element));
    if time_broadcast_innermost::check(a, element, out)
        || computation_mapping_match::tiling_axes_in_trf(cx, a, element, out)
    {
        return;
    }
    computation_mapping_match::time_order(a, c, out);
}

/// The TRF Sequencer's read that fills the packet: one contiguous run (CON-008) of a power of
/// two bytes (CON-009). Whether it reads 64 bytes at once.
fn check_trf_read(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(read) = trf::read(a.out_packet, side.element) else {
        return false;
    };
    if let Some(stray) = &read.stray {
        computation_mapping_match::trf_read_covers_packet(cx, a, side, stray, out);
        return false;
    }
    trf_reg_read_size::check(cx, a, side, &read, out) == Some(cx.target.mac_width_bytes)
}

/// The TRF Sequencer's time loop reading the Element as OutTime: possible (CON-008) and within
/// the sequencer's limits (SEQ-010).
fn check_trf_time_loop(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let entries = cx.target.sequencer_entries;
    match configure(
        side.element,
        &a.out_time.dims,
        &[],
        Direction::Read,
        entries,
    ) {
        Err(e) => computation_mapping_match::trf_time_loop(a, side, &e, out),
        Ok(cfg) => trf_sequencer_limits::check(cx, a, side, &cfg, out),
    }
}

/// Checks one `.accumulate()` (furiosa-opt-std's `contract_lane`): the output shape of its mode
/// (CON-015 and CON-017, or CON-016), then, on a shape found right, the accumulator's slots
/// (CON-014). furiosa-opt-std reduces Time a step earlier (`reduced_by`, its
/// `contract_time`): the slots are counted from the Time that step reduced.
fn check_accumulate(
    cx: &FnContext<'_>,
    step: &Step,
    reduced_by: Option<&Step>,
    out: &mut Vec<Diagnostic>,
) {
    let Some(a) = Accumulate::of(step) else {
        return;
    };
    let shape_ok = match a.mode {
        Mode::Interleaved => interleaved_output::check(cx, &a, out),
        Mode::Sequential => sequential_output::check(cx, &a, out),
    };
    if shape_ok {
        match reduced_by.and_then(|r| a.reduced_earlier(r)) {
            Some(earlier) => accumulator_slots::check(cx, &earlier, out),
            None => accumulator_slots::check(cx, &a, out),
        }
    }
}

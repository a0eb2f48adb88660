//! TRN: the Transpose Engine, which swaps the innermost Time factors with the packet within
//! 32-byte flits (constraints.md §16, manual L6820-L7041).
//!
//! The geometry is recovered from the types: `in_rows` is the data of OutPacket (the innermost
//! input Time factors that move into the packet), `packets_per_col` the input Time factors inside
//! them, `in_cols = packets_per_col × elements_per_packet`, and `out_rows` what OutTime keeps of
//! the transposed columns. The expected OutTime/OutPacket are rebuilt from the input layouts and
//! compared by meaning (`Layout ==`), so the check never enumerates elements.
//!
//! Each rule is a file of its own, with its declaration and its checks; this module only says
//! in which order they run and which silence the rest. [`call`] derives once what the rules of
//! one `.transpose()` read, its input side ([`call::Transpose`]) and its output side
//! ([`call::Out`]); [`layouts`] reads a tensor's layouts and their text.

mod call;
mod layouts;
#[cfg(test)]
mod tests;
mod transpose_double_buffering;
mod transpose_geometry;
mod transpose_innermost_swap;
mod transpose_packets;

pub use transpose_double_buffering::TRN_004;
pub use transpose_geometry::TRN_001;
pub use transpose_innermost_swap::TRN_003;
pub use transpose_packets::TRN_002;

use call::{Out, Transpose};

use super::context::FnContext;
use crate::derive::transpose::find_split;
use crate::diagnostic::Diagnostic;
use crate::model::{Chain, Method, Step};
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[TRN_001, TRN_002, TRN_003, TRN_004];

/// Checks each `.transpose()` of the function.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            if step.method == Method::Transpose {
                check_step(cx, chain, i, step, out);
            }
        }
    }
}

/// Checks one transpose, stage by stage as the engine runs: the input packet (TRN-002) and
/// what Unpack keeps of it (TRN-001); the rows OutPacket takes (TRN-001) and its alignment
/// (TRN-002); the innermost swap (TRN-003), the columns (TRN-001) and what Trim keeps
/// (TRN-002); then the buffering (TRN-004). A check that fires silences the ones after it,
/// except the output alignment's.
fn check_step(cx: &FnContext<'_>, chain: &Chain, i: usize, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(t) = Transpose::of(cx, chain, i, step) else {
        return;
    };
    if transpose_packets::check_input(&t, out) || transpose_geometry::check_unpack(&t, out) {
        return;
    }
    let Some(o) = Out::of(&t) else {
        return;
    };
    if transpose_geometry::check_in_rows(&t, &o, out) {
        return;
    }
    transpose_packets::check_output(cx, &t, &o, out);
    let Some(split) = find_split(t.g, t.time, t.packet, o.time, o.packet, o.in_rows.max(1)) else {
        transpose_innermost_swap::report(&t, &o, out);
        return;
    };
    if transpose_geometry::check_in_cols(&t, &split, out)
        || transpose_packets::check_trim(&t, &split, out)
    {
        return;
    }
    transpose_double_buffering::check(cx, &t, &split, out);
}

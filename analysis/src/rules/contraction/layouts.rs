//! The layout arithmetic the contraction rules share: a slot's layout and its text, a layout
//! without its padding, the flits the Stream Adapter collects into a packet and the depth the
//! reduction tree contracts a packet by.

use crate::derive::Entry;
use crate::diagnostic::Span;
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Slot, Step, TensorTy, output_arg};
use std::sync::Arc;

pub(super) fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot)?.layout.as_deref()
}

pub(super) fn text(ty: &TensorTy, slot: Slot) -> String {
    ty.get(slot)
        .map_or_else(|| "?".to_string(), |m| m.text.clone())
}

pub(super) fn m(l: &Layout) -> String {
    format!("m![{}]", l.to_expr())
}

/// The layout without padding: pure padding digits dropped, padded factors cut to their valid
/// part; a broadcast (`m![A, 2]`) repeats data and stays. `None` for irregular layouts.
pub(super) fn strip(l: &Layout) -> Option<Layout> {
    let mut dims = Vec::with_capacity(l.dims.len());
    for d in &l.dims {
        match d {
            Dim::Factor(f) if f.axis.is_none() && !f.is_broadcast() => {}
            Dim::Factor(f) => {
                let mut g = f.clone();
                g.extent = g.valid;
                dims.push(Dim::Factor(g));
            }
            Dim::Opaque(_) => return None,
        }
    }
    Layout::from_dims(dims).ok()
}

/// Equal up to padding (both regular).
pub(super) fn same_data(a: &Layout, b: &Layout) -> bool {
    a == b || matches!((strip(a), strip(b)), (Some(x), Some(y)) if x == y)
}

pub(super) fn factor_axis(d: &Dim) -> Option<&Arc<str>> {
    match d {
        Dim::Factor(f) => f.axis.as_ref().map(|a| &a.name),
        Dim::Opaque(_) => None,
    }
}

/// Two factors of the same axis covering overlapping coordinates.
pub(super) fn overlaps(a: &Dim, b: &Dim) -> bool {
    let (Dim::Factor(a), Dim::Factor(b)) = (a, b) else {
        return false;
    };
    match (&a.axis, &b.axis) {
        (Some(x), Some(y)) if x.name == y.name => {
            let (a0, a1) = (a.coef, a.coef.saturating_mul(a.valid));
            let (b0, b1) = (b.coef, b.coef.saturating_mul(b.valid));
            a0 < b1 && b0 < a1
        }
        _ => false,
    }
}

/// Where the result's `slot` mapping is written: turbofish argument `i`, else the annotation or
/// signature it comes from ([`at_arg`] falls back to the method name).
pub(super) fn at(step: &Step, i: usize, slot: Slot) -> Option<Span> {
    output_arg(step, Some(i), slot).map(|a| a.span)
}

/// The edit that pads the `slot` mapping of `step`'s result to `n` where it is written: the
/// turbofish argument `i`, or the `let` annotation or signature that types the result.
pub(super) fn pad_where_written(
    scope: &crate::mapping::Scope,
    step: &Step,
    (i, slot): (usize, Slot),
    n: u64,
) -> Option<crate::diagnostic::Edit> {
    crate::model::pad_edit(scope, &output_arg(step, Some(i), slot)?, n)
}

/// How many 32-byte flits the Stream Adapter collects to build `packet` from the collected
/// stream `time`, `flit` (1: the flit alone, padded; c: the innermost Time positions `0..c`
/// followed by the flit), when the packet is such a collection.
pub(super) fn collected_flits(
    time: &Layout,
    flit: &Layout,
    packet: &Layout,
    max: u64,
) -> Option<u64> {
    (1..=max).find(|&c| {
        if c > 1 && !time.size.is_multiple_of(c) {
            return false;
        }
        let data = if c == 1 {
            Ok(flit.clone())
        } else {
            time.window(c).pair(flit)
        };
        data.is_ok_and(|d| same_data(&d, packet))
    })
}

/// The tree depth n <= `depth` with `contract` output `q` = `p / 2^n` (up to padding).
pub(super) fn spatial_depth(p: &Layout, q: &Layout, depth: u32) -> Option<u32> {
    (0..=depth).find(|&n| {
        1u64.checked_shl(n)
            .is_some_and(|s| p.size.is_multiple_of(s) && same_data(&p.stride(s), q))
    })
}

pub(super) fn entries_text(entries: &[Entry], stride_bytes: &dyn Fn(u64) -> u64) -> String {
    entries
        .iter()
        .map(|en| format!("{} : {}", en.size, stride_bytes(en.stride)))
        .collect::<Vec<_>>()
        .join(", ")
}

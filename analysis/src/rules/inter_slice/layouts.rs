//! The layout reading the XSL rules share: a step's input or output layout in one slot, the
//! Slice digits a reduce removes, and a list of dims written as a mapping.

use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, Step};

/// The digits of Slice the reduce removes (those SliceOut does not keep), with their axis names.
pub(super) fn reduced_digits<'s>(slice: &'s Layout, slice2: &Layout) -> Vec<(&'s Factor, &'s str)> {
    slice
        .dims
        .iter()
        .filter(|d| !slice2.dims.contains(d))
        .filter_map(|d| match d {
            Dim::Factor(f @ Factor { axis: Some(a), .. }) => Some((f, &*a.name)),
            _ => None,
        })
        .collect()
}

/// The layout of `slot` in the step's output (`out`) or input type, when it is known.
pub(super) fn layout(step: &Step, out: bool, slot: Slot) -> Option<&Layout> {
    let ty = if out {
        step.output.as_ref()
    } else {
        step.input.as_ref()
    };
    ty?.get(slot)?.layout.as_deref()
}

/// `dims` written as a mapping body, or `?` when they do not form a layout.
pub(super) fn render(dims: &[Dim]) -> String {
    match Layout::from_dims(dims.to_vec()) {
        Ok(l) => l.to_expr(),
        Err(_) => "?".to_string(),
    }
}

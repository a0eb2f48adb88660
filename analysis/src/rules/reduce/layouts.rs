//! The layout reading the reduce rules share: a slot's layout and the text it is written with,
//! the factors of the reduce axis, a layout without them or without its outer padding, and one
//! digit rendered on its own.

use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, TensorTy};

/// The mapping as written (`m![A % 2 # 8]`), or its normal form when the text is unknown.
pub(super) fn text_of(ty: Option<&TensorTy>, slot: Slot, l: &Layout) -> String {
    match ty.and_then(|t| t.get(slot)) {
        Some(v) if v.text.starts_with("m!") => v.text.clone(),
        _ => format!("m![{l}]"),
    }
}

pub(super) fn layout_of(ty: Option<&TensorTy>, slot: Slot) -> Option<&Layout> {
    ty?.get(slot)?.layout.as_deref()
}

pub(super) fn is_axis(d: &Dim, r: &str) -> bool {
    matches!(d, Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name == r)
}

/// The layout without the factors of `r`; `None` when an irregular digit might hide one.
pub(super) fn strip(l: &Layout, r: &str) -> Option<Layout> {
    if !l.is_regular() {
        return None;
    }
    let dims: Vec<Dim> = l.dims.iter().filter(|d| !is_axis(d, r)).cloned().collect();
    Layout::from_dims(dims).ok()
}

/// The layout without its outer padding (`m![A # 4]` -> `m![A]`): what a packet holds.
pub(super) fn core(l: &Layout) -> Layout {
    let mut dims = l.dims.clone();
    if let Some(Dim::Factor(f)) = dims.first_mut()
        && f.valid < f.extent
    {
        f.extent = f.valid;
    }
    Layout::from_dims(dims).unwrap_or_else(|_| l.clone())
}

pub(super) fn render_dim(d: &Dim) -> String {
    Layout {
        size: d.extent(),
        dims: vec![d.clone()],
    }
    .to_expr()
}

//! The reading of a tensor type the transpose rules share: a slot's layout and its text.

use crate::mapping::Layout;
use crate::model::{Slot, TensorTy};

/// The layout `ty` has in `slot`, when known.
pub(super) fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot).and_then(|m| m.layout.as_deref())
}

/// The text `ty` is written with in `slot` (`?` when unknown).
pub(super) fn text(ty: &TensorTy, slot: Slot) -> &str {
    ty.get(slot).map_or("?", |m| m.text.as_str())
}

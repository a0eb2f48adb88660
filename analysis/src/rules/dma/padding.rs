//! What the fixes of ALN-003 and DMA-010 share: the DM tensor's Element as a DMA step writes
//! it ([`dm_element`]), the bytes of its innermost row ([`row_bytes`]) and the fix that pads
//! that row ([`pad_fix`]).

use crate::derive::bytes;
use crate::derive::dma::{DmaOp, Media};
use crate::diagnostic::{Diagnostic, Span};
use crate::mapping::Scope;
use crate::mapping::edit::pad_innermost;
use crate::mapping::layout::Dim;
use crate::model::{Arg, Dtype, Slot, Step, written, written_mapping};
use crate::rules::context::spelled_out;

/// The DM tensor's Element as written for a DMA step: `to_dm`'s third turbofish argument, else
/// the annotation of the DM side's type.
pub(super) fn dm_element(op: &DmaOp<'_>) -> Option<(Span, String)> {
    dm_written(op, Slot::Element)
}

/// A slot (Slice or Element) of the DM tensor as written for a DMA step: `to_dm`'s turbofish
/// argument, else the annotation of the DM side's type.
pub(super) fn dm_written(op: &DmaOp<'_>, slot: Slot) -> Option<(Span, String)> {
    let k = match slot {
        Slot::Slice => 1,
        _ => 2,
    };
    let (ty, k) = match op.dst_media {
        Media::Dm => (op.step.output.as_ref()?, k),
        Media::Hbm => (op.step.input.as_ref()?, usize::MAX),
    };
    if let Some(a) = written(op.step, k) {
        return Some((a.span, a.text.clone()));
    }
    let mv = ty.get(slot)?;
    Some((mv.span?, mv.text.clone()))
}

/// The dtype a DMA step moves: its input's, else its output's.
pub(super) fn dtype(step: &Step) -> Option<Dtype> {
    step.input
        .as_ref()
        .and_then(|t| t.dtype)
        .or_else(|| step.output.as_ref().and_then(|t| t.dtype))
}

/// A padding fix of the DM Element's innermost axis to `bytes` per row.
pub(super) fn pad_fix(
    scope: &Scope,
    op: &DmaOp<'_>,
    d: Option<Dtype>,
    row_bytes: u64,
    diag: Diagnostic,
) -> Diagnostic {
    let Some((span, text)) = dm_element(op) else {
        return diag;
    };
    // An alias (`KvScaleRow`) is replaced at this use by the mapping it stands for, padded;
    // the engine offers padding its definition beside (`alias_fix`).
    let arg = Arg::written(text.clone(), span);
    let text = match written_mapping(scope, &arg) {
        Some(m) if !text.trim_start().starts_with("m![") && spelled_out(&arg) => m,
        _ => text,
    };
    let Some(new) = d
        .and_then(|d| d.elems_for(row_bytes))
        .and_then(|n| pad_innermost(&text, n))
    else {
        return diag;
    };
    diag.with_edit(format!("pad the innermost axis: {new}"), false, span, new)
}

/// The bytes of the innermost packet digit of a DMA, when it is a factor.
pub(super) fn row_bytes(op: &DmaOp<'_>) -> Option<u64> {
    match op.packet.last()? {
        Dim::Factor(f) => Some(bytes(f.extent, op.bits)),
        Dim::Opaque(_) => None,
    }
}

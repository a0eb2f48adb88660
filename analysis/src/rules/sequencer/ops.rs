//! What the sequencer rules read and say of an op: who runs its sequencer and what its buffer
//! is called (for messages), the stream type whose mappings the user wrote (where the fixes
//! edit), and the fetch sizes the compiler may use.

use crate::derive::{self, Direction, Op, OpKind};
use crate::model::Tu;
use crate::rules::context::FnContext;

/// The sequencer that runs `op`, for messages.
pub(super) fn who(op: &Op<'_>) -> &'static str {
    match op.kind {
        OpKind::Fetch => "the fetch sequencer",
        OpKind::Commit => "the commit sequencer",
        OpKind::Read => "the read sequencer",
        OpKind::Write => "the write sequencer",
    }
}

/// The buffer `op`'s sequencer addresses, for messages.
pub(super) fn buffer_name(op: &Op<'_>) -> &'static str {
    match op.kind {
        OpKind::Fetch => "the DM tensor's Element",
        OpKind::Commit => "the Element",
        OpKind::Read | OpKind::Write => "Buf",
    }
}

/// The stream type whose Time/Packet the user wrote for `op`.
pub(super) fn stream_ty<'a>(op: &Op<'a>) -> Option<&'a crate::model::TensorTy> {
    if op.kind.direction() == Direction::Read {
        op.step.output.as_ref()
    } else {
        op.step.input.as_ref()
    }
}

/// The fetch sizes the compiler may use for `op` (reads only).
pub(super) fn choices(cx: &FnContext<'_>, op: &Op<'_>) -> Vec<u64> {
    let from = op.step.input.as_ref().and_then(|t| t.dtype);
    let to = op.step.output.as_ref().and_then(|t| t.dtype);
    let sub = op.context == Some(Tu::Sub) && op.kind == OpKind::Fetch;
    derive::fetch_size_choices(cx.target, sub, from, to)
}

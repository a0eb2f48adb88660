//! What the commit rules read of a commit as written: its Element mapping (where the fixes
//! edit and the findings point) and the element type it commits.

use crate::derive::Op;
use crate::diagnostic::Span;
use crate::model::{Arg, Dtype, Slot, Step, output_arg};

/// The Element mapping of a commit as written: the turbofish argument, else the annotation the
/// output type came from (a `let` type or the function's return type).
pub(crate) fn element_written(step: &Step) -> Option<(Span, String)> {
    element_arg(step).map(|a| (a.span, a.text))
}

/// The Element argument of a commit as written (see [`element_written`]).
pub(crate) fn element_arg(step: &Step) -> Option<Arg> {
    output_arg(step, Some(0), Slot::Element)
}

/// The element type `op` commits.
pub(super) fn dtype(op: &Op<'_>) -> Option<Dtype> {
    op.step.output.as_ref().and_then(|t| t.dtype)
}

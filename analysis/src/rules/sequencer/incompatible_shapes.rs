//! SEQ-007: an axis split differently in the buffer and the stream, where neither split
//! divides the other, has no term-by-term derivation.

use super::ops::buffer_name;
use crate::derive::{DeriveError, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const SEQ_007: Rule = Rule {
    code: "SEQ-007",
    name: "incompatible-shapes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Buffer and stream must split each axis compatibly (\"incompatible shapes\")",
    docs: "The compiler decomposes the factors of each axis into (inner, intersection, outer) parts \
           to find a common representation. When the buffer splits an axis by 5 and the stream by 3 \
           (A = 15), no sequencer traverses one to produce the other. Split both sides by the same \
           factors.",
    bad: "buf: &BufTensor<i8, m![A % 5, A / 5]> → StreamTensor<i8, m![1], m![A % 3, A / 3]>",
    good: "buf: &BufTensor<i8, m![A % 5, A / 5]> → StreamTensor<i8, m![1], m![A % 5, A / 5]>",
    manual: "L1660-L1683",
    generations: Generations::Both,
};

/// SEQ-007 for an op whose derivation found an axis split incompatibly.
pub(super) fn report(op: &Op<'_>, err: &DeriveError, out: &mut Vec<Diagnostic>) {
    let DeriveError::Incompatible {
        axis,
        buf_split,
        stream_split,
    } = err
    else {
        return;
    };
    let span = op.span;
    let (a, b) = (stream_split.min(buf_split), stream_split.max(buf_split));
    out.push(Diagnostic::new(
        &SEQ_007,
        span,
        format!(
            "incompatible shapes: `{axis}` is split by {buf_split} in {} but by {stream_split} in the stream; {a} does not divide {b}, so no common factorization exists",
            buffer_name(op)
        ),
    ));
}

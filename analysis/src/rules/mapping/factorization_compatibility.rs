//! MAP-011: moving data between two mappings needs a common refinement of each axis, so the
//! split points of the source and the destination form a divisibility chain. The DMA
//! derivation finds two splits that do not; this file reports it.

use crate::derive::dma::DmaOp;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const MAP_011: Rule = Rule {
    code: "MAP-011",
    name: "factorization-compatibility",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Source and destination must split each axis at points forming a divisibility chain",
    docs: "To move data between two mappings the compiler decomposes each axis into a common \
           refinement (inner, intersection, outer, L1682); split points such as {1, 5, 15} and \
           {1, 3, 15} for one axis have none. visa-lint checks this for the DMA transfers \
           (`to_dm`, `to_hbm` from DM) with the stream the compiler infers from the destination; \
           the same failure at a fetch, commit or `BufTensor` read/write is SEQ-007's. Split the \
           axis by the same factors on both sides.",
    bad: "axes![A = 15, B = 64]; // a: HbmTensor<i8, m![1], m![A % 5, A / 5, B]>\nlet dm: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A % 3, A / 3, B]> = a.to_dm(&mut ctx.tdma, 0);",
    good: "let dm: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A % 5, A / 5, B]> = a.to_dm(&mut ctx.tdma, 0);",
    manual: "L1660-L1683",
    generations: Generations::Both,
};

/// MAP-011 on a DMA `what` transfer that splits `axis` at `buf_split` on one side and at
/// `stream_split` on the other, neither dividing the other.
pub(super) fn incompatible(
    op: &DmaOp<'_>,
    what: &str,
    axis: &str,
    buf_split: u64,
    stream_split: u64,
) -> Diagnostic {
    let (a, b) = (buf_split.min(stream_split), buf_split.max(stream_split));
    Diagnostic::new(
        &MAP_011,
        op.span,
        format!(
            "this {what} transfer cannot be factorized: `{axis}` is split at {buf_split} on one side and at {stream_split} on the other, and {a} does not divide {b}; split `{axis}` by the same factors in both types"
        ),
    )
}

//! KRN-011: `begin_interleaved` combines exactly two tensors into one sequencer operation, over
//! an interleave axis of size 2 added to Time.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const KRN_011: Rule = Rule {
    code: "KRN-011",
    name: "interleave-two-tensors",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`begin_interleaved` takes exactly two tensors, over an axis of size 2",
    docs: "Interleaving combines two tensors with identical mappings into one sequencer operation; \
           the interleave axis `I` added to Time has size 2. For more tensors use several passes \
           (the split-reduce pages' four-way interleave is pseudo-API, constraints.md §22 A-13).",
    bad: "axes![I = 4]; ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view())",
    good: "axes![I = 2]; ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view())",
    manual: "L1844-L1850, L7371",
    generations: Generations::Both,
};

/// `begin_interleaved` with `count` tensors instead of two.
pub(super) fn interleave_count(at: Span, count: usize) -> Diagnostic {
    Diagnostic::new(
        &KRN_011,
        at,
        format!(
            "`begin_interleaved` interleaves exactly two tensors, got {count}; use several passes"
        ),
    )
}

/// `begin_interleaved::<I, ..>` over an axis `I` whose size is not 2.
pub(super) fn interleave_axis(at: Span, axis: &str, size: u64) -> Diagnostic {
    Diagnostic::new(
        &KRN_011,
        at,
        format!(
            "the interleave axis `{axis}` has size {size}; interleaving pairs two tensors, so it must have size 2"
        ),
    )
}

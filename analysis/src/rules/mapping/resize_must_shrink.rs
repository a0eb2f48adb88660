//! MAP-004: `E = n` keeps the first n positions of its operand, so it only shrinks, and a resize
//! to 0 leaves nothing. Lowering finds both problems; this file reports them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const MAP_004: Rule = Rule {
    code: "MAP-004",
    name: "resize-must-shrink",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E = n` truncates, so `n <= E::SIZE`",
    docs: "Resize keeps the first n positions of its operand and discards the rest; it only \
           shrinks. A larger n would read past the operand: use padding `# n` to grow a dimension.",
    bad: "axes![D = 3]; type E = m![D = 5];",
    good: "axes![D = 3]; type E = m![D = 2];",
    manual: "L780, L810, L831",
    generations: Generations::Both,
};

/// MAP-004 on a resize to 0.
pub(super) fn zero(at: Span) -> Diagnostic {
    Diagnostic::new(&MAP_004, at, "resize to 0 leaves no positions")
}

/// MAP-004 on a resize larger than its operand, with padding to that size as the fix.
pub(super) fn growing(at: Span, op_span: Span, operand: &str, size: u64, n: u64) -> Diagnostic {
    Diagnostic::new(
        &MAP_004,
        at,
        format!(
            "resize `= {n}` can only shrink, but `{operand}` has size {size}; use padding `# {n}` to grow it"
        ),
    )
    .with_edit(format!("pad to {n}: `# {n}`"), true, op_span, "#")
}

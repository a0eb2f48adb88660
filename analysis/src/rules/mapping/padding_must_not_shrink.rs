//! MAP-003: `E # n` pads *to* n positions, so n is at least the operand's size. Lowering finds a
//! short pad; this file reports it with the two fixes (add n, or resize).

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const MAP_003: Rule = Rule {
    code: "MAP-003",
    name: "padding-must-not-shrink",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E # n` pads *to* n positions, so `n >= E::SIZE`",
    docs: "Padding creates a buffer of n positions whose tail maps to no tensor element. A pad \
           smaller than its operand is not a padding: some Fetch/Commit pages of the manual write \
           `# n` as \"add n\", but the formal definition (and `E # E::SIZE` being the identity) is \
           pad-to-size (constraints.md §22 A-6). If you meant to add n positions, write \
           `# (size + n)`; if you meant to keep fewer, use resize `= n`.",
    bad: "axes![C = 2]; type E = m![C # 6];",
    good: "axes![C = 2]; type E = m![C # 8];",
    manual: "L741-L778, L1027, L7656",
    generations: Generations::Both,
};

/// MAP-003 on `# n` with `n` no larger than what it pads: padding adds, or a resize keeps.
pub(super) fn short_pad(
    at: Span,
    arg: Span,
    op_span: Span,
    operand: &str,
    size: u64,
    n: u64,
) -> Diagnostic {
    let mut d = Diagnostic::new(
        &MAP_003,
        at,
        format!(
            "`# {n}` pads *to* {n} positions, but `{operand}` already has {size}; did you mean `# {}` (add {n}), or resize `= {n}`?",
            size.saturating_add(n)
        ),
    );
    if let Some(total) = size.checked_add(n) {
        d = d.with_edit(
            format!("add {n} padding positions: `# {total}`"),
            false,
            arg,
            total.to_string(),
        );
    }
    if n > 0 {
        d = d.with_edit(
            format!("keep the first {n} positions: `= {n}`"),
            false,
            op_span,
            "=",
        );
    }
    d
}

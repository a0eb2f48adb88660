//! VL-002: notation the manual writes only in prose (`@`, `!`, `*`, `I: 2`) has no precise
//! meaning, so the parser reports it once and the mapping is not evaluated.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const VL_002: Rule = Rule {
    code: "VL-002",
    name: "unsupported-mapping-notation",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Notation the manual uses only in prose (`@`, `!`, `*`, `I: 2`) is not evaluated",
    docs: "The manual writes a few mapping notations only in prose, pseudo-code or compiler dumps \
           (offsets `A @ 1024`, `A!4`, outer sums `B * A`, sizes `I: 2`); their meaning is not \
           defined precisely enough to check (constraints.md §22 A-14). visa-lint reports them once \
           and skips every rule that would need the mapping's value.",
    bad: "type E = m![A @ 1024];",
    good: "type E = m![A];",
    manual: "L1876, L2531, L7171, L7785, L7911",
    generations: Generations::Both,
};

/// VL-002 at a notation the parser does not evaluate.
pub(super) fn unsupported(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::new(&VL_002, at, msg)
}

//! MAP-008: a skewed axis has no size of its own, so a mapping gives it one (`B' = 4`). Lowering
//! finds a skew without a size; this file reports it.

use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::ast::Name;
use crate::rule::{Generations, Rule, Status};

pub const MAP_008: Rule = Rule {
    code: "MAP-008",
    name: "skew-and-linear-combination",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A skewed axis needs an explicit logical size (`B' = 4`); linear combinations follow the size formula",
    docs: "A skewed axis `B' = B - A` has no size of its own: the manual writes `m![A, B' = 4]` to \
           give it one, and coordinates wrap modulo the base axis. A linear combination \
           `$(e1: n1, ..., ed: nd)` has size `1 + sum((size(ek) - 1) * nk)` and may send one buffer \
           position to several tensor indices (sliding windows).",
    bad: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B'];",
    good: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B' = 4];",
    manual: "L986-L1016",
    generations: Generations::Both,
};

/// MAP-008 on a skewed axis used without an explicit logical size.
pub(super) fn unsized_skew(name: &Name, size: u64) -> Diagnostic {
    Diagnostic::new(
        &MAP_008,
        name.span,
        format!(
            "skewed axis `{0}` needs an explicit logical size, e.g. `{0} = {size}`",
            name.text
        ),
    )
}

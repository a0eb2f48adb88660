//! KRN-008: the sub-context fetch adapter only subtracts zero points; table indexing and type
//! casting are main-context stages. The manual also shows sub-context casting fetches, so
//! this warns.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const KRN_008: Rule = Rule {
    code: "KRN-008",
    name: "sub-fetch-adapter",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "The sub-context fetch adapter only subtracts zero points",
    docs: "Table indexing and type casting are main-context adapter stages. The manual also shows \
           sub-context casting fetches (i4 → i32) and large sub packets (constraints.md §22 A-9), so \
           this warns.",
    bad: "ctx.sub.begin(a.view()).fetch_with_table(&t)",
    good: "ctx.main.begin(a.view()).fetch_with_table(&t)",
    manual: "L1870",
    generations: Generations::Both,
};

/// A sub-context fetch that casts its type (`casting`) or indexes a table.
pub(super) fn sub_fetch_adapter(at: Span, casting: bool) -> Diagnostic {
    let what = if casting {
        "type casting"
    } else {
        "table indexing"
    };
    Diagnostic::new(
        &KRN_008,
        at,
        format!(
            "the sub-context fetch adapter only subtracts zero points; {what} needs `ctx.main`"
        ),
    )
}

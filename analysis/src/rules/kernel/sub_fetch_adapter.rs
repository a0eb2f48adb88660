//! KRN-008: the sub-context fetch adapter only subtracts zero points; table indexing and type
//! casting are main-context stages. The manual also shows sub-context casting fetches, so
//! a table lookup warns and a cast is allowed with a note (constraints.md §22 A-9).

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
           a table lookup on the sub context warns and a cast is allowed with a note.",
    bad: "ctx.sub.begin(a.view()).fetch_with_table(&t)",
    good: "ctx.main.begin(a.view()).fetch_with_table(&t)",
    manual: "L1870",
    generations: Generations::Both,
};

/// A sub-context fetch that indexes a table (a warning), or casts its type (a note: the
/// manual shows sub-context casts, L2018-L2021, against L1870; constraints.md §22 A-9).
pub(super) fn sub_fetch_adapter(at: Span, casting: bool) -> Diagnostic {
    if casting {
        return Diagnostic::new(
            &KRN_008,
            at,
            "a sub-context fetch that casts its type: L1870 gives the sub-context fetch adapter \
             zero-point subtraction only, but the manual also casts on sub (L2018-L2021), so \
             visa-lint allows it; `ctx.main` is the context the manual names for casting"
                .to_string(),
        )
        .with_severity(Severity::Info);
    }
    Diagnostic::new(
        &KRN_008,
        at,
        "the sub-context fetch adapter only subtracts zero points; table indexing needs \
         `ctx.main`"
            .to_string(),
    )
}

//! KRN-006: a sub-context commit can only follow fetch (and collect), never a Cast or a
//! Transpose. Reported at the `cast` (or `transpose`) the commit cannot follow, with the
//! commit related, or at the commit when that step is in another chain.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};

pub const KRN_006: Rule = Rule {
    code: "KRN-006",
    name: "sub-commit-after-cast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A sub-context commit can only follow fetch: no Cast or Transpose before it",
    docs: "Sub-context commits cannot be preceded by Cast Engine or Transpose Engine operations. \
           visa-lint points at the `cast` (or `transpose`) the commit cannot follow, with the \
           commit as a related span. Run the chain on `ctx.main`, or commit without the cast. \
           In furiosa-opt-std 0.6 the Commit Adapter's cast (`commit_cast`, \
           `commit_cast_relu`) is main-only too (the book's Commit Adapter page: sub-context \
           commits trim, they do not cast), and visa-lint reports it the same way.",
    bad: "ctx.sub.begin(a.view()).fetch::<..>().collect::<..>().cast::<i8, _>().commit(0)",
    good: "ctx.main.begin(a.view()).fetch::<..>().collect::<..>().cast::<i8, _>().commit(0)",
    manual: "L2337-L2338",
    generations: Generations::Both,
};

/// The sub-context commit `at` after a Cast or Transpose, `offender` that step's method and
/// name token when it is in the commit's own chain (or the chain it continues).
pub(super) fn sub_commit_after_cast(at: Span, offender: Option<&(Method, Span)>) -> Diagnostic {
    // At the Cast/Transpose that breaks the rule (ARCHITECTURE.md, "Where a
    // diagnostic points"), the commit related; at the commit when the offending step
    // is in another chain.
    let msg = "a sub-context commit can only follow fetch (and collect): remove the Cast/Transpose, or run this chain on `ctx.main`";
    match offender {
        Some((method @ (Method::CommitCast | Method::CommitCastRelu), cast)) => Diagnostic::new(
            &KRN_006,
            *cast,
            format!(
                "`.{method}()` on the sub context: the Commit Adapter casts on the main context \
                 only; a sub-context commit writes what it fetched. Run this chain on \
                 `ctx.main`, or cast on the main context before the data reaches the sub one"
            ),
        ),
        Some((method, cast)) => Diagnostic::new(
            &KRN_006,
            *cast,
            format!("`.{method}()` on the sub context: {msg}"),
        )
        .with_related(at, "the sub-context commit that cannot follow it"),
        None => Diagnostic::new(&KRN_006, at, msg),
    }
}

//! CST-003: the Cast Engine's output can only be transposed and committed on the main
//! context. A cast on the sub context whose result no commit consumes can never reach DM;
//! the other misplaced casts are KRN-001's and KRN-006's.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Kind, Step, Tu};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CST_003: Rule = Rule {
    code: "CST-003",
    name: "cast-position",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Cast runs on the main context, after Vector/Contraction and before Transpose/Commit",
    docs: "The Cast Engine sits between the Vector and Transpose engines, and its output can only \
           be transposed and committed; a sub-context commit cannot follow a cast. The findings are \
           divided so each is reported once: a cast in the wrong place of a chain (after a \
           transpose, twice, before the vector stage) is KRN-001 at the misplaced method; a \
           sub-context chain that casts and then commits is KRN-006 at the commit; CST-003 reports \
           the remaining case, a cast on `ctx.sub` whose result no commit of the function consumes \
           (it is returned or left unused), at the cast: it can never reach DM. Run the chain on \
           `ctx.main`.",
    bad: "let c = ctx.sub.begin(a.view()).fetch::<i32, T, P>().collect::<T, P>().cast::<i8, m![A # 32]>();",
    good: "let c = ctx.main.begin(a.view()).fetch::<i32, T, P>().collect::<T, P>().cast::<i8, m![A # 32]>();",
    manual: "L3018, L2337-L2338, L3046-L3052",
    generations: Generations::Both,
};

/// CST-003: a sub-context cast whose result no commit consumes (KRN-006 reports the others).
pub(super) fn check(
    cx: &FnContext<'_>,
    ci: usize,
    chain: &Chain,
    i: usize,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) {
    if step.context != Some(Tu::Sub) {
        return;
    }
    let is_commit = |s: &Step| s.method.is_commit();
    if chain.steps[i + 1..].iter().any(is_commit) {
        return;
    }
    // A later sub-context commit of a cast or transposed stream: KRN-006 reports it there.
    let committed_later = cx.model.chains[ci + 1..].iter().any(|c| {
        c.steps.iter().any(|s| {
            is_commit(s)
                && s.context == Some(Tu::Sub)
                && s.input
                    .as_ref()
                    .is_some_and(|t| matches!(t.kind, Kind::Cast | Kind::Transpose))
        })
    });
    if committed_later {
        return;
    }
    out.push(Diagnostic::new(
        &CST_003,
        step.span,
        "a cast on the sub context cannot reach DM: sub-context commits cannot follow a Cast \
         (or Transpose), and the sub context leaves the compute engines idle; run this chain on \
         `ctx.main`",
    ));
}

//! KRN-005: the sub context moves data; Contraction and Vector work belongs to `ctx.main`.
//! Whether compute there is forbidden or only waits for main is not stated, so this warns.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Engine, Method};
use crate::rule::{Generations, Rule, Status};

pub const KRN_005: Rule = Rule {
    code: "KRN-005",
    name: "sub-context-compute",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "The sub context moves data; Contraction and Vector belong to `ctx.main`",
    docs: "The sub context's compute engines are \"Idle only\": sub chains are fetch → [switch] → \
           collect → to_trf / to_vrf / commit (prefetching, SRAM copies). Whether compute there is \
           forbidden or only waits for main is not stated (constraints.md §22 A-24), so this warns.",
    bad: "ctx.sub.begin(a.view()).fetch::<..>().collect::<..>().vector_init()",
    good: "ctx.main.begin(a.view()).fetch::<..>().collect::<..>().vector_init()",
    manual: "L3046-L3052, L7065, L152",
    generations: Generations::Both,
};

/// `.method()`, work of `engine`, in the sub context.
pub(super) fn sub_compute(at: Span, method: &Method, engine: Engine) -> Diagnostic {
    Diagnostic::new(
        &KRN_005,
        at,
        format!(
            "the sub context leaves the {} idle: `.{method}()` belongs on `ctx.main`; sub is for data movement (fetch → [switch] → collect → to_trf / to_vrf / commit)",
            engine.name()
        ),
    )
}

//! KRN-001: a Tensor Unit pass visits its engines in hardware order, each at most once. rustc
//! reports a misordered chain as a missing method on a typestate; this names the engines.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Engine, Kind, Method};
use crate::rule::{Generations, Rule, Status};

pub const KRN_001: Rule = Rule {
    code: "KRN-001",
    name: "pipeline-order",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Engines are chained in hardware order, each at most once",
    docs: "A Tensor Unit pass visits Fetch → (Switch) → Collect → (Contraction: align, contract, \
           accumulate) → (Vector) → (Cast) → (Transpose) → Commit. rustc reports a misordered \
           chain as a missing method on a typestate (so an error); visa-lint names the engines \
           instead. The order follows the library's typestates, which allow two detours the \
           manual's order does not show: `vector_final().to_vrf(..)` (`VectorFinalTensor::to_vrf`, \
           a Vector Engine result loaded into the VRF for the next pass) and `commit` straight \
           after fetch or switch (see KRN-002).",
    bad: ".collect::<T, P>().cast::<bf16, _>().vector_init()",
    good: ".collect::<T, P>().vector_init() /* ... */ .vector_final().cast::<bf16, _>().commit(a)",
    manual: "L131, L3011, L4553, L1113-L1123",
    generations: Generations::Both,
};

/// `.method()` on a `BeginTensor`, before any fetch.
pub(super) fn needs_fetch(at: Span, method: &Method) -> Diagnostic {
    Diagnostic::new(
        &KRN_001,
        at,
        format!("`.{method}()` needs a fetch first: the pipeline starts with the Fetch Engine"),
    )
}

/// `.method()` of `engine` after the pipeline reached `after`, which comes later.
pub(super) fn out_of_order(at: Span, method: &Method, engine: Engine, after: Engine) -> Diagnostic {
    Diagnostic::new(
        &KRN_001,
        at,
        format!(
            "the {} (`.{method}()`) cannot come after the {}: the Tensor Unit runs Fetch → Switch → Collect → Contraction → Vector → Cast → Transpose → Commit, each engine at most once",
            engine.name(),
            after.name()
        ),
    )
}

/// `.method()` that is not a method of `on`, a stream after `after`.
pub(super) fn not_available(at: Span, method: &Method, on: Kind, after: Engine) -> Diagnostic {
    Diagnostic::new(
        &KRN_001,
        at,
        format!(
            "`.{method}()` is not available on `{}` (after the {})",
            on.type_name(),
            after.name()
        ),
    )
}

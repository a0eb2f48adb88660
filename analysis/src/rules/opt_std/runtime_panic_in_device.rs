//! OPT-002: the chip has no way to panic, so furiosa-opt-std refuses a run-time `assert!` or
//! `panic!` in a `#[device]` body. The model builder finds it; this file holds the rule and
//! its diagnostic.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const OPT_002: Rule = Rule {
    code: "OPT-002",
    name: "runtime-panic-in-device",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `#[device]` body has no run-time `assert!` or `panic!` (furiosa-opt-std)",
    docs: "A device body runs on the chip, which has no way to panic: furiosa-opt-std 0.6 \
           refuses a run-time `assert!`, `assert_eq!`, `panic!`, `unreachable!` or `todo!` in a \
           `#[device]` function (the vendor's `negative/runtime_panic.rs` at ebb846a). A guard \
           on shapes and constants belongs in `const { assert!(..) }`, which the compiler \
           checks and removes; a guard on a run-time value has no device equivalent.",
    bad: "for b in 0..<m![B]>::SIZE { assert!(b < 1000); .. }",
    good: "const { assert!(<m![B]>::SIZE % 32 == 0) };",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor refuses a run-time `assert!` or `panic!` in a device body \
         (`furiosa-opt-examples/src/negative/runtime_panic.rs:1-7`); the manual states nothing of \
         it",
    ),
};

/// OPT-002: the diagnostic of a run-time `name!` in a device body.
pub(super) fn diagnostic(at: Span, name: &str) -> Diagnostic {
    Diagnostic::new(
        &OPT_002,
        at,
        format!(
            "`{name}!` panics at run time, which a `#[device]` body cannot do under \
             furiosa-opt-std; check shapes and constants in `const {{ assert!(..) }}` instead"
        ),
    )
}

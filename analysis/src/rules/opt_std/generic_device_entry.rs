//! OPT-001: furiosa-opt-std translates each `#[device]` function before it is monomorphized,
//! so a device function generic over an axis, a type or a constant is refused. The model
//! builder finds it; this file holds the rule and its diagnostic.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::rule::{Generations, Rule, Status};

pub const OPT_001: Rule = Rule {
    code: "OPT-001",
    name: "generic-device-entry",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `#[device]` function is not generic (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 translates each `#[device]` function on its own, before it is \
           monomorphized, so a device function generic over an axis, a type or a constant is \
           refused (the vendor's `negative/generic_device.rs` at ebb846a). Keep the generic \
           code in a helper and write a concrete `#[device]` wrapper per instantiation.",
    bad: "#[device(chip = 1)]\nfn copy<A: AxisName>(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![A]>) { .. }",
    good: "fn copy<A: AxisName>(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![A]>) { .. }\n#[device(chip = 1)]\nfn copy_n(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![N]>) { copy::<N>(ctx, x) }",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor's translator refuses a `#[device]` function that is still generic, as it runs \
         before monomorphization (`furiosa-opt-examples/src/negative/generic_device.rs:1-11`); the \
         manual states nothing of it",
    ),
};

/// OPT-001: the diagnostic of a generic `#[device]` function with parameters `params`.
pub(super) fn diagnostic(at: Span, params: &str) -> Diagnostic {
    Diagnostic::new(
        &OPT_001,
        at,
        format!(
            "a `#[device]` function cannot be generic (`<{params}>`): furiosa-opt-std \
             translates it before it is monomorphized; keep the generic code in a helper \
             and call it from a concrete `#[device]` function"
        ),
    )
}

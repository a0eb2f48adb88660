//! OPT-003: an immediate is encoded in the instruction, so furiosa-opt-std needs a `memset`
//! value or a Vector Engine scalar operand to fold to a constant. The model builder finds the
//! values that do not; this file holds the rule and its two diagnostics: one for a value a
//! `const { .. }` block folds, one for a value that varies while the kernel runs.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::refusals::RunTime;
use crate::rule::{Generations, Rule, Status};

pub const OPT_003: Rule = Rule {
    code: "OPT-003",
    name: "immediate-not-constant",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `memset` fill value or a Vector Engine immediate folds to a constant (furiosa-opt-std)",
    docs: "An immediate is encoded in the instruction, so furiosa-opt-std 0.6 needs it to \
           const-fold: a `memset` value or a Vector Engine scalar operand computed by a \
           function call (`bf16::from_f32(1.0)`) or an `as` cast (`<m![A]>::SIZE as f32`) is \
           refused (the vendor's `negative/memset.rs` and `negative/scalar_cast_diag.rs` at \
           ebb846a). Wrap it in `const { .. }`, offered as a fix (not applied by `--fix`: a `const` \
           block cannot read a local variable), which folds it. A value that varies while the \
           kernel runs does not fold at all: a `for` loop's variable, an `if` or `match` on one \
           (`negative/runtime_if_scalar.rs`), or a local bound to any of these; give each case \
           its own call with a constant, or pass the value as a tensor operand. The compiler \
           inlines the crate's helpers into the kernel, so such a value passed to a helper \
           (through any depth of helpers) that makes it an immediate is refused too: it is \
           reported at the kernel's call, with where the value varies.",
    bad: "dm.view_mut().memset(bf16::from_f32(1.0), &mut ctx.sub);",
    good: "dm.view_mut().memset(const { bf16::from_f32(1.0) }, &mut ctx.sub);",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor refuses a `memset` value or an immediate that does not fold to a constant \
         (`furiosa-opt-examples/src/negative/memset.rs:17-23`, \
         `negative/scalar_cast_diag.rs:1-10`); the manual has no `memset` and states no such rule",
    ),
};

/// OPT-003 on a value a `const { .. }` block folds, with that block as its fix.
pub(super) fn folds(at: Span, method: &str, what: &RunTime, text: &str) -> Diagnostic {
    Diagnostic::new(
        &OPT_003,
        at,
        format!(
            "the immediate of `.{method}()` must fold to a constant, but `{text}` has {} \
             that stays at run time: wrap it in `const {{ .. }}`",
            what.what()
        ),
    )
    // Not a safe fix: a `const` block cannot read a local variable the value may name.
    .with_edit(
        "evaluate it at compile time: `const { .. }`",
        false,
        at,
        format!("const {{ {text} }}"),
    )
}

/// OPT-003 on a value that varies while the kernel runs, which no `const` block folds.
pub(super) fn varies(at: Span, method: &str, what: &RunTime, text: &str) -> Diagnostic {
    Diagnostic::new(
        &OPT_003,
        at,
        format!(
            "the immediate of `.{method}()` must fold to a constant, but `{text}` comes from \
             {}, which varies while the kernel runs: an immediate is encoded in the \
             instruction; give each case its own call with a constant, or pass the value as \
             a tensor operand",
            what.what()
        ),
    )
}

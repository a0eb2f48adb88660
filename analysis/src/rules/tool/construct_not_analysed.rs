//! VL-009: a tensor or a value that passes through a construct visa-lint does not follow leaves
//! what uses it unchecked, and this note names the construct once. The model builder finds the
//! constructs (a lost tensor, a chain inside a macro, an address call, an unknown value, loop
//! iterations past the budget), the crate's reading an item macro not expanded and a generic
//! function no call instantiates; this file reports each of them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};

pub const VL_009: Rule = Rule {
    code: "VL-009",
    name: "construct-not-analysed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A tensor or an address passes through a construct visa-lint does not follow, so what uses it is not checked",
    docs: "visa-lint follows tensors the way rustc types them: through `let` bindings and \
           assignments, blocks, `if`/`match`, loops, `return`, `?`, helper functions (by their \
           signatures, tuples of tensors included), tuple and struct literals, arrays and slices \
           of tensors iterated or indexed, tensors a closure captures or receives through an \
           annotated parameter, and addresses and values computed by functions whose body is \
           one expression (a `const fn`, a generic one instantiated at the call, or a helper \
           returning a `SwitchConfig`), and by `const` arrays indexed by a constant or a loop's \
           variable. A few forms it does not follow: a \
           tensor passed into a closure through an unannotated parameter, the value of a macro \
           other than `m!`, `axes!` and `i!` (and an engine chain written inside one), a macro \
           the crate does not define once (a dependency's) given the kernel's context or \
           tensors, which may do engine work with them, a field \
           of a value it cannot type (`self.weights`), an index into something that is not an \
           array of tensors, a destructuring of something that is not a tuple or struct \
           literal, the items of a macro invoked where no `macro_rules!` of the file defines \
           it before (one defined there is expanded and its kernels are checked, each finding \
           reported at the invocation), the result of a function it does not know, and an address computed by a \
           call it cannot evaluate. Values are evaluated as the compiler traces the kernel: a value \
           argument (`SwitchConfig`, `TrfAddress`, an op, a zero point, an address) bound by \
           `let`, named by a `const` of any module or chosen by an `if` on a constant is read \
           as its value, and a `for` loop over a constant range is unrolled (up to 64 body \
           evaluations per function; past that its first and last iterations are checked). A \
           value argument that is a parameter of the function, or an `if` whose arms differ on a \
           condition visa-lint cannot evaluate, and the iterations of a loop past the budget, \
           are reported here too, except a helper's parameter that every call of the helper in the \
           crate gives (followed up through callers that pass their own parameters): each call \
           is checked with its value, so the helper's own note would say something untrue; a \
           `pub` helper, which code outside the crate may call, keeps it. A tensor parameter typed \
           by a type parameter of its function (`fn widen<D: Scalar>(a: &DmTensor<D, ..>)`) is \
           checked as each call instantiates it; when no call of the crate does, the type \
           parameter gets this note. Where such a value is used as a tensor (the receiver of an \
           engine method, the tensor a pass begins from or aligns with), or such an address is \
           passed to `to_dm`, `commit` or `to_hbm`, this note names the construct once, so a \
           clean verdict never silently means that nothing was checked. Annotate the closure's \
           parameter, bind the value with a typed `let`, or compute the address in a `const` \
           (or a function with a single expression) to have it checked.",
    bad: "let stage = |t| ctx.main.begin(t.view()).fetch::<i8, m![1], m![A % 8]>();",
    good: "let stage = |t: &Input| ctx.main.begin(t.view()).fetch::<i8, m![1], m![A % 8]>();",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

/// The diagnostic of an item macro invocation whose items are not read (VL-009).
pub fn macro_not_expanded(call: Span, name: &str, reason: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        call,
        format!(
            "not checked: the items `{name}!` generates: {reason}; visa-lint expands the \
             `macro_rules!` macros a file defines before it invokes them"
        ),
    )
}

/// VL-009 at a type parameter (`generic`, declared at `at`) of the function `name` that types
/// its tensor parameter `param`, when no call of the crate instantiates the function: the
/// rules that read the tensor's element type or mappings skip it.
pub fn generic_not_instantiated(at: Span, name: &str, param: &str, generic: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: `{param}`'s type names `{generic}`, a type parameter of `{name}`, and \
             no call of `{name}` in the crate instantiates it, so the rules that read its \
             element type or mappings skip it; each call that gives `{name}` a tensor is \
             checked with that tensor's type"
        ),
    )
}

/// VL-009 on a tensor (`what`) lost at `at` and used as a tensor at `used`.
pub(super) fn lost(at: Span, what: &str, used: Span) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: {what}: visa-lint does not follow a tensor through it, so the engine chain that uses it is not checked"
        ),
    )
    .with_related(used, "used as a tensor here")
}

/// VL-009 on an engine chain (`.method()`) written inside the macro `name!`.
pub(super) fn in_macro(at: Span, name: &str, method: &Method) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: the engine chain inside `{name}!` (`.{method}()`): visa-lint does not read macro bodies other than `m!`, `axes!` and `i!`; write the chain outside the macro and pass its result in to have it checked",
        ),
    )
}

/// VL-009 on the macro `name!`, which visa-lint does not expand, given the kernel's context
/// or tensors (`given`).
pub(super) fn macro_given(at: Span, name: &str, given: &[String]) -> Diagnostic {
    let given = given
        .iter()
        .map(|g| format!("`{g}`"))
        .collect::<Vec<_>>()
        .join(", ");
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: `{name}!` is given {given}, and visa-lint does not expand it (it \
             expands the `macro_rules!` macros the crate defines once), so whatever engine work \
             or DMA it does with them is not checked; define it in the crate, or write its \
             body out, to have it checked"
        ),
    )
}

/// VL-009 on an address computed by a call of `name` that visa-lint does not evaluate (`why`,
/// where the evaluator ran it and says why it has no value).
pub(super) fn address_call(at: Span, name: &str, why: Option<&str>) -> Diagnostic {
    let why = why.map_or_else(
        || {
            "visa-lint evaluates constants, `const fn`s and functions whose body is one \
             expression, not this call"
                .to_string()
        },
        |w| format!("its value is not known at compile time: {w}"),
    );
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: the address computed by `{name}(..)`: {why}, so the rules that need the address (alignment, overlaps) skip it; compute it in a `const` to have it checked"
        ),
    )
}

/// VL-009 on a value argument `text` not known at compile time (`why`).
pub(super) fn value(at: Span, text: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: the value of `{text}` is not known at compile time ({why}), so the rules that read this argument skip it"
        ),
    )
}

/// VL-009 on a loop over `var` of `count` iterations, past the `budget` of evaluations.
pub(super) fn iterations(at: Span, var: &str, count: u64, budget: u32) -> Diagnostic {
    Diagnostic::new(
        &VL_009,
        at,
        format!(
            "not checked: the iterations of this loop between its first and last: its {count} iterations are past the {budget} loop-body evaluations visa-lint makes per function, so only the first and the last value of `{var}` are checked"
        ),
    )
}

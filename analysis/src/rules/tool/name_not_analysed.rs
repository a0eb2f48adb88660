//! VL-008: a name that may come from a place visa-lint cannot read (a glob import of another
//! crate, a constant in an escaped size) leaves its mapping unchecked, and this note says so
//! once per use. Lowering finds both cases; this file reports them.

use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::ast::Name;
use crate::rule::{Generations, Rule, Status};

pub const VL_008: Rule = Rule {
    code: "VL-008",
    name: "name-not-analysed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A name comes from a place visa-lint cannot read, so what uses it is not checked",
    docs: "visa-lint resolves names across the crate the way rustc does: `mod` files, `use` paths, \
           globs, renames and re-exports. A name it cannot find while the module glob-imports a \
           crate other than `furiosa_visa_std` (or a module whose file is missing) may come from \
           there: it is not an error, but the mappings that use it cannot be checked, and this \
           note says so once per use instead of letting a clean verdict mean \"nothing was \
           checked\". Declare the axis in the crate (or import it from a module of the crate) to \
           have it checked.",
    bad: "use other_crate::*;\ntype T = m![A];",
    good: "axes![A = 64];\ntype T = m![A];",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

/// VL-008 on `name`, not declared in the crate, which may come from the glob import `from` or
/// one of `others` more.
pub(super) fn not_read(name: &Name, from: &str, others: usize) -> Diagnostic {
    let more = match others {
        0 => String::new(),
        n => format!(" (or one of {n} other glob imports)"),
    };
    Diagnostic::new(
        &VL_008,
        name.span,
        format!(
            "`{}` is not declared in this crate; it may come from `{from}`{more}, which visa-lint cannot read, so this mapping is not checked",
            name.text
        ),
    )
}

/// VL-008 on a constant `name` inside an escaped size.
pub(super) fn named_const(name: &Name) -> Diagnostic {
    Diagnostic::new(
        &VL_008,
        name.span,
        format!(
            "`{}` in an escaped size has no value visa-lint can compute here (a constant, \
             `const fn` or associated item of the crate it could not evaluate, or a value only \
             a caller gives), so this mapping is not checked",
            name.text
        ),
    )
}

/// A mapping alias written as the types `m!` expands to (`Resize<Symbol<F>, N>`) that cannot
/// be read as a mapping.
pub(super) fn type_form(name: &Name, why: &str) -> Diagnostic {
    Diagnostic::new(
        &VL_008,
        name.span,
        format!(
            "`{}` is written as the types `m!` expands to (`Symbol`, `Pair`, `Padding`, \
             `Resize`, `Stride`, `Modulo`, `Identity`), but {why}, so the mappings that use it \
             are not checked; write it as `m![...]` to have them checked",
            name.text
        ),
    )
}

//! MAP-005: every symbol of a mapping takes its size from an `axes!` declaration. Lowering
//! finds an undeclared symbol, an axis of size 0, an axis declared twice with different sizes
//! and a `X::SIZE` of an unknown name; this file reports each of them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::Name;
use crate::rule::{Generations, Rule, Status};

pub const MAP_005: Rule = Rule {
    code: "MAP-005",
    name: "undeclared-axis",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every symbol in `m![...]` must be declared with its size in `axes![...]`",
    docs: "A symbol takes its size from the `axes!` declaration; an undeclared symbol has no size \
           and no `AxisName` type. Declare it (`axes![X = 16]`) or fix the spelling. Declaring the \
           same axis twice with different sizes is reported here too.",
    bad: "axes![A = 8]; type E = m![A, X];",
    good: "axes![A = 8, X = 16]; type E = m![A, X];",
    manual: "L588, L625, L5360",
    generations: Generations::Both,
};

/// MAP-005 on an axis declared with size 0.
pub(super) fn zero_size(name: &str, at: Span) -> Diagnostic {
    Diagnostic::new(
        &MAP_005,
        at,
        format!("axis `{name}` is declared with size 0; an axis needs at least one index"),
    )
}

/// MAP-005 on an axis declared again with another size, the first declaration related.
pub(super) fn redeclared(name: &str, at: Span, size: u64, was: u64, first: Span) -> Diagnostic {
    Diagnostic::new(
        &MAP_005,
        at,
        format!("axis `{name}` is declared again with size {size} (it was {was})"),
    )
    .with_related(first, "first declared here")
}

/// MAP-005 on an undeclared axis; a name that is a mapping (an alias or a generic parameter)
/// is to be escaped, and an alias's escape is the fix.
pub(super) fn undeclared(name: &Name, alias: bool, generic: bool) -> Diagnostic {
    let n = &name.text;
    let msg = if alias || generic {
        format!("undeclared axis `{n}`; `{n}` is a mapping: escape it as `{{ {n} }}`")
    } else {
        format!("undeclared axis `{n}`: declare it with its size in `axes![...]`")
    };
    let d = Diagnostic::new(&MAP_005, name.span, msg);
    if alias {
        return d.with_edit(
            format!("escape the alias: `{{ {n} }}`"),
            true,
            name.span,
            format!("{{ {n} }}"),
        );
    }
    d
}

/// MAP-005 on `X::SIZE` where `X` is neither an axis nor an alias.
pub(super) fn size_of_unknown(name: &Name) -> Diagnostic {
    Diagnostic::new(
        &MAP_005,
        name.span,
        format!(
            "`{0}::SIZE`: `{0}` is neither a declared axis nor a mapping alias",
            name.text
        ),
    )
}

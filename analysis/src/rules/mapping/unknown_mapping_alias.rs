//! MAP-006: an escape `{ T }` splices a named mapping, so `T` must be an alias in scope and
//! aliases must not refer to themselves. Lowering finds an unknown alias, a `T::SIZE` inside
//! `T`'s own definition and a cycle of aliases; this file reports each of them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::Name;
use crate::rule::{Generations, Rule, Status};

pub const MAP_006: Rule = Rule {
    code: "MAP-006",
    name: "unknown-mapping-alias",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`{ T }` must name a mapping type alias (`type T = m![...]`), without cycles",
    docs: "An escape splices a named mapping into another. The name must resolve to a \
           `type T = m![...];` alias in scope, and aliases must not refer to themselves through \
           escapes. Generic parameters (`{ Time }` inside a generic function) are accepted and \
           left unknown.",
    bad: "type E = m![{ L }, B];",
    good: "type L = m![A]; type E = m![{ L }, B];",
    manual: "L972-L984",
    generations: Generations::Both,
};

/// MAP-006 on an escape of a name that is no alias; an axis is to be written without braces.
pub(super) fn unknown(at: Span, name: &str, axis: bool) -> Diagnostic {
    let msg = if axis {
        format!("unknown mapping alias `{name}`; `{name}` is an axis: write it without braces")
    } else {
        format!("unknown mapping alias `{name}`; define it with `type {name} = m![...];`")
    };
    Diagnostic::new(&MAP_006, at, msg)
}

/// MAP-006 on `T::SIZE` inside the definition of `T`.
pub(super) fn size_of_own(name: &Name) -> Diagnostic {
    Diagnostic::new(
        &MAP_006,
        name.span,
        format!("`{}::SIZE` refers to the alias being defined", name.text),
    )
}

/// MAP-006 on aliases defined in a cycle, each of them named.
pub(super) fn alias_cycle(at: Span, cycle: &[Name]) -> Diagnostic {
    let names: Vec<&str> = cycle
        .iter()
        .chain(cycle.first())
        .map(|n| n.text.as_str())
        .collect();
    let d = Diagnostic::new(
        &MAP_006,
        at,
        format!("mapping alias cycle: {}", names.join(" -> ")),
    );
    cycle.iter().skip(1).fold(d, |d, n| {
        d.with_related(n.span, format!("`{}` is part of the cycle", n.text))
    })
}

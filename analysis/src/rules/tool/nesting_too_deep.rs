//! VL-005: input nested deeper than visa-lint's limits would overflow the parser's stack, so it
//! is reported, not analysed. The pre-scan finds a file too deep, and the mapping parser and
//! lowering a mapping or an alias chain too deep; this file reports each of them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::Name;
use crate::rule::{Generations, Rule, Status};
use crate::syntax::limits::TooDeep;

pub const VL_005: Rule = Rule {
    code: "VL-005",
    name: "nesting-too-deep",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A file nested deeper than visa-lint's documented limit is reported, not analysed",
    docs: "Before parsing, visa-lint estimates how deep the file's syntax tree nests: every open \
           `(`, `[` or `{`, every operator or `.` of a chained expression and every unclosed `<` \
           count one level. Past 256 levels (no real kernel comes near) the file is not analysed \
           and this diagnostic points at the token where the limit is exceeded; a mapping nested \
           past its own limit of 64 groups or operators is reported the same way. Deeper input \
           would overflow the parser's stack. Split the expression with `let` bindings or type \
           aliases.",
    bad: "let x = ((((((((((((((((((((/* ...300 levels... */ 1))))))))))))))))))));",
    good: "let inner = /* ... */ 1; let x = inner;",
    manual: "none: a limit of the tool, documented in docs/robustness.md",
    generations: Generations::Both,
};

/// VL-005 at a mapping the parser finds nested past its limit.
pub(super) fn mapping(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::new(&VL_005, at, msg)
}

/// VL-005 on a mapping whose value nests past `limit` levels.
pub(super) fn layout(at: Span, limit: u32) -> Diagnostic {
    Diagnostic::new(
        &VL_005,
        at,
        format!(
            "mapping nested too deep: its value nests windows, strides and linear \
             combinations more than {limit} levels (through aliases); visa-lint does not \
             evaluate it"
        ),
    )
}

/// VL-005 on an escape of `name` whose aliases nest past `limit` levels.
pub(super) fn aliases(at: Span, name: &str, limit: usize) -> Diagnostic {
    Diagnostic::new(
        &VL_005,
        at,
        format!(
            "mapping aliases nested too deep: `{name}` escapes aliases that escape aliases \
             more than {limit} levels down; visa-lint does not evaluate it"
        ),
    )
}

/// VL-005 on `name::SIZE` reaching aliases nested past `limit` levels.
pub(super) fn size_of(name: &Name, limit: usize) -> Diagnostic {
    Diagnostic::new(
        &VL_005,
        name.span,
        format!(
            "`{}::SIZE` reaches aliases nested more than {limit} levels deep; visa-lint does \
             not evaluate it",
            name.text
        ),
    )
}

/// The diagnostic of a file nested too deep to analyse (VL-005), found by the pre-scan.
pub fn nesting_too_deep(t: &TooDeep) -> Diagnostic {
    let TooDeep { at, depth, limit } = *t;
    Diagnostic::new(
        &VL_005,
        at,
        format!(
            "nesting too deep: brackets, operators and chained calls reach an estimated depth of \
             {depth} here; visa-lint analyses files nested up to {limit} levels and does not \
             analyse this file"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_too_deep_is_reported_at_the_token_past_the_limit() {
        let text = "fn f() { [[[[[[[[ ]]]]]]]] }";
        let t = crate::syntax::limits::check_nesting_with(text, 5).expect("too deep");
        let d = nesting_too_deep(&t);
        assert_eq!(d.code(), "VL-005");
        assert_eq!(d.span.start, 12);
        expect_test::expect![[r#"
            "nesting too deep: brackets, operators and chained calls reach an estimated depth of 6 here; visa-lint analyses files nested up to 5 levels and does not analyse this file"
        "#]]
        .assert_debug_eq(&d.message);
    }
}

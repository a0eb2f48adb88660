//! The `m!` mapping engine: grammar ([`parse`]), names ([`lower::Scope`]), symbolic
//! semantics and canonical normal form ([`layout`]), and descriptions ([`describe`]).

pub mod ast;
pub mod describe;
pub mod layout;
pub mod lower;
pub mod parse;
#[cfg(test)]
pub mod testing;

pub use layout::{Axis, Index, Layout};
pub use lower::{Scope, lower};

use crate::diagnostic::{Diagnostic, Span};
use crate::rules::tool::{VL_001, VL_002, VL_003};
use parse::ParseProblem;

/// Turns a parse problem into its diagnostic, with spans lifted by `base`.
pub fn problem_diagnostic(p: ParseProblem, base: u32) -> Diagnostic {
    let d = match p {
        ParseProblem::Syntax(span, msg) => Diagnostic::new(&VL_001, span, msg),
        ParseProblem::Unsupported(span, msg) => Diagnostic::new(&VL_002, span, msg),
        ParseProblem::Overflow(span, msg) => Diagnostic::new(&VL_003, span, msg),
    };
    d.shifted(base)
}

/// Lifts every span of an expression by `base` bytes (macro body -> file coordinates).
pub fn shift_expr(e: &mut ast::Expr, base: u32) {
    use ast::Expr::*;
    match e {
        Identity(s) => *s = s.shift(base),
        Symbol(n) => n.span = n.span.shift(base),
        Escape(n, s) => {
            n.span = n.span.shift(base);
            *s = s.shift(base);
        }
        Group(inner, s) => {
            shift_expr(inner, base);
            *s = s.shift(base);
        }
        Pair(terms, s) => {
            terms.iter_mut().for_each(|t| shift_expr(t, base));
            *s = s.shift(base);
        }
        LinComb(terms, s) => {
            for (t, n) in terms {
                shift_expr(t, base);
                shift_size(n, base);
            }
            *s = s.shift(base);
        }
        Op {
            inner,
            op_span,
            arg,
            span,
            ..
        } => {
            shift_expr(inner, base);
            *op_span = op_span.shift(base);
            shift_size(arg, base);
            *span = span.shift(base);
        }
    }
}

fn shift_size(e: &mut ast::SizeExpr, base: u32) {
    match e {
        ast::SizeExpr::Lit(_, s) => *s = s.shift(base),
        ast::SizeExpr::SizeOf(n, s) => {
            n.span = n.span.shift(base);
            *s = s.shift(base);
        }
        ast::SizeExpr::Bin(l, _, r, s) => {
            shift_size(l, base);
            shift_size(r, base);
            *s = s.shift(base);
        }
    }
}

pub fn shift_axes(decls: &mut [ast::AxisDecl], base: u32) {
    for d in decls {
        d.name.span = d.name.span.shift(base);
        d.span = d.span.shift(base);
        match &mut d.def {
            ast::AxisDef::Size(s) => shift_size(s, base),
            ast::AxisDef::Skew { base: b, minus } => {
                b.span = b.span.shift(base);
                minus.span = minus.span.shift(base);
            }
        }
    }
}

/// A standalone evaluation, as `visa-lint eval` does it: an axes table and one mapping, laid
/// out in a small virtual source so diagnostics can point into it.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// `axes![<axes>];\nm![<mapping>]`: what diagnostic spans point into.
    pub source: String,
    pub layout: Option<Layout>,
    /// The size of the innermost term as written (`m![B / 4, B % 4]` -> 4), for tables.
    pub inner_term_size: Option<u64>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Evaluates `mapping` (with or without the `m![...]` wrapper) under the axes `axes`
/// (`A = 8, B = 512`, with or without `axes![...]`).
pub fn evaluate(axes: &str, mapping: &str) -> Evaluation {
    let axes_body = strip_macro(axes, "axes");
    let map_body = strip_macro(mapping, "m");
    let prefix = "axes![";
    let mid = "];\nm![";
    let source = format!("{prefix}{axes_body}{mid}{map_body}]");
    let axes_base = prefix.len() as u32;
    let map_base = (prefix.len() + axes_body.len() + mid.len()) as u32;
    let mut diagnostics = Vec::new();
    let mut scope = Scope::default();
    let (mut decls, problems) = parse::parse_axes(axes_body);
    diagnostics.extend(
        problems
            .into_iter()
            .map(|p| problem_diagnostic(p, axes_base)),
    );
    shift_axes(&mut decls, axes_base);
    scope.declare_axes(&decls, &mut diagnostics);
    let mut inner_term_size = None;
    let layout = match parse::parse_mapping(map_body) {
        Ok(mut e) => {
            shift_expr(&mut e, map_base);
            if let ast::Expr::Pair(terms, _) = &e
                && let Some(last) = terms.last()
            {
                inner_term_size = lower(last, &scope, &mut Vec::new()).map(|l| l.size);
            }
            lower(&e, &scope, &mut diagnostics)
        }
        Err(p) => {
            diagnostics.push(problem_diagnostic(p, map_base));
            None
        }
    };
    Evaluation {
        source,
        layout,
        inner_term_size,
        diagnostics,
    }
}

/// `m![A, B]` -> `A, B`; anything else is returned trimmed.
fn strip_macro<'a>(text: &'a str, name: &str) -> &'a str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix(name) else {
        return t;
    };
    let rest = rest.trim_start();
    let Some(rest) = rest.strip_prefix('!') else {
        return t;
    };
    let rest = rest.trim_start();
    for (open, close) in [('[', ']'), ('(', ')'), ('{', '}')] {
        if let Some(inner) = rest.strip_prefix(open).and_then(|r| {
            r.trim_end()
                .trim_end_matches(';')
                .trim_end()
                .strip_suffix(close)
        }) {
            return inner;
        }
    }
    t
}

/// The span of a whole text, for diagnostics about it as a whole.
pub fn whole(text: &str) -> Span {
    Span::new(0, text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_wrappers() {
        assert_eq!(strip_macro("m![A, B]", "m"), "A, B");
        assert_eq!(strip_macro(" axes![A = 8]; ", "axes"), "A = 8");
        assert_eq!(strip_macro("A, B", "m"), "A, B");
        assert_eq!(strip_macro("mx![A]", "m"), "mx![A]");
    }

    #[test]
    fn evaluation_spans_point_into_the_virtual_source() {
        let ev = evaluate("A = 63", "m![A / 8]");
        assert!(ev.layout.is_none());
        let d = &ev.diagnostics[0];
        assert_eq!(d.code(), "MAP-001");
        assert_eq!(&ev.source[d.span.range()], "A / 8");
        let fix = &d.fixes[0].edits[0];
        let mut fixed = ev.source.clone();
        fixed.replace_range(fix.span.range(), &fix.new_text);
        assert!(fixed.ends_with("m![A # 64 / 8]"), "{fixed}");
    }
}

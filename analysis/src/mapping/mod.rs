//! The `m!` mapping engine: grammar ([`parse`]), names ([`lower::Scope`]), symbolic
//! semantics and canonical normal form ([`layout`]), and descriptions ([`describe`]). What it
//! finds wrong is a [`Problem`] (data); the rules layer makes it a diagnostic.

pub mod ast;
pub mod describe;
pub mod dialect;
pub mod edit;
pub mod layout;
pub mod lower;
pub mod parse;
pub mod problem;
#[cfg(test)]
pub mod testing;

pub use dialect::{DialectForm, dialect_forms};
pub use layout::{Axis, Index, Layout};
pub use lower::{Scope, lower};
pub use problem::Problem;

use crate::diagnostic::Span;

/// Lifts every span of an expression by `base` bytes (macro body -> file coordinates).
pub fn shift_expr(e: &mut ast::Expr, base: u32) {
    use ast::Expr::*;
    match e {
        Identity(s) | Broadcast(_, s) => *s = s.shift(base),
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

/// Lifts every span of a size by `base` bytes.
pub fn shift_size(e: &mut ast::SizeExpr, base: u32) {
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
        ast::SizeExpr::Escaped(inner, s) => {
            shift_size(inner, base);
            *s = s.shift(base);
        }
        ast::SizeExpr::Const(n) => n.span = n.span.shift(base),
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
/// out in a small virtual source so problems can point into it. (`crate::api::evaluate`
/// reports the problems as diagnostics.)
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// `axes![<axes>];\nm![<mapping>]`: what problem spans point into.
    pub source: String,
    pub layout: Option<Layout>,
    /// The size of the innermost term as written (`m![B / 4, B % 4]` -> 4), for tables.
    pub inner_term_size: Option<u64>,
    pub problems: Vec<Problem>,
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
    let mut problems = Vec::new();
    let mut scope = Scope::default();
    let (mut decls, parse_problems) = parse::parse_axes(axes_body);
    problems.extend(
        parse_problems
            .into_iter()
            .map(|p| Problem::parse(p, axes_base)),
    );
    shift_axes(&mut decls, axes_base);
    scope.declare_axes(&decls, &mut problems);
    let mut inner_term_size = None;
    let layout = match parse::parse_mapping(map_body) {
        Ok(mut e) => {
            shift_expr(&mut e, map_base);
            if let ast::Expr::Pair(terms, _) = &e
                && let Some(last) = terms.last()
            {
                inner_term_size = lower(last, &scope, &mut Vec::new()).map(|l| l.size);
            }
            lower(&e, &scope, &mut problems)
        }
        Err(p) => {
            problems.push(Problem::parse(p, map_base));
            None
        }
    };
    Evaluation {
        source,
        layout,
        inner_term_size,
        problems,
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
}

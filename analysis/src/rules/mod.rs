//! Rule families. Each module declares its rules (code, name, severity, docs, examples,
//! manual lines) next to the code that checks them; [`registry`] lists them all.
//!
//! The layers below report what they find as typed problems, never as diagnostics:
//! [`mapping_diagnostic`] and [`model_diagnostic`] hand each to the family whose rule it is,
//! which writes its message, related spans and fixes.

pub mod alignment;
pub mod bank;
pub mod capacity;
pub mod cast;
pub mod collect;
pub mod commit;
pub mod context;
pub mod contraction;
pub mod dma;
pub mod fetch;
#[cfg(test)]
pub mod fix_testing;
pub mod inter_slice;
pub mod kernel;
pub mod mapping;
pub mod opt_std;
pub mod reduce;
pub mod registry;
pub mod schedule;
pub mod sequencer;
pub mod switch;
pub mod tool;
pub mod transpose;
pub mod vector;

pub use context::{FnContext, at_arg};

use crate::diagnostic::{Diagnostic, Span};

/// The diagnostic of a problem found while mappings were parsed, declared or lowered.
pub fn mapping_diagnostic(p: &crate::mapping::Problem) -> Diagnostic {
    use crate::mapping::Problem;
    match p {
        Problem::Invalid(p) => mapping::diagnostic(p),
        Problem::Unevaluated(p) => tool::mapping_diagnostic(p),
    }
}

/// The diagnostics of the problems lowering found in mappings, `sites` the spans of the
/// `m![..]` they were found in: paddings of one mapping that go together are one fix
/// ([`mapping::pad_together`]).
pub fn mapping_diagnostics(
    problems: &[crate::mapping::Problem],
    sites: &[Span],
    type_forms: &[crate::syntax::TypeFormSite],
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = problems.iter().map(mapping_diagnostic).collect();
    mapping::pad_together(&mut out, sites);
    // A fix writes `m!` syntax where the expression's pieces are; inside a mapping written as
    // types (`Modulo<Symbol<L>, 24>`) a padding is written as its type (`Padding<.., 72>`),
    // and any other edit is not offered there.
    for d in &mut out {
        d.fixes = std::mem::take(&mut d.fixes)
            .into_iter()
            .filter_map(|mut f| {
                let mut edits = Vec::new();
                for e in f.edits {
                    match type_forms
                        .iter()
                        .find(|t| t.span.start <= e.span.start && e.span.end <= t.span.end)
                    {
                        None => edits.push(e),
                        Some(t) => edits.extend(as_type_form(&e, t)?),
                    }
                }
                f.edits = edits;
                Some(f)
            })
            .collect();
    }
    out
}

/// A padding written after an expression of a type form (` # 72` after `Symbol<L>`), as the
/// form writes it: `Padding<Symbol<L>, 72>`. `None` for any other edit.
fn as_type_form(
    e: &crate::diagnostic::Edit,
    form: &crate::syntax::TypeFormSite,
) -> Option<Vec<crate::diagnostic::Edit>> {
    use crate::mapping::ast::Expr;
    let n = e.new_text.trim().strip_prefix('#')?.trim();
    n.parse::<u64>().ok()?;
    if e.span.start != e.span.end {
        return None;
    }
    // The outermost piece of the form that ends where the padding goes.
    fn ending_at(x: &Expr, at: u32, best: &mut Option<Span>) {
        let s = x.span();
        if s.end == at && best.is_none_or(|b| s.start < b.start) {
            *best = Some(s);
        }
        match x {
            Expr::Group(inner, _) | Expr::Op { inner, .. } => ending_at(inner, at, best),
            Expr::Pair(terms, _) => terms.iter().for_each(|t| ending_at(t, at, best)),
            Expr::LinComb(terms, _) => terms.iter().for_each(|(t, _)| ending_at(t, at, best)),
            _ => {}
        }
    }
    let mut piece = None;
    ending_at(form.body.as_ref().ok()?, e.span.end, &mut piece);
    let piece = piece?;
    let at = |p: u32| Span::new(p as usize, p as usize);
    Some(vec![
        crate::diagnostic::Edit {
            span: at(piece.start),
            new_text: "Padding<".to_string(),
        },
        crate::diagnostic::Edit {
            span: at(piece.end),
            new_text: format!(", {n}>"),
        },
    ])
}

/// The diagnostic of a problem found while a function's model was built.
pub fn model_diagnostic(p: &crate::model::Problem) -> Diagnostic {
    use crate::model::Problem;
    match p {
        Problem::Kernel(p) => kernel::diagnostic(p),
        Problem::Unknown(p) => tool::unknown_primitive(p),
        Problem::NotFollowed(p) => tool::not_followed(p),
        Problem::Refused(p) => opt_std::diagnostic(p),
    }
}

/// Runs every model-level rule family over one function. (KRN-001..011, VL-004 and VL-009 are
/// found while the model is built and MAP-001..008 while mappings are lowered: see [`model_diagnostic`] and
/// [`mapping_diagnostic`].)
pub fn check_fn(cx: &FnContext<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    mapping::check(cx, &mut out);
    sequencer::check(cx, &mut out);
    fetch::check(cx, &mut out);
    collect::check(cx, &mut out);
    commit::check(cx, &mut out);
    dma::check(cx, &mut out);
    alignment::check(cx, &mut out);
    vector::check(cx, &mut out);
    reduce::check(cx, &mut out);
    inter_slice::check(cx, &mut out);
    capacity::check(cx, &mut out);
    switch::check(cx, &mut out);
    contraction::check(cx, &mut out);
    cast::check(cx, &mut out);
    transpose::check(cx, &mut out);
    schedule::check(cx, &mut out);
    bank::check(cx, &mut out);
    opt_std::check(cx, &mut out);
    out
}

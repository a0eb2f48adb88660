//! The edits that rewrite a mapping wherever the function writes it (parameter types, `let`
//! annotations, the return type, turbofish arguments), and where a diagnostic with such a fix
//! points. The VCG placement rules (VCG-003, VCG-006, VCG-007) fix with them.

use crate::diagnostic::{Diagnostic, Edit, Span};
use crate::mapping::Layout;
use crate::model::{FnModel, Step, TensorTy, mapping_around};
use crate::rule::Rule;
use crate::rules::context::{FnContext, at_arg};

/// A VCG placement diagnostic whose fix rewrites the mappings: at the first mapping the fix
/// edits (ARCHITECTURE.md, "Where a diagnostic points"), the reduce call related; at the call
/// when there is no fix.
pub(super) fn at_fix(
    cx: &FnContext<'_>,
    rule: &'static Rule,
    step: &Step,
    edits: &[Edit],
    msg: String,
) -> Diagnostic {
    let at = edits.first().and_then(|e| mapping_around(cx.model, e.span));
    at_arg(rule, step, at, msg)
}

/// Edits turning `R # from` into `R # to` wherever the function writes a mapping: turbofish
/// arguments, parameter types and `let` annotations (the spans of [`MapVal`]s).
///
/// [`MapVal`]: crate::model::MapVal
pub(super) fn pad_edits(model: &FnModel, r: &str, from: u64, to: u64) -> Vec<Edit> {
    fn add_ty<'m>(ty: Option<&'m TensorTy>, w: &mut Vec<(&'m str, Span)>) {
        for v in ty.into_iter().flat_map(|t| t.maps.values()) {
            if let Some(sp) = v.span {
                w.push((v.text.as_str(), sp));
            }
        }
    }
    let mut written: Vec<(&str, Span)> = Vec::new();
    for t in &model.tensors {
        add_ty(Some(&t.ty), &mut written);
    }
    for chain in &model.chains {
        add_ty(chain.declared.as_ref(), &mut written);
        for step in &chain.steps {
            add_ty(step.input.as_ref(), &mut written);
            add_ty(step.output.as_ref(), &mut written);
            for a in &step.generics {
                written.push((a.text.as_str(), a.span));
            }
        }
    }
    let mut edits = Vec::new();
    let from_txt = from.to_string();
    for (text, sp) in written {
        if sp.end.checked_sub(sp.start).map(|l| l as usize) != Some(text.len()) {
            continue;
        }
        for off in find_pad(text, r, &from_txt) {
            let start = sp.start as usize + off;
            edits.push(Edit {
                span: Span::new(start, start + from_txt.len()),
                new_text: to.to_string(),
            });
        }
    }
    edits.sort_by_key(|e| e.span);
    edits.dedup();
    edits
}

/// Edits replacing every mapping the function writes (parameter types, annotations, turbofish
/// arguments) whose value is `old` with `new_text`.
pub(super) fn rewrite_mapping(model: &FnModel, old: &Layout, new_text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut add = |ty: Option<&TensorTy>| {
        for v in ty.into_iter().flat_map(|t| t.maps.values()) {
            if let (Some(sp), Some(l)) = (v.span, &v.layout)
                && **l == *old
                && v.text.trim_start().starts_with("m!")
            {
                edits.push(Edit {
                    span: sp,
                    new_text: new_text.to_string(),
                });
            }
        }
    };
    for t in &model.tensors {
        add(Some(&t.ty));
    }
    for chain in &model.chains {
        add(chain.declared.as_ref());
        for step in &chain.steps {
            add(step.input.as_ref());
            add(step.output.as_ref());
        }
    }
    edits.sort_by_key(|e| e.span);
    edits.dedup();
    edits
}

/// Byte offsets of the number in every `r # num` of `text`.
pub(super) fn find_pad(text: &str, r: &str, num: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(r).map(|i| i + from) {
        from = i + r.len();
        if i > 0 && ident(b[i - 1]) {
            continue;
        }
        let mut j = i + r.len();
        if j < b.len() && ident(b[j]) {
            continue;
        }
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if j >= b.len() || b[j] != b'#' {
            continue;
        }
        j += 1;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if text[j..].starts_with(num) && !b.get(j + num.len()).is_some_and(|c| c.is_ascii_digit()) {
            out.push(j);
        }
    }
    out
}

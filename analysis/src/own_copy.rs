//! A fix of a helper's text for one call: the call gets its own copy of the helper, with the
//! fix made in the copy.
//!
//! A finding of a generic helper that only one instantiation has (`relayout_chunk::<f8e4m3>`
//! collects a 16-byte packet where `::<bf16>` collects 32) is fixed in the helper's own text,
//! which every call shares: padding it there breaks the other calls, and
//! [`crate::fix_check`] drops that fix. What a kernel writer does then is give the call a
//! helper of its own: a copy beside the helper, named for what the call binds
//! (`relayout_chunk_f8e4m3`), with the fix made in it, and the call renamed to it. The copy
//! keeps the helper's signature, so it reads the call's arguments as the helper did.
//!
//! A copy whose finding is deeper (the helper calls the helper whose text is fixed) is made
//! the same way one call up: the copy of the outer helper names the inner copy. A copy is the
//! fallback: [`crate::fix_check`] keeps it only when no other fix of the diagnostic is clean.

use crate::diagnostic::{AliasPad, Edit, FileEdits, Fix, Span};
use crate::model::HelperCall;
use ra_ap_syntax::{AstNode, SyntaxNode};
use std::path::PathBuf;

/// The helper a call names, as a copy of it is made: its file, where it is in the file's
/// text, its syntax (the `fn` item, rooted at its start), and how the call's module names a
/// function declared beside it (`""` in the same module, `"crate::dequant::"` from another).
pub(crate) struct HelperText<'t> {
    pub path: PathBuf,
    pub text: &'t str,
    pub start: usize,
    pub syntax: SyntaxNode,
    pub sibling_prefix: &'t str,
}

/// `fix` (of a finding of `helper`, with spans in the helper) made in a copy of the helper
/// that only `call` names, when the fix edits the helper's own text: `lifted` is the fix as
/// the call makes it ([`crate::calls`]), which edits the helper for every call.
pub(crate) fn own_copy(
    fix: &Fix,
    lifted: Option<&Fix>,
    call: &HelperCall,
    helper: HelperText<'_>,
) -> Option<Fix> {
    // A fix of the calling kernel (its chip count) is no edit of the helper.
    if call.method || call.launched || fix.alias_pad.iter().any(|p| p.kernel_chips) {
        return None;
    }
    let HelperText {
        path,
        text,
        start,
        syntax,
        sibling_prefix: prefix,
    } = helper;
    let len = usize::from(syntax.text_range().len());
    let own = text.get(start..start + len)?;
    let (edits, carried) = edits_in_helper(fix, lifted, (own, &syntax), &path, start as u32)?;
    if !own.ends_with('}') {
        return None;
    }
    let (name, name_at) = fn_name(&syntax)?;
    // The copy's text before it is named: the edits are the signature's and the body's,
    // after the name.
    if edits
        .iter()
        .any(|e| (e.span.start as usize) < name_at + name.len())
    {
        return None;
    }
    let edited = crate::diagnostic::applied(own, &edits)?;
    // A copy made for another call with the same values (or by an earlier pass of `--fix`)
    // is this call's too. The file is read for its functions only when it may declare one.
    let declared = match text.contains(&format!("fn {name}_")) {
        true => fns_of(text),
        false => Vec::new(),
    };
    let mut insert = None;
    let mut copy_name = String::new();
    for candidate in names(&name, &suffix(call)) {
        let copy = format!(
            "{}{candidate}{}",
            &edited[..name_at],
            &edited[name_at + name.len()..]
        );
        match declared.iter().find(|(n, _)| *n == candidate) {
            Some((_, existing)) if *existing == copy => {}
            Some(_) => continue,
            // The helper's closing brace, replaced by itself and the copy: two fixes that
            // copy one helper overlap, so `--fix` makes one copy per pass and the next pass
            // finds it.
            None => {
                insert = Some(Edit {
                    span: Span::new(start + len - 1, start + len),
                    new_text: format!("}}\n\n{copy}"),
                })
            }
        }
        copy_name = candidate;
        break;
    }
    if copy_name.is_empty() {
        return None;
    }
    let rename = call_rename(call, &format!("{prefix}{copy_name}"))?;
    let mut other_files = carried;
    if let Some(insert) = insert {
        match other_files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.edits.push(insert),
            None => other_files.push(FileEdits {
                path,
                edits: vec![insert],
            }),
        }
    }
    let title = match fix.copies_helper {
        true => format!(
            "{}, called from a copy of `{name}`, `{copy_name}`",
            fix.title
        ),
        false => format!(
            "{} in a copy of `{name}` for this call, `{copy_name}`",
            fix.title
        ),
    };
    Some(Fix {
        title,
        safe: false,
        edits: vec![rename],
        other_files,
        edits_definition: false,
        edits_helper: false,
        copies_helper: true,
        edits_attribute: false,
        alias_pad: Vec::new(),
    })
}

/// The edits `fix` makes in the helper's text `own` (spans in it), and the edits it makes
/// elsewhere that the copy keeps (a deeper copy, inserted beside its helper). `None` when the
/// fix does not edit the helper's own text.
fn edits_in_helper(
    fix: &Fix,
    lifted: Option<&Fix>,
    (own, syntax): (&str, &SyntaxNode),
    path: &PathBuf,
    offset: u32,
) -> Option<(Vec<Edit>, Vec<FileEdits>)> {
    // A deeper copy: the call in this helper renamed, the copy inserted beside its helper.
    if fix.copies_helper {
        return Some((fix.edits.clone(), fix.other_files.clone()));
    }
    // The helper's own text, edited for every call.
    if let Some(lifted) = lifted.filter(|l| l.edits_helper && l.edits.is_empty()) {
        let [file] = lifted.other_files.as_slice() else {
            return None;
        };
        let edits = file.edits.iter().map(|e| {
            let span = Span::new(
                e.span.start.checked_sub(offset)? as usize,
                e.span.end.checked_sub(offset)? as usize,
            );
            Some(Edit {
                span,
                new_text: e.new_text.clone(),
            })
        });
        let edits = (&file.path == path).then(|| edits.collect::<Option<Vec<_>>>())??;
        return Some((with_every_use((own, syntax), edits), Vec::new()));
    }
    // A mapping alias the helper names, padded where it is defined for every use: in the
    // copy, the padded mapping written where the helper names it.
    if fix.edits.is_empty() && fix.other_files.is_empty() && !fix.alias_pad.is_empty() {
        let mut edits = Vec::new();
        for pad in &fix.alias_pad {
            edits.extend(alias_uses(syntax, pad)?);
        }
        edits.sort_by_key(|e| e.span.start);
        return Some((edits, Vec::new()));
    }
    None
}

/// `edits` of `own`, each that replaces a mapping alias (`OutPacket` → `m![J % 8 # 32]`) made
/// wherever `own` names the alias: the copy's cast and its return type name one mapping.
fn with_every_use((own, syntax): (&str, &SyntaxNode), edits: Vec<Edit>) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for e in edits {
        let written = own
            .get(e.span.start as usize..e.span.end as usize)
            .unwrap_or("");
        let uses: Vec<Edit> =
            match crate::syntax::is_ident(written) && e.new_text.starts_with("m![") {
                true => ident_positions(syntax, written)
                    .into_iter()
                    .map(|at| Edit::replace(at, at + written.len(), e.new_text.clone()))
                    .collect(),
                false => vec![e],
            };
        for u in uses {
            if !out.iter().any(|o| o.span == u.span) {
                out.push(u);
            }
        }
    }
    out.sort_by_key(|e| e.span.start);
    out
}

/// Each place `own` names the plain mapping alias of `pad`, written as its padded mapping.
fn alias_uses(syntax: &SyntaxNode, pad: &AliasPad) -> Option<Vec<Edit>> {
    if pad.field.is_some() || pad.tensor_arg.is_some() || !crate::syntax::is_ident(&pad.name) {
        return None;
    }
    let uses: Vec<Edit> = ident_positions(syntax, &pad.name)
        .into_iter()
        .map(|at| Edit::replace(at, at + pad.name.len(), pad.new_text.clone()))
        .collect();
    (!uses.is_empty()).then_some(uses)
}

/// The name the function `syntax` (an `fn` item) declares, and where it is in its text.
fn fn_name(syntax: &SyntaxNode) -> Option<(String, usize)> {
    let name = ra_ap_syntax::ast::HasName::name(&ra_ap_syntax::ast::Fn::cast(syntax.clone())?)?;
    Some((
        name.text().to_string(),
        usize::from(name.syntax().text_range().start()),
    ))
}

/// What the copy for `call` is named after: the element types and crate types the call gives
/// the helper's type parameters (`f8e4m3`), else `padded`.
fn suffix(call: &HelperCall) -> String {
    let given: Vec<String> = call
        .bound
        .types
        .iter()
        .flatten()
        .map(|t| {
            t.name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect()
        })
        .collect();
    match given.is_empty() {
        true => "padded".to_string(),
        false => given.join("_"),
    }
}

/// The names a copy may take: `{name}_{suffix}`, then numbered.
fn names(name: &str, suffix: &str) -> impl Iterator<Item = String> {
    let base = format!("{name}_{suffix}");
    std::iter::once(base.clone()).chain((2..100).map(move |k| format!("{base}_{k}")))
}

/// The functions `text` declares (in its modules and `impl` blocks too), by name, each with
/// its text as a copy writes it (from its doc comment on).
fn fns_of(text: &str) -> Vec<(String, String)> {
    let file = ra_ap_syntax::SourceFile::parse(text, ra_ap_syntax::Edition::Edition2024).tree();
    file.syntax()
        .descendants()
        .filter_map(ra_ap_syntax::ast::Fn::cast)
        .filter_map(|f| {
            let name = ra_ap_syntax::ast::HasName::name(&f)?.text().to_string();
            Some((name, f.syntax().to_string()))
        })
        .collect()
}

/// The edit that makes `call` name `new` (a path) instead of the helper: the callee's path as
/// written, its turbofish kept.
fn call_rename(call: &HelperCall, new: &str) -> Option<Edit> {
    let path = call.path?;
    Some(Edit {
        span: path,
        new_text: new.to_string(),
    })
}

/// Where the helper's syntax names `name`: its identifier tokens of that text, not in a
/// comment or a string.
fn ident_positions(syntax: &SyntaxNode, name: &str) -> Vec<usize> {
    syntax
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT && t.text() == name)
        .map(|t| usize::from(t.text_range().start()))
        .collect()
}

//! Code actions: every fix of the diagnostics under the cursor as a quickfix (padding fixes
//! first, the first safe one preferred), "allow this rule on this line", and the source action
//! that applies every safe fix of the file.

use super::config::Settings;
use super::convert::Lines;
use super::{Doc, FIX_ALL, diagnostics};
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, TextEdit, Uri, WorkspaceEdit,
};
use visa_analysis::{CheckedFixes, Diagnostic, Edit, Fix, Span};

/// Whether a fix pads a mapping (`# N`): the headline fixes, listed first.
fn is_padding(f: &Fix) -> bool {
    f.title.to_ascii_lowercase().contains("pad") || f.edits.iter().any(|e| e.new_text.contains('#'))
}

fn workspace_edit(uri: &Uri, doc: &Doc, edits: &[&Edit]) -> WorkspaceEdit {
    let edits = edits
        .iter()
        .map(|e| TextEdit::new(doc.lines.range(&doc.text, e.span), e.new_text.clone()))
        .collect();
    WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..Default::default()
    }
}

/// A fix's edits as one workspace edit: this document's, and those of the other files it
/// edits (placed in their texts as the fix was checked against); `None` when another file's
/// text or URI is not known.
fn fix_edit(uri: &Uri, doc: &Doc, fix: &Fix, checked: &CheckedFixes) -> Option<WorkspaceEdit> {
    let own: Vec<&Edit> = fix.edits.iter().collect();
    let mut edit = workspace_edit(uri, doc, &own);
    let changes = edit.changes.get_or_insert_with(HashMap::new);
    if own.is_empty() {
        changes.clear();
    }
    for other in &fix.other_files {
        let text = checked.texts.get(&other.path)?;
        let other_uri = Uri::from_file_path(&other.path)?;
        let lines = Lines::default();
        changes.entry(other_uri).or_default().extend(
            other
                .edits
                .iter()
                .map(|e| TextEdit::new(lines.range(text, e.span), e.new_text.clone())),
        );
    }
    Some(edit)
}

/// Whether an action of kind `kind` was asked for (`only` filters by prefix).
fn wanted(only: Option<&[CodeActionKind]>, kind: &CodeActionKind) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|k| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        })
    })
}

fn overlaps(a: Span, b: Span) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The code actions at `params.range`: `checked` holds the diagnostics there with their fixes
/// checked (see [`visa_analysis::fix_check`]), `diags` every diagnostic of the document.
pub fn code_actions(
    uri: &Uri,
    doc: &Doc,
    diags: &[Diagnostic],
    checked: &CheckedFixes,
    params: &CodeActionParams,
    settings: &Settings,
) -> Vec<CodeActionOrCommand> {
    let only = params.context.only.as_deref();
    let range = doc.lines.span(&doc.text, params.range);
    let mut out = Vec::new();
    if wanted(only, &CodeActionKind::QUICKFIX) {
        for d in checked
            .diagnostics
            .iter()
            .filter(|d| overlaps(d.span, range))
        {
            let lsp = diagnostics::to_lsp(d, uri, doc, settings);
            let mut fixes: Vec<&Fix> = d.fixes.iter().collect();
            // Padding fixes first; among them the checker's order (a clean alias edit first).
            fixes.sort_by_key(|f| !is_padding(f));
            let preferred = fixes.iter().position(|f| f.safe);
            for (i, f) in fixes.iter().enumerate() {
                let Some(edit) = fix_edit(uri, doc, f, checked) else {
                    continue;
                };
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: f.title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![lsp.clone()]),
                    edit: Some(edit),
                    is_preferred: (preferred == Some(i)).then_some(true),
                    ..Default::default()
                }));
            }
            out.push(CodeActionOrCommand::CodeAction(allow_action(
                uri, doc, d, lsp,
            )));
        }
    }
    let fix_all = CodeActionKind::new(FIX_ALL);
    let explicitly = only.is_some_and(|o| !o.is_empty());
    if explicitly && wanted(only, &fix_all) {
        let edits = safe_edits(diags);
        if !edits.is_empty() {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Apply all safe visa-lint fixes".to_string(),
                kind: Some(fix_all),
                edit: Some(workspace_edit(uri, doc, &edits)),
                ..Default::default()
            }));
        }
    }
    out
}

/// Every safe fix of the file, in order, skipping a fix that overlaps one already taken.
pub fn safe_edits(diags: &[Diagnostic]) -> Vec<&Edit> {
    let mut fixes: Vec<&Fix> = diags
        .iter()
        // A fix that edits other files or an alias's definition is offered on its own, after
        // its check (the quick fixes), never in the file-wide batch.
        .flat_map(|d| {
            d.fixes
                .iter()
                .filter(|f| f.safe && f.other_files.is_empty() && !f.edits_definition)
                .take(1)
        })
        .collect();
    fixes.sort_by_key(|f| f.edits.iter().map(|e| e.span).min());
    let mut taken: Vec<&Edit> = Vec::new();
    for f in fixes {
        let clash = f.edits.iter().any(|e| {
            taken
                .iter()
                .any(|t| e.span.start < t.span.end && t.span.start < e.span.end || t.span == e.span)
        });
        if !clash {
            taken.extend(f.edits.iter());
        }
    }
    taken.sort_by_key(|e| e.span);
    taken
}

/// "Allow CODE on this line": a `// visa-lint: allow(CODE)` comment above the diagnostic's
/// line with its indentation, or the code added to the allow comment already there.
fn allow_action(
    uri: &Uri,
    doc: &Doc,
    d: &Diagnostic,
    lsp: tower_lsp_server::ls_types::Diagnostic,
) -> CodeAction {
    let text = &doc.text;
    let line = doc.lines.line(text, d.span.start);
    let start = doc.lines.line_start(text, line);
    let line_text = text
        .get(start as usize..)
        .and_then(|t| t.lines().next())
        .unwrap_or("");
    let indent: String = line_text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let above = line
        .checked_sub(1)
        .map(|l| (doc.lines.line_start(text, l), l));
    let existing = above.and_then(|(s, _)| {
        let t = text.get(s as usize..start as usize)?.trim_end();
        let open = t.find("// visa-lint: allow(")?;
        let trimmed = t.trim_start();
        (trimmed.starts_with("// visa-lint: allow(") && t.ends_with(')'))
            .then(|| s + t.len() as u32 - 1)
            .filter(|_| open < t.len())
    });
    let edit = match existing {
        Some(close) => Edit {
            span: Span::new(close as usize, close as usize),
            new_text: format!(", {}", d.code()),
        },
        None => Edit {
            span: Span::new(start as usize, start as usize),
            new_text: format!("{indent}// visa-lint: allow({})\n", d.code()),
        },
    };
    CodeAction {
        title: format!("Allow {} on this line", d.code()),
        kind: Some(CodeActionKind::QUICKFIX),
        diagnostics: Some(vec![lsp]),
        edit: Some(workspace_edit(uri, doc, &[&edit])),
        ..Default::default()
    }
}

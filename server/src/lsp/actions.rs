//! Code actions: every fix of the diagnostics under the cursor as a quickfix (padding fixes
//! first, the first safe one preferred), "allow this rule on this line", and the source action
//! that applies every safe fix of the file.

use super::config::Settings;
use super::convert::Lines;
use super::{Doc, FIX_ALL, diagnostics};
use std::collections::HashMap;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};
use visa_analysis::{CheckedFixes, Diagnostic, Edit, Fix, Span};

/// Whether a fix pads a mapping (`# N`): the headline fixes, listed first.
fn is_padding(f: &Fix) -> bool {
    f.title.to_ascii_lowercase().contains("pad") || f.edits.iter().any(|e| e.new_text.contains('#'))
}

/// How the client takes a workspace edit: `documentChanges` naming each document's version
/// when it says it can (`workspace.workspaceEdit.documentChanges`), so an edit made for an
/// older text is refused rather than misplaced; `changes` otherwise.
#[derive(Clone, Debug, Default)]
pub struct EditStyle {
    pub document_changes: bool,
    /// The versions of the open documents (a file that is not open has none).
    pub versions: HashMap<Uri, i32>,
}

/// A workspace edit being built: text edits by document, in order.
#[derive(Default)]
struct EditsByDoc(Vec<(Uri, Vec<TextEdit>)>);

impl EditsByDoc {
    fn add(&mut self, uri: &Uri, edits: impl IntoIterator<Item = TextEdit>) {
        match self.0.iter_mut().find(|(u, _)| u == uri) {
            Some((_, list)) => list.extend(edits),
            None => self.0.push((uri.clone(), edits.into_iter().collect())),
        }
    }

    fn add_own(&mut self, uri: &Uri, doc: &Doc, edits: &[&Edit]) {
        let edits = edits
            .iter()
            .map(|e| TextEdit::new(doc.lines.range(&doc.text, e.span), e.new_text.clone()));
        self.add(uri, edits);
    }

    fn build(self, style: &EditStyle) -> WorkspaceEdit {
        if !style.document_changes {
            return WorkspaceEdit {
                changes: Some(self.0.into_iter().collect()),
                ..Default::default()
            };
        }
        let docs = self
            .0
            .into_iter()
            .map(|(uri, edits)| TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    version: style.versions.get(&uri).copied(),
                    uri,
                },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            })
            .collect();
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(docs)),
            ..Default::default()
        }
    }
}

fn workspace_edit(uri: &Uri, doc: &Doc, edits: &[&Edit], style: &EditStyle) -> WorkspaceEdit {
    let mut out = EditsByDoc::default();
    out.add_own(uri, doc, edits);
    out.build(style)
}

/// A fix's edits as one workspace edit: this document's, and those of the other files it
/// edits (placed in their texts as the fix was checked against); `None` when another file's
/// text or URI is not known.
fn fix_edit(
    uri: &Uri,
    doc: &Doc,
    fix: &Fix,
    checked: &CheckedFixes,
    style: &EditStyle,
) -> Option<WorkspaceEdit> {
    let mut out = EditsByDoc::default();
    if !fix.edits.is_empty() {
        out.add_own(uri, doc, &fix.edits.iter().collect::<Vec<_>>());
    }
    for other in &fix.other_files {
        let text = checked.texts.get(&other.path)?;
        let other_uri = Uri::from_file_path(&other.path)?;
        let lines = Lines::default();
        let edits = other
            .edits
            .iter()
            .map(|e| TextEdit::new(lines.range(text, e.span), e.new_text.clone()));
        out.add(&other_uri, edits);
    }
    Some(out.build(style))
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
    style: &EditStyle,
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
                let Some(edit) = fix_edit(uri, doc, f, checked, style) else {
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
                uri, doc, d, lsp, style,
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
                edit: Some(workspace_edit(uri, doc, &edits, style)),
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
    style: &EditStyle,
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
        edit: Some(workspace_edit(uri, doc, &[&edit], style)),
        ..Default::default()
    }
}

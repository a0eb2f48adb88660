//! What only visa-lsp knows about `m!`: the axes (`axes![A = 2048]`) and mapping aliases
//! (`type Tile = m![...]`) a file declares, where each is used inside `m![...]`, and the rule
//! codes a suppression comment may name. Drives completion, go to definition and references.

use super::Doc;
use super::engine;
use std::sync::Arc;
use tower_lsp_server::ls_types::{
    CompletionItem, CompletionItemKind, Documentation, MarkupContent, MarkupKind, Position, Range,
};
use visa_analysis::Span;
use visa_analysis::syntax::{self, MacroKind};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeclKind {
    /// An axis and the text of its size (`2048`).
    Axis(String),
    /// A mapping alias and its `m![...]`.
    Alias(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    pub name: String,
    pub span: Span,
    pub kind: DeclKind,
    /// The innermost function declaring it (none at module level).
    pub scope: Option<Span>,
}

#[derive(Debug, Default)]
pub struct Symbols {
    pub decls: Vec<Decl>,
    /// Names used inside `m![...]` bodies, with the innermost enclosing function.
    pub uses: Vec<(String, Span, Option<Span>)>,
    /// The bodies of `m![...]` calls.
    pub mapping_bodies: Vec<Span>,
}

/// Identifier tokens of `text` (ASCII letters, digits, `_`, not starting with a digit) with
/// their byte ranges.
fn idents(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                return Some((start, &text[start..i]));
            }
            if c.is_ascii_digit() {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
        None
    })
}

/// The symbols of a text, from the engine's models of its items (what
/// [`engine::Snapshot::item_models`] returns for the text: each item's model, positions
/// relative to the item, with the item's offset).
pub fn symbols_of(items: &[(u32, Arc<syntax::FileModel>)], text: &str) -> Symbols {
    let mut out = Symbols::default();
    for (at, model) in items {
        item_symbols(model, *at, text, &mut out);
    }
    out
}

/// One item's symbols, at `at` in the file.
fn item_symbols(model: &syntax::FileModel, at: u32, text: &str, out: &mut Symbols) {
    let shift = |s: Span| s.shift(at);
    for site in &model.sites {
        let base = (site.body_start + at) as usize;
        let scope = site.fns.first().copied().map(shift);
        match site.kind {
            MacroKind::Axes => {
                // `A = 2048, B = 4`: each name and the text of its size.
                for decl in site.body.split(',') {
                    let offset = decl.as_ptr() as usize - site.body.as_ptr() as usize;
                    let Some((name, size)) = decl.split_once('=') else {
                        continue;
                    };
                    let Some((start, ident)) = idents(name).next() else {
                        continue;
                    };
                    let start = base + offset + start;
                    out.decls.push(Decl {
                        name: ident.to_string(),
                        span: Span::new(start, start + ident.len()),
                        kind: DeclKind::Axis(size.trim().to_string()),
                        scope,
                    });
                }
            }
            MacroKind::Mapping => {
                out.mapping_bodies
                    .push(Span::new(base, base + site.body.len()));
                let mut prev_colon = false;
                for (start, ident) in idents(&site.body) {
                    // `B::SIZE`: the constant after `::` is no axis.
                    let before = site.body[..start].trim_end();
                    prev_colon = prev_colon && before.ends_with("::") || before.ends_with("::");
                    if prev_colon {
                        continue;
                    }
                    out.uses.push((
                        ident.to_string(),
                        Span::new(base + start, base + start + ident.len()),
                        scope,
                    ));
                }
            }
            MacroKind::Index => {}
        }
    }
    for alias in &model.aliases {
        let site = &model.sites[alias.site];
        let mapping = text.get(shift(site.span).range()).unwrap_or("").to_string();
        out.decls.push(Decl {
            name: alias.name.text.clone(),
            span: shift(alias.name.span),
            kind: DeclKind::Alias(mapping),
            scope: site.fns.first().copied().map(shift),
        });
    }
}

fn inside(scope: Option<Span>, at: Span) -> bool {
    scope.is_none_or(|s| s.start <= at.start && at.end <= s.end)
}

impl Symbols {
    /// The declaration `name` means at `at`: the innermost visible one.
    pub fn resolve(&self, name: &str, at: Span) -> Option<&Decl> {
        self.decls
            .iter()
            .filter(|d| d.name == name && inside(d.scope, at))
            .min_by_key(|d| d.scope.map_or(u32::MAX, |s| s.end - s.start))
    }

    /// The name under `offset`: a declaration or a use inside `m![...]`.
    pub fn at(&self, offset: u32) -> Option<(&str, Span)> {
        let hit = |s: Span| s.start <= offset && offset <= s.end;
        self.decls
            .iter()
            .find(|d| hit(d.span))
            .map(|d| (d.name.as_str(), d.span))
            .or_else(|| {
                self.uses
                    .iter()
                    .find(|(_, s, _)| hit(*s))
                    .map(|(n, s, _)| (n.as_str(), *s))
            })
    }

    fn in_mapping(&self, offset: u32) -> bool {
        self.mapping_bodies
            .iter()
            .any(|b| b.start <= offset && offset <= b.end)
    }
}

/// Where the axis or alias under the cursor is declared.
pub fn definition(doc: &Doc, syms: &Symbols, pos: Position) -> Option<Range> {
    let offset = doc.lines.offset(&doc.text, pos);
    let (name, span) = syms.at(offset)?;
    let decl = syms.resolve(name, span)?;
    Some(doc.lines.range(&doc.text, decl.span))
}

/// Every use inside `m![...]` of the axis or alias under the cursor (and its declaration).
pub fn references(doc: &Doc, syms: &Symbols, pos: Position, with_decl: bool) -> Vec<Range> {
    let offset = doc.lines.offset(&doc.text, pos);
    let Some((name, span)) = syms.at(offset) else {
        return Vec::new();
    };
    let Some(decl) = syms.resolve(name, span) else {
        return Vec::new();
    };
    let mut spans: Vec<Span> = syms
        .uses
        .iter()
        .filter(|(n, s, _)| n == name && syms.resolve(n, *s) == Some(decl))
        .map(|(_, s, _)| *s)
        .collect();
    if with_decl {
        spans.push(decl.span);
    }
    spans.sort();
    spans
        .into_iter()
        .map(|s| doc.lines.range(&doc.text, s))
        .collect()
}

/// The suppression comment around `offset`: the byte offset where its code list starts, if
/// `offset` is inside `allow(...)` or `allow-file(...)`.
pub fn suppression_list(text: &str, offset: u32) -> Option<(usize, usize)> {
    let offset = offset as usize;
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let marker = line.find("// visa-lint:")?;
    let rest = &line[marker..];
    let open = rest.find('(')? + marker + 1 + line_start;
    let close = line[open - line_start..]
        .find(')')
        .map_or(line_end, |i| open + i);
    (open <= offset && offset <= close).then_some((open, close))
}

fn rule_docs(r: &visa_analysis::rules::registry::Rule) -> String {
    format!(
        "**{}** `{}` ({})\n\n{}\n\n{}",
        r.code,
        r.name,
        r.severity.as_str(),
        r.summary,
        r.docs
    )
}

pub fn rule_markdown(r: &visa_analysis::rules::registry::Rule) -> String {
    let mut s = rule_docs(r);
    if !r.bad.is_empty() {
        s.push_str(&format!("\n\nBad:\n```rust\n{}\n```", r.bad.trim_end()));
    }
    if !r.good.is_empty() {
        s.push_str(&format!("\n\nGood:\n```rust\n{}\n```", r.good.trim_end()));
    }
    s
}

pub fn completions(doc: &Doc, syms: &Symbols, pos: Position) -> Vec<CompletionItem> {
    let offset = doc.lines.offset(&doc.text, pos);
    if suppression_list(&doc.text, offset).is_some() {
        return engine::rules()
            .map(|r| CompletionItem {
                label: r.code.to_string(),
                kind: Some(CompletionItemKind::CONSTANT),
                detail: Some(format!("{} ({})", r.name, r.severity.as_str())),
                documentation: Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: rule_docs(r),
                })),
                ..Default::default()
            })
            .collect();
    }
    if !syms.in_mapping(offset) {
        return Vec::new();
    }
    let at = Span::new(offset as usize, offset as usize);
    let mut items: Vec<CompletionItem> = Vec::new();
    for d in syms.decls.iter().filter(|d| inside(d.scope, at)) {
        if items.iter().any(|i| i.label == d.name) {
            continue;
        }
        let (kind, detail) = match &d.kind {
            DeclKind::Axis(size) => (CompletionItemKind::VARIABLE, format!("axis, size {size}")),
            DeclKind::Alias(m) => (CompletionItemKind::TYPE_PARAMETER, format!("alias: {m}")),
        };
        items.push(CompletionItem {
            label: d.name.clone(),
            kind: Some(kind),
            detail: Some(detail),
            ..Default::default()
        });
    }
    items
}

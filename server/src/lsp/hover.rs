//! Hovers, rendered to markdown: the engine's (a rule code in a suppression comment, an engine
//! call, an axis, a tensor's `m![...]` with its element bytes), then what only the file's text
//! tells (axes declared in function bodies, alias declarations, other `m![...]`): size, normal
//! form and the layout `visa-lint eval` prints.

use super::Doc;
use super::complete::{DeclKind, Symbols};
use super::engine::{Cancellable, HoverContent, Snapshot};
use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use visa_analysis::Span;
use visa_analysis::mapping::describe;
use visa_analysis::syntax::MacroKind;

fn markdown(value: String, range: Option<tower_lsp_server::ls_types::Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

pub fn hover(snap: &Snapshot, doc: &Doc, pos: Position) -> Cancellable<Option<Hover>> {
    let text = &doc.text;
    let offset = doc.lines.offset(text, pos);
    if let Some(h) = snap.hover_at(doc.file, offset)? {
        let mut value = h.markdown();
        if let HoverContent::Axis {
            declared: Some(decl),
            ..
        } = &h.content
        {
            let line = doc.lines.line(text, decl.start) + 1;
            value.push_str(&format!("\n\ndeclared on line {line}"));
        }
        return Ok(Some(markdown(value, Some(doc.lines.range(text, h.range)))));
    }
    // What the engine's hover does not cover: axes declared in function bodies, alias
    // declarations, mappings outside a tensor's type.
    let syms = doc.symbols(snap)?;
    if let Some((name, span)) = syms.at(offset)
        && let Some(decl) = syms.resolve(name, span)
    {
        let range = Some(doc.lines.range(text, span));
        let line = doc.lines.line(text, decl.span.start) + 1;
        return Ok(Some(match &decl.kind {
            DeclKind::Axis(size) => markdown(
                format!("axis `{name}`: size {size}\n\ndeclared on line {line}"),
                range,
            ),
            DeclKind::Alias(m) => markdown(
                format!(
                    "alias `{name}` = `{m}` (line {line})\n\n{}",
                    layout_markdown(&syms, m, span)
                ),
                range,
            ),
        }));
    }
    // Anywhere else in an `m![...]`: the whole mapping.
    let Some(model) = snap.model_at(doc.file, offset)? else {
        return Ok(None);
    };
    let site = model
        .sites
        .iter()
        .filter(|s| s.kind == MacroKind::Mapping && s.span.start <= offset && offset < s.span.end)
        .min_by_key(|s| s.span.end - s.span.start);
    Ok(site.map(|s| {
        let m = text.get(s.span.range()).unwrap_or("");
        markdown(
            layout_markdown(&syms, m, s.span),
            Some(doc.lines.range(text, s.span)),
        )
    }))
}

/// Size, normal form and layout of `mapping` under the axes visible at `at`.
fn layout_markdown(syms: &Symbols, mapping_text: &str, at: Span) -> String {
    let mut axes: Vec<String> = Vec::new();
    for d in &syms.decls {
        if let DeclKind::Axis(size) = &d.kind
            && syms.resolve(&d.name, at) == Some(d)
        {
            axes.push(format!("{} = {size}", d.name));
        }
    }
    let ev = visa_analysis::evaluate(&axes.join(", "), mapping_text);
    match ev.layout {
        Some(layout) => format!(
            "size: {}\n\nnormal form: `m![{}]`\n\n```text\n{}```",
            layout.size,
            layout.to_expr(),
            describe::describe(&layout, ev.inner_term_size)
        ),
        None => {
            let why: Vec<String> = ev.diagnostics.iter().map(|d| d.message.clone()).collect();
            format!("no known value: {}", why.join("; "))
        }
    }
}

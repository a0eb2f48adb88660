//! Hovers, rendered to markdown: a rule code in a suppression comment (the rule's docs), an
//! axis (its size and declaration), an `m![...]` or a mapping alias (size, normal form and the
//! layout `visa-lint eval` prints).

use super::Doc;
use super::complete::{self, DeclKind, Symbols};
use super::engine::{self, Cancellable, Snapshot};
use tower_lsp_server::ls_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use visa_analysis::Span;
use visa_analysis::mapping::{self, describe};
use visa_analysis::syntax::{self, MacroKind};

fn markdown(value: String, range: Option<tower_lsp_server::ls_types::Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range,
    }
}

pub fn hover(_snap: &Snapshot, doc: &Doc, pos: Position) -> Cancellable<Option<Hover>> {
    let text = &doc.text;
    let offset = doc.lines.offset(text, pos);
    if let Some((open, close)) = complete::suppression_list(text, offset) {
        let list = &text[open..close];
        let mut at = open;
        for item in list.split(',') {
            let lead = item.len() - item.trim_start().len();
            let code = item.trim();
            let start = at + lead;
            let span = Span::new(start, start + code.len());
            at += item.len() + 1;
            if span.start <= offset
                && offset <= span.end
                && let Some(rule) = engine::rule(code)
            {
                let range = doc.lines.range(text, span);
                return Ok(Some(markdown(complete::rule_markdown(rule), Some(range))));
            }
        }
        return Ok(None);
    }
    let syms = complete::symbols(text);
    if let Some((name, span)) = syms.at(offset)
        && let Some(decl) = syms.resolve(name, span)
    {
        let range = Some(doc.lines.range(text, span));
        let line = doc.lines.line(decl.span.start) + 1;
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
    let model = syntax::file_model(text);
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
    let ev = mapping::evaluate(&axes.join(", "), mapping_text);
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

//! Rendering diagnostics for people (codespan-reporting) and for tools (JSON, DESIGN.md §4).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor};
use serde_json::{Value, json};
use visa_analysis::{Diagnostic, LineIndex, Severity, Span};

/// One checked text: its name as given and its contents.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

fn cs_severity(s: Severity) -> CsSeverity {
    match s {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Perf => CsSeverity::Note,
        Severity::Info => CsSeverity::Help,
    }
}

/// Writes diagnostics the way rustc does, with the source lines and carets.
pub fn emit_human(
    out: &mut dyn WriteColor,
    src: &Source<'_>,
    diags: &[Diagnostic],
) -> std::io::Result<()> {
    let mut files = SimpleFiles::new();
    let id = files.add(src.name, src.text);
    let config = term::Config::default();
    for d in diags {
        let mut labels = vec![Label::primary(id, clamp(d.span, src.text))];
        for r in &d.related {
            labels.push(
                Label::secondary(id, clamp(r.span, src.text)).with_message(r.message.clone()),
            );
        }
        let mut notes = Vec::new();
        for f in &d.fixes {
            notes.push(format!(
                "fix{}: {}",
                if f.safe { "" } else { " (review)" },
                f.title
            ));
        }
        notes.push(format!(
            "{}: {} (`visa-lint --explain {}`)",
            d.rule.name,
            d.rule.summary,
            d.code()
        ));
        let cs = CsDiagnostic::new(cs_severity(d.severity))
            .with_message(match d.severity {
                // codespan prints errors and warnings as such; say which the others are.
                Severity::Perf | Severity::Info => {
                    format!("{} [{}]", d.message, d.severity.as_str())
                }
                Severity::Error | Severity::Warning => d.message.clone(),
            })
            .with_code(d.code())
            .with_labels(labels)
            .with_notes(notes);
        term::emit(out, &config, &files, &cs).map_err(std::io::Error::other)?;
    }
    Ok(())
}

fn clamp(span: Span, text: &str) -> std::ops::Range<usize> {
    let mut start = (span.start as usize).min(text.len());
    let mut end = (span.end as usize).min(text.len()).max(start);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// Line/column fields for a span (1-based, columns in Unicode scalar values).
fn position(idx: &LineIndex, text: &str, span: Span) -> [(&'static str, u32); 4] {
    let s = idx.line_col(text, span.start);
    let e = idx.line_col(text, span.end);
    [
        ("line", s.line),
        ("column", s.column),
        ("end_line", e.line),
        ("end_column", e.column),
    ]
}

fn insert_position(
    obj: &mut serde_json::Map<String, Value>,
    idx: &LineIndex,
    text: &str,
    span: Span,
) {
    for (k, v) in position(idx, text, span) {
        obj.insert(k.into(), v.into());
    }
}

/// One diagnostic as DESIGN.md §4's JSON object.
pub fn diagnostic_json(src: &Source<'_>, idx: &LineIndex, d: &Diagnostic) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("code".into(), d.code().into());
    obj.insert("name".into(), d.rule.name.into());
    obj.insert("severity".into(), d.severity.as_str().into());
    obj.insert("file".into(), src.name.into());
    insert_position(&mut obj, idx, src.text, d.span);
    obj.insert("message".into(), d.message.clone().into());
    let fixes: Vec<Value> = d
        .fixes
        .iter()
        .map(|f| {
            let edits: Vec<Value> = f
                .edits
                .iter()
                .map(|e| {
                    let mut o = serde_json::Map::new();
                    insert_position(&mut o, idx, src.text, e.span);
                    o.insert("new_text".into(), e.new_text.clone().into());
                    Value::Object(o)
                })
                .collect();
            json!({"title": f.title, "safe": f.safe, "edits": edits})
        })
        .collect();
    obj.insert("fixes".into(), fixes.into());
    let related: Vec<Value> = d
        .related
        .iter()
        .map(|r| {
            let mut o = serde_json::Map::new();
            insert_position(&mut o, idx, src.text, r.span);
            o.insert("message".into(), r.message.clone().into());
            Value::Object(o)
        })
        .collect();
    obj.insert("related".into(), related.into());
    Value::Object(obj)
}

/// The whole `--format json` document.
pub fn report_json(files: usize, diagnostics: Vec<Value>) -> Value {
    json!({"version": 1, "files": files, "diagnostics": diagnostics})
}

//! Engine diagnostics as LSP diagnostics.

use super::Doc;
use super::config::Settings;
use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeDescription, Diagnostic as LspDiagnostic, DiagnosticRelatedInformation, DiagnosticSeverity,
    Location, NumberOrString, Uri,
};
use visa_analysis::{Diagnostic, Fix, Severity};

/// The severity a client shows: perf is Information or Hint as configured.
pub fn severity(s: Severity, settings: &Settings) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Perf => settings.perf_severity,
    }
}

/// A fix as JSON with LSP ranges (the `data` of a diagnostic).
pub fn fix_json(f: &Fix, doc: &Doc) -> Value {
    let edits: Vec<Value> = f
        .edits
        .iter()
        .map(|e| json!({"range": doc.lines.range(&doc.text, e.span), "newText": e.new_text}))
        .collect();
    json!({"title": f.title, "safe": f.safe, "edits": edits})
}

pub fn to_lsp(d: &Diagnostic, uri: &Uri, doc: &Doc, settings: &Settings) -> LspDiagnostic {
    let code_description = settings.rules_doc_url.as_ref().and_then(|base| {
        let href = format!("{base}#{}", d.code().to_ascii_lowercase());
        href.parse().ok().map(|href| CodeDescription { href })
    });
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), doc.lines.range(&doc.text, r.span)),
            message: r.message.clone(),
        })
        .collect();
    let fixes: Vec<Value> = d.fixes.iter().map(|f| fix_json(f, doc)).collect();
    LspDiagnostic {
        range: doc.lines.range(&doc.text, d.span),
        severity: Some(severity(d.severity, settings)),
        code: Some(NumberOrString::String(d.code().to_string())),
        code_description,
        source: Some("visa-lint".to_string()),
        message: format!("{} ({})", d.message, d.rule.name),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: (!fixes.is_empty()).then(|| json!({ "fixes": fixes })),
    }
}

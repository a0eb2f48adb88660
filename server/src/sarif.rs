//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.
//!
//! One run; the tool driver lists every registered rule with its documentation (and a help
//! URI into `docs/rules.md` when the build knows its repository, [`REPOSITORY`]); each result
//! has its location, related locations and fixes.
//! Columns count Unicode code points, as the JSON report's do (`columnKind`).

use crate::output::Source;
use serde_json::{Value, json};
use visa_analysis::rules::registry::{self, Rule};
use visa_analysis::{Diagnostic, LineIndex, Severity, Span};

/// The repository this build of visa-lint was made from, when the build was told
/// (`VISA_LINT_REPOSITORY_URL=https://github.com/ORG/visa-lint cargo install ...`): the driver's
/// `informationUri`, and each rule's `helpUri` into its `docs/rules.md`. visa-lint has no
/// public address of its own, so without it the log names none (both are optional in SARIF)
/// and each rule's whole documentation is in its `help` text.
pub const REPOSITORY: Option<&str> = option_env!("VISA_LINT_REPOSITORY_URL");

/// The SARIF 2.1.0 schema's canonical address.
pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The SARIF level of a severity: errors and warnings as such, `perf` and `info` as notes.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Perf | Severity::Info => "note",
    }
}

/// The help URI of a rule in the `docs/rules.md` of `repository` (GitHub code scanning needs
/// an absolute URI).
pub fn help_uri(repository: &str, code: &str) -> String {
    format!(
        "{}/blob/main/docs/rules.md#{}",
        repository.trim_end_matches('/'),
        code.to_ascii_lowercase()
    )
}

/// Every rule the driver describes, in `--list-rules` order, then the tool's internal error.
fn rules() -> Vec<&'static Rule> {
    registry::all()
        .chain(std::iter::once(&crate::output::INTERNAL_ERROR))
        .collect()
}

fn rule_json(r: &Rule) -> Value {
    let mut help = format!("{}\n\n{}", r.summary, r.docs);
    let mut markdown = format!("{}\n\n{}", r.summary, r.docs);
    if !r.bad.is_empty() {
        help.push_str(&format!("\n\nBreaks the rule:\n    {}", r.bad));
        markdown.push_str(&format!("\n\nBreaks the rule:\n\n```rust\n{}\n```", r.bad));
    }
    if !r.good.is_empty() {
        help.push_str(&format!("\n\nFollows it:\n    {}", r.good));
        markdown.push_str(&format!("\n\nFollows it:\n\n```rust\n{}\n```", r.good));
    }
    let family = r.code.split_once('-').map_or(r.code, |(f, _)| f);
    let mut obj = json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.docs},
        "help": {"text": help, "markdown": markdown},
        "defaultConfiguration": {"level": level(r.severity)},
        "properties": {
            "tags": [family, r.severity.as_str()],
            "status": r.status.as_str(),
        },
    });
    if let Some(repository) = REPOSITORY
        && registry::rule(r.code).is_some()
    {
        obj["helpUri"] = help_uri(repository, r.code).into();
    }
    obj
}

/// A path as a SARIF URI reference: relative paths stay relative (GitHub resolves them
/// against the checkout), absolute ones become `file://` URIs; both percent-encoded.
pub fn uri(path: &str) -> String {
    let mut out = String::new();
    let path = path.replace('\\', "/");
    let rel = path.strip_prefix("./").unwrap_or(&path);
    if rel.starts_with('/') {
        out.push_str("file://");
    }
    for b in rel.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn region(idx: &LineIndex, text: &str, span: Span) -> Value {
    let s = idx.line_col(text, span.start);
    let e = idx.line_col(text, span.end);
    json!({
        "startLine": s.line, "startColumn": s.column,
        "endLine": e.line, "endColumn": e.column,
    })
}

fn physical(src: &Source<'_>, idx: &LineIndex, span: Span) -> Value {
    json!({
        "artifactLocation": {"uri": uri(src.name)},
        "region": region(idx, src.text, span),
    })
}

/// The SARIF results of one file's diagnostics.
pub fn results(src: &Source<'_>, idx: &LineIndex, diags: &[Diagnostic]) -> Vec<Value> {
    let all = rules();
    diags
        .iter()
        .map(|d| {
            let mut r = json!({
                "ruleId": d.code(),
                "level": level(d.severity),
                "message": {"text": d.message},
                "locations": [{"physicalLocation": physical(src, idx, d.span)}],
            });
            if let Some(i) = all.iter().position(|r| r.code == d.code()) {
                r["ruleIndex"] = i.into();
            }
            if !d.related.is_empty() {
                let related: Vec<Value> = d
                    .related
                    .iter()
                    .enumerate()
                    .map(|(i, rel)| {
                        json!({
                            "id": i,
                            "physicalLocation": physical(src, idx, rel.span),
                            "message": {"text": rel.message},
                        })
                    })
                    .collect();
                r["relatedLocations"] = related.into();
            }
            if !d.fixes.is_empty() {
                let fixes: Vec<Value> = d
                    .fixes
                    .iter()
                    .map(|f| {
                        let replacements: Vec<Value> = f
                            .edits
                            .iter()
                            .map(|e| {
                                json!({
                                    "deletedRegion": region(idx, src.text, e.span),
                                    "insertedContent": {"text": e.new_text},
                                })
                            })
                            .collect();
                        json!({
                            "description": {"text": f.title},
                            "artifactChanges": [{
                                "artifactLocation": {"uri": uri(src.name)},
                                "replacements": replacements,
                            }],
                            "properties": {"safe": f.safe},
                        })
                    })
                    .collect();
                r["fixes"] = fixes.into();
            }
            r
        })
        .collect()
}

/// The whole SARIF log of a run.
pub fn document(results: Vec<Value>) -> Value {
    let rules: Vec<Value> = rules().into_iter().map(rule_json).collect();
    let mut driver = json!({
        "name": "visa-lint",
        "version": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    });
    if let Some(repository) = REPOSITORY {
        driver["informationUri"] = repository.into();
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_help_uri_is_the_rule_s_anchor_in_the_repository_s_rules_md() {
        assert_eq!(
            super::help_uri("https://github.com/org/visa-lint/", "MAP-001"),
            "https://github.com/org/visa-lint/blob/main/docs/rules.md#map-001"
        );
    }
}

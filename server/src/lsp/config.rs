//! The server's settings: `visa-lint.toml` at the workspace root, then the client's
//! `initializationOptions` and `workspace/didChangeConfiguration` (later sources win).
//!
//! Keys (TOML spells them in kebab-case, JSON in camelCase; both are accepted everywhere):
//! `rules` (a table from rule code, name or family to `allow`, `warn` or `deny`), `target`,
//! `strict-bank-rule`, `perf-severity` (`information` or `hint`), `inlay-hints`,
//! `rules-doc-url` (the base URL of the rules reference a diagnostic's code links to).

use super::engine::{Config, Level, Library, PerfSeverity, TargetName, check_selector};
use serde_json::Value;
use std::path::Path;
use tower_lsp_server::ls_types::DiagnosticSeverity;

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub rules: Vec<(String, Level)>,
    pub target: TargetName,
    pub strict_bank_rule: bool,
    pub perf_severity: DiagnosticSeverity,
    pub inlay_hints: bool,
    /// The library the workspace's kernels are written against, when set (`library`).
    pub library: Option<Library>,
    /// `docs/rules.md` of the workspace when it has one, else the one this server was built from.
    pub rules_doc_url: Option<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
        Settings {
            rules: Vec::new(),
            library: None,
            target: TargetName::default(),
            strict_bank_rule: false,
            perf_severity: DiagnosticSeverity::INFORMATION,
            inlay_hints: false,
            rules_doc_url: file_url(&built),
        }
    }
}

fn file_url(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    tower_lsp_server::ls_types::Uri::from_file_path(path).map(|u| u.as_str().to_string())
}

/// The name of the configuration file looked up at the workspace root.
pub const FILE_NAME: &str = "visa-lint.toml";

impl Settings {
    /// Settings for a workspace: the defaults, its `docs/rules.md`, its `visa-lint.toml`.
    /// Returns the problems found in the file (the rest of it still applies).
    pub fn for_workspace(root: Option<&Path>) -> (Settings, Vec<String>) {
        let mut settings = Settings::default();
        let mut problems = Vec::new();
        let Some(root) = root else {
            return (settings, problems);
        };
        if let Some(url) = file_url(&root.join("docs/rules.md")) {
            settings.rules_doc_url = Some(url);
        }
        // Through the engine's gate: a regular file of the workspace (a FIFO or a link out of
        // it is not read).
        let gate = super::engine::project::Gate::new([root]);
        if let Ok(text) = gate.read(&root.join(FILE_NAME)) {
            match text.parse::<toml::Table>() {
                Ok(table) => match serde_json::to_value(table) {
                    Ok(v) => problems.extend(settings.merge(&v)),
                    Err(e) => problems.push(format!("{FILE_NAME}: {e}")),
                },
                Err(e) => problems.push(format!("{FILE_NAME}: {e}")),
            }
        } else if let Ok(text) = gate.read(&root.join("Cargo.toml")) {
            // Without a `visa-lint.toml`: `[workspace.metadata.visa-lint]` or
            // `[package.metadata.visa-lint]`, as the CLI reads them.
            match text.parse::<toml::Table>() {
                Ok(table) => {
                    let section = ["workspace", "package"].into_iter().find_map(|s| {
                        let t = table.get(s)?.get("metadata")?.get("visa-lint")?;
                        Some((s, t.clone()))
                    });
                    if let Some((s, t)) = section {
                        match serde_json::to_value(t) {
                            Ok(v) => problems.extend(
                                settings
                                    .merge(&v)
                                    .into_iter()
                                    .map(|p| format!("Cargo.toml [{s}.metadata.visa-lint]: {p}")),
                            ),
                            Err(e) => problems.push(format!("Cargo.toml: {e}")),
                        }
                    }
                }
                Err(e) => problems.push(format!("Cargo.toml: {e}")),
            }
        }
        (settings, problems)
    }

    /// Applies a JSON object of settings (a `visa-lint` or `visaLint` member is looked into
    /// first). Returns a message for every key or value it could not use.
    pub fn merge(&mut self, v: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let v = v
            .get("visa-lint")
            .or_else(|| v.get("visaLint"))
            .unwrap_or(v);
        let Some(obj) = v.as_object() else {
            if !v.is_null() {
                problems.push("settings: expected an object".to_string());
            }
            return problems;
        };
        for (key, value) in obj {
            let norm: String = key
                .chars()
                .flat_map(|c| {
                    let sep = c.is_ascii_uppercase().then_some('-');
                    sep.into_iter()
                        .chain(std::iter::once(c.to_ascii_lowercase()))
                })
                .collect::<String>()
                .replace('_', "-");
            let bad = || format!("settings: `{key}` has an unusable value {value}");
            match norm.as_str() {
                "rules" => match value.as_object() {
                    Some(m) => {
                        for (sel, level) in m {
                            let Some(level) = level.as_str().and_then(Level::parse) else {
                                problems.push(format!(
                                        "settings: rule `{sel}`: expected \"allow\", \"warn\" or \"deny\", got {level}"
                                    ));
                                continue;
                            };
                            if let Err(e) = check_selector(sel) {
                                problems.push(format!("settings: {e}"));
                                continue;
                            }
                            self.rules.push((sel.clone(), level));
                        }
                    }
                    None => problems.push(bad()),
                },
                "target" => match value.as_str().and_then(TargetName::parse) {
                    Some(t) => self.target = t,
                    None => problems.push(bad()),
                },
                "library" => match value.as_str().and_then(Library::from_config) {
                    Some(l) => self.library = Some(l),
                    None => problems.push(bad()),
                },
                "strict-bank-rule" => match value.as_bool() {
                    Some(b) => self.strict_bank_rule = b,
                    None => problems.push(bad()),
                },
                "perf-severity" => match value.as_str() {
                    Some("information" | "info") => {
                        self.perf_severity = DiagnosticSeverity::INFORMATION
                    }
                    Some("hint") => self.perf_severity = DiagnosticSeverity::HINT,
                    _ => problems.push(bad()),
                },
                "inlay-hints" => match value.as_bool() {
                    Some(b) => self.inlay_hints = b,
                    None => problems.push(bad()),
                },
                "rules-doc-url" => match value.as_str() {
                    Some(u) => self.rules_doc_url = Some(u.to_string()),
                    None => problems.push(bad()),
                },
                _ => problems.push(format!("settings: unknown key `{key}`")),
            }
        }
        problems
    }

    /// What the engine needs of these settings.
    pub fn engine(&self) -> Config {
        Config {
            target: self.target,
            levels: self.rules.clone(),
            strict_bank: self.strict_bank_rule,
            perf_severity: if self.perf_severity == DiagnosticSeverity::HINT {
                PerfSeverity::Hint
            } else {
                PerfSeverity::Information
            },
            inlay_hints: self.inlay_hints,
            library: self.library,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_toml_spellings_both_apply_and_problems_are_named() {
        let mut s = Settings::default();
        let problems = s.merge(&json!({"visa-lint": {
            "rules": {"MAP-007": "allow", "CAP": "deny", "NOPE-1": "allow", "SEQ-001": "loud"},
            "perfSeverity": "hint",
            "inlay_hints": true,
            "strict-bank-rule": true,
            "colour": 3,
        }}));
        assert_eq!(
            s.rules,
            vec![
                ("MAP-007".to_string(), Level::Allow),
                ("CAP".to_string(), Level::Deny)
            ]
        );
        assert_eq!(s.perf_severity, DiagnosticSeverity::HINT);
        assert!(s.inlay_hints && s.strict_bank_rule);
        assert_eq!(
            problems,
            vec![
                "settings: `NOPE-1` is no rule code, rule name or family (see `visa-lint --list-rules`)",
                "settings: rule `SEQ-001`: expected \"allow\", \"warn\" or \"deny\", got \"loud\"",
                "settings: unknown key `colour`",
            ]
        );
    }

    #[test]
    fn cargo_metadata_configures_the_server_when_there_is_no_visa_lint_toml() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[workspace]\nmembers = []\n[workspace.metadata.visa-lint]\ntarget = \"rngd-s\"\n\
             rules-doc-url = \"https://example.invalid/rules.md\"\nrules = { MAP = \"allow\" }\n",
        )
        .expect("write");
        let (s, problems) = Settings::for_workspace(Some(dir.path()));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(s.target, TargetName::RngdS);
        assert_eq!(
            s.rules_doc_url.as_deref(),
            Some("https://example.invalid/rules.md")
        );
        assert_eq!(s.rules, vec![("MAP".to_string(), Level::Allow)]);
        // The CLI reads the same table (its engine configuration accepts the editor's key).
        let text = std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read");
        let config = Config::from_cargo_toml(&text)
            .expect("valid")
            .expect("present");
        assert_eq!(config.target, TargetName::RngdS);
    }
}

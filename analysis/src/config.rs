//! The user's configuration: which chip, which rule levels, how strict the bank rule is.
//!
//! It comes from `visa-lint.toml` (or the `[workspace.metadata.visa-lint]` /
//! `[package.metadata.visa-lint]` table of a `Cargo.toml`), from the language client's
//! settings, and from command-line flags; the surfaces merge those and hand the engine one
//! [`Config`], which is a salsa input (changing it re-applies levels without re-analysing).
//! The engine does no I/O: surfaces read the files and pass their text here.
//!
//! ```toml
//! target = "rngd"              # or "rngd-s"
//! library = "furiosa-opt-std"  # or "furiosa_visa_std"; detected per crate when absent
//! strict-bank-rule = false     # true: BNK-001 is an error (constraints.md §22 A-27), also
//!                              # where the concurrency with DMA is unknown (a helper)
//! perf-severity = "information" # how editors show `perf` findings: "information" or "hint"
//! inlay-hints = false
//!
//! [rules]                      # a code, a rule name or a family, as `--allow/--warn/--deny`
//! BNK = "deny"
//! stride-must-divide = "warn"
//! VL-002 = "allow"
//! ```

use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Library;
use crate::rules::registry::{self, Rule};
use crate::target::{RNGD, RNGD_S, Target};
use std::fmt;

/// The chip generation rules are checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TargetName {
    #[default]
    Rngd,
    RngdS,
}

impl TargetName {
    pub fn target(self) -> &'static Target {
        match self {
            TargetName::Rngd => &RNGD,
            TargetName::RngdS => &RNGD_S,
        }
    }

    pub fn parse(s: &str) -> Option<TargetName> {
        match s.to_ascii_lowercase().as_str() {
            "rngd" => Some(TargetName::Rngd),
            "rngd-s" | "rngd_s" | "rngds" => Some(TargetName::RngdS),
            _ => None,
        }
    }
}

/// A rule level, as clippy spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Not reported.
    Allow,
    /// Reported as a warning.
    Warn,
    /// Reported as an error.
    Deny,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "allow" => Some(Level::Allow),
            "warn" => Some(Level::Warn),
            "deny" => Some(Level::Deny),
            _ => None,
        }
    }
}

/// How editors show `perf` findings (LSP has no such severity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PerfSeverity {
    #[default]
    Information,
    Hint,
}

/// Everything the user can configure.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Config {
    pub target: TargetName,
    /// Rule selections (code, name or family) with their level; later entries win over earlier
    /// ones, and `Deny` over `Warn` among entries of the same source, as clippy does.
    pub levels: Vec<(String, Level)>,
    /// BNK-001 as an error (the strict reading of the 64-access rule, L2909: "never"): every
    /// BNK-001, where a DMA may run alongside and where the function issues none so that
    /// whether one does is unknown.
    pub strict_bank: bool,
    pub perf_severity: PerfSeverity,
    pub inlay_hints: bool,
    /// The library the kernels are written against, when configured (`library = "..."`);
    /// otherwise each crate's is detected ([`crate::library`]).
    pub library: Option<Library>,
}

/// A configuration the user wrote that cannot be used: one line, naming the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Whether `sel` (a code, a rule name or a family) selects `rule`.
pub fn selects(sel: &str, rule: &Rule) -> bool {
    sel.eq_ignore_ascii_case(rule.code)
        || sel == rule.name
        || rule
            .code
            .split_once('-')
            .is_some_and(|(family, _)| sel.eq_ignore_ascii_case(family))
}

/// Checks that a selection names at least one registered rule.
pub fn check_selector(sel: &str) -> Result<(), ConfigError> {
    if registry::all().any(|r| selects(sel, r)) {
        Ok(())
    } else {
        Err(ConfigError(format!(
            "`{sel}` is no rule code, rule name or family (see `visa-lint --list-rules`)"
        )))
    }
}

impl Config {
    /// The hardware numbers of the configured chip.
    pub fn target(&self) -> &'static Target {
        self.target.target()
    }

    /// Reads a `visa-lint.toml`.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError(format!("invalid TOML: {}", e.message())))?;
        Config::from_table(&table, "")
    }

    /// Reads the `[workspace.metadata.visa-lint]` or `[package.metadata.visa-lint]` table of a
    /// `Cargo.toml`; `Ok(None)` when it has neither.
    pub fn from_cargo_toml(text: &str) -> Result<Option<Config>, ConfigError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError(format!("invalid TOML: {}", e.message())))?;
        for section in ["workspace", "package"] {
            let found = table
                .get(section)
                .and_then(|s| s.get("metadata"))
                .and_then(|m| m.get("visa-lint"));
            if let Some(v) = found {
                let prefix = format!("{section}.metadata.visa-lint.");
                let t = v.as_table().ok_or_else(|| {
                    ConfigError(format!(
                        "`{}` must be a table",
                        prefix.trim_end_matches('.')
                    ))
                })?;
                return Config::from_table(t, &prefix).map(Some);
            }
        }
        Ok(None)
    }

    fn from_table(table: &toml::Table, prefix: &str) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let bool_of = |key: &str, v: &toml::Value| {
            v.as_bool()
                .ok_or_else(|| ConfigError(format!("`{prefix}{key}` must be true or false")))
        };
        for (key, value) in table {
            match key.as_str() {
                "target" => {
                    config.target =
                        value.as_str().and_then(TargetName::parse).ok_or_else(|| {
                            ConfigError(format!(
                                "`{prefix}target` must be \"rngd\" or \"rngd-s\", not {value}"
                            ))
                        })?;
                }
                "library" => {
                    config.library = Some(value.as_str().and_then(Library::from_config).ok_or_else(
                        || {
                            ConfigError(format!(
                                "`{prefix}library` must be \"furiosa_visa_std\" or \"furiosa-opt-std\" \
                                 (optionally with a version, \"furiosa-opt-std 0.5\"), not {value}"
                            ))
                        },
                    )?);
                }
                "strict-bank-rule" => config.strict_bank = bool_of(key, value)?,
                "inlay-hints" => config.inlay_hints = bool_of(key, value)?,
                "perf-severity" => {
                    config.perf_severity = match value.as_str() {
                        Some("information") => PerfSeverity::Information,
                        Some("hint") => PerfSeverity::Hint,
                        _ => {
                            return Err(ConfigError(format!(
                                "`{prefix}perf-severity` must be \"information\" or \"hint\", not {value}"
                            )));
                        }
                    }
                }
                "rules" => {
                    let rules = value.as_table().ok_or_else(|| {
                        ConfigError(format!(
                            "`{prefix}rules` must be a table of `RULE = \"allow\" | \"warn\" | \"deny\"`"
                        ))
                    })?;
                    for (sel, level) in rules {
                        check_selector(sel)
                            .map_err(|e| ConfigError(format!("`{prefix}rules.{sel}`: {}", e.0)))?;
                        let level = level.as_str().and_then(Level::parse).ok_or_else(|| {
                            ConfigError(format!(
                                "`{prefix}rules.{sel}` must be \"allow\", \"warn\" or \"deny\", not {level}"
                            ))
                        })?;
                        config.levels.push((sel.clone(), level));
                    }
                }
                // The editor's link target for rule codes: the language server reads it; the
                // engine only checks that it is a string (one file serves both surfaces).
                "rules-doc-url" => {
                    if !value.is_str() {
                        return Err(ConfigError(format!(
                            "`{prefix}rules-doc-url` must be a URL string, not {value}"
                        )));
                    }
                }
                other => {
                    return Err(ConfigError(format!(
                        "unknown key `{prefix}{other}` (expected target, library, strict-bank-rule, \
                         perf-severity, inlay-hints, rules-doc-url or rules)"
                    )));
                }
            }
        }
        Ok(config)
    }

    /// The level the configuration gives `rule`, if any: the last selection that names it
    /// wins; the strict bank rule denies BNK-001.
    pub fn level_of(&self, rule: &Rule) -> Option<Level> {
        let mut level = None;
        for (sel, l) in &self.levels {
            if selects(sel, rule) {
                level = Some(*l);
            }
        }
        if self.strict_bank && rule.code == "BNK-001" && level != Some(Level::Allow) {
            level = Some(Level::Deny);
        }
        level
    }

    /// Applies the levels: drops allowed diagnostics and sets the severity of the others.
    pub fn apply(&self, diags: impl IntoIterator<Item = Diagnostic>) -> Vec<Diagnostic> {
        diags
            .into_iter()
            .filter_map(|mut d| {
                match self.level_of(d.rule) {
                    Some(Level::Allow) => return None,
                    Some(Level::Warn) => d.severity = Severity::Warning,
                    Some(Level::Deny) => d.severity = Severity::Error,
                    None => {}
                }
                Some(d)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_key() {
        let c = Config::from_toml(
            "target = \"rngd-s\"\nstrict-bank-rule = true\nperf-severity = \"hint\"\n\
             inlay-hints = true\n[rules]\nMAP = \"allow\"\nstride-must-divide = \"deny\"\n",
        )
        .unwrap_or_default();
        assert_eq!(c.target, TargetName::RngdS);
        assert!(c.strict_bank && c.inlay_hints);
        assert_eq!(c.perf_severity, PerfSeverity::Hint);
        assert_eq!(c.levels.len(), 2);
        let map_001 = registry::rule("MAP-001").map(|r| c.level_of(r));
        // Both entries select MAP-001; TOML tables keep their written order, the name is last.
        assert_eq!(map_001, Some(Some(Level::Deny)));
        let bnk = registry::rule("BNK-001").map(|r| c.level_of(r));
        assert_eq!(bnk, Some(Some(Level::Deny)));
    }

    #[test]
    fn bad_keys_and_values_are_one_clear_line() {
        let err = |t: &str| Config::from_toml(t).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(
            err("traget = \"rngd\""),
            "unknown key `traget` (expected target, library, strict-bank-rule, perf-severity, inlay-hints, rules-doc-url or rules)"
        );
        assert_eq!(
            err("target = \"h100\""),
            "`target` must be \"rngd\" or \"rngd-s\", not \"h100\""
        );
        assert_eq!(
            err("[rules]\nXYZ-999 = \"deny\""),
            "`rules.XYZ-999`: `XYZ-999` is no rule code, rule name or family (see `visa-lint --list-rules`)"
        );
        assert_eq!(
            err("[rules]\nMAP = \"forbid\""),
            "`rules.MAP` must be \"allow\", \"warn\" or \"deny\", not \"forbid\""
        );
        assert_eq!(
            err("strict-bank-rule = 1"),
            "`strict-bank-rule` must be true or false"
        );
        assert!(err("target = ").starts_with("invalid TOML"));
    }

    #[test]
    fn cargo_metadata_tables() {
        let ws = "[workspace]\nmembers = []\n[workspace.metadata.visa-lint]\ntarget = \"rngd-s\"\n";
        assert_eq!(
            Config::from_cargo_toml(ws).ok().flatten().map(|c| c.target),
            Some(TargetName::RngdS)
        );
        let pkg = "[package]\nname = \"k\"\n[package.metadata.visa-lint.rules]\nVEC = \"warn\"\n";
        assert_eq!(
            Config::from_cargo_toml(pkg)
                .ok()
                .flatten()
                .map(|c| c.levels),
            Some(vec![("VEC".to_string(), Level::Warn)])
        );
        assert_eq!(
            Config::from_cargo_toml("[package]\nname = \"k\"\n"),
            Ok(None)
        );
        let bad = "[package.metadata.visa-lint]\ncolour = 1\n";
        assert!(Config::from_cargo_toml(bad).err().is_some_and(|e| {
            e.0.starts_with("unknown key `package.metadata.visa-lint.colour`")
        }));
    }
}

//! What a rule is: its code, name, default severity, status and documentation. Every rule
//! family declares its rules as typed constants of this type (`rules::sequencer::SEQ_001`),
//! and diagnostics are made from those constants (`Diagnostic::new(&SEQ_001, ..)`).

/// How bad a diagnostic is (DESIGN.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational: unsupported notation, notes.
    Info,
    /// Costs cycles.
    Perf,
    /// Silently wrong results or an unsupported pattern.
    Warning,
    /// The vendor compiler rejects it, it panics, or the hardware faults.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Perf => "perf",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// Whether the rule is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Checked by the current engine.
    Implemented,
    /// Registered and documented, not checked yet (the issue that brings it is named).
    Planned(&'static str),
    /// Cannot be decided statically; the reason says why.
    NotStatic(&'static str),
    /// The catalog lists this condition twice: visa-lint reports it under the codes in `by`
    /// (each implemented), and `why` says how they divide it.
    Covered {
        by: &'static [&'static str],
        why: &'static str,
    },
    /// The manual documents no way to write what the rule is about (no API for it), so no
    /// kernel can break it; the reason names the manual lines that describe it in prose.
    Unreachable(&'static str),
}

impl Status {
    /// The status as `--list-rules --format json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Implemented => "implemented",
            Status::Planned(_) => "planned",
            Status::NotStatic(_) => "not-static",
            Status::Covered { .. } => "covered",
            Status::Unreachable(_) => "unreachable",
        }
    }

    /// Why the rule is not implemented itself (empty when it is).
    pub fn reason(self) -> String {
        match self {
            Status::Implemented => String::new(),
            Status::Planned(why) | Status::NotStatic(why) | Status::Unreachable(why) => {
                why.to_string()
            }
            Status::Covered { by, why } => format!("reported as {}: {why}", by.join(", ")),
        }
    }
}

/// One rule: the single place its code, name, default severity and documentation live.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// The diagnostic code, e.g. `MAP-001`.
    pub code: &'static str,
    /// kebab-case name, e.g. `stride-must-divide`.
    pub name: &'static str,
    pub severity: Severity,
    pub status: Status,
    /// One line: what the rule requires.
    pub summary: &'static str,
    /// One paragraph: why, what happens otherwise, how to fix it.
    pub docs: &'static str,
    /// A small kernel fragment that breaks the rule.
    pub bad: &'static str,
    /// The same fragment, fixed.
    pub good: &'static str,
    /// Lines of the Virtual ISA manual (seed 001) the rule follows.
    pub manual: &'static str,
}

//! What a rule is: its code, name, default severity, status, the library generations it applies
//! to, and its documentation. Every rule
//! family declares its rules as typed constants of this type (`rules::sequencer::SEQ_001`),
//! and diagnostics are made from those constants (`Diagnostic::new(&SEQ_001, ..)`).

use crate::library::Generation;
use std::fmt;

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

/// Which generations of the vendor's kernel library a rule applies to (issue 29): the manual's
/// `furiosa_visa_std` 0.1, furiosa-opt-std 0.6, or both, and where they differ, why. Each note
/// gives its evidence: a manual line (`L1089`), or a file and line of the vendor's repository
/// furiosa-ai/furiosa-opt at ebb846a (`CHANGES.md:26-32`, `furiosa-opt-std/src/cast.rs:20-33`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generations {
    /// Both libraries, alike: nothing the rule reads is spelled differently in their APIs
    /// (visa-lint reads furiosa-opt-std's renamed methods as the manual's).
    Both,
    /// Only kernels written against `furiosa_visa_std` can break it; why furiosa-opt-std 0.6
    /// kernels cannot (typically: it has no addresses, no `TrfAddress`, no `BranchMode`).
    VisaStdOnly(&'static str),
    /// Only furiosa-opt-std 0.6 kernels; why the manual's library has nothing to check.
    OptStdOnly(&'static str),
    /// Both, but the libraries state or check it differently: how.
    Differs(&'static str),
}

impl Generations {
    /// How `--list-rules --format json` names the case.
    pub fn as_str(self) -> &'static str {
        match self {
            Generations::Both => "both",
            Generations::VisaStdOnly(_) => "furiosa-visa-std-only",
            Generations::OptStdOnly(_) => "furiosa-opt-std-only",
            Generations::Differs(_) => "both-differently",
        }
    }

    /// Why the rule is limited to one library, or how the two differ (empty for `Both`).
    pub fn note(self) -> &'static str {
        match self {
            Generations::Both => "",
            Generations::VisaStdOnly(note)
            | Generations::OptStdOnly(note)
            | Generations::Differs(note) => note,
        }
    }

    /// Whether a kernel written against `library` can break the rule.
    pub fn applies_to(self, library: Generation) -> bool {
        match self {
            Generations::Both | Generations::Differs(_) => true,
            Generations::VisaStdOnly(_) => library == Generation::VisaStd,
            Generations::OptStdOnly(_) => library == Generation::OptStd,
        }
    }

    /// The libraries the rule applies to, the manual's first.
    pub fn libraries(self) -> impl Iterator<Item = Generation> {
        [Generation::VisaStd, Generation::OptStd]
            .into_iter()
            .filter(move |g| self.applies_to(*g))
    }
}

/// The sentence after "Applies to: " in `--explain` and `docs/rules.md`.
impl fmt::Display for Generations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MANUAL: &str = "furiosa_visa_std (the manual)";
        const OPT: &str = "furiosa-opt-std 0.6";
        match self {
            Generations::Both => write!(f, "{MANUAL} and {OPT}"),
            Generations::VisaStdOnly(why) => write!(f, "{MANUAL} only: {why}"),
            Generations::OptStdOnly(why) => write!(f, "{OPT} only: {why}"),
            Generations::Differs(how) => write!(f, "{MANUAL} and {OPT}, differently: {how}"),
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
    /// The library generations the rule applies to, and why where they differ.
    pub generations: Generations,
}

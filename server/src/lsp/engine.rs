//! The one place the language server names the engine's API: the host that owns the salsa
//! database (inputs are set there) and the snapshots that answer queries on a cloned handle.
//!
//! Every query returns [`Cancellable`]: setting an input cancels the queries running on other
//! handles, and the caller answers `ContentModified` or drops a stale publish.

pub use visa_analysis::config::{Level, PerfSeverity, TargetName, check_selector};
pub use visa_analysis::library::{self, Library};
pub use visa_analysis::project::{self, Package};
use visa_analysis::rules::registry::{self, Rule};
pub use visa_analysis::{
    Analysis as Snapshot, AnalysisHost as Host, Cancellable, CheckedFixes, Config, FileId,
    HoverContent,
};

/// Every registered rule (for completion in suppression comments).
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    registry::all()
}

pub fn rule(code: &str) -> Option<&'static Rule> {
    registry::rule(code)
}

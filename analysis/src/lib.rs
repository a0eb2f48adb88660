//! visa-analysis: the engine behind visa-lint. No I/O, no async, no LSP types.
//!
//! Today it holds the mapping engine (`m!`, `axes!`, `i!`: grammar, symbolic semantics,
//! canonical normal form, MAP-* diagnostics) and the rule registry.

pub mod api;
pub mod config;
pub mod db;
pub mod derive;
pub mod diagnostic;
pub mod line_index;
pub mod mapping;
pub mod model;
pub mod rule;
pub mod rules;
pub mod suppress;
pub mod syntax;
pub mod target;

pub use api::{Analysis, AnalysisHost, Cancellable, FileId, Hover, HoverContent};
pub use config::{Config, ConfigError};
pub use diagnostic::{Diagnostic, Edit, Fix, LineIndex, Severity, Span};
pub use line_index::{Encoding, Position};

/// Checks one file's text with every implemented rule under the default configuration,
/// suppression comments applied; diagnostics sorted by position.
pub fn check_text(text: &str) -> Vec<Diagnostic> {
    let mut host = AnalysisHost::new();
    let file = host.set_file(std::path::Path::new("<text>"), text.to_string());
    host.snapshot()
        .diagnostics(file)
        .map(|d| d.to_vec())
        .unwrap_or_default()
}

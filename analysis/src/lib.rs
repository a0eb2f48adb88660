//! visa-analysis: the engine behind visa-lint. No I/O, no async, no LSP types.
//!
//! Today it holds the mapping engine (`m!`, `axes!`, `i!`: grammar, symbolic semantics,
//! canonical normal form, MAP-* diagnostics) and the rule registry.

pub mod db;
pub mod derive;
pub mod diagnostic;
pub mod mapping;
pub mod model;
pub mod rules;
pub mod sim;
pub mod syntax;
pub mod target;

pub use diagnostic::{Diagnostic, Edit, Fix, LineIndex, Severity, Span};

/// Checks one file's text with every implemented rule; diagnostics sorted by position.
pub fn check_text(text: &str) -> Vec<Diagnostic> {
    db::analyse_text(text).diagnostics.clone()
}

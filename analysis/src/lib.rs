//! visa-analysis: the engine behind visa-lint. No I/O, no async, no LSP types.
//!
//! Today it holds the mapping engine (`m!`, `axes!`, `i!`: grammar, symbolic semantics,
//! canonical normal form, MAP-* diagnostics) and the rule registry.

pub mod diagnostic;
pub mod mapping;
pub mod rules;

pub use diagnostic::{Diagnostic, Edit, Fix, LineIndex, Severity, Span};

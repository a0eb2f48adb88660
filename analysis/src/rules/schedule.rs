//! SCH: scheduling and memory hazards between live tensors (constraints.md §20).

use super::FnContext;
use super::registry::Rule;
use crate::diagnostic::Diagnostic;

pub const RULES: &[Rule] = &[];

pub fn check(_cx: &FnContext<'_>, _out: &mut Vec<Diagnostic>) {}

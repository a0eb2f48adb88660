//! BNK: DM bank starvation and the 64-access rule (constraints.md §19).

use super::FnContext;
use super::registry::Rule;
use crate::diagnostic::Diagnostic;

pub const RULES: &[Rule] = &[];

pub fn check(_cx: &FnContext<'_>, _out: &mut Vec<Diagnostic>) {}

//! SWI: the Switch Engine's ring of 256 slices (constraints.md §8).

use super::FnContext;
use super::registry::Rule;
use crate::diagnostic::Diagnostic;

pub const RULES: &[Rule] = &[];

pub fn check(_cx: &FnContext<'_>, _out: &mut Vec<Diagnostic>) {}

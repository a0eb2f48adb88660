//! CAP: the chip, cluster, slice and row sizes and the DM/TRF/VRF/HBM capacities (constraints.md §4).

use super::FnContext;
use super::registry::Rule;
use crate::diagnostic::Diagnostic;

pub const RULES: &[Rule] = &[];

pub fn check(_cx: &FnContext<'_>, _out: &mut Vec<Diagnostic>) {}

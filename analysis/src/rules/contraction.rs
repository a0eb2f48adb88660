//! CON: the Contraction Engine: Aligner (Stream Adapter, TRF Sequencer) and Reducer (constraints.md §10).

use super::FnContext;
use super::registry::Rule;
use crate::diagnostic::Diagnostic;

pub const RULES: &[Rule] = &[];

pub fn check(_cx: &FnContext<'_>, _out: &mut Vec<Diagnostic>) {}

//! Why the parameters of a regular topology do not fit its input ([`Unfit`]): the rule they
//! break (SWI-003 or SWI-004), the field to point at and the message.

use super::call::Switch;
use super::config::Topology;
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;

/// Why the parameters of a regular topology do not fit the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unfit {
    pub code: &'static Rule,
    pub field: &'static str,
    pub message: String,
}

pub(super) fn unfit(code: &'static Rule, field: &'static str, message: String) -> Unfit {
    Unfit {
        code,
        field,
        message,
    }
}

impl Unfit {
    /// The diagnostic of `topo` on the switch `sw`, at the offending field.
    pub(super) fn diagnostic(&self, sw: &Switch<'_>, topo: Topology) -> Diagnostic {
        let span = sw.config.span(self.field, sw.step.span);
        Diagnostic::new(
            self.code,
            span,
            format!("{}: {}", topo.describe(), self.message),
        )
    }
}

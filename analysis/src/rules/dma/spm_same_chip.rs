//! DMA-006: SPM transfers stay on one chip. No SPM tensor type exists in the API, so the rule
//! is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_006: Rule = Rule {
    code: "DMA-006",
    name: "spm-same-chip",
    severity: Severity::Error,
    status: Status::Unreachable("no SPM tensor type exists in the API (constraints.md §22 A-16)"),
    summary: "SPM transfers stay on one chip",
    docs: "Scratchpad memory is restricted to same-chip transfers.",
    bad: "",
    good: "",
    manual: "seed 000 L469-L471; L2943-L2944",
    generations: Generations::Both,
};

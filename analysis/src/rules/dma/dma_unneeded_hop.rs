//! DMA-012: a transfer through an intermediate tier (HBM → SPM → DM) where a direct one
//! suffices adds latency. No SPM tensor type exists in the API, so the rule is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_012: Rule = Rule {
    code: "DMA-012",
    name: "dma-unneeded-hop",
    severity: Severity::Perf,
    status: Status::Unreachable(
        "no SPM tensor type exists in the API (constraints.md §22 A-16), so no intermediate-tier \
         hop can be written",
    ),
    summary: "Avoid routing through an intermediate tier",
    docs: "HBM → SPM → DM when HBM → DM suffices adds latency.",
    bad: "",
    good: "",
    manual: "seed 000 L3; L2851",
    generations: Generations::Both,
};

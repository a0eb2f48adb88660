//! DMA-001: a DMA's input, output and base take the structural form of their media. The
//! `to_dm`/`to_hbm` signatures admit only the legal forms, so the rule is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_001: Rule = Rule {
    code: "DMA-001",
    name: "dma-structural-forms",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the `to_dm`/`to_hbm` signatures accept only the legal structural forms, so rustc \
         rejects any other before visa-lint could see it",
    ),
    summary: "DMA In/Out/base take the structural form of their media",
    docs: "HBM/SPM tensors have Chip and Element; DM tensors add Cluster and Slice.",
    bad: "",
    good: "",
    manual: "L2415-L2421",
    generations: Generations::Both,
};

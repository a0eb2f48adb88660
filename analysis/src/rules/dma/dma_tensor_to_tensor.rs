//! DMA-004: DMA moves only tensor to tensor between HBM, DM and SPM. The API has no other
//! transfer, so the rule is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_004: Rule = Rule {
    code: "DMA-004",
    name: "dma-tensor-to-tensor",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the API has only tensor-to-tensor DMA methods (to_dm, to_hbm); the manual shows no \
         other DMA form that could be written",
    ),
    summary: "DMA moves only tensor to tensor between HBM, DM and SPM",
    docs: "All nine source-destination pairs between DM, SPM and HBM are tensor moves.",
    bad: "",
    good: "",
    manual: "seed 000 L33, L196",
    generations: Generations::Both,
};

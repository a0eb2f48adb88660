//! DMA-007: DMA descriptor indices stay in range. No API selects a DMA engine explicitly, so
//! the rule is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_007: Rule = Rule {
    code: "DMA-007",
    name: "dma-descriptor-ranges",
    severity: Severity::Error,
    status: Status::Unreachable("no API for explicit DMA engine selection is documented"),
    summary: "DMA descriptor indices stay in range",
    docs: "Chip < NUM_CHIPS, cluster in {0, 1}, DMN index 0-7.",
    bad: "",
    good: "",
    manual: "seed 000 L160-L163, L50, L477",
    generations: Generations::Both,
};

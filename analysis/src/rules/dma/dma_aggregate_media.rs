//! DMA-005: the engines of a heterogeneous aggregate use one media pair and one mapping. The API
//! cannot write another, so the rule is only declared.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_005: Rule = Rule {
    code: "DMA-005",
    name: "dma-aggregate-media",
    severity: Severity::Error,
    status: Status::Unreachable(
        "no per-engine DMA stream API is documented (the manual describes heterogeneous \
         aggregates in prose only)",
    ),
    summary: "Heterogeneous aggregates use one media pair and one mapping",
    docs: "Every participating DMA engine uses the same input and output media types.",
    bad: "",
    good: "",
    manual: "seed 000 L140-L142",
    generations: Generations::Both,
};

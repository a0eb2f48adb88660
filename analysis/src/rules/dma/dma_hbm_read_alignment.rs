//! DMA-003: the DMA's alignment and packet limit. The catalog lists the conditions under
//! ALN-002 (the addresses, the HBM read address of an HBM-to-DM transfer included), ALN-003
//! (the packet's 8 bytes) and ALN-004 (the 4,096-byte packet), which report them; this rule has
//! no check of its own.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const DMA_003: Rule = Rule {
    code: "DMA-003",
    name: "dma-hbm-read-alignment",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["ALN-002", "ALN-003", "ALN-004"],
        why: "no case of its own: the catalog's DMA-003 points at ALN-002 (addresses: the DM \
         write address and, for HBM-to-DM, the HBM read address), ALN-003 (the 8-byte packet) \
         and ALN-004 (the 4,096-byte packet), which report each condition",
    },
    summary: "A DMA's addresses and packets are aligned and its packet is at most 4,096 bytes",
    docs: "See ALN-002, ALN-003 and ALN-004.",
    bad: "",
    good: "",
    manual: "L2425-L2427, L2428-L2429",
    generations: Generations::Both,
};

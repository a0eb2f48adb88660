//! ALN-006: fetch reads need only 1-byte alignment beyond the element alignment of ALN-001.
//! Only declared: a DM tensor gets a constant address from a DMA or a commit, whose 8-byte
//! alignment ALN-002 and ALN-008 check, so nothing is reported under this code.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const ALN_006: Rule = Rule {
    code: "ALN-006",
    name: "fetch-address-alignment",
    severity: Severity::Info,
    status: Status::Covered {
        by: &["ALN-002", "ALN-008"],
        why: "fetch reads need only 1-byte alignment beyond the element alignment of ALN-001; a \
              DM tensor gets a constant address only from a DMA or a commit, whose 8-byte \
              alignment ALN-002 and ALN-008 check",
    },
    summary: "Fetch addresses need 1-byte alignment (plus element alignment)",
    docs: "Fetch reads impose no alignment beyond the element alignment of ALN-001; the 8-byte \
           alignment \"for certain DMA operations\" is ALN-002.",
    bad: "",
    good: "",
    manual: "L1755-L1756",
    generations: Generations::VisaStdOnly(
        "a fetch address exists only where a tensor has one, and furiosa-opt-std 0.6 has no \
         addresses (CHANGES.md:26-32)",
    ),
};

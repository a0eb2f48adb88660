//! CMT-008: the selective-commit slice bitmap has 256 bits. The manual documents no API that
//! sets it, so the rule is unreachable and has no check.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const CMT_008: Rule = Rule {
    code: "CMT-008",
    name: "commit-slice-bitmap",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the manual documents no API for the slice bitmap: L2314-L2318 describe it in prose \
         only, no code sets it",
    ),
    summary: "The selective-commit slice bitmap has 256 bits",
    docs: "Bit i selects slice i.",
    bad: "",
    good: "",
    manual: "L2315-L2318, L2343",
    generations: Generations::Both,
};

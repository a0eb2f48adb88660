//! FET-012: dual channel (64-byte flit) mode is never automatic. The manual shows no API for
//! it, so there is nothing to recognise and the rule is unreachable.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const FET_012: Rule = Rule {
    code: "FET-012",
    name: "dual-channel-explicit",
    severity: Severity::Info,
    status: Status::Unreachable(
        "the manual documents no API for dual channel mode (L2125-L2127, L2138-L2142, L3052 \
         describe it in prose only; no code shows it), so there is nothing to recognise",
    ),
    summary: "Dual channel (64-byte flit) mode is never automatic",
    docs: "It combines the main and sub switch channels and makes the sub context unavailable.",
    bad: "",
    good: "",
    manual: "L2125-L2127, L2138-L2142",
    generations: Generations::Both,
};

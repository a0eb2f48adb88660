//! COL-005: flits are 32 bytes; 64-byte dual channel flits only by explicit configuration. The
//! manual shows no API for dual channel mode, so the rule is unreachable.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const COL_005: Rule = Rule {
    code: "COL-005",
    name: "single-channel-flits",
    severity: Severity::Info,
    status: Status::Unreachable(
        "the manual documents no API for dual channel mode (L1997, L2125-L2127 describe it in \
         prose only; no code shows it), so there is nothing to recognise",
    ),
    summary: "Flits are 32 bytes; 64-byte dual channel flits only by explicit configuration",
    docs: "See FET-012.",
    bad: "",
    good: "",
    manual: "L1997, L2125-L2127",
    generations: Generations::Both,
};

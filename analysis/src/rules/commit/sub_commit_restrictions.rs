//! CMT-004: sub-context commits follow a fetch directly, and packing and generate modes are
//! sub-only. A sub-context commit that does not follow a fetch is KRN-006's finding and the
//! modes have no API in the manual, so this rule has no check of its own.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const CMT_004: Rule = Rule {
    code: "CMT-004",
    name: "sub-commit-restrictions",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-006"],
        why: "a sub-context commit that does not follow a fetch directly is KRN-006; the sub-only \
              packing and generate modes have no API in the manual (KRN-007 is unreachable)",
    },
    summary: "Sub-context commits follow fetch only; packing and generate modes are sub-only",
    docs: "See KRN-006 and KRN-007.",
    bad: "",
    good: "",
    manual: "L2332-L2338",
    generations: Generations::Both,
};

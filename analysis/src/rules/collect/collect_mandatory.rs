//! COL-003: collect comes before every downstream engine. That is KRN-002's condition, which
//! reports it, so this rule has no check of its own.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const COL_003: Rule = Rule {
    code: "COL-003",
    name: "collect-mandatory",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-002"],
        why: "no case of its own: the catalog's COL-003 is the condition of KRN-002 \
         (collect-is-mandatory, L3605), which reports every downstream engine reached without \
         collect",
    },
    summary: "Collect comes before every downstream engine",
    docs: "See KRN-002.",
    bad: "",
    good: "",
    manual: "L3605",
    generations: Generations::Both,
};

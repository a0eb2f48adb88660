//! CON-018: the Stream Adapter's buffer limits. The only one the manual states, the 96-byte
//! Flit Buffer, is CON-005's, which reports it; this rule has no check of its own.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const CON_018: Rule = Rule {
    code: "CON-018",
    name: "flit-buffer-capacity",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["CON-005"],
        why: "the catalog's CON-018 says only the 96-byte Flit Buffer (collect_flits <= 3) is \
         checkable, and that is CON-005's limit (L3948-L3951), which reports a packet collected \
         from more flits; the shift limits are on a page the manual does not include \
         (constraints.md §22 A-34)",
    },
    summary: "The Stream Adapter's buffer limits (compiler-enforced)",
    docs: "See CON-005.",
    bad: "",
    good: "",
    manual: "L3781, L3928, L3951",
    generations: Generations::Both,
};

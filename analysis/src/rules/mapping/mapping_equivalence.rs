//! MAP-007: mappings are compared by meaning, through the normal form `crate::mapping::lower`
//! computes. It is infrastructure for the other rules and reports nothing itself, so this file
//! holds only its declaration.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const MAP_007: Rule = Rule {
    code: "MAP-007",
    name: "mapping-equivalence",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Mappings are compared by meaning (same SIZE and map), not by spelling",
    docs: "Two mappings are equivalent when they have the same size and send every buffer position \
           to the same tensor index. visa-lint compares the canonical normal forms it computes from \
           the manual's laws (identity of pairs, stride/modulo decomposition, pair projection, \
           associativity, idempotent operations, modulo by 1). This is infrastructure for every \
           other rule; it reports nothing by itself.",
    bad: "",
    good: "type E = m![B / 64, B % 64]; // same as m![B]",
    manual: "L1017-L1028, L578",
    generations: Generations::Both,
};

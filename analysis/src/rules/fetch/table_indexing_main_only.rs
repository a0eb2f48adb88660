//! FET-009: table indexing is a main-context adapter stage. A `fetch_with_table` in `ctx.sub`
//! is KRN-008's finding (a sub-context fetch adapter), so the rule has no check here.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const FET_009: Rule = Rule {
    code: "FET-009",
    name: "table-indexing-main-only",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-008"],
        why: "no case of its own: the manual's one condition (table indexing is a main-context \
         stage, L1870) is KRN-008's finding (sub-context fetch adapter); the table's \
         LookupTable<D, D2> types are not modelled (non-tensor parameters)",
    },
    summary: "Table indexing is a main-context adapter stage",
    docs: "`fetch_with_table` in `ctx.sub` is reported by KRN-008.",
    bad: "",
    good: "",
    manual: "L1936-L1953, L1870",
    generations: Generations::Both,
};

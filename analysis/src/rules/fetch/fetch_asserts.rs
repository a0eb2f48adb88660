//! FET-001: the fetch primitive's assertions (Cluster 2, Slice 256, a supported cast, an
//! 8-byte packet). It has no check of its own: each assertion is a more specific rule,
//! CAP-002/CAP-003, FET-004 and ALN-005, which reports it with a precise message.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const FET_001: Rule = Rule {
    code: "FET-001",
    name: "fetch-asserts",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["CAP-002", "CAP-003", "FET-004", "ALN-005"],
        why: "no case of its own: each assertion of the fetch primitive (L1700-L1718) is a more \
         specific rule, CAP-002/CAP-003 (Cluster 2, Slice 256), FET-004 (D: FetchCast<D2>) and \
         ALN-005 (8-byte packet), which report it with the precise message",
    },
    summary: "`fetch` asserts Cluster = 2, Slice = 256, a supported cast and an 8-byte packet",
    docs: "The fetch primitive's assertions; each is its own rule so the message can be precise.",
    bad: "",
    good: "",
    manual: "L1700-L1718",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `fetch` asserts a Cluster of 1 or 2 and a Slice of 64, 128 or 256, \
         no cast (that is `fetch_cast`'s trait bound) and no packet alignment \
         (`furiosa-opt-std/src/engine/fetch.rs:80-94`); CAP-002, CAP-003, FET-004 and ALN-005 say \
         how each is checked",
    ),
};

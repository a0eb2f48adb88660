//! SEQ-013: indirect entries `(limit, [offsets])` replace `(limit, stride)` for gathers. The
//! manual documents no API for them and the offsets are runtime data, so there is no check.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const SEQ_013: Rule = Rule {
    code: "SEQ-013",
    name: "indirect-access",
    severity: Severity::Info,
    status: Status::NotStatic("IndirectLoop has no user-level API; offsets are runtime data"),
    summary: "Indirect entries `(limit, [offsets])` replace `(limit, stride)` for gathers",
    docs: "The offset list must have `limit` entries; the manual documents no API (L1005 TODO).",
    bad: "",
    good: "",
    manual: "L1684-L1688, L1005",
    generations: Generations::Both,
};

//! VCG-004: the sequencer combines every Time counter of the reduce axis, so R's Time factors
//! may come in any order, with other axes between them. A permission, not a finding: no check
//! reports the order of R's Time factors, and nothing is reported under this code.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const VCG_004: Rule = Rule {
    code: "VCG-004",
    name: "vcg-time-any-order",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "R factors in Time may appear in any order, with non-reduce axes between them",
    docs: "The sequencer combines every Time counter of R, so Time needs no ordering. This rule \
           is a permission, not a finding: the VCG checks never report the order of R's Time \
           factors (VCG-003 orders Slice factors only; VCG-006 and VCG-007 compare R's Slice \
           strides with its Time strides as a set), and nothing is reported under this code.",
    bad: "// Order matters in Slice only (VCG-003 reports this), never in Time\nSlice m![X, R # 16 / 2 % 4, R # 16 / 8], Time m![R # 16 % 2]",
    good: "// R = 13\nSlice m![Y, R # 16 / 8], Time m![R # 16 % 2, X, R # 16 / 2 % 4]",
    manual: "L5611-L5612, L5903-L5904",
    generations: Generations::Both,
};

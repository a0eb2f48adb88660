//! MAP-001: a stride `E / n` keeps every n-th position of its operand, so n must divide the
//! operand's size. Lowering finds the problem; its diagnostic is shared with MAP-002 in
//! `divide.rs`.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const MAP_001: Rule = Rule {
    code: "MAP-001",
    name: "stride-must-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E / n` needs `n` to divide `E::SIZE`",
    docs: "Stride keeps every n-th buffer position of its operand, so the operand's size must be a \
           multiple of n; the library asserts \"Stride size must divide the original size\" at const \
           evaluation. Pad the operand first: `E # k / n` with k the next multiple of n.",
    bad: "axes![A = 63]; type E = m![A / 8];",
    good: "axes![A = 63]; type E = m![A # 64 / 8];",
    manual: "L873, L5588",
    generations: Generations::Both,
};

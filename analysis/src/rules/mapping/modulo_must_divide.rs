//! MAP-002: a modulo `E % n` keeps the first n positions of its operand as the inner block of a
//! split, so n must divide the operand's size. Lowering finds the problem; its diagnostic is
//! shared with MAP-001 in `divide.rs`.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const MAP_002: Rule = Rule {
    code: "MAP-002",
    name: "modulo-must-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E % n` needs `n` to divide `E::SIZE`",
    docs: "Modulo keeps the first n positions of its operand as the inner block of a split; the \
           library asserts \"Modulo size must divide the original size\". Pad the operand first: \
           `E # k % n` with k the next multiple of n.",
    bad: "axes![A = 15]; type E = m![A % 4];",
    good: "axes![A = 15]; type E = m![A # 16 % 4];",
    manual: "L891, L1027",
    generations: Generations::Both,
};

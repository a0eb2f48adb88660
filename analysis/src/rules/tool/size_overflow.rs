//! VL-003: mapping sizes are computed with checked 64-bit arithmetic, as the vendor compiler's
//! const evaluation does. The parser (a literal too large) and lowering (a pair, a linear
//! combination or a size expression) find an overflow; this file reports each of them.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::BinOp;
use crate::rule::{Generations, Rule, Status};

pub const VL_003: Rule = Rule {
    code: "VL-003",
    name: "size-overflow",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Mapping sizes must fit in 64 bits",
    docs: "visa-lint computes `SIZE` with checked 64-bit arithmetic, as `usize` const evaluation on \
           the 64-bit host does. A product of axis sizes beyond 2^64 - 1 (or an axis declared that \
           large) is a const-evaluation overflow in the vendor compiler too.",
    bad: "axes![A = 4294967296, B = 4294967296]; type E = m![A, B];",
    good: "axes![A = 4294967296, B = 1024]; type E = m![A, B];",
    manual: "L767, L873",
    generations: Generations::Both,
};

/// VL-003 at a literal the parser cannot hold in 64 bits.
pub(super) fn literal(at: Span, msg: &str) -> Diagnostic {
    Diagnostic::new(&VL_003, at, msg)
}

/// VL-003 on a pair whose size, `left` × `right`, overflows.
pub(super) fn pair(at: Span, left: u64, right: u64) -> Diagnostic {
    Diagnostic::new(
        &VL_003,
        at,
        format!("mapping size overflows 64 bits: {left} × {right} > 2^64 - 1"),
    )
}

/// VL-003 on a linear combination whose size overflows.
pub(super) fn lin_comb(at: Span) -> Diagnostic {
    Diagnostic::new(&VL_003, at, "linear combination size overflows 64 bits")
}

/// VL-003 on a size expression whose operator `op` leaves the 64-bit range.
pub(super) fn size_arithmetic(at: Span, op: BinOp) -> Diagnostic {
    let why = match op {
        BinOp::Sub => "is negative",
        BinOp::Div => "divides by zero",
        BinOp::Add | BinOp::Mul => "overflows 64 bits",
    };
    Diagnostic::new(&VL_003, at, format!("this size {why}"))
}

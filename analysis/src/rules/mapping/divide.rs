//! The diagnostics of a stride (MAP-001) or a modulo (MAP-002) that does not divide its
//! operand: the two rules differ only in their code and the operator's name, which
//! [`divide_rule`] chooses.

use super::{MAP_001, MAP_002};
use crate::diagnostic::{Diagnostic, Span};
use crate::mapping::ast::Op as MapOp;
use crate::rule::Rule;

/// MAP-001/002 on a stride or modulo by 0.
pub(super) fn by_zero(op: MapOp, at: Span) -> Diagnostic {
    let (rule, what) = divide_rule(op);
    Diagnostic::new(rule, at, format!("{what} by 0 is undefined"))
}

/// MAP-001/002 on a stride or modulo that does not divide its operand's size, with the
/// padding that makes it divide.
pub(super) fn not_divisible(
    op: MapOp,
    at: Span,
    op_span: Span,
    operand: &str,
    operand_end: u32,
    size: u64,
    n: u64,
) -> Diagnostic {
    let (rule, what) = divide_rule(op);
    let sym = op.symbol();
    let d = Diagnostic::new(
        rule,
        at,
        format!(
            "{what} size must divide the original size: `{operand}` has size {size}, which {n} does not divide"
        ),
    )
    .with_related(op_span, format!("`{sym} {n}`"));
    match size.div_ceil(n).checked_mul(n) {
        Some(k) => d.with_edit(
            format!("pad to {k} first: `# {k} {sym} {n}`"),
            true,
            Span {
                start: operand_end,
                end: operand_end,
            },
            format!(" # {k}"),
        ),
        None => d,
    }
}

/// The rule of a stride (MAP-001) or a modulo (MAP-002), and its name in messages.
fn divide_rule(op: MapOp) -> (&'static Rule, &'static str) {
    if op == MapOp::Stride {
        (&MAP_001, "Stride")
    } else {
        (&MAP_002, "Modulo")
    }
}

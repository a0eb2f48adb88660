//! The diagnostics of a stride (MAP-001) or a modulo (MAP-002) that does not divide its
//! operand: the two rules differ only in their code and the operator's name, which
//! [`divide_rule`] chooses.

use super::{MAP_001, MAP_002};
use crate::diagnostic::{Diagnostic, Edit, Span};
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

/// The stride and modulo fixes that pad within one mapping (`sites`: the spans of the
/// `m![..]` the diagnostics were found in) to the same size are one fix: a mapping that divides
/// an axis twice (`m![G / 8, G % 8]`, `G = 12`) is padded at both, or its two halves describe
/// different axes, and each fix alone would be checked as if the other were not needed.
pub fn pad_together(diags: &mut [Diagnostic], sites: &[Span]) {
    let padding = |d: &Diagnostic| -> Option<(usize, Edit)> {
        if d.rule.code != MAP_001.code && d.rule.code != MAP_002.code {
            return None;
        }
        let [fix] = d.fixes.as_slice() else {
            return None;
        };
        let [edit] = fix.edits.as_slice() else {
            return None;
        };
        let site = sites
            .iter()
            .position(|s| s.start <= edit.span.start && edit.span.end <= s.end)?;
        (edit.span.start == edit.span.end).then(|| (site, edit.clone()))
    };
    let found: Vec<Option<(usize, Edit)>> = diags.iter().map(padding).collect();
    for (d, mine) in diags.iter_mut().zip(&found) {
        let Some((site, edit)) = mine else { continue };
        let mut edits: Vec<Edit> = found
            .iter()
            .flatten()
            .filter(|(s, e)| s == site && e.new_text == edit.new_text)
            .map(|(_, e)| e.clone())
            .collect();
        edits.sort_by_key(|e| e.span);
        edits.dedup();
        if edits.len() > 1 {
            let fix = &mut d.fixes[0];
            fix.title = format!("{} (and at each division in this mapping)", fix.title);
            fix.edits = edits;
        }
    }
}

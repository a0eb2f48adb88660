//! VEC-012: a branch assigns every 32-bit lane a 4-bit ExecutionId, in one of five modes:
//! `Unconditional`, `AxisToggle { axis }`, `ValidCount`, `Comparison([InputCmp; 4])` (exactly
//! four comparisons, one per branch bit) or `Vrf` (ids pre-written by a Branch Logger).

use super::ops::{array_len, parse_op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Step;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_012: Rule = Rule {
    code: "VEC-012",
    name: "branch-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`BranchMode` is Unconditional, AxisToggle, ValidCount, Comparison([InputCmp; 4]) or Vrf",
    docs: "Branch assigns every 32-bit lane a 4-bit ExecutionId (0-15). The modes are \
           `Unconditional`, `AxisToggle { axis }`, `ValidCount`, `Comparison([InputCmp; 4])` (exactly \
           four comparisons set the four branch bits) and `Vrf` (ids pre-written by a Branch Logger).",
    bad: ".vector_intra_slice_branch(BranchMode::Comparison([c0, c1, c2]))",
    good: ".vector_intra_slice_branch(BranchMode::Comparison([c0, c1, c2, c3]))",
    manual: "L4795-L4802, L5255",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 has no `BranchMode`: `vector_intra_slice_tag` takes `TagMode<D>`, \
         whose `ValidCount` and `Vrf` are withheld and whose comparisons are `Cmp<D>` \
         (CHANGES.md:49-50)",
    ),
};

/// VEC-012: `BranchMode` variants and the four comparisons.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(a) = step.args.first() else {
        return;
    };
    if !a.value_text().trim_start().starts_with("BranchMode::") {
        return;
    }
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    match op.variant {
        "Unconditional" | "AxisToggle" | "ValidCount" | "Vrf" => {}
        "Comparison" => {
            let want = cx.target.ve_branch_comparisons;
            if let Some(n) = array_len(&text)
                && n != want
            {
                out.push(Diagnostic::new(
                    &VEC_012,
                    a.span,
                    format!(
                        "`BranchMode::Comparison` takes exactly {want} `InputCmp`s (one per branch \
                         bit of the 4-bit ExecutionId); this one has {n}"
                    ),
                ));
            }
        }
        other => out.push(Diagnostic::new(
            &VEC_012,
            a.span,
            format!(
                "`BranchMode::{other}` is not a branch mode: use Unconditional, AxisToggle {{ axis }}, \
                 ValidCount, Comparison([InputCmp; 4]) or Vrf"
            ),
        )),
    }
}

//! VL-007: a device function with more chains than the hazard checks relate pairwise is said
//! to be unchecked, rather than let a clean verdict mean "not checked".

use super::super::context::FnContext;
use crate::derive::timeline::MAX_NODES;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const VL_007: Rule = Rule {
    code: "VL-007",
    name: "checks-skipped",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A check that would be too costly on a function this large says it was skipped",
    docs: "The hazard checks (SCH-002..SCH-004) and the bank rule's concurrency model relate every \
           pair of chains of engine calls in a function. Above 400 chains visa-lint does not build \
           those relations and reports this note on the function's name instead, so that a \
           function without findings is never mistaken for a checked one. SCH-001 (overlapping \
           live tensors) scales and is always checked. Split the function to have the rest \
           checked.",
    bad: "fn huge(ctx: &mut Context, /* 401 chains of engine calls */) { /* ... */ }",
    good: "fn part1(ctx: &mut Context) { /* 200 chains */ }\nfn part2(ctx: &mut Context) { /* 201 chains */ }",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};

/// VL-007 on a function of `nodes` chains, more than [`MAX_NODES`].
pub(super) fn report(cx: &FnContext<'_>, nodes: usize, out: &mut Vec<Diagnostic>) {
    // Say so once, rather than let a clean verdict mean "not checked".
    out.push(Diagnostic::new(
        &VL_007,
        cx.model.span,
        format!(
            "`{}` has {} chains of engine calls, more than the {MAX_NODES} the hazard \
             checks relate pairwise: SCH-002..SCH-004 and the bank rule's concurrency \
             (BNK-001/002/004/005) were not checked here (SCH-001 was); split the function \
             to have them checked",
            cx.model.name, nodes
        ),
    ));
}

//! KRN-012: all 256 slices run in lockstep, so control flow that depends on runtime data must
//! become branch masks or fixed matrix operations. Only declared: deciding it needs the
//! simulator's value tracking.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const KRN_012: Rule = Rule {
    code: "KRN-012",
    name: "data-dependent-control-flow",
    severity: Severity::Warning,
    status: Status::NotStatic(
        "a heuristic over runtime values; needs the simulator's value tracking",
    ),
    summary: "No data-dependent control flow inside the lock-step pipeline",
    docs: "All 256 slices run in lockstep; control flow that depends on runtime data must become \
           branch masks or fixed matrix operations.",
    bad: "",
    good: "",
    manual: "L8538, L8597",
    generations: Generations::Both,
};

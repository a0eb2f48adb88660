//! BNK-005: a main command that stays in one bank for 8 accesses or more delays the sub
//! command that may run alongside on that bank, since main has priority.

use super::commands::{Cmd, bank_name};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const BNK_005: Rule = Rule {
    code: "BNK-005",
    name: "main-starves-sub",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "A main-context command that stays in one bank delays sub-context commands on it",
    docs: "Main-context fetch and commit outrank the sub context in DM arbitration (L2899-\
           L2904). When a main-context command hits one bank many times in a row and a \
           sub-context command that may run at the same time uses that bank, the sub command \
           waits: worst case the two take main + sub time instead of max(main, sub) (L2927-\
           L2931). No timeout follows (L2910). visa-lint reports runs of 8 or more that meet \
           a bank the concurrent sub command touches, with both access counts (one access \
           per cycle); with a DMA in flight and 64 in total it is BNK-002 instead.",
    bad: "ctx.main.begin(x.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>()… // R = 16: 16 in a row on bank 0\n\
          ctx.sub.begin(y.view()).fetch::<bf16, m![R, C / 4], m![C % 4]>()… // needs bank 0 too",
    good: "ctx.main.begin(x.view()).fetch::<bf16, m![R, C / 16], m![C % 16]>()… // rotates banks\n\
           ctx.sub.begin(y.view()).fetch::<bf16, m![R, C / 4], m![C % 4]>()…",
    manual: "L2910, L2927-L2931",
    generations: Generations::Both,
};

/// The run of a main command from which BNK-005 reports it.
const STARVE: u64 = 8;

/// BNK-005 on the main command `x` and the sub command `y`, which may overlap; returns whether
/// it fired.
pub(super) fn check(
    cx: &FnContext<'_>,
    x: &Cmd<'_>,
    y: &Cmd<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    if !(x.runs.run >= STARVE && x.runs.run_banks & y.runs.touched != 0) {
        return false;
    }
    let (a, b) = (x.runs.accesses, y.runs.accesses);
    out.push(
        Diagnostic::new(
            &BNK_005,
            x.span,
            format!(
                "this ctx.main {} stays in {} for {} accesses in a row while the \
                 ctx.sub {} that may run alongside uses that bank; main has priority, \
                 so sub waits: worst case {a} + {b} = {} access cycles instead of \
                 max = {}",
                x.kind.as_str(),
                bank_name(x, cx.target),
                x.runs.run,
                y.kind.as_str(),
                a.saturating_add(b),
                a.max(b)
            ),
        )
        .with_related(y.span, "the sub-context command it delays"),
    );
    true
}

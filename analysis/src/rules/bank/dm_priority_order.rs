//! BNK-004: a command that stays in one bank for 32 accesses or more, below the limit, delays
//! the DMA that may run alongside, which has the lowest DM priority.

use super::commands::{Cmd, bank_name, dma_span, why};
use crate::derive::timeline::Timeline;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const BNK_004: Rule = Rule {
    code: "BNK-004",
    name: "dm-priority-order",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "DM priority: main fetch > main commit > sub fetch > sub commit > DMA",
    docs: "The DM controller serves the main-context Fetch Engine first, then main commit, sub \
           fetch, sub commit, and the DMA last (L2899-L2904). A command that stays in one \
           bank for 32 to 63 consecutive accesses is within the 64-access rule, but every \
           DMA request to that bank waits behind the whole run, and another concurrent \
           command on the same bank adds to it (BNK-002). visa-lint notes such commands \
           when a DMA may run at the same time (64 and more is BNK-001). Rotating banks \
           removes the wait.",
    bad: "ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>() // R = 48: 48 in a row, DMA in flight",
    good: "ctx.main.begin(m.view()).fetch::<bf16, m![R, C / 16], m![C % 16]>()",
    manual: "L2899-L2904, L2929",
    generations: Generations::Both,
};

/// BNK-004 on the command `c`, which the DMA node `d` of `t` may overlap.
pub(super) fn report(
    cx: &FnContext<'_>,
    t: &Timeline<'_>,
    c: &Cmd<'_>,
    d: usize,
    out: &mut Vec<Diagnostic>,
) {
    let limit = cx.target.bank_max_consecutive;
    out.push(
        Diagnostic::new(
            &BNK_004,
            c.span,
            format!(
                "{} is accessed {} times in a row by this {} ({}); the DMA that may run \
                 meanwhile has the lowest DM priority (main fetch > main commit > sub \
                 fetch > sub commit > DMA), so its requests to that bank wait behind the \
                 whole run; below {limit}, but concurrent commands on the bank add up",
                bank_name(c, cx.target),
                c.runs.run,
                c.kind.as_str(),
                why(c)
            ),
        )
        .with_related(dma_span(t, d), "this DMA may run at the same time"),
    );
}

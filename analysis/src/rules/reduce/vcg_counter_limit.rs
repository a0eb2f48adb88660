//! SEQ-011: the VCG's sequencer decomposes the flit time into at most 8 nested counters, one
//! per Time digit, plus the innermost Packet counter when the packet dim tracks a padded axis.

use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::Step;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const SEQ_011: Rule = Rule {
    code: "SEQ-011",
    name: "vcg-counter-limit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Valid Count Generator has at most 8 nested counters",
    docs: "Where the VCG is configured (a padded reduce axis, `BranchMode::ValidCount` over \
           padded axes), its sequencer decomposes the flit time into at most 8 nested counters \
           L_0..L_7: one per Time digit, plus the innermost Packet counter when the packet dim \
           tracks an axis. A Time with more digits cannot be counted; merge Time axes or move \
           some into Slice.",
    bad: "// R = 14\nTime m![A, B, C, D, E, F, G, R # 16 / 4], Packet m![R # 16 % 4 # 8] // 8 + 1 counters",
    good: "// R = 14\nTime m![A, B, C, D, E, F, R # 16 / 4], Packet m![R # 16 % 4 # 8] // 7 + 1 counters",
    manual: "L6202, L6213, L6234-L6236",
    generations: Generations::Both,
};

/// SEQ-011 on a VCG tracking `what` over `time`, with the Packet counter when `packet_counter`.
pub(super) fn check(
    cx: &FnContext<'_>,
    step: &Step,
    what: &str,
    time: &Layout,
    packet_counter: bool,
    out: &mut Vec<Diagnostic>,
) {
    let time_counters = time.dims.iter().filter(|d| d.extent() > 1).count();
    let counters = time_counters + usize::from(packet_counter);
    let limit = cx.target.vcg_counters;
    if counters <= limit {
        return;
    }
    let packet = if packet_counter {
        " plus the innermost Packet counter"
    } else {
        ""
    };
    let msg = format!(
        "the Valid Count Generator tracking {what} needs {counters} nested counters (one per \
         Time digit of m![{time}]{packet}), but its sequencer has only {limit} (L_0..L_{}): \
         merge Time axes or move some into Slice",
        limit.saturating_sub(1)
    );
    out.push(Diagnostic::new(&SEQ_011, step.span, msg));
}

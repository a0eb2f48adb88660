//! BNK-002: a main and a sub command that may overlap, plus the DMA's request, must not
//! together access one bank 64 or more times in a row, though each stays below the limit.

use super::commands::{Cmd, dma_span};
use crate::derive::timeline::{Resource, Timeline};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const BNK_002: Rule = Rule {
    code: "BNK-002",
    name: "cumulative-bank-access",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Concurrent main + sub + DMA accesses to one bank must total fewer than 64",
    docs: "The compiler keeps each single command under 64 consecutive same-bank accesses, but \
           commands that run at the same time add up: main-context and sub-context \
           fetch/commit plus one DMA request must stay under 64 on the same bank (L2913-\
           L2926; 30 + 20 + 1 = 51 is safe). visa-lint pairs a main-context and a \
           sub-context command that the schedule lets overlap, while a DMA may also be \
           active, whose runs hit a common bank, and reports when their runs plus the DMA \
           request reach 64 (each alone below 64; at 64 alone it is BNK-001). This is a \
           heuristic: the real interleaving depends on the schedule (constraints.md marks it \
           R). Fix: rotate banks in one of the two (pad a stride) or make the commands \
           depend on each other.",
    bad: "ctx.main.begin(x.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>()… // R = 40: 40 in a row on bank 0\n\
          ctx.sub.begin(y.view()).fetch::<bf16, m![C / 4, Q], m![C % 4]>()… // Q = 30: 30 on bank 0\n\
          let w = w.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 1 << 17); // 40 + 30 + 1 = 71",
    good: "ctx.main.begin(x.view()).fetch::<bf16, m![R, C / 16], m![C % 16]>()… // rotates banks\n\
           ctx.sub.begin(y.view()).fetch::<bf16, m![C / 4, Q], m![C % 4]>()… // 30 + 1 = 31",
    manual: "L2913-L2926, L2917",
    generations: Generations::Both,
};

/// Consecutive accesses one bank sees from a main and a sub command plus one DMA request
/// (L2919-L2926).
pub fn cumulative(main: u64, sub: u64) -> u64 {
    main.saturating_add(sub).saturating_add(1)
}

/// BNK-002 on the main command `x` and the sub command `y`, which may overlap: a DMA that may
/// overlap both, a bank both run on, each below `limit` and together at or above it. Returns
/// whether it fired.
pub(super) fn check(
    t: &Timeline<'_>,
    limit: u64,
    x: &Cmd<'_>,
    y: &Cmd<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let dma = (0..t.nodes.len()).find(|&d| {
        t.nodes[d].resource == Some(Resource::Dma)
            && t.concurrent(x.node, d)
            && t.concurrent(y.node, d)
    });
    let common = x.runs.run_banks & y.runs.run_banks;
    let total = cumulative(x.runs.run, y.runs.run);
    let Some(d) = dma.filter(|_| {
        common != 0
            && x.runs.run > 1
            && y.runs.run > 1
            && x.runs.run < limit
            && y.runs.run < limit
            && total >= limit
    }) else {
        return false;
    };
    let (first, second) = if x.span.start <= y.span.start {
        (x, y)
    } else {
        (y, x)
    };
    out.push(
        Diagnostic::new(
            &BNK_002,
            second.span,
            format!(
                "this {} {} hits bank {} {} times in a row and the concurrent {} {} \
                 {} times, plus the DMA's request: {} consecutive accesses to one \
                 bank, at or above the limit of {limit} across concurrent commands",
                second.resource.name(),
                second.kind.as_str(),
                common.trailing_zeros(),
                second.runs.run,
                first.resource.name(),
                first.kind.as_str(),
                first.runs.run,
                total
            ),
        )
        .with_related(first.span, "the other command on the same bank")
        .with_related(dma_span(t, d), "the DMA that may be active meanwhile"),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::cumulative;
    use crate::target::RNGD;

    /// L2919-L2926: main 30 + sub 20 + DMA 1 = 51 is safe; a sub command at 35 next to the
    /// main's 30 reaches 66, over the limit.
    #[test]
    fn cumulative_example() {
        let limit = RNGD.bank_max_consecutive;
        assert_eq!(cumulative(30, 20), 51);
        assert!(cumulative(30, 20) < limit);
        assert!(cumulative(30, 35) >= limit);
        assert_eq!(cumulative(u64::MAX, 1), u64::MAX);
    }
}

//! SCH-004: a CustomBroadcast switch preempts the DMA and the sub context, so DMA or sub work
//! that could run alongside its chain is serialized with it.

use crate::derive::timeline::{Resource, Timeline};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};

pub const SCH_004: Rule = Rule {
    code: "SCH-004",
    name: "occupies-dma-context",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "A CustomBroadcast switch preempts DMA and sub work that could overlap it",
    docs: "Writing a custom switch topology's bitmap to the SFRs preempts DMA and the sub \
           context (L3336), so a DMA or sub-context chain that the schedule would otherwise \
           run alongside it (no data or address dependency either way) is serialized. \
           visa-lint reports the lost overlap with the chain that loses it; the switch's own \
           cost is SWI-010. Fetch/commit commands with 64+ consecutive same-bank accesses \
           are also scheduled as if they occupied DMA (L2909): that case is BNK-001, which \
           reports it once.",
    bad: "let x = y.to_dm(&mut ctx.tdma, 1 << 17); // independent\n\
          ctx.main.begin(a.view()).fetch…().switch…(SwitchConfig::CustomBroadcast { ring_size: 256 })…",
    good: "ctx.main.begin(a.view()).fetch…().switch…(SwitchConfig::Broadcast01 { … })…",
    manual: "L2909, L2353, L3336",
    generations: Generations::Both,
};

/// SCH-004: a CustomBroadcast switch serializes DMA and sub work that could overlap it.
pub(super) fn check(t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
    for (c, node) in t.nodes.iter().enumerate() {
        let Some(arg) = node
            .chain
            .steps
            .iter()
            .filter(|s| s.method == Method::Switch)
            .flat_map(|s| s.args.iter())
            .find(|a| a.value_text().contains("CustomBroadcast"))
        else {
            continue;
        };
        let Some(o) = (0..t.nodes.len()).find(|&o| {
            matches!(t.nodes[o].resource, Some(Resource::Dma | Resource::Sub))
                && t.nodes[o].resource != node.resource
                && t.concurrent(c, o)
        }) else {
            continue;
        };
        let other = &t.nodes[o];
        let Some(first) = other.chain.steps.iter().find(|s| {
            s.context.is_some()
                || matches!(
                    s.method,
                    Method::ToHbm | Method::ToHost | Method::ToDm | Method::ToTrf | Method::ToVrf
                )
        }) else {
            continue;
        };
        out.push(
            Diagnostic::new(
                &SCH_004,
                arg.span,
                format!(
                    "a CustomBroadcast switch preempts DMA and the sub context to write its \
                     bitmap; {}'s `{}`, which depends on nothing here and could run alongside \
                     this chain, is serialized with it",
                    other.resource.map_or("", Resource::name),
                    first.method
                ),
            )
            .with_related(first.span, "loses its overlap with the switch"),
        );
    }
}

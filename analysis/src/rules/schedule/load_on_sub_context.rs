//! SCH-003: a TRF or VRF load on `ctx.main` waits for earlier main-context work it does not
//! depend on; on `ctx.sub` it would overlap it.

use super::super::context::FnContext;
use crate::derive;
use crate::derive::timeline::{Resource, Timeline};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};

pub const SCH_003: Rule = Rule {
    code: "SCH-003",
    name: "load-on-sub-context",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Put TRF/VRF loads on ctx.sub so they overlap main-context compute",
    docs: "A chain that only loads the TRF or VRF (`fetch → collect → to_trf/to_vrf`) on \
           `ctx.main` waits for the main-context work before it, even when it does not \
           depend on it, because main runs one operation at a time (L7064). On `ctx.sub` \
           the load overlaps that work (double buffering, L3047-L3052, L4158). Reported \
           only when an earlier, independent main-context chain exists to overlap with; \
           the message gives the load's fetch cycles (Time::SIZE × fetches per packet, \
           L2058).",
    bad: "ctx.main.begin(x.view())…commit(1 << 17);\n\
          let w = ctx.main.begin(w.view()).fetch…().collect…().to_trf(TrfAddress::Full);",
    good: "ctx.main.begin(x.view())…commit(1 << 17);\n\
           let w = ctx.sub.begin(w.view()).fetch…().collect…().to_trf(TrfAddress::Full);",
    manual: "L152, L3047-L3052, L4158, L7064-L7066",
    generations: Generations::Both,
};

/// SCH-003: a TRF/VRF load on ctx.main that could overlap earlier main-context work.
pub(super) fn check(cx: &FnContext<'_>, t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
    for (c, node) in t.nodes.iter().enumerate() {
        if node.resource != Some(Resource::Main) {
            continue;
        }
        let Some(last) = node.chain.steps.last() else {
            continue;
        };
        if !matches!(last.method, Method::ToTrf | Method::ToVrf) {
            continue;
        }
        let Some(m) = (0..c)
            .rev()
            .find(|&m| t.nodes[m].resource == Some(Resource::Main) && !t.hb_free[m][c])
        else {
            continue;
        };
        let Some(begin) = node.chain.steps.iter().find(|s| s.method.is_begin()) else {
            continue;
        };
        let cycles = cx
            .ops
            .iter()
            .find(|op| {
                op.kind == derive::OpKind::Fetch
                    && node.chain.steps.iter().any(|s| std::ptr::eq(s, op.step))
            })
            .and_then(|op| {
                let cfg = op.config.as_ref().ok()?;
                derive::fetch_sizes(cfg, op.bits?, cx.target.fetch_sizes_sub).cycles
            });
        let cost = cycles.map_or(String::new(), |n| format!(" ({n} fetch cycles on ctx.sub)"));
        let Some(other) = t.nodes[m].chain.steps.first() else {
            continue;
        };
        out.push(
            Diagnostic::new(
                &SCH_003,
                begin.span,
                format!(
                    "this {} load{cost} runs on ctx.main after main-context work it does not \
                     depend on, so it waits for it; on ctx.sub it would overlap that work \
                     (double buffering)",
                    if last.method == Method::ToTrf {
                        "TRF"
                    } else {
                        "VRF"
                    }
                ),
            )
            .with_related(other.span, "independent main-context work"),
        );
    }
}

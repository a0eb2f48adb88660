//! SCH-002: a write that reuses the DM range of a dead tensor, on another resource than the
//! tensor's last reader, is ordered after that read, so the two cannot overlap.

use super::writes::describe;
use crate::derive::timeline::Timeline;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use std::collections::HashSet;

pub const SCH_002: Rule = Rule {
    code: "SCH-002",
    name: "address-reuse-serializes",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Textual order is the schedule; reusing a dead tensor's address serializes contexts",
    docs: "The scheduler keeps the written order and infers RAW/WAR/WAW hazards from \
           addresses (L7043-L7070). Reusing the DM range of a tensor after its last use is \
           legal (it is not SCH-001), but when the new write runs on a different resource \
           (main, sub, DMA) than that last use and nothing else orders them, the address is \
           the only hazard: the write waits for the read, and the two cannot overlap. \
           visa-lint reports this as information with both places. A free address restores \
           the parallelism when DM space allows. (Use before definition is a rustc error, \
           so there is nothing else to check in the textual order.)",
    bad: "ctx.main.begin(a.view())…commit(1 << 17); // last use of `a` at 0\n\
          let c: DmTensor<…> = c.to_dm(&mut ctx.tdma, 0); // the DMA waits for main",
    good: "ctx.main.begin(a.view())…commit(1 << 17);\n\
           let c: DmTensor<…> = c.to_dm(&mut ctx.tdma, 1 << 18); // overlaps main",
    manual: "L153, L7043-L7044, L7058-L7070",
    generations: Generations::VisaStdOnly(
        "it follows reused constant DM addresses, and furiosa-opt-std 0.6 has none: the compiler \
         places a kernel's tensors (CHANGES.md:26-32)",
    ),
};

/// SCH-002, for the writes that are not SCH-001.
pub(super) fn check(
    t: &Timeline<'_>,
    clashed: &HashSet<(usize, usize)>,
    out: &mut Vec<Diagnostic>,
) {
    for (c, node) in t.nodes.iter().enumerate() {
        for (k, w) in node.writes.iter().enumerate() {
            if clashed.contains(&(c, k)) {
                continue;
            }
            // SCH-002: reuse of a dead tensor's range by another resource.
            let Some(r) = node.resource else { continue };
            for v in 0..t.vars.len() {
                let var = &t.vars[v];
                let (Some(f), Some((u, span))) = (var.fp, var.last_use) else {
                    continue;
                };
                if Some(v) == w.var || u >= c || !f.overlaps(w.fp) {
                    continue;
                }
                let Some(ru) = t.nodes[u].resource else {
                    continue;
                };
                if ru == r || t.hb_data[u][c] {
                    continue;
                }
                out.push(
                    Diagnostic::new(
                        &SCH_002,
                        w.at,
                        format!(
                            "{} reuses DM [{}, {}) of `{}` after its last use by {}; the scheduler orders \
                             this write by {} after that read (write-after-read hazard), so the \
                             two cannot overlap; a free address would let them run in parallel",
                            describe(t, w),
                            w.fp.start,
                            w.fp.end,
                            var.tv.name,
                            ru.name(),
                            r.name()
                        ),
                    )
                    .with_related(span, format!("`{}` is last used here", var.tv.name)),
                );
                break;
            }
        }
    }
}

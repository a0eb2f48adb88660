//! SCH: scheduling and memory hazards between live tensors (constraints.md §20).
//!
//! The scheduler never reorders: the function body's textual order is the issue order
//! (L7043-L7044). Main, sub and the DMA are three resources that each run one operation at a
//! time, and the scheduler serializes on data and address hazards (L7058-L7070). [`Timeline`]
//! models exactly that, one node per chain, and the BNK family reads it to decide which
//! fetch/commit commands may run while a DMA is active.

use super::context::FnContext;
use crate::derive;
use crate::derive::timeline::{MAX_NODES, Node, Resource, Timeline, Var, Write, scan};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Origin};
use crate::rule::{Generations, Rule, Status};
use std::collections::{BTreeSet, HashSet};

pub const SCH_001: Rule = Rule {
    code: "SCH-001",
    name: "live-tensors-must-not-overlap",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "DM address ranges of simultaneously live tensors must not overlap",
    docs: "Main, sub and the DMA share each slice's flat DM, and the programmer places every \
           tensor (`to_dm(…, addr)`, `commit(addr)`). A tensor occupies `addr .. addr + \
           round_up8(Element::SIZE × size_of::<D>())` bytes of every slice (sub-byte types \
           packed). It is live from the statement that writes it to its last textual use \
           (`view()`, `to_hbm`, `align(&t)`, …); parameters are live throughout. A write \
           that lands on a live tensor clobbers it: the scheduler only orders accesses, it \
           does not move data. A tensor read by the same chain that writes over it counts as \
           live (the pipeline reads and writes at once). Reusing an address after the last \
           use is fine (SCH-002 explains what it costs). TRF regions are CAP-010. Fix: move \
           the tensor to a free address; the suggested one is past every live tensor, \
           aligned to 8 bytes. Loops are read once, in textual order.",
    bad: "let a: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = a.to_dm(&mut ctx.tdma, 0); // 128 KiB\n\
          let b: DmTensor<bf16, Chip, Cluster, Slice, m![J % 32, K]> = b.to_dm(&mut ctx.tdma, 1 << 12);",
    good: "let a: DmTensor<bf16, Chip, Cluster, Slice, m![I % 32, K]> = a.to_dm(&mut ctx.tdma, 0); // 128 KiB\n\
           let b: DmTensor<bf16, Chip, Cluster, Slice, m![J % 32, K]> = b.to_dm(&mut ctx.tdma, 1 << 17);",
    manual: "L154-L155, L243, L275, L497-L498, L1093, L7056",
    generations: Generations::VisaStdOnly(
        "it compares constant DM addresses, and furiosa-opt-std 0.6 has none: the compiler places \
         a kernel's tensors (CHANGES.md:26-32)",
    ),
};

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

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[SCH_001, SCH_002, SCH_003, SCH_004, VL_007];

/// How to write a DM address in a fix.
fn address_text(a: u64) -> String {
    if a >= 1024 && a.is_power_of_two() {
        format!("1 << {}", a.trailing_zeros())
    } else if a >= 4096 {
        format!("{a:#x}")
    } else {
        a.to_string()
    }
}

fn describe(t: &Timeline<'_>, w: &Write<'_>) -> String {
    describe_write(&t.vars, w)
}

fn describe_write(vars: &[Var<'_>], w: &Write<'_>) -> String {
    match w.var {
        Some(v) => format!("`{}`", vars[v].tv.name),
        None => format!("this {}", w.step.method),
    }
}

/// SCH-001: a write that lands on a live tensor. One sweep over the nodes in issue order keeps
/// the live footprints sorted by start address, so each write finds what it overlaps without
/// looking at every variable: functions of any size are checked. Returns the writes that
/// clash, as (node, index in its writes).
fn check_live_overlaps(
    cx: &FnContext<'_>,
    nodes: &[Node<'_>],
    vars: &[Var<'_>],
    out: &mut Vec<Diagnostic>,
) -> HashSet<(usize, usize)> {
    let (starts, ends, longest) = live_ranges(nodes, vars);
    // Live footprints by (start, variable), and by (end, variable) for the top address.
    let mut by_start: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut by_end: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut clashed = HashSet::new();
    for (c, node) in nodes.iter().enumerate() {
        for &v in &starts[c] {
            if let Some(f) = vars[v].fp {
                by_start.insert((f.start, v));
                by_end.insert((f.end, v));
            }
        }
        for (k, w) in node.writes.iter().enumerate() {
            // Live footprints starting before the write ends, nearest first; none that
            // starts `longest` bytes or more before the write can reach it.
            let clash = by_start
                .range(..(w.fp.end, 0))
                .rev()
                .take_while(|&&(start, _)| start.saturating_add(longest) > w.fp.start)
                .filter(|&&(_, v)| Some(v) != w.var)
                .filter(|&&(_, v)| vars[v].fp.is_some_and(|f| f.overlaps(w.fp)))
                .map(|&(_, v)| v)
                .min();
            let Some(v) = clash else { continue };
            clashed.insert((c, k));
            let top = by_end
                .iter()
                .rev()
                .find(|&&(_, u)| Some(u) != w.var)
                .map_or(0, |&(end, _)| end);
            out.extend(overlap(cx, vars, w, &vars[v], top));
        }
        for &v in &ends[c] {
            if let Some(f) = vars[v].fp {
                by_start.remove(&(f.start, v));
                by_end.remove(&(f.end, v));
            }
        }
    }
    clashed
}

/// Where each placed variable becomes live and where it dies (the nodes `from..=last use`;
/// parameters: throughout), by node, and the longest footprint among them.
fn live_ranges(nodes: &[Node<'_>], vars: &[Var<'_>]) -> (Vec<Vec<usize>>, Vec<Vec<usize>>, u64) {
    let mut starts: Vec<Vec<usize>> = vec![Vec::new(); nodes.len() + 1];
    let mut ends: Vec<Vec<usize>> = vec![Vec::new(); nodes.len() + 1];
    let mut longest = 0;
    for (v, var) in vars.iter().enumerate() {
        let Some(f) = var.fp else { continue };
        let last = match (var.tv.origin, var.last_use) {
            (Origin::Param, _) => nodes.len(),
            (_, Some((u, _))) if u >= var.from => u,
            _ => continue,
        };
        let Some(first) = starts.get_mut(var.from) else {
            continue;
        };
        first.push(v);
        ends[last.min(nodes.len())].push(v);
        longest = longest.max(f.end - f.start);
    }
    (starts, ends, longest)
}

/// SCH-001 on write `w` over the live `var`, with the fix that places it at the first free
/// address above `top` (the highest live footprint's end) when the slice's DM holds it there.
fn overlap(
    cx: &FnContext<'_>,
    vars: &[Var<'_>],
    w: &Write<'_>,
    var: &Var<'_>,
    top: u64,
) -> Option<Diagnostic> {
    let f = var.fp?;
    let mut d = Diagnostic::new(
        &SCH_001,
        w.at,
        format!(
            "{} occupies DM [{}, {}) of each slice, which overlaps `{}` at [{}, {}) \
             while `{}` is still live; addresses of live tensors must not collide",
            describe_write(vars, w),
            w.fp.start,
            w.fp.end,
            var.tv.name,
            f.start,
            f.end,
            var.tv.name
        ),
    )
    .with_related(
        var.at.unwrap_or(var.tv.span),
        format!("`{}` is placed here", var.tv.name),
    );
    if let Some((_, span)) = var.last_use {
        d = d.with_related(span, format!("`{}` is last used here", var.tv.name));
    }
    let align = cx.target.dma_dm_align_bytes.max(8);
    let len = w.fp.end - w.fp.start;
    if let Some(new) = top.checked_next_multiple_of(align).filter(|n| {
        n.checked_add(len)
            .is_some_and(|e| e <= cx.target.dm_bytes_per_slice)
    }) {
        d = d.with_edit(
            format!("place it at the free address {new}"),
            false,
            w.at,
            address_text(new),
        );
    }
    Some(d)
}

/// SCH-002, for the writes that are not SCH-001.
fn check_overlaps(t: &Timeline<'_>, clashed: &HashSet<(usize, usize)>, out: &mut Vec<Diagnostic>) {
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

/// SCH-003: a TRF/VRF load on ctx.main that could overlap earlier main-context work.
fn check_sub_loads(cx: &FnContext<'_>, t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
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

/// SCH-004: a CustomBroadcast switch serializes DMA and sub work that could overlap it.
fn check_custom_broadcast(t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
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

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if !matches!(cx.model.kind, crate::model::FnKind::Device { .. }) {
        return;
    }
    let (nodes, vars) = scan(cx.model);
    let clashed = check_live_overlaps(cx, &nodes, &vars, out);
    if nodes.len() > MAX_NODES {
        // Say so once, rather than let a clean verdict mean "not checked".
        out.push(Diagnostic::new(
            &VL_007,
            cx.model.span,
            format!(
                "`{}` has {} chains of engine calls, more than the {MAX_NODES} the hazard \
                 checks relate pairwise: SCH-002..SCH-004 and the bank rule's concurrency \
                 (BNK-001/002/004/005) were not checked here (SCH-001 was); split the function \
                 to have them checked",
                cx.model.name,
                nodes.len()
            ),
        ));
        return;
    }
    let t = Timeline::relate(nodes, vars);
    check_overlaps(&t, &clashed, out);
    check_sub_loads(cx, &t, out);
    check_custom_broadcast(&t, out);
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    fn sch(text: &str) -> Vec<Diagnostic> {
        crate::check_text(text)
            .into_iter()
            .filter(|d| d.code().starts_with("SCH"))
            .collect()
    }

    /// The manual's GEMM (L497-L498): `a` is m![I % 32, K] bf16 = 32 × 2048 × 2 = 128 KiB at 0,
    /// so `b` at 1 << 12 lands inside it while `a` is still read; at 1 << 17 it does not.
    fn gemm(b_addr: &str) -> String {
        format!(
            "axes![I = 512, J = 512, K = 2048];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, a: &HbmTensor<bf16, m![1], m![I, K]>, b: &HbmTensor<bf16, m![1], m![J, K]>) {{
    let a: DmTensor<bf16, m![1], m![1 # 2], m![I / 32, J / 32], m![I % 32, K]> = a.to_dm(&mut ctx.tdma, 0);
    let b: DmTensor<bf16, m![1], m![1 # 2], m![I / 32, J / 32], m![J % 32, K]> = b.to_dm(&mut ctx.tdma, {b_addr});
    let c = ctx.main.begin(a.view()).fetch::<bf16, m![I % 32], m![K]>().collect::<m![I % 32, K / 16], m![K % 16]>().commit::<m![I % 32, K]>(1 << 18);
    let d = ctx.main.begin(b.view()).fetch::<bf16, m![J % 32], m![K]>().collect::<m![J % 32, K / 16], m![K % 16]>().commit::<m![J % 32, K]>(1 << 18);
}}"
        )
    }

    #[test]
    fn gemm_overlap_follows_the_manual_numbers() {
        let d = sch(&gemm("1 << 12"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code(), "SCH-001");
        assert!(d[0].message.contains("[4096, 135168)"), "{}", d[0].message);
        assert!(d[0].message.contains("[0, 131072)"), "{}", d[0].message);
        assert!(sch(&gemm("1 << 17")).is_empty());
    }

    /// A sub-byte (i4) tensor is packed: 24 elements = 12 bytes, rounded up to 16.
    fn packed(y_addr: u64, x_last: bool) -> String {
        let (first, second) = if x_last {
            ("x.to_hbm(&mut ctx.tdma, 0);", "")
        } else {
            ("", "x.to_hbm(&mut ctx.tdma, 0);")
        };
        format!(
            "axes![S = 256, A = 24];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, x: &HbmTensor<i4, m![1], m![S, A]>, y: &HbmTensor<i4, m![1], m![S, A]>) {{
    let x = x.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, 0);
    {first}
    let y = y.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, {y_addr});
    {second}
    y.to_hbm(&mut ctx.tdma, 1 << 20);
}}"
        )
    }

    #[test]
    fn packed_sizes_and_reuse_after_last_use() {
        let d = sch(&packed(8, false));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.contains("[0, 16)"), "{}", d[0].message);
        assert!(sch(&packed(16, false)).is_empty());
        // `x` is dead before `y` is written: reuse is fine (same resource: no SCH-002 either).
        assert!(sch(&packed(0, true)).is_empty());
    }
}

//! SCH-001: a write must not land on the DM footprint of a tensor that is still live. One
//! sweep over the timeline's nodes in issue order finds each clash, and the fix places the
//! write at the first free address above every live footprint.

use super::super::context::FnContext;
use super::writes::describe_write;
use crate::derive::timeline::{Footprint, LiveAcross, Node, Var, Write, rebound_at};
use crate::diagnostic::Span;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::types::Kind;
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
           packed). It is live from the statement that writes it (`to_dm`, `commit`, a `commit_view` \
           into a tensor placed with `from_addr`, in the function or by a helper that returns \
           it, also as a chain written straight into the struct or tuple it returns) to its \
           last textual use (`view()`, `to_hbm`, `align(&t)`, an argument of a \
           helper, …); parameters are live throughout. A write \
           that lands on a live tensor clobbers it: the scheduler only orders accesses, it \
           does not move data. A tensor read by the same chain that writes over it counts as \
           live (the pipeline reads and writes at once). Reusing an address after the last \
           use is fine (SCH-002 explains what it costs). TRF regions are CAP-010. Fix: move \
           the tensor to a free address; the suggested one is past every live tensor, \
           aligned to 8 bytes. Loops are read once, in textual order; a write a later \
           iteration places elsewhere (`page_slot(p, h)`) is also checked there against the \
           tensors live across the loop, and the iteration is named. A tensor a loop carries \
           into its next iteration through an assignment (`best = Some(..)` at the end of an \
           iteration, read at the top of the next through `match &best { Some(prev) => .. }` \
           or `if let`) is live there until that read: a write of the next iteration over it \
           before the read is reported in the first iteration it happens. Tiles written into a \
           staging area that a tensor placed by hand over it (`from_addr`) reads back whole \
           stay live until that read: a tile placed partly over an earlier one clobbers it. \
           A helper call is traced with its values, any number of calls deep: a tensor it \
           keeps to itself (a scratch at `cfg.scratch`) must not land on a tensor of the \
           caller live across the call, nor may what it writes into a window it gives back placed by \
           hand (`from_addr(CONCAT)`); the call is reported, naming where the helper writes.",
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

/// SCH-001: a write that lands on a live tensor. One sweep over the nodes in issue order keeps
/// the live footprints sorted by start address, so each write finds what it overlaps without
/// looking at every variable: functions of any size are checked. Returns the writes that
/// clash, as (node, index in its writes).
pub(super) fn check(
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
                if let Some(call) = placed_by_call(&vars[v])
                    && let Some(u) = clash_with_live(vars, &by_start, longest, f, Some(v))
                    && !last_read_by(cx, &vars[u], call)
                {
                    out.extend(placed_over(cx, &vars[v], &vars[u]));
                }
                by_start.insert((f.start, v));
                by_end.insert((f.end, v));
            }
        }
        for (k, w) in node.writes.iter().enumerate() {
            let clash = clash_with_live(vars, &by_start, longest, w.fp, w.var);
            let Some(v) = clash else {
                if let Some(d) = in_another_iteration(cx, vars, w, &by_start) {
                    clashed.insert((c, k));
                    out.push(d);
                }
                continue;
            };
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
    placed_between_chains(cx, vars, out);
    staged_tiles_overlap(cx, vars, out);
    clashed
}

/// A DM range a helper call writes as the compiler traces it (see
/// `crate::call_writes`): where, as a trail of calls down to the write.
pub struct CallWrite {
    pub fp: Footprint,
    pub trail: String,
}

/// SCH-001 through a helper call: a scratch the helper's trace writes (a tensor it does not
/// give back, at an address its values choose, any number of calls deep) over a tensor of
/// the caller live across the call. The first such write, at the call; the address is the
/// helper's (or its caller's argument's) to change: no fix.
pub fn scratch_over_live(
    call: &crate::model::HelperCall,
    live: &[LiveAcross<'_>],
    writes: &[CallWrite],
) -> Option<Diagnostic> {
    let (w, l) = writes
        .iter()
        .find_map(|w| live.iter().find(|l| l.fp.overlaps(w.fp)).map(|l| (w, l)))?;
    let name = &l.tv.name;
    let d = Diagnostic::new(
        &SCH_001,
        call.span,
        format!(
            "this call writes DM [{}, {}) of each slice (in {}), which overlaps `{name}` at \
             [{}, {}) while `{name}` is still live; addresses of live tensors must not collide",
            w.fp.start, w.fp.end, w.trail, l.fp.start, l.fp.end
        ),
    )
    .with_related(l.placed, format!("`{name}` is placed here"))
    .with_related(l.last_use, format!("`{name}` is last used here"));
    Some(d)
}

/// SCH-001 in a staging area read back whole: tiles placed side by side (each iteration of a
/// loop, or several tensors) inside the footprint of a tensor placed later by hand
/// (`DmTensor::from_addr(STAGE)`) and read, which reads them all. A tile placed partly over
/// an earlier one clobbers that one before the read-back (a slot stride counted in elements,
/// not bytes). A tile placed exactly where an earlier one was is a scratch reused on purpose,
/// and is left alone. Reported once per staging area, at the tile placed over.
fn staged_tiles_overlap(cx: &FnContext<'_>, vars: &[Var<'_>], out: &mut Vec<Diagnostic>) {
    for area_var in vars
        .iter()
        .filter(|r| r.tv.from_addr && r.last_use.is_some())
    {
        let Some(area) = area_var.fp else { continue };
        let inside = |f: Footprint| area.start <= f.start && f.end <= area.end;
        let mut tiles: Vec<Tile<'_, '_>> = Vec::new();
        for var in vars.iter().filter(|w| {
            !w.tv.from_addr && w.tv.span.start < area_var.tv.span.start && w.tv.ty.kind == Kind::Dm
        }) {
            let first = var.fp.map(|fp| (iteration_label(cx, var.tv), fp));
            let others = crate::derive::timeline::other_iterations(cx.model, var.tv)
                .into_iter()
                .map(|(label, fp)| (Some(label), fp));
            tiles.extend(
                first
                    .into_iter()
                    .chain(others)
                    .filter(|&(_, fp)| inside(fp))
                    .map(|(label, fp)| Tile { var, label, fp }),
            );
        }
        let clash = tiles.iter().enumerate().find_map(|(k, later)| {
            let earlier = tiles[..k]
                .iter()
                .find(|e| e.fp.overlaps(later.fp) && e.fp != later.fp)?;
            Some((earlier, later))
        });
        if let Some((earlier, later)) = clash {
            let at = later
                .var
                .at
                .or(later.var.tv.placed_by_call)
                .unwrap_or(later.var.tv.span);
            if !out
                .iter()
                .any(|d| d.rule.code == SCH_001.code && d.span == at)
            {
                out.push(staged_over(area_var, area, earlier, later, at));
            }
        }
    }
}

/// A tile of a staging area: a tensor as one iteration of its loop (`label`) places it.
struct Tile<'v, 'a> {
    var: &'v Var<'a>,
    label: Option<&'a str>,
    fp: Footprint,
}

impl Tile<'_, '_> {
    fn describe(&self) -> String {
        match self.label {
            Some(label) => format!("`{}` (when {label})", self.var.tv.name),
            None => format!("`{}`", self.var.tv.name),
        }
    }
}

/// The label of the loop iteration that bound `tv` (its loop's first pass), if any.
fn iteration_label<'a>(cx: &FnContext<'a>, tv: &crate::model::TensorVar) -> Option<&'a str> {
    let i = tv.iteration? as usize;
    cx.model.iterations.get(i).map(|it| it.label.as_str())
}

fn staged_over(
    area_var: &Var<'_>,
    area: Footprint,
    earlier: &Tile<'_, '_>,
    later: &Tile<'_, '_>,
    at: Span,
) -> Diagnostic {
    Diagnostic::new(
        &SCH_001,
        at,
        format!(
            "{} is placed at DM [{}, {}) of each slice, over {} at [{}, {}), and `{}` reads \
             both back as one tensor at [{}, {}): the later tile clobbers the earlier one \
             before it is read; addresses of live tensors must not collide (place the tiles \
             side by side, each slot as many bytes as a tile)",
            later.describe(),
            later.fp.start,
            later.fp.end,
            earlier.describe(),
            earlier.fp.start,
            earlier.fp.end,
            area_var.tv.name,
            area.start,
            area.end,
        ),
    )
    .with_related(
        area_var.at.unwrap_or(area_var.tv.span),
        format!("`{}` is placed here, over the tiles", area_var.tv.name),
    )
}

/// SCH-001 between helper calls with no chain of this function between them (a kernel that
/// calls helpers only: `let scale = plan.scale_pass(..); let shift = plan.shift_pass(..);
/// export(ctx, &scale, ..)`): the sweep orders writes by this function's chains, and a call
/// sits in the gap between two of them. A tensor a call places over one an earlier call (or
/// chain) placed, which a later call still reads, clobbers it. Reported once per placing
/// call, where the sweep has not already.
fn placed_between_chains(cx: &FnContext<'_>, vars: &[Var<'_>], out: &mut Vec<Diagnostic>) {
    let calls: Vec<&crate::model::HelperCall> = cx
        .model
        .calls
        .iter()
        .filter(|c| cx.model.in_first_pass(c.iteration))
        .collect();
    for var in vars {
        let (Some(at), Some(fp)) = (placed_by_call(var), var.fp) else {
            continue;
        };
        let reported = |d: &Diagnostic| d.rule.code == SCH_001.code && d.span == at;
        if var.tv.iteration.is_some() || out.iter().any(reported) {
            continue;
        }
        // Read by a call after `at`, before its name is bound again (a shadowed binding is
        // no longer read).
        let read_after = |u: &Var<'_>| {
            let rebound = rebound_at(vars, u);
            rebound > at.start
                && calls.iter().any(|c| {
                    c.span.start > at.end
                        && c.span.start < rebound
                        && c.reads.iter().any(|(name, _)| *name == u.tv.name)
                })
        };
        let clobbered = vars.iter().find(|u| {
            !std::ptr::eq(*u, var)
                && u.tv.iteration.is_none()
                && u.tv.span.start < var.tv.span.start
                && u.fp.is_some_and(|f| f.overlaps(fp))
                && read_after(u)
        });
        if let Some(u) = clobbered {
            out.extend(placed_over(cx, var, u));
        }
    }
}

/// The live variable (other than `except`) whose footprint `fp` overlaps, the first placed.
/// Only footprints starting before `fp` ends are looked at, nearest first; none that starts
/// `longest` bytes or more before `fp` can reach it.
fn clash_with_live(
    vars: &[Var<'_>],
    live: &BTreeSet<(u64, usize)>,
    longest: u64,
    fp: Footprint,
    except: Option<usize>,
) -> Option<usize> {
    live.range(..(fp.end, 0))
        .rev()
        .take_while(|&&(start, _)| start.saturating_add(longest) > fp.start)
        .filter(|&&(_, v)| Some(v) != except)
        .filter(|&&(_, v)| vars[v].fp.is_some_and(|f| f.overlaps(fp)))
        .map(|&(_, v)| v)
        .min()
}

/// Whether `call` is where `var` is read last: a helper that reads it and places its result
/// over it clashes in its own trace, which reports it (see `crate::calls`).
fn last_read_by(cx: &FnContext<'_>, var: &Var<'_>, call: Span) -> bool {
    let Some(expr) = cx
        .model
        .calls
        .iter()
        .find(|c| c.span == call)
        .map(|c| c.expr)
    else {
        return false;
    };
    var.last_use
        .is_some_and(|(_, at)| expr.start <= at.start && at.end <= expr.end)
}

/// The call that places `var` (a DM tensor a helper returns, which its trace with the call's
/// values writes there), when no chain of this function writes it.
fn placed_by_call(var: &Var<'_>) -> Option<Span> {
    var.tv.placed_by_call.filter(|_| var.def.is_none())
}

/// SCH-001 on the tensor `var` a helper call places over the live `live`: the write is the
/// helper's, at the call (its address is the helper's to change: no fix).
fn placed_over(cx: &FnContext<'_>, var: &Var<'_>, live: &Var<'_>) -> Option<Diagnostic> {
    let (call, fp, f) = (placed_by_call(var)?, var.fp?, live.fp?);
    let when = iteration_label(cx, var.tv).map_or(String::new(), |l| format!(" (when {l})"));
    let argument = address_argument(cx, call, fp.start);
    let by = match argument {
        Some(_) => "this address places",
        None => "this call places",
    };
    let mut d = Diagnostic::new(
        &SCH_001,
        argument.unwrap_or(call),
        format!(
            "{by} `{}` at DM [{}, {}) of each slice, which overlaps `{}` at [{}, {}) \
             while `{}` is still live; addresses of live tensors must not collide{when}",
            var.tv.name, fp.start, fp.end, live.tv.name, f.start, f.end, live.tv.name
        ),
    )
    .with_related(
        live.at.or(live.tv.placed_by_call).unwrap_or(live.tv.span),
        format!("`{}` is placed here", live.tv.name),
    );
    if let Some((_, span)) = live.last_use {
        d = d.with_related(span, format!("`{}` is last used here", live.tv.name));
    }
    if d.span != call {
        d = d.with_related(call, "the call that places it");
    }
    Some(d)
}

/// The one argument of the call at `call` whose value is the address `start` a helper
/// places its result at (`Proj::Gate.dm_addr(&PLAN)`), as rustc points at an argument.
fn address_argument(cx: &FnContext<'_>, call: Span, start: u64) -> Option<Span> {
    let call = cx.model.calls.iter().find(|c| c.span == call)?;
    let value = crate::model::value::Value::Int(start);
    let mut at = call
        .bound
        .params
        .iter()
        .zip(&call.args)
        .filter_map(|(v, a)| (v.as_ref() == Some(&value)).then_some(*a)?);
    match (at.next(), at.next()) {
        (Some(a), None) => Some(a),
        _ => None,
    }
}

/// SCH-001 on write `w` as another iteration of its loop places it (the timeline reads a loop's
/// first pass), over a tensor live across the loop (`live`: footprints by start); the first
/// such iteration, named.
fn in_another_iteration(
    cx: &FnContext<'_>,
    vars: &[Var<'_>],
    w: &Write<'_>,
    live: &BTreeSet<(u64, usize)>,
) -> Option<Diagnostic> {
    let var = &vars[w.var?];
    // A variable the loop assigns holds another tensor from its second iteration on (what
    // the iteration before assigned: see `carried_tensor`); the one before the loop is dead.
    let reassigned = |name: &str| {
        cx.model
            .tensors
            .iter()
            .any(|t| t.origin == Origin::Assign && t.iteration.is_some() && t.name == name)
    };
    for (label, fp) in crate::derive::timeline::other_iterations(cx.model, var.tv) {
        let across = live.iter().map(|&(_, u)| &vars[u]).find(|u| {
            u.tv.iteration.is_none()
                && u.fp.is_some_and(|f| f.overlaps(fp))
                && !reassigned(&u.tv.name)
        });
        if let Some(u) = across {
            let moved = Write { fp, ..*w };
            let mut d = overlap(cx, vars, &moved, u, 0)?;
            // The fix's address is for that iteration alone: none is offered.
            d.fixes.clear();
            d.message.push_str(&format!(" (when {label})"));
            return Some(d);
        }
    }
    None
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
    if w.step.method == Method::CommitView {
        // The write's address is where the tensor it commits into was placed, not an
        // argument here: moving it is a change to that placement.
        return Some(d);
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

#[cfg(test)]
mod tests {
    use super::super::tests::sch;

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
}

//! The kernel schedule (cost model §12.3 step 4): an in-order list scheduler over three lanes,
//! `main`, `sub` and `dma` (L7058-L7066). Program order is kept: a task starts no earlier than
//! the one before it (L7044), when its lane is free (L2911) and when the tasks whose results it
//! reads have finished (main waits for sub's TRF/VRF loads, L153; `.await`ed DMA, L7069).

use super::dma::{dma_cost, hints as dma_hints, segmented_cost, shape};
use super::{Assumption, EngineUse, KernelCost, Lane, LaneUse, OpCost, Task, tu};
use crate::derive::banks as bank;
use crate::derive::dma::DmaOp;
use crate::derive::{Op, OpKind};
use crate::model::{Engine, FnModel, Kind, Method, Slot, Step, Tu, slot_bytes};
use crate::target::Target;
use std::collections::{BTreeMap, BTreeSet};

/// A task before scheduling.
#[derive(Clone)]
struct Pending {
    lane: Lane,
    ops: Vec<OpCost>,
    duration: u64,
    holds_dma: bool,
    /// Names the task reads.
    reads: BTreeSet<String>,
    /// The previous task of the same chain.
    after: Option<usize>,
    /// The name the chain binds, set on its last task.
    binds: Option<String>,
}

fn identifiers(text: &str, out: &mut BTreeSet<String>) {
    let mut cur = String::new();
    let mut prev_dot = false;
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            cur.push(c);
        } else {
            if !cur.is_empty() && !prev_dot && !cur.starts_with(|d: char| d.is_ascii_digit()) {
                out.insert(std::mem::take(&mut cur));
            }
            cur.clear();
            prev_dot = c == '.';
        }
    }
}

fn is_tu(step: &Step) -> bool {
    matches!(
        step.engine,
        Some(
            Engine::Begin
                | Engine::Fetch
                | Engine::Switch
                | Engine::Collect
                | Engine::Contraction
                | Engine::Vector
                | Engine::Cast
                | Engine::Transpose
                | Engine::Commit
        )
    )
}

/// The 64-access rule (L2898, L2909): a fetch or commit with that many consecutive accesses to
/// one DM bank is scheduled as if it occupied the DMA lane. Accesses are fetch_size /
/// commit_size chunks; a fetch starts at its source tensor's address, a commit at its own.
fn starves_bank(model: &FnModel, steps: &[&Step], ops: &[Op<'_>], t: &Target) -> bool {
    let source = steps.iter().flat_map(|s| s.args.iter()).find_map(|a| {
        let mut names = BTreeSet::new();
        identifiers(&a.text, &mut names);
        model
            .tensors
            .iter()
            .rev()
            .find(|v| names.contains(&v.name))
            .and_then(|v| v.address)
    });
    steps.iter().any(|s| {
        ops.iter().filter(|o| o.span == s.span).any(|o| {
            let (Ok(cfg), Some(bits)) = (&o.config, o.bits) else {
                return false;
            };
            if cfg.entries.is_empty() {
                return false;
            }
            let (chunk, base) = match o.kind {
                OpKind::Fetch => (o.fetch.and_then(|f| f.fetch_size), source),
                OpKind::Commit => (o.commit.and_then(|c| c.commit_size), s.address),
                _ => return false,
            };
            let acc = bank::accesses(cfg, bits, chunk);
            bank::runs(&acc, base.unwrap_or(0), t).is_some_and(|r| r.run >= t.bank_max_consecutive)
        })
    })
}

fn tu_task(model: &FnModel, steps: &[&Step], ops: &[Op<'_>], t: &Target) -> Option<Pending> {
    let costs = tu::stages(steps, ops, t);
    if costs.is_empty() {
        return None;
    }
    let lane = match steps.iter().find_map(|s| s.context) {
        Some(Tu::Sub) => Lane::Sub,
        _ => Lane::Main,
    };
    let work = costs.iter().map(|o| o.cycles).max().unwrap_or(0);
    let latency = costs
        .iter()
        .map(|o| o.latency)
        .fold(0u64, u64::saturating_add);
    let mut reads = BTreeSet::new();
    for s in steps {
        for a in &s.args {
            identifiers(&a.text, &mut reads);
        }
    }
    let holds_dma = starves_bank(model, steps, ops, t);
    let mut costs = costs;
    if holds_dma && let Some(first) = costs.first_mut() {
        first.assumptions.push(Assumption::new(format!(
            "{} or more consecutive accesses to one DM bank: scheduled as if it occupied the \
             DMA lane (L2909)",
            t.bank_max_consecutive
        )));
    }
    Some(Pending {
        lane,
        ops: costs,
        duration: work.saturating_add(latency),
        holds_dma,
        reads,
        after: None,
        binds: None,
    })
}

fn dma_task(step: &Step, d: &DmaOp<'_>, t: &Target) -> Pending {
    let mut read = OpCost {
        span: step.span,
        op: "dma_read",
        engine: "DMA",
        context: None,
        cycles: 0,
        latency: 0,
        bytes: 0,
        limit: String::new(),
        assumptions: Vec::new(),
        hints: Vec::new(),
    };
    let mut write = OpCost {
        op: "dma_write",
        ..read.clone()
    };
    let mut duration = 0;
    match shape(d, t) {
        Some((s, assumptions)) => {
            let c = dma_cost(&s, t);
            let bytes = d
                .pair
                .as_ref()
                .ok()
                .and_then(|p| p.packets.zip(p.stride0))
                .map_or(0, |(n, s0)| {
                    n.saturating_mul(s0).saturating_mul(d.engines.max(1))
                });
            let side = super::dma::media_name;
            read.cycles = c.read;
            read.latency = c.startup;
            read.bytes = bytes;
            read.limit = format!(
                "{} requests on each of {} engine(s) from {}; {}",
                s.requests_per_engine,
                s.engines,
                side(s.src),
                c.limit
            );
            write.cycles = c.write;
            write.bytes = bytes;
            write.limit = format!(
                "into {}; reads and writes {}",
                side(s.dst),
                if c.overlap { "overlap" } else { "add up" }
            );
            read.assumptions = assumptions;
            read.hints = dma_hints(&s, &c, t);
            duration = c.total;
            // The engine with a partial share runs its commands in turn; the transfer ends
            // with the slowest engine (L2807).
            if let (Some(seg), Some((tail, more))) = (&d.segmented, segmented_cost(d, t))
                && tail.total > c.total
            {
                for a in more {
                    if !read.assumptions.contains(&a) {
                        read.assumptions.push(a);
                    }
                }
                read.cycles = tail.read;
                read.latency = tail.startup;
                write.cycles = tail.write;
                read.limit.push_str(&format!(
                    "; the engine holding {} = {}..{} runs {} commands, one after the other \
                     ({} cycles against {} for the others, L2801-L2808)",
                    seg.axis.name,
                    seg.axis.size - seg.real,
                    seg.axis.size.saturating_sub(1),
                    seg.commands.len(),
                    tail.total,
                    c.total
                ));
                duration = tail.total;
            }
        }
        None => read.assumptions.push(Assumption::new(
            "the DMA's packet size could not be derived: the transfer is not costed",
        )),
    }
    dma_lane_task(step, vec![read, write], duration)
}

/// A task of the DMA lane: `ops`, taking `duration` cycles, reading what `step`'s arguments
/// name.
fn dma_lane_task(step: &Step, ops: Vec<OpCost>, duration: u64) -> Pending {
    let mut reads = BTreeSet::new();
    for a in &step.args {
        identifiers(&a.text, &mut reads);
    }
    Pending {
        lane: Lane::Dma,
        ops,
        duration,
        holds_dma: false,
        reads,
        after: None,
        binds: None,
    }
}

/// A host transfer over PCIe (`HostTensor::to_hbm`, `HbmTensor::to_host` on `ctx.pdma`), when
/// `step` is one: its bytes are the host tensor's (one mapping, `Mapping::SIZE` elements).
fn pcie_task(step: &Step, t: &Target) -> Option<Pending> {
    let (i, o) = (step.input.as_ref()?, step.output.as_ref()?);
    let host = match step.method {
        Method::ToHbm if i.kind == Kind::Host => i,
        Method::ToHost if o.kind == Kind::Host => o,
        _ => return None,
    };
    let mut op = OpCost {
        span: step.span,
        op: "pcie",
        engine: "PCIe DMA",
        context: None,
        cycles: 0,
        latency: 0,
        bytes: 0,
        limit: String::new(),
        assumptions: vec![Assumption::new(format!(
            "host transfers use PCIe at {} B/cycle each way (the figure the manual's DMA page \
             gives for transfers between chips) after a DMA command's {}-cycle start-up (the \
             manual gives no PCIe latency)",
            t.pcie_bytes_per_cycle, t.dma_startup_cycles
        ))],
        hints: Vec::new(),
    };
    let mut duration = 0;
    match slot_bytes(host, Slot::Mapping) {
        Some((_, _, bytes)) => {
            let c = super::dma::pcie_cost(bytes, t);
            op.cycles = c.data;
            op.latency = c.startup;
            op.bytes = bytes;
            op.limit = format!(
                "{bytes} bytes at {} B/cycle over PCIe ({})",
                t.pcie_bytes_per_cycle,
                if step.method == Method::ToHost {
                    "HBM to host"
                } else {
                    "host to HBM"
                }
            );
            duration = c.total;
        }
        None => op.assumptions.push(Assumption::new(
            "the host tensor's size is not known: the PCIe transfer is not costed",
        )),
    }
    Some(dma_lane_task(step, vec![op], duration))
}

/// Builds the tasks of every chain, in program order.
fn tasks(model: &FnModel, ops: &[Op<'_>], dma: &[DmaOp<'_>], t: &Target) -> Vec<Pending> {
    let mut out: Vec<Pending> = Vec::new();
    for chain in &model.chains {
        let first = out.len();
        let mut run: Vec<&Step> = Vec::new();
        let flush = |run: &mut Vec<&Step>, out: &mut Vec<Pending>| {
            if let Some(p) = tu_task(model, run, ops, t) {
                out.push(p);
            }
            run.clear();
        };
        for step in &chain.steps {
            if is_tu(step) {
                run.push(step);
                continue;
            }
            if let Some(d) = dma.iter().find(|d| d.span == step.span) {
                flush(&mut run, &mut out);
                out.push(dma_task(step, d, t));
            } else if let Some(p) = pcie_task(step, t) {
                flush(&mut run, &mut out);
                out.push(p);
            }
        }
        flush(&mut run, &mut out);
        if out.len() == first {
            continue;
        }
        if let Some(r) = &chain.receiver {
            out[first].reads.insert(r.clone());
        }
        for (k, p) in out.iter_mut().enumerate().skip(first + 1) {
            p.after = Some(k - 1);
        }
        if let Some(last) = out.last_mut() {
            last.binds = chain.binding.clone();
        }
    }
    out
}

/// The operation that sets a task's duration: the most cycles, the earliest stage on ties,
/// and never the Cast Engine when another stage ties with it ("a pass-through stage that is
/// never the pipeline bottleneck", L6819).
pub(crate) fn limiting<'a>(ops: impl Iterator<Item = &'a OpCost>) -> Option<&'a OpCost> {
    let mut best: Option<&OpCost> = None;
    for o in ops {
        let better = best.is_none_or(|b| {
            o.cycles > b.cycles || (o.cycles == b.cycles && b.op == "cast" && o.op != "cast")
        });
        if better {
            best = Some(o);
        }
    }
    best
}

/// Simulates one function: its operations' costs and their schedule.
pub fn simulate(model: &FnModel, ops: &[Op<'_>], dma: &[DmaOp<'_>], t: &Target) -> KernelCost {
    let pending = tasks(model, ops, dma, t);
    // What the 64-access rule costs: the same schedule with every task off the DMA lane.
    let bank_saving = if pending.iter().any(|p| p.holds_dma) {
        let free: Vec<Pending> = pending
            .iter()
            .cloned()
            .map(|p| Pending {
                holds_dma: false,
                ..p
            })
            .collect();
        let without = schedule(model, free).total_cycles;
        let mut with = schedule(model, pending);
        let saves = with.total_cycles.saturating_sub(without);
        if saves > 0
            && let Some(task) = with.tasks.iter().find(|t| t.holds_dma)
            && let Some(&i) = task.ops.first()
        {
            with.ops[i].hints.push((
                format!(
                    "{} or more consecutive accesses to one DM bank keep the DMA waiting \
                     (L2909): a stride that is not a multiple of {} bytes, or a contiguous \
                     innermost loop, lets the DMA run alongside",
                    t.bank_max_consecutive,
                    t.dm_bank_bytes.saturating_mul(t.dm_banks)
                ),
                saves,
            ));
        }
        return with;
    } else {
        pending
    };
    schedule(model, bank_saving)
}

fn schedule(model: &FnModel, pending: Vec<Pending>) -> KernelCost {
    let (all_ops, mut out) = place_tasks(pending);
    let total = out.iter().map(|t| t.end).max().unwrap_or(0);
    let bottleneck = critical_path(&mut out, &all_ops, total);
    let lanes = lane_uses(&out, total);
    let engines = engine_uses(&out, &all_ops, total);
    let assumptions: BTreeSet<Assumption> = all_ops
        .iter()
        .flat_map(|o| o.assumptions.iter().cloned())
        .collect();
    KernelCost {
        name: model.name.clone(),
        span: model.span,
        ops: all_ops,
        tasks: out,
        total_cycles: total,
        lanes,
        engines,
        bottleneck,
        assumptions: assumptions.into_iter().collect(),
    }
}

/// Places each task, in issue order, at the latest of what it waits for: in-order issue, its
/// lanes (and the DMA lane it holds), the previous step of its chain, and the tasks that
/// produce what it reads. Returns every operation and the tasks over them.
fn place_tasks(pending: Vec<Pending>) -> (Vec<OpCost>, Vec<Task>) {
    let mut all_ops: Vec<OpCost> = Vec::new();
    let mut out: Vec<Task> = Vec::new();
    let mut free: BTreeMap<Lane, (u64, Option<usize>)> = BTreeMap::new();
    let mut produced: BTreeMap<String, usize> = BTreeMap::new();
    let mut issue: (u64, Option<usize>) = (0, None);
    for (k, p) in pending.into_iter().enumerate() {
        // Candidates for the start: (time, task, reason).
        let mut cands: Vec<(u64, Option<usize>, String)> =
            vec![(issue.0, issue.1, "in-order issue".into())];
        let lanes: &[Lane] = if p.holds_dma {
            &[p.lane, Lane::Dma]
        } else {
            std::slice::from_ref(&p.lane)
        };
        for l in lanes {
            if let Some(&(at, by)) = free.get(l) {
                cands.push((at, by, format!("the {} lane is busy", l.as_str())));
            }
        }
        if let Some(a) = p.after {
            cands.push((out[a].end, Some(a), "the previous step of its chain".into()));
        }
        for name in &p.reads {
            if let Some(&j) = produced.get(name) {
                cands.push((out[j].end, Some(j), format!("it reads `{name}`")));
            }
        }
        let (start, by, why) =
            cands
                .into_iter()
                .max_by_key(|c| c.0)
                .unwrap_or((0, None, String::new()));
        let end = start.saturating_add(p.duration);
        let first = all_ops.len();
        all_ops.extend(p.ops);
        for l in lanes {
            free.insert(*l, (end, Some(k)));
        }
        if let Some(b) = &p.binds {
            produced.insert(b.clone(), k);
        }
        issue = (start, by.filter(|_| start > 0));
        out.push(Task {
            lane: p.lane,
            ops: (first..all_ops.len()).collect(),
            start,
            end,
            waits_for: by.filter(|_| start > 0),
            wait_reason: (start > 0).then_some(why),
            holds_dma: p.holds_dma,
            critical: false,
        });
    }
    (all_ops, out)
}

/// Marks the critical path, back from the last task to finish, and returns the engine that
/// limits it longest (the bottleneck).
fn critical_path(out: &mut [Task], all_ops: &[OpCost], total: u64) -> Option<&'static str> {
    let mut cur = out
        .iter()
        .enumerate()
        .filter(|(_, t)| t.end == total)
        .map(|(k, _)| k)
        .next_back();
    let mut engines: BTreeMap<&'static str, u64> = BTreeMap::new();
    while let Some(k) = cur {
        if out[k].critical {
            break;
        }
        out[k].critical = true;
        let dur = out[k].end - out[k].start;
        if let Some(o) = limiting(out[k].ops.iter().map(|&i| &all_ops[i])) {
            let e = engines.entry(o.engine).or_default();
            *e = e.saturating_add(dur);
        }
        cur = out[k].waits_for;
    }
    engines
        .iter()
        .max_by_key(|(_, v)| **v)
        .filter(|(_, v)| **v > 0)
        .map(|(e, _)| *e)
}

/// How long each lane that runs a task is busy, of `total` cycles.
fn lane_uses(out: &[Task], total: u64) -> Vec<LaneUse> {
    Lane::ALL
        .iter()
        .filter_map(|&l| {
            let busy: u64 = out
                .iter()
                .filter(|t| t.lane == l)
                .map(|t| t.end - t.start)
                .fold(0u64, u64::saturating_add);
            let used = out.iter().any(|t| t.lane == l);
            used.then(|| LaneUse {
                lane: l,
                busy,
                percent: busy.saturating_mul(100).checked_div(total).unwrap_or(0),
            })
        })
        .collect()
}

/// Engine busy time, in pipeline order: the Tensor Unit engines' work, and each DMA
/// transfer's duration charged to its engine (the DMA Engines or PCIe DMA).
fn engine_uses(out: &[Task], all_ops: &[OpCost], total: u64) -> Vec<EngineUse> {
    let mut busy: BTreeMap<&'static str, u64> = BTreeMap::new();
    for task in out {
        if task.lane == Lane::Dma {
            let engine = task.ops.first().map_or("DMA", |&i| all_ops[i].engine);
            let e = busy.entry(engine).or_default();
            *e = e.saturating_add(task.end - task.start);
            continue;
        }
        for &i in &task.ops {
            let e = busy.entry(all_ops[i].engine).or_default();
            *e = e.saturating_add(all_ops[i].cycles);
        }
    }
    let mut engines: Vec<EngineUse> = busy
        .into_iter()
        .map(|(engine, busy)| EngineUse {
            engine,
            busy,
            percent: busy.saturating_mul(100).checked_div(total).unwrap_or(0),
        })
        .collect();
    engines.sort_by_key(|e| super::ENGINES.iter().position(|x| *x == e.engine));
    engines
}

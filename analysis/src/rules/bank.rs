//! BNK: DM bank starvation and the 64-access rule (constraints.md §19).
//!
//! A slice address splits into byte (bits 0-2), bank (bits 3-6) and row (bits 7-18) (L2875-
//! L2879), so two accesses hit the same bank iff their addresses agree in bits 3-6. The access
//! sequence of a fetch or commit command is its derived sequencer configuration
//! ([`crate::derive::ops`]) with the contiguous innermost run cut into fetch_size (commit_size)
//! chunks; the longest run of consecutive same-bank accesses is the product of the innermost
//! loops whose byte stride is a multiple of 128 (`dm_bank_bytes × dm_banks`), stride 0
//! included. Which banks those runs hit is a set of residues modulo 128, computed loop by loop:
//! nothing is enumerated element by element. Concurrency with DMA comes from the
//! [`Timeline`]: every function is checked, kernels and helpers alike; a function that issues no
//! DMA itself leaves the concurrency unknown (its callers decide), which BNK-001 reports as such.

use super::context::{FnContext, at_arg, rewrite_input, rewrite_output};
use crate::derive::banks::{Runs, accesses, runs};
use crate::derive::timeline::{Resource, Timeline};
use crate::derive::{self, Config, Op, OpKind};
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::mapping::edit::{pad_innermost, top_terms};
use crate::mapping::layout::Dim;
use crate::mapping::lower::layout_of;
use crate::model::{Dtype, Kind, Method, Slot, input_arg, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::target::Target;

pub const BNK_001: Rule = Rule {
    code: "BNK-001",
    name: "bank-64-access-rule",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A fetch/commit must not hit one DM bank 64+ times in a row while DMA is active",
    docs: "DM banks are 8 bytes wide and 16 per slice; 128 consecutive bytes cover all of them \
           (L2875-L2879). DMA has the lowest DM priority, and a DMA request that waits 4096 \
           cycles makes the NoC declare it dead and reset the cluster (L2905). Fetch and \
           commit commands must therefore not access one bank 64 or more times in a row \
           while a DMA is active (L2898, L2906-L2909; (256/128) × 64 × 32 < 4096, L2938), \
           and the manual asks to treat this as a hard constraint (L2909, L2352). visa-lint \
           derives each command's sequencer and reports the longest run: consecutive \
           accesses stay in one bank when their byte stride is a multiple of 128 (for example \
           a column of a row-major matrix with a 256-byte row pitch) or 0 (a Time broadcast \
           re-reading the same address). Whether a DMA may run at the same time comes from \
           the function's schedule. Where the function issues DMA, the command is reported \
           when one of those DMAs may overlap it (the schedule does not order it before or \
           after), and not when every one is ordered around it. Where the function issues no \
           DMA at all (typically a helper taking `&mut Context` and tensors), what runs \
           alongside is decided by its callers: the concurrency is unknown there, and the \
           command is reported with a message that says so. The compiler serializes such a \
           command with DMA, so both are warnings by default (constraints.md §22 A-27); \
           `strict-bank-rule = true`, `--deny BNK-001` or `--deny warnings` make both errors \
           (the strict reading: never, whatever runs alongside). Fix: pad the row pitch so it \
           is not a multiple of 128 bytes (`m![A, B # 136]`), or reorder Time so the \
           innermost loop walks contiguous memory.",
    bad: "axes![R = 128, C = 128]; // bf16 rows of 256 bytes at DM 0\n\
          ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>()… // column walk: bank 0, 128 times\n\
          let w = w.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 1 << 17); // independent DMA",
    good: "ctx.main.begin(m.view()).fetch::<bf16, m![R, C / 16], m![C % 16]>()… // row walk",
    manual: "L2137, L2352-L2353, L2856, L2875-L2879, L2898, L2906-L2909, L2938-L2939",
    generations: Generations::Both,
};

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

pub const BNK_003: Rule = Rule {
    code: "BNK-003",
    name: "noc-timeout-reset",
    severity: Severity::Info,
    status: Status::NotStatic(
        "the 4096-cycle NoC timeout happens at run time; BNK-001/BNK-002 report its static causes",
    ),
    summary: "A DMA request unanswered for 4096 cycles resets the cluster domain",
    docs: "After 4096 cycles without a response the NoC declares the DMA transaction dead and \
           enters an exception state; only a full cluster-domain reset recovers (L2905, \
           L2940). This is why BNK-001 and BNK-002 matter; it is not itself visible in the \
           source.",
    bad: "",
    good: "",
    manual: "L2905, L2940, L2842",
    generations: Generations::Both,
};

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

pub const BNK_006: Rule = Rule {
    code: "BNK-006",
    name: "dmn-interleaving",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "DMA into or out of DM should spread over DMNs and their slices",
    docs: "One DMN moves 128 B/cycle; a 256-byte DMA unit needs two DMNs interleaved for full \
           bandwidth (L2857, L2883-L2892), and each slice queues only two DMA requests \
           (L2858, L2935). A DM tensor whose Slice mapping puts all its data in one DMN's 32 \
           slices cannot be interleaved: its DMA runs at 128 instead of 256 B/cycle (50% \
           loss). visa-lint checks the Slice mapping of every `to_dm` destination and `to_hbm` \
           source. The DMA's own access order (strides, HBM channels) is DMA-011.",
    bad: "axes![A = 32, B = 2048]; let x = x.to_dm::<m![1 # 2], m![A # 256], m![B]>(&mut ctx.tdma, 0); // f32, 256 KiB in DMN 0",
    good: "axes![A = 256, B = 256]; let x = x.to_dm::<m![1 # 2], m![A], m![B]>(&mut ctx.tdma, 0); // all 8 DMNs",
    manual: "L2857-L2858, L2883-L2895, L2935",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[BNK_001, BNK_002, BNK_003, BNK_004, BNK_005, BNK_006];

/// One fetch or commit command with its runs.
struct Cmd<'a> {
    op: &'a Op<'a>,
    kind: OpKind,
    span: Span,
    node: usize,
    resource: Resource,
    runs: Runs,
    base: Option<u64>,
    cfg: &'a Config,
}

fn bank_name(c: &Cmd<'_>, target: &Target) -> String {
    match c.base {
        Some(b) if target.dm_bank_bytes > 0 && target.dm_banks > 0 => {
            format!("bank {}", b / target.dm_bank_bytes % target.dm_banks)
        }
        _ => match c.runs.run_banks.count_ones() {
            1 => format!("bank {}", c.runs.run_banks.trailing_zeros()),
            _ => "one bank".to_string(),
        },
    }
}

fn why(c: &Cmd<'_>) -> String {
    if c.runs.stride == 0 {
        "it re-reads the same address (stride 0)".to_string()
    } else {
        format!(
            "consecutive accesses are {} bytes apart, a multiple of 128",
            c.runs.stride
        )
    }
}

fn commands<'a>(cx: &'a FnContext<'_>, t: &Timeline<'_>) -> Vec<Cmd<'a>> {
    let mut out = Vec::new();
    for op in &cx.ops {
        if !matches!(op.kind, OpKind::Fetch | OpKind::Commit) {
            continue;
        }
        let Ok(cfg) = &op.config else {
            continue;
        };
        let Some(node) = t.node_of(op.step) else {
            continue;
        };
        let Some(resource) = t.nodes[node].resource else {
            continue;
        };
        let base = if op.kind == OpKind::Fetch {
            t.source_address(node)
        } else {
            op.step.address
        };
        let Some(runs) = op_runs(op, base, cx.target) else {
            continue;
        };
        out.push(Cmd {
            op,
            kind: op.kind,
            span: op.span,
            node,
            resource,
            runs,
            base,
            cfg,
        });
    }
    out
}

/// The same-bank runs of a fetch or commit whose first access is at `base` (0 when unknown):
/// its accesses are the derived loops with the contiguous run cut into fetch_size (commit_size)
/// chunks.
fn op_runs(op: &Op<'_>, base: Option<u64>, target: &Target) -> Option<Runs> {
    let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
        return None;
    };
    if cfg.entries.is_empty() {
        return None;
    }
    let acc = accesses(cfg, bits, access_bytes(op));
    runs(&acc, base.unwrap_or(0), target)
}

/// The bytes of one access of a fetch (fetch_size) or commit (commit_size), when derived.
fn access_bytes(op: &Op<'_>) -> Option<u64> {
    match op.kind {
        OpKind::Fetch => op.fetch.and_then(|f| f.fetch_size),
        _ => op.commit.and_then(|c| c.commit_size),
    }
}

/// Consecutive accesses one bank sees from a main and a sub command plus one DMA request
/// (L2919-L2926).
pub fn cumulative(main: u64, sub: u64) -> u64 {
    main.saturating_add(sub).saturating_add(1)
}

/// A DMA node that may run while `node` runs.
fn concurrent_dma(t: &Timeline<'_>, node: usize) -> Option<usize> {
    (0..t.nodes.len())
        .find(|&d| t.nodes[d].resource == Some(Resource::Dma) && t.concurrent(node, d))
}

fn dma_span(t: &Timeline<'_>, d: usize) -> Span {
    let chain = t.nodes[d].chain;
    chain
        .steps
        .iter()
        .find(|s| s.method.is_dm_hbm_dma())
        .map_or(chain.span, |s| s.span)
}

const NEAR: u64 = 32;
/// BNK-006 reports DMA transfers of at least this many bytes (below, the loss is noise).
const MIN_DMA_BYTES: u64 = 64 * 1024;
const STARVE: u64 = 8;

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(t) = Timeline::build(cx.model) else {
        return;
    };
    let limit = cx.target.bank_max_consecutive;
    let cmds = commands(cx, &t);
    // Whether the function issues a DMA itself. When it does not, what runs alongside its
    // commands is decided where it is called (a helper) or by code visa-lint cannot see: the
    // concurrency with DMA is unknown here, not absent (BNK-001's unknown case).
    let dma_visible = t.nodes.iter().any(|n| n.resource == Some(Resource::Dma));
    let mut in_pair = vec![false; cmds.len()];
    // Node pairs already reported (BNK-002 first, then BNK-005 once per pair of chains).
    let mut starved: Vec<(usize, usize)> = Vec::new();
    // BNK-002 (first pass) and BNK-005 (second pass): main/sub pairs that may overlap.
    for (pass, (i, x)) in (0..2).flat_map(|p| cmds.iter().enumerate().map(move |c| (p, c))) {
        if x.resource != Resource::Main {
            continue;
        }
        for (j, y) in cmds.iter().enumerate() {
            if y.resource != Resource::Sub || !t.concurrent(x.node, y.node) {
                continue;
            }
            let dma = (0..t.nodes.len()).find(|&d| {
                t.nodes[d].resource == Some(Resource::Dma)
                    && t.concurrent(x.node, d)
                    && t.concurrent(y.node, d)
            });
            let common = x.runs.run_banks & y.runs.run_banks;
            let total = cumulative(x.runs.run, y.runs.run);
            if pass == 0
                && let Some(d) = dma
                && common != 0
                && x.runs.run > 1
                && y.runs.run > 1
                && x.runs.run < limit
                && y.runs.run < limit
                && total >= limit
            {
                in_pair[i] = true;
                in_pair[j] = true;
                starved.push((x.node, y.node));
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
                    .with_related(dma_span(&t, d), "the DMA that may be active meanwhile"),
                );
                continue;
            }
            if pass == 1
                && x.runs.run >= STARVE
                && x.runs.run_banks & y.runs.touched != 0
                && !starved.contains(&(x.node, y.node))
            {
                starved.push((x.node, y.node));
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
            }
        }
    }
    // BNK-001 and BNK-004: single commands.
    for (i, c) in cmds.iter().enumerate() {
        if !dma_visible && c.runs.run >= limit {
            out.push(unknown_concurrency(cx, c, limit));
            continue;
        }
        let Some(d) = concurrent_dma(&t, c.node) else {
            continue;
        };
        if c.runs.run >= limit {
            let message = format!(
                "{} is accessed {} times in a row by this {} (sequencer {}: {}) while the DMA \
                 may be active; {limit} or more consecutive same-bank accesses can starve the \
                 DMA into a NoC timeout, so the compiler serializes this command with DMA. {}",
                bank_name(c, cx.target),
                c.runs.run,
                c.kind.as_str(),
                c.cfg,
                why(c),
                remedy(c)
            );
            out.push(
                bnk_001(cx, c, message)
                    .with_related(dma_span(&t, d), "this DMA may run at the same time"),
            );
        } else if c.runs.run >= NEAR && !in_pair[i] {
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
                .with_related(dma_span(&t, d), "this DMA may run at the same time"),
            );
        }
    }
    check_dmn(cx, &t, out);
}

/// BNK-001 where the function issues no DMA: a helper whose caller may have one in flight.
/// Reported at the rule's severity, like the visible case; what it would cost is said as a
/// condition (L2909: the pattern is to be avoided whatever runs alongside).
fn unknown_concurrency(cx: &FnContext<'_>, c: &Cmd<'_>, limit: u64) -> Diagnostic {
    let message = format!(
        "{} is accessed {} times in a row by this {} (sequencer {}: {}); `{}` issues no DMA, \
         so whether one is active meanwhile is unknown here (its callers decide). If one is, the \
         compiler serializes this command with it and the overlap is lost: {limit} or more \
         consecutive same-bank accesses could otherwise starve the DMA until the NoC's \
         {}-cycle timeout resets the cluster. {}",
        bank_name(c, cx.target),
        c.runs.run,
        c.kind.as_str(),
        c.cfg,
        why(c),
        cx.model.name,
        cx.target.noc_timeout_cycles,
        remedy(c),
    );
    bnk_001(cx, c, message).with_related(
        cx.model.span,
        "issues no DMA: what runs alongside it depends on where it is called",
    )
}

/// How many accesses BNK-001's fix may add to the innermost term before it gives up.
const MAX_PAD_ACCESSES: u64 = 8;

/// BNK-001's fix: the DM tensor's Element, where it is written, with its innermost term padded
/// by whole accesses (at least one bank wide) until the command's accesses rotate banks, as
/// the command would derive over it; its edits and the new mapping. `None` for a re-read of
/// one address (no padding moves it) or a mapping that is not spelled out where it is written.
fn rotation(cx: &FnContext<'_>, c: &Cmd<'_>) -> Option<(Vec<Edit>, String)> {
    if c.runs.stride == 0 {
        return None;
    }
    let new = padded_pitch(cx, c)?;
    Some((buffer_edits(cx, c.op, &new)?, new))
}

/// A BNK-001 diagnostic: at the DM mapping its fix pads (the command related), else at the
/// command.
fn bnk_001(cx: &FnContext<'_>, c: &Cmd<'_>, message: String) -> Diagnostic {
    let fix = rotation(cx, c);
    let at = fix.as_ref().and_then(|(e, _)| e.first()).map(|e| e.span);
    let diag = at_arg(&BNK_001, c.op.step, at, message);
    match fix {
        Some((edits, new)) => diag.with_fix(
            format!("pad the innermost term so the row pitch rotates banks: {new}"),
            false,
            edits,
        ),
        None => diag,
    }
}

/// The buffer mapping padded as [`rotation`] pads it.
fn padded_pitch(cx: &FnContext<'_>, c: &Cmd<'_>) -> Option<String> {
    let text = buffer_arg(c.op)?.text;
    let (_, last) = *top_terms(&text).last()?;
    let extent = layout_of(&format!("m![{last}]"), cx.scope)?.size;
    let access = access_bytes(c.op).unwrap_or(0).max(cx.target.dm_bank_bytes);
    let per_access = c.op.bits.and_then(|b| {
        let bits = access.checked_mul(8)?;
        bits.is_multiple_of(u64::from(b))
            .then(|| bits / u64::from(b))
    })?;
    (1..=MAX_PAD_ACCESSES).find_map(|k| {
        let new = pad_innermost(&text, extent.checked_add(k.checked_mul(per_access)?)?)?;
        let op = c.op.over(layout_of(&new, cx.scope)?, cx.target);
        let runs = op_runs(&op, c.base, cx.target)?;
        (runs.run < NEAR).then_some(new)
    })
}

/// Where the DM buffer of a fetch (its source's Element) or commit (its Element) is written.
fn buffer_arg(op: &Op<'_>) -> Option<crate::model::Arg> {
    match op.kind {
        OpKind::Fetch => input_arg(op.step, Slot::Packet),
        _ => output_arg(op.step, Some(0), Slot::Element),
    }
}

/// The edits that write `new` as the DM buffer of `op` wherever it is written.
fn buffer_edits(cx: &FnContext<'_>, op: &Op<'_>, new: &str) -> Option<Vec<Edit>> {
    if op.kind == OpKind::Fetch {
        return rewrite_input(cx.model, op.step, Slot::Packet, new);
    }
    let chain = cx
        .model
        .chains
        .iter()
        .find(|ch| ch.steps.iter().any(|s| std::ptr::eq(s, op.step)))?;
    rewrite_output(chain, op.step, Some(0), Slot::Element, new)
}

/// What BNK-001 asks for: padding, unless the run re-reads one address (no padding moves it).
fn remedy(c: &Cmd<'_>) -> &'static str {
    if c.runs.stride == 0 {
        "No padding moves a re-read of one address: reorder Time so the broadcast axis is \
         not the innermost loop (the innermost loop should walk contiguous memory)"
    } else {
        "Pad the stride so it is not a multiple of 128 bytes, or make the innermost loop walk \
         contiguous memory"
    }
}

/// BNK-006: DM tensors moved by DMA whose data sits in one DMN.
fn check_dmn(cx: &FnContext<'_>, t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
    let per = cx.target.slices_per_dmn;
    if per == 0 {
        return;
    }
    for node in &t.nodes {
        if node.resource != Some(Resource::Dma) {
            continue;
        }
        for step in &node.chain.steps {
            let ty = match step.method {
                Method::ToDm => step.output.as_ref(),
                Method::ToHbm => step.input.as_ref(),
                _ => None,
            };
            let Some(ty) = ty.filter(|t| t.kind == Kind::Dm) else {
                continue;
            };
            let Some(mv) = ty.get(Slot::Slice) else {
                continue;
            };
            let Some(layout) = mv.layout.as_deref() else {
                continue;
            };
            let cluster = cx.cluster_slices(layout.size);
            if layout.size != cluster {
                continue;
            }
            let Some((dmns, slices)) = dmns_with_data(&layout.dims, layout.size, per) else {
                continue;
            };
            if dmns.len() != 1 || cluster / per < 2 {
                continue;
            }
            // Only where the bandwidth matters: the DMA moves at least MIN_DMA_BYTES.
            let total = ty
                .dtype
                .map(Dtype::bits)
                .zip(ty.get(Slot::Element).and_then(|m| m.layout.as_deref()))
                .map(|(bits, l)| derive::bytes(l.size, bits).saturating_mul(slices));
            let Some(total) = total.filter(|&b| b >= MIN_DMA_BYTES) else {
                continue;
            };
            let lost = (total / cx.target.dmn_bytes_per_cycle.max(1))
                .saturating_sub(total / cx.target.dma_dm_bytes_per_cycle.max(1));
            let k = dmns[0];
            out.push(Diagnostic::new(
                &BNK_006,
                mv.span.unwrap_or(step.span),
                format!(
                    "the Slice mapping {} puts all {total} bytes in DMN {k} (slices {}..{}), so \
                     this DMA `{}` cannot alternate DMNs: {} B/cycle instead of {} (50% \
                     bandwidth loss, about {lost} extra cycles); spread the data over slices of \
                     several DMNs",
                    mv.text,
                    k * per,
                    (k + 1) * per - 1,
                    step.method,
                    cx.target.dmn_bytes_per_cycle,
                    cx.target.dma_dm_bytes_per_cycle
                ),
            ).with_related(step.span, "the DMA"));
        }
    }
}

/// The DMNs (groups of `per` slices) that hold data of a Slice layout, or `None` when the
/// layout is irregular or too large to walk.
fn dmns_with_data(dims: &[Dim], size: u64, per: u64) -> Option<(Vec<u64>, u64)> {
    if size > 65_536 {
        return None;
    }
    let mut extents = Vec::new();
    for d in dims {
        match d {
            Dim::Factor(f) => extents.push((f.extent, f.valid)),
            Dim::Opaque(_) => return None,
        }
    }
    let mut out: Vec<u64> = Vec::new();
    let mut count = 0;
    for s in 0..size {
        let mut rest = s;
        let mut data = true;
        for &(ext, valid) in extents.iter().rev() {
            if ext == 0 {
                return None;
            }
            if rest % ext >= valid {
                data = false;
            }
            rest /= ext;
        }
        let k = s / per;
        count += u64::from(data);
        if data && !out.contains(&k) {
            out.push(k);
        }
    }
    Some((out, count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::Entry;
    use crate::derive::banks::Accesses;
    use crate::rules::fix_testing::assert_fix_clears;
    use crate::target::RNGD;

    fn cfg(entries: &[(u64, u64)], packet_entries: usize) -> Config {
        let entries: Vec<Entry> = entries
            .iter()
            .map(|&(size, stride)| Entry { size, stride })
            .collect();
        let packet_size = entries[entries.len() - packet_entries..]
            .iter()
            .map(|e| e.size)
            .product();
        Config {
            initial: entries.clone(),
            entries,
            packet_entries,
            initial_packet_entries: packet_entries,
            packet_size,
        }
    }

    /// L2875-L2879: 128 consecutive bytes cover the 16 banks; a contiguous walk never stays.
    #[test]
    fn contiguous_walk_rotates_all_banks() {
        let c = cfg(&[(64, 16), (16, 1)], 1); // bf16, 32-byte rows, contiguous
        let a = accesses(&c, 16, Some(32));
        assert_eq!(
            a,
            Accesses {
                loops: vec![(64, 32)],
                bytes: 32
            }
        );
        let r = runs(&a, 0, &RNGD).expect("runs");
        assert_eq!(r.run, 1);
        assert_eq!(r.touched, 0xffff);
    }

    /// A column walk with a 256-byte row pitch (a multiple of 128 B) stays in bank 0 for every
    /// row: 128 accesses, over the 64-access limit (L2898).
    #[test]
    fn column_walk_stays_in_one_bank() {
        // bf16 matrix 128 x 128 (row pitch 256 B), Time = [C / 4, R], Packet = C % 4 (8 B).
        let c = cfg(&[(32, 4), (128, 128), (4, 1)], 1);
        let a = accesses(&c, 16, Some(8));
        assert_eq!(a.loops, vec![(32, 8), (128, 256), (1, 8)]);
        let r = runs(&a, 0, &RNGD).expect("runs");
        assert_eq!(r.run, 128);
        assert_eq!(r.stride, 256);
        assert_eq!(r.run_banks, 0xffff); // the 32 columns rotate the starting bank
        let r = runs(&a, 5 * 8, &RNGD).expect("runs");
        assert_eq!(r.run, 128);
    }

    /// Padding the pitch to 136 elements × 2 B = 272 B (not a multiple of 128) rotates banks.
    #[test]
    fn padded_pitch_rotates() {
        let c = cfg(&[(32, 4), (128, 136), (4, 1)], 1);
        let r = runs(&accesses(&c, 16, Some(8)), 0, &RNGD).expect("runs");
        assert_eq!(r.run, 1);
    }

    /// A Time broadcast (stride 0) re-reads one address: same bank every time.
    #[test]
    fn broadcast_rereads_one_bank() {
        let c = cfg(&[(100, 0), (8, 1)], 1); // i8, 8-byte packet re-read 100 times
        let a = accesses(&c, 8, Some(8));
        let r = runs(&a, 24, &RNGD).expect("runs");
        assert_eq!(r.run, 100);
        assert_eq!(r.run_banks, 1 << 3);
        assert_eq!(r.touched, 1 << 3);
    }

    /// Nested multiples of 128 B multiply: 8 × 16 = 128 in a row (L2898's 64 exceeded).
    #[test]
    fn nested_runs_multiply() {
        let c = cfg(&[(8, 4096), (16, 64), (8, 1)], 1); // f32: 256 B and 16 KiB strides
        let r = runs(&accesses(&c, 32, Some(32)), 0, &RNGD).expect("runs");
        assert_eq!(r.run, 128);
        assert_eq!(r.run_banks, 0b1111); // a 32-byte access covers banks 0-3
    }

    /// The limit's derivation: (256 / 128) × 64 × 32 = 4096 cycles (L2938-L2939).
    #[test]
    fn limit_matches_noc_timeout() {
        let t = &RNGD;
        let cycles = t.dma_dm_bytes_per_cycle / t.dmn_bytes_per_cycle
            * t.bank_max_consecutive
            * t.slices_per_dmn;
        assert_eq!(cycles, t.noc_timeout_cycles);
        assert_eq!(cycles, 4096);
        assert_eq!(t.dm_bank_bytes * t.dm_banks, 128); // L2876: 128 B over 16 banks
    }

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

    /// The column walk of fixtures/rules/BNK-001.rs with a different last statement.
    fn column_walk(last: &str) -> Vec<String> {
        let text = format!(
            "axes![S = 256, R = 128, C = 128];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, m: &HbmTensor<bf16, m![1], m![S, R, C]>, w: &HbmTensor<bf16, m![1], m![S, R, C]>) {{
    let m = m.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 0);
    let cols = ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>().collect::<m![C / 16, R], m![C % 16]>().commit::<m![C / 16, R, C % 16]>(1 << 16);
    {last}
}}"
        );
        crate::check_text(&text)
            .iter()
            .filter(|d| d.code().starts_with("BNK"))
            .map(|d| d.code().to_string())
            .collect()
    }

    /// Only a DMA the schedule does not order around the fetch counts as active (L2898).
    #[test]
    fn only_concurrent_dma_counts() {
        // An independent load after the fetch may overlap it.
        assert_eq!(
            column_walk("let w = w.to_dm::<m![1 # 2], m![S], m![R, C]>(&mut ctx.tdma, 1 << 17);"),
            ["BNK-001"]
        );
        // The only DMA feeds the fetch: it has finished before the fetch starts.
        assert!(column_walk("").is_empty());
        // A DMA that moves the fetch's result out waits for it.
        assert!(column_walk("cols.to_hbm(&mut ctx.tdma, 0);").is_empty());
    }

    /// The column walk in a helper that issues no DMA, `rows` rows of 256 bytes.
    fn helper_walk(rows: u64) -> String {
        format!(
            "axes![S = 256, R = {rows}, C = 128];
fn walk(ctx: &mut Context, m: &DmTensor<bf16, m![1], m![1 # 2], m![S], m![R, C]>) {{
    let cols = ctx.main.begin(m.view()).fetch::<bf16, m![C / 16, R], m![C % 16]>().collect::<m![C / 16, R], m![C % 16]>().commit::<m![C / 16, R, C % 16]>(1 << 16);
}}"
        )
    }

    /// No DMA in the function: concurrency is unknown, not absent; 64 in a row is reported
    /// (a warning saying so), 63 is not (L2898: 64 or more).
    #[test]
    fn helper_without_dma_is_unknown_concurrency() {
        let d: Vec<Diagnostic> = crate::check_text(&helper_walk(64))
            .into_iter()
            .filter(|d| d.code().starts_with("BNK"))
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code(), "BNK-001");
        assert_eq!(d[0].severity, Severity::Warning);
        assert!(d[0].message.contains("unknown here"), "{}", d[0].message);
        assert!(d[0].message.contains("4096-cycle"), "{}", d[0].message);
        assert!(
            crate::check_text(&helper_walk(63))
                .iter()
                .all(|d| !d.code().starts_with("BNK"))
        );
    }

    /// `strict-bank-rule` makes every BNK-001 an error, the unknown case included (L2909).
    #[test]
    fn strict_bank_rule_denies_the_unknown_case() {
        let strict = crate::config::Config {
            strict_bank: true,
            ..Default::default()
        };
        let d = strict.apply(crate::check_text(&helper_walk(64)));
        let bnk: Vec<_> = d.iter().filter(|d| d.code() == "BNK-001").collect();
        assert_eq!(bnk.len(), 1, "{d:?}");
        assert_eq!(bnk[0].severity, Severity::Error);
    }

    /// BNK-001's fix pads the row by one 32-byte fetch (128 -> 144 bf16): a 288-byte pitch
    /// starts each row 32 bytes further along the banks, so the column walk rotates them.
    #[test]
    fn fix_pads_the_row_pitch_where_the_dm_tensor_is_written() {
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/BNK-001.rs"),
            "BNK-001",
        );
        assert!(
            fixed.contains("m.to_dm::<m![1 # 2], m![S], m![R, C # 144]>(&mut ctx.tdma, 0)"),
            "{fixed}"
        );
        // The other DMA's tensor keeps its layout.
        assert!(
            fixed.contains("w.to_dm::<m![1 # 2], m![S], m![R, C]>"),
            "{fixed}"
        );
        let fixed = assert_fix_clears(&helper_walk(64), "BNK-001");
        assert!(
            fixed.contains("m: &DmTensor<bf16, m![1], m![1 # 2], m![S], m![R, C # 144]>"),
            "{fixed}"
        );
    }

    /// A Time broadcast re-reads one address: no padding helps, and the message says so.
    #[test]
    fn broadcast_has_no_padding_fix() {
        let text = "axes![S = 256, T = 64, C = 4];
fn bcast(ctx: &mut Context, m: &DmTensor<f32, m![1], m![1 # 2], m![S], m![C]>) {
    let r = ctx.main.begin(m.view()).fetch::<f32, m![T], m![C]>().collect::<m![T], m![C # 8]>().commit::<m![T, C # 8]>(1 << 16);
}";
        let d: Vec<Diagnostic> = crate::check_text(text)
            .into_iter()
            .filter(|d| d.code() == "BNK-001")
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].fixes.is_empty(), "{:?}", d[0].fixes);
        assert!(
            d[0].message.contains("No padding moves a re-read"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        let c = cfg(&[(u64::MAX, u64::MAX), (u64::MAX, 0), (2, 1)], 1);
        let r = runs(&accesses(&c, 32, None), u64::MAX, &RNGD).expect("runs");
        assert_eq!(r.run, u64::MAX);
        let c = cfg(&[(0, 0), (1, 1)], 1);
        assert!(runs(&accesses(&c, 4, None), 0, &RNGD).is_some());
    }
}

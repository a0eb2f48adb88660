//! The fetch and commit commands of a function, which BNK-001, BNK-002, BNK-004 and BNK-005
//! read: [`Cmd`], one command with its same-bank runs, derived once by [`commands`], and how
//! the messages name a run's bank ([`bank_name`]), its cause ([`why`]) and the DMA that may
//! run alongside ([`concurrent_dma`], [`dma_span`]).

use crate::derive::banks::{Runs, accesses, runs};
use crate::derive::timeline::{Resource, Timeline};
use crate::derive::{Config, Op, OpKind};
use crate::diagnostic::Span;
use crate::rules::context::FnContext;
use crate::target::Target;

/// A run this long is near the limit: BNK-004 reports it, and BNK-001's fix pads until the
/// run is shorter.
pub(super) const NEAR: u64 = 32;

/// One fetch or commit command with its runs.
pub(super) struct Cmd<'a> {
    pub op: &'a Op<'a>,
    pub kind: OpKind,
    pub span: Span,
    pub node: usize,
    pub resource: Resource,
    pub runs: Runs,
    pub base: Option<u64>,
    pub cfg: &'a Config,
}

/// The bank a run stays in, as a message names it.
pub(super) fn bank_name(c: &Cmd<'_>, target: &Target) -> String {
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

/// Why consecutive accesses stay in one bank, as a message says it.
pub(super) fn why(c: &Cmd<'_>) -> String {
    if c.runs.stride == 0 {
        "it re-reads the same address (stride 0)".to_string()
    } else {
        format!(
            "consecutive accesses are {} bytes apart, a multiple of 128",
            c.runs.stride
        )
    }
}

/// Every fetch or commit of the function with a derived sequencer, a node of `t` and runs.
pub(super) fn commands<'a>(cx: &'a FnContext<'_>, t: &Timeline<'_>) -> Vec<Cmd<'a>> {
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
pub(super) fn op_runs(op: &Op<'_>, base: Option<u64>, target: &Target) -> Option<Runs> {
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
pub(super) fn access_bytes(op: &Op<'_>) -> Option<u64> {
    match op.kind {
        OpKind::Fetch => op.fetch.and_then(|f| f.fetch_size),
        _ => op.commit.and_then(|c| c.commit_size),
    }
}

/// A DMA node that may run while `node` runs.
pub(super) fn concurrent_dma(t: &Timeline<'_>, node: usize) -> Option<usize> {
    (0..t.nodes.len())
        .find(|&d| t.nodes[d].resource == Some(Resource::Dma) && t.concurrent(node, d))
}

/// Where the DMA node `d` of `t` is written: its DM/HBM transfer, else its chain.
pub(super) fn dma_span(t: &Timeline<'_>, d: usize) -> Span {
    let chain = t.nodes[d].chain;
    chain
        .steps
        .iter()
        .find(|s| s.method.is_dm_hbm_dma())
        .map_or(chain.span, |s| s.span)
}

//! The cost simulator: what each engine operation and each kernel costs, why, and what to
//! change (cost model §12).
//!
//! It reads derived facts and never re-derives them: the function model's chains and steps,
//! the sequencer operations of [`crate::derive::ops`] (fetch and commit sizes) and the DMA
//! transfers of [`crate::derive::dma::ops`] (request counts). Every hardware number comes from
//! [`Target`].
//!
//! # API
//!
//! - [`simulate`]`(model, ops, dma, target) -> KernelCost`: a pure function, one per function.
//! - [`OpCost`]: one engine operation (a chain's fetch, switch, collect, contraction, vector,
//!   cast, transpose or commit stage, or a DMA transfer): its work in cycles, its pipeline
//!   latency, the bytes it moves, what limits it, the assumptions it needed and the cheaper
//!   variants ("hints") with the cycles they would save.
//! - [`KernelCost`]: the scheduled [`Task`]s on the lanes `main`, `sub` and `dma` (in-order
//!   issue, a task waits for its lane and for the tasks whose results it reads), the total, the
//!   busy time of each lane, the critical path and the bottleneck engine.
//! - [`dma::dma_cost`] and [`dma::DmaShape`]: the DMA model on its own (for the manual's DMA
//!   examples); [`dma::pcie_cost`] a host transfer over PCIe (`ctx.pdma`, on the `dma` lane of
//!   the host function); [`svg::timeline`] draws the schedule as a Gantt chart.

pub mod dma;
mod schedule;
pub mod svg;
mod tu;

use crate::diagnostic::Span;
use crate::model::Tu;

pub use schedule::simulate;

/// An assumption the cost rests on ("assumed: HBM row hits").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Assumption(pub String);

impl Assumption {
    pub fn new(text: impl Into<String>) -> Assumption {
        Assumption(text.into())
    }
}

/// One engine operation and its cost.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpCost {
    /// The method name token, relative to the function's text like every model span.
    pub span: Span,
    /// `fetch`, `switch`, `collect`, `to_trf`, `to_vrf`, `contraction`, `vector`, `cast`,
    /// `transpose`, `commit`, `dma_read` (HBM or DM into DM), `dma_write` (DM into HBM), or
    /// `pcie` (a host transfer over `ctx.pdma`: `HostTensor::to_hbm`, `HbmTensor::to_host`).
    pub op: &'static str,
    /// The engine's name (`Fetch Engine`, …, `DMA`, `PCIe DMA`).
    pub engine: &'static str,
    pub context: Option<Tu>,
    /// Cycles the engine is busy (per slice; all slices run in parallel).
    pub cycles: u64,
    /// Cycles the stage adds to the pipeline before its last output (tree depth, accumulation,
    /// ALU stages, DMA start-up).
    pub latency: u64,
    /// Bytes the operation moves, over every slice it runs on.
    pub bytes: u64,
    /// What sets `cycles`.
    pub limit: String,
    pub assumptions: Vec<Assumption>,
    /// Cheaper variants the rules know: (what to change, cycles it would save).
    pub hints: Vec<(String, u64)>,
}

/// A scheduling lane: a Tensor Unit context or the DMA queue (L7058-L7066).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    Main,
    Sub,
    Dma,
}

impl Lane {
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Main => "main",
            Lane::Sub => "sub",
            Lane::Dma => "dma",
        }
    }

    pub const ALL: [Lane; 3] = [Lane::Main, Lane::Sub, Lane::Dma];
}

/// One scheduled unit: a chain's Tensor Unit pipeline (its stages stream into each other) or
/// one DMA transfer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Task {
    pub lane: Lane,
    /// Indices into [`KernelCost::ops`].
    pub ops: Vec<usize>,
    pub start: u64,
    pub end: u64,
    /// The task whose end set this task's start (its lane, a producer, or in-order issue).
    pub waits_for: Option<usize>,
    /// Why it waited, when it did.
    pub wait_reason: Option<String>,
    /// Also holds the DMA lane (64-access bank rule, L2909).
    pub holds_dma: bool,
    pub critical: bool,
}

/// A lane's share of the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaneUse {
    pub lane: Lane,
    pub busy: u64,
    /// `busy / total`, in percent.
    pub percent: u64,
}

/// An engine's share of the kernel: the cycles its operations keep it busy (DMA: its
/// transfers' durations), against the total.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EngineUse {
    pub engine: &'static str,
    pub busy: u64,
    /// `busy / total`, in percent.
    pub percent: u64,
}

/// Engines in pipeline order, DMA last.
pub(crate) const ENGINES: [&str; 10] = [
    "Fetch Engine",
    "Switch Engine",
    "Collect Engine",
    "Contraction Engine",
    "Vector Engine",
    "Cast Engine",
    "Transpose Engine",
    "Commit Engine",
    "DMA",
    "PCIe DMA",
];

/// What one function costs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelCost {
    pub name: String,
    pub span: Span,
    pub ops: Vec<OpCost>,
    pub tasks: Vec<Task>,
    pub total_cycles: u64,
    pub lanes: Vec<LaneUse>,
    /// Per engine, in pipeline order (DMA last).
    pub engines: Vec<EngineUse>,
    /// The engine that holds the critical path longest (`None` without operations).
    pub bottleneck: Option<&'static str>,
    /// Every assumption of every operation, once, sorted.
    pub assumptions: Vec<Assumption>,
}

impl KernelCost {
    /// The hints of every operation, largest saving first.
    pub fn hints(&self) -> Vec<(&OpCost, &str, u64)> {
        let mut v: Vec<_> = self
            .ops
            .iter()
            .flat_map(|o| o.hints.iter().map(move |(h, s)| (o, h.as_str(), *s)))
            .collect();
        v.sort_by_key(|h| std::cmp::Reverse(h.2));
        v
    }
}

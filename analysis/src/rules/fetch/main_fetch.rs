//! What FET-003 and FET-011 read of one main-context fetch: its sequencer configuration, the
//! fetch sizes the compiler may choose and the sizes derived with them, for a fetch of a
//! packet of at most one flit that reads less per cycle than the target allows.

use crate::derive::{self, Config, FetchSizes, OpKind};
use crate::model::Tu;
use crate::rules::context::FnContext;

/// A main-context fetch of a packet within one flit whose fetch size is below the largest the
/// target allows.
pub(super) struct MainFetch<'a> {
    pub cfg: &'a Config,
    pub bits: u32,
    /// The fetch sizes the compiler may use.
    pub allowed: Vec<u64>,
    pub sizes: FetchSizes,
    pub fetch: u64,
    /// The fetches batched into one packet.
    pub per: u64,
    pub cycles: u64,
    /// The sequencer's time steps (`Time::SIZE`, less what merged into the packet).
    pub steps: u64,
}

impl<'a> MainFetch<'a> {
    /// The fetch `op`, when it runs on the main context with a derived configuration and a
    /// contiguous innermost entry (a strided one is SEQ-004's), and reads a packet of at most
    /// one flit in fetches smaller than the largest allowed.
    pub(super) fn of(cx: &FnContext<'_>, op: &'a derive::Op<'_>) -> Option<Self> {
        let flit = cx.target.flit_bytes;
        if op.kind != OpKind::Fetch || op.context == Some(Tu::Sub) {
            return None;
        }
        let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
            return None;
        };
        if cfg.entries.last().is_none_or(|e| e.stride > 1) {
            return None; // SEQ-004
        }
        let allowed = choices(cx, op);
        let cap = allowed.iter().copied().max().unwrap_or(flit).min(flit);
        let f = derive::fetch_sizes(cfg, bits, &allowed);
        let (Some(fetch), Some(per), Some(cycles)) = (f.fetch_size, f.fetches_per_packet, f.cycles)
        else {
            return None;
        };
        let steps = derive::time_steps(cfg);
        if f.packet_bytes == 0 || f.packet_bytes > flit || fetch >= cap {
            return None;
        }
        Some(Self {
            cfg,
            bits,
            allowed,
            sizes: f,
            fetch,
            per,
            cycles,
            steps,
        })
    }

    /// FET-011's case: the layout splits the packet, so the adapter batches several fetches.
    pub(super) fn split(&self) -> bool {
        self.per > 1 && self.sizes.contiguous_bytes < self.sizes.packet_bytes
    }

    /// FET-003's case: one fetch per packet while the DM run continues past it.
    pub(super) fn run_continues(&self) -> bool {
        self.per == 1 && self.sizes.contiguous_bytes >= self.sizes.packet_bytes.saturating_mul(2)
    }
}

/// The fetch sizes the compiler may use for a fetch op.
fn choices(cx: &FnContext<'_>, op: &derive::Op<'_>) -> Vec<u64> {
    let from = op.step.input.as_ref().and_then(|t| t.dtype);
    let to = op.step.output.as_ref().and_then(|t| t.dtype);
    derive::fetch_size_choices(cx.target, op.context == Some(Tu::Sub), from, to)
}

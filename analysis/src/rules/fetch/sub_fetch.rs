//! What FET-002 and FET-006 read of one sub-context fetch: the sequencer configuration, the
//! fixed fetch size the sub context reads (8 bytes, 4 for i4 → i32) and the sizes derived
//! with it, for a fetch whose packet or contiguous run that size does not divide.

use crate::derive::{self, Config, FetchSizes, OpKind};
use crate::model::{Dtype, Tu};
use crate::rules::context::FnContext;

/// A sub-context fetch whose fixed fetch size does not divide its packet or contiguous run.
pub(super) struct SubFetch<'a> {
    pub cfg: &'a Config,
    pub bits: u32,
    /// The fetch's output type.
    pub to: Option<Dtype>,
    /// The sub context's fetch size for this fetch, in bytes.
    pub required: u64,
    pub sizes: FetchSizes,
}

impl<'a> SubFetch<'a> {
    /// The fetch `op`, when it runs on the sub context, its configuration derives, and no
    /// fetch of the required size reads it; `None` too for a strided innermost entry, which is
    /// SEQ-004's (discrete access).
    pub(super) fn of(cx: &FnContext<'_>, op: &'a derive::Op<'_>) -> Option<Self> {
        if op.kind != OpKind::Fetch || op.context != Some(Tu::Sub) {
            return None;
        }
        let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
            return None;
        };
        let from = op.step.input.as_ref().and_then(|t| t.dtype);
        let to = op.step.output.as_ref().and_then(|t| t.dtype);
        if bits != 4 && !bits.is_multiple_of(8) {
            return None;
        }
        // `fetch_sizes_sub` is [4, 8]: 4 for i4 -> i32, 8 otherwise (L1758-L1759).
        let subs = cx.target.fetch_sizes_sub.iter().copied();
        let required = if from == Some(Dtype::I4) && to == Some(Dtype::I32) {
            subs.min()
        } else {
            subs.max()
        };
        let required = required?;
        let sizes = derive::fetch_sizes(cfg, bits, &[required]);
        if sizes.fetch_size.is_some() {
            return None;
        }
        // A strided innermost entry is SEQ-004's (discrete access).
        if cfg.packet_size > 1 && cfg.entries.last().is_some_and(|e| e.stride > 1) {
            return None;
        }
        Some(Self {
            cfg,
            bits,
            to,
            required,
            sizes,
        })
    }

    /// Whether the packet is a whole number of the sub context's fetches (FET-002), or not
    /// (FET-006).
    pub(super) fn whole(&self) -> bool {
        self.sizes.packet_bytes.is_multiple_of(self.required)
    }
}

//! What SEQ-003, SEQ-004 and SEQ-005 read of the base packet of one read sequencer: its
//! element width, innermost entry, contiguous run and element type, and whether it is a
//! sub-context fetch.

use crate::derive::{self, Config, Direction, Entry, Op, OpKind};
use crate::model::{Dtype, Tu};

/// The base packet of a read sequencer.
pub(super) struct ReadPacket<'a> {
    pub cfg: &'a Config,
    /// The bits of one element.
    pub bits: u32,
    /// The innermost entry.
    pub last: &'a Entry,
    /// The contiguous elements of the run the sequencer reads.
    pub run: u64,
    pub packet_bits: u64,
    /// The element type read, for messages (empty when unknown).
    pub dtype: &'static str,
    /// Whether the op is a sub-context fetch.
    pub sub: bool,
}

impl<'a> ReadPacket<'a> {
    /// The base packet of `op` under `cfg`, when `op` reads, its element width is known and
    /// its configuration has entries.
    pub(super) fn of(op: &Op<'_>, cfg: &'a Config) -> Option<Self> {
        if op.kind.direction() != Direction::Read {
            return None;
        }
        let bits = op.bits?;
        let last = cfg.entries.last()?;
        let run = derive::contiguous_elements(&cfg.entries);
        let packet_bits = cfg.packet_size.saturating_mul(u64::from(bits));
        let dtype = op
            .step
            .input
            .as_ref()
            .and_then(|t| t.dtype)
            .map_or("", Dtype::as_str);
        let sub = op.context == Some(Tu::Sub) && op.kind == OpKind::Fetch;
        Some(Self {
            cfg,
            bits,
            last,
            run,
            packet_bits,
            dtype,
            sub,
        })
    }

    /// A packet of several elements whose innermost entry is strided: discrete access (SEQ-004).
    pub(super) fn strided(&self) -> bool {
        self.cfg.packet_entries > 0 && self.cfg.packet_size > 1 && self.last.stride > 1
    }
}

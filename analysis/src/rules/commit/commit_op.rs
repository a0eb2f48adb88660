//! What CMT-002, CMT-003, CMT-005 and CMT-009 read of one derived commit sequencer: its
//! configuration and sizes, the element type, the Element as written and the bytes each flit
//! keeps.

use super::element::{dtype, element_arg};
use crate::derive::{self, CommitSizes, Config, Op, OpKind};
use crate::diagnostic::Span;
use crate::model::{Arg, Dtype};
use crate::rules::context::FnContext;

/// A commit whose sequencer derives and whose committed Element is whole 8-byte units.
pub(super) struct CommitOp<'a> {
    pub cfg: &'a Config,
    pub bits: u32,
    pub sizes: CommitSizes,
    /// The element type committed.
    pub d: Option<Dtype>,
    /// The Element mapping as written.
    pub written_el: Option<Arg>,
    /// Where the findings point: the written Element, else the commit.
    pub span: Option<Span>,
    /// The bytes of each flit the commit keeps.
    pub kept: u64,
    /// `commit_in_size`.
    pub cin: u64,
}

impl<'a> CommitOp<'a> {
    /// The commit `op`, when its sequencer and sizes derive, its elements are whole bytes (or
    /// i4) and its Element is a whole number of `unit` bytes (else ALN-007's or CMT-007's).
    pub(super) fn of(op: &'a Op<'_>, unit: u64) -> Option<Self> {
        if op.kind != OpKind::Commit {
            return None;
        }
        let (Ok(cfg), Some(bits), Some(sizes)) = (&op.config, op.bits, op.commit) else {
            return None;
        };
        if bits != 4 && !bits.is_multiple_of(8) {
            return None;
        }
        if !derive::bytes(op.buf.size, bits).is_multiple_of(unit) {
            return None; // ALN-007 / CMT-007
        }
        let d = dtype(op);
        let written_el = element_arg(op.step);
        let span = written_el.as_ref().map(|w| w.span);
        let kept = derive::bytes(cfg.packet_size, bits);
        let cin = sizes.commit_in_size;
        Some(Self {
            cfg,
            bits,
            sizes,
            d,
            written_el,
            span,
            kept,
            cin,
        })
    }
}

/// The Commit Adapter's widths on the main context, and the smallest, the unit a committed
/// Element must be a multiple of.
pub(super) fn widths<'t>(cx: &FnContext<'t>) -> Option<(&'t [u64], u64)> {
    let allowed = cx.target.commit_sizes_main;
    let unit = allowed.iter().copied().min()?;
    Some((allowed, unit))
}

//! SEQ: sequencers (constraints.md §6). Every `fetch` (BeginTensor Packet = the DM Element →
//! Time/Packet), `commit` (Time/Packet → Element) and the Sequencer page's `BufTensor::read` /
//! `write` is derived with [`crate::derive`] (the manual's term-by-term algorithm, L1337-L1627)
//! and checked against the hardware limits.

//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and
//! check. `ops` says who runs an op's sequencer and what its buffer is called, and
//! `read_packet` derives once what the packet rules (SEQ-003, SEQ-004, SEQ-005) read of a
//! read sequencer's base packet. This file only says in which order the rules run and which
//! silence the rest.

mod contiguous_sram_access;
mod incompatible_shapes;
mod indirect_access;
mod insufficient_input;
mod ops;
mod read_packet;
mod sequencer_entry_limit;
mod sequencer_entry_size;
mod sequencer_packet_fetch;
mod sequencer_packet_size;
mod write_stride_zero;
mod write_within_bounds;

pub use contiguous_sram_access::SEQ_005;
pub use incompatible_shapes::SEQ_007;
pub use indirect_access::SEQ_013;
pub use insufficient_input::SEQ_006;
pub use sequencer_entry_limit::SEQ_001;
pub use sequencer_entry_size::SEQ_002;
pub use sequencer_packet_fetch::SEQ_004;
pub use sequencer_packet_size::SEQ_003;
pub use write_stride_zero::SEQ_008;
pub use write_within_bounds::SEQ_009;

use super::context::FnContext;
use crate::derive::{Config, DeriveError, Op};
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;
use read_packet::ReadPacket;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    SEQ_001, SEQ_002, SEQ_003, SEQ_004, SEQ_005, SEQ_006, SEQ_007, SEQ_008, SEQ_009, SEQ_013,
];

/// Every derived sequencer: an op whose derivation fails is SEQ-006 or SEQ-007 and nothing
/// else; one that derives is checked for its entries (SEQ-001, SEQ-002), its read packet
/// (SEQ-003..005), its write bounds (SEQ-009) and its write strides (SEQ-008).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        let cfg = match &op.config {
            Ok(c) => c,
            Err(e @ DeriveError::Insufficient { .. }) => {
                insufficient_input::report(op, e, out);
                continue;
            }
            Err(e @ DeriveError::Incompatible { .. }) => {
                incompatible_shapes::report(op, e, out);
                continue;
            }
            Err(DeriveError::Unsupported(_)) => continue,
        };
        sequencer_entry_limit::check(cx, op, cfg, out);
        sequencer_entry_size::check(cx, op, cfg, out);
        read_packet(cx, op, cfg, out);
        write_within_bounds::check(op, cfg, out);
        write_stride_zero::check(op, cfg, out);
    }
}

/// SEQ-003, SEQ-004, SEQ-005: the base packet of a read sequencer. A sub-byte read is only
/// SEQ-003's, and a strided packet only SEQ-004's.
fn read_packet(cx: &FnContext<'_>, op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    let Some(p) = ReadPacket::of(op, cfg) else {
        return;
    };
    if p.bits < 8 {
        sequencer_packet_size::check(op, &p, out);
        return;
    }
    if p.strided() {
        sequencer_packet_fetch::check(cx, op, &p, out);
        return;
    }
    contiguous_sram_access::check(cx, op, &p, out);
}

//! COL: the Collect Engine, which normalizes packets to 32-byte flits (constraints.md §9).
//!
//! Each rule is one file, named after the rule, holding its declaration, documentation and
//! check. `flits` derives once what the rules of a one-flit collect (COL-002, COL-004) read.
//! This file only says which collect goes to which rule.

mod collect_mandatory;
mod collect_one_flit;
mod collect_padding_waste;
mod collect_time_packet;
mod flits;
mod single_channel_flits;

pub use collect_mandatory::COL_003;
pub use collect_one_flit::COL_001;
pub use collect_padding_waste::COL_004;
pub use collect_time_packet::COL_002;
pub use single_channel_flits::COL_005;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::{Method, Slot, Step, slot_bytes};
use crate::rule::Rule;
use flits::Collected;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[COL_001, COL_002, COL_003, COL_004, COL_005];

/// Each collect: a packet of one flit is checked against what collect derives (COL-004,
/// COL-002), any other is COL-001's.
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for step in chain.steps.iter().filter(|s| s.method == Method::Collect) {
            let Some(ty) = step.output.as_ref() else {
                continue;
            };
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes == flit {
                derived(cx, step, out);
                continue;
            }
            collect_one_flit::check(cx, chain, step, ty, (d, n, bytes), out);
        }
    }
}

/// COL-002 (written Time2/Packet2 against the derivation) and COL-004 (a partial last flit).
fn derived(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(c) = Collected::of(cx, step) else {
        return;
    };
    let flit = cx.target.flit_bytes;
    collect_padding_waste::check(step, &c, flit, out);
    collect_time_packet::check(step, &c, flit, out);
}

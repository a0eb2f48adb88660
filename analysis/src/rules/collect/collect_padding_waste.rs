//! COL-004: a packet over one flit whose last flit is partial is padded with zeros, which
//! wastes flit bandwidth after collect.

use super::flits::Collected;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Slot, Step, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const COL_004: Rule = Rule {
    code: "COL-004",
    name: "collect-padding-waste",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Multi-flit packets that are not multiples of 32 bytes waste a flit on zero padding",
    docs: "Collect pads every packet to the 32-byte flit boundary with zeros (L2122-L2124): a \
           40-byte packet (five batched 8-byte fetches) becomes two flits, 64 bytes with 24 of \
           padding, and every downstream engine processes the padding flit too. visa-lint \
           reports packets over one flit whose last flit is partial, with the wasted share; make \
           the packet a multiple of 32 bytes (move the excess to Time, or pad the axis in DM). \
           Sub-flit packets are padded to one flit in any case (growing them is FET-003's).",
    bad: "axes![B = 40]; .fetch::<i8, m![A], m![B]>().collect::<m![A, B # 64 / 32], m![B # 64 % 32]>()",
    good: "axes![B = 32]; .fetch::<i8, m![A], m![B]>().collect::<m![A], m![B]>()",
    manual: "L2122-L2124, L2128",
    generations: Generations::Both,
};

/// COL-004: a partial last flit.
pub(super) fn check(step: &Step, c: &Collected<'_>, flit: u64, out: &mut Vec<Diagnostic>) {
    let (p, f) = (c.p, &c.f);
    if f.flits > 1 && f.pad_bytes > 0 {
        let total = f.flits.saturating_mul(flit);
        out.push(at_arg(
            &COL_004,
            step,
            output_arg(step, Some(1), Slot::Packet).map(|a| a.span),
            format!(
                "the {}-byte packet `{}` becomes {} flits ({total} bytes) with {} bytes of zero padding: {}% of the flit bandwidth after Collect is wasted. Make the packet a multiple of {flit} bytes",
                f.packet_bytes,
                p.text,
                f.flits,
                f.pad_bytes,
                f.pad_bytes.saturating_mul(100) / total.max(1)
            ),
        ));
    }
}

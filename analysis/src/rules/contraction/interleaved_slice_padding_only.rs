//! CON-017: an Interleaved OutTime may slice the packet the tree left (`m![.., K = 4]`), but
//! only to cut its padding: slicing real positions drops partial sums.

use super::accumulate::Accumulate;
use super::layouts::{at, same_data, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const CON_017: Rule = Rule {
    code: "CON-017",
    name: "interleaved-slice-padding-only",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Interleaved packet slicing (`= n`) should only slice padding",
    docs: "In Interleaved mode only the first m columns of the tree's output reach the \
           accumulator; a user slice `= n` of the surviving packet in OutTime should remove only \
           padded positions, else real partial sums are silently dropped.",
    bad: "..contract::<m![K % 16 / 4]>().accumulate::<m![M, K % 16 / 4 = 2], m![N]>(AccumulationKind::Interleaved)",
    good: "..contract::<m![K % 16 / 4 # 8]>().accumulate::<m![M, K % 16 / 4 # 8 = 4], m![N]>(AccumulationKind::Interleaved)",
    manual: "L4438-L4441",
    generations: Generations::Both,
};

/// The positions an Interleaved OutTime slices the surviving packet to, when it is Time
/// without the reduced axes followed by a slice (`=`) of that packet.
pub(super) fn slice(a: &Accumulate<'_>) -> Option<u64> {
    let (t_kept, q, ot) = (&a.time_kept, a.packet, a.out_time);
    let sliced = text(a.output, Slot::Time).contains('=')
        && t_kept.size > 0
        && ot.size.is_multiple_of(t_kept.size)
        && {
            let k = ot.size / t_kept.size;
            k < q.size && t_kept.pair(&q.window(k)).is_ok_and(|l| same_data(ot, &l))
        };
    sliced.then(|| ot.size / t_kept.size.max(1))
}

/// CON-017 on an Interleaved OutTime that slices the surviving packet to `k` positions.
pub(super) fn check(a: &Accumulate<'_>, k: u64, out: &mut Vec<Diagnostic>) {
    if same_data(&a.packet.window(k), a.packet) {
        return;
    }
    out.push(at_arg(
        &CON_017,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "OutTime {} slices the surviving packet {} to {k} positions; \
             Interleaved slicing should only cut padding, and this drops real \
             partial sums",
            text(a.output, Slot::Time),
            text(a.input, Slot::Packet)
        ),
    ));
}

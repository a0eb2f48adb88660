//! FET-006: the packet is a whole number of fetches, so the sequencer's fetch steps group
//! evenly into packets. Where the fetch size is fixed (the sub context's 8 bytes, 4 for
//! i4 → i32) a packet that is not a multiple of it leaves a fractional batching factor; an
//! output packet that is not 8-byte aligned is ALN-005's instead.

use super::sub_fetch::SubFetch;
use crate::derive;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Method, Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const FET_006: Rule = Rule {
    code: "FET-006",
    name: "time-divisible-by-batching",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet is a whole number of fetches, so the fetch steps group evenly into packets",
    docs: "Batching groups `fetches_per_packet` consecutive fetches into one packet, so the \
           sequencer's fetch steps (Time::SIZE × packet / fetch_size) must divide evenly by the \
           batching factor (L2115). The stream's own Time need not: the manual's fetch_batch_4 \
           has Time::SIZE 4 and batching factor 3 (L2098-L2105), so visa-lint reads the rule as \
           the sequencer's time steps, which fail to group exactly when the packet is not a \
           whole number of fetches. That happens where the fetch size is fixed: the sub context \
           fetches 8 bytes (4 for i4 → i32), so a 12-byte packet is 1.5 fetches. (A fetch \
           output packet that is not 8-byte aligned is ALN-005's; a run the fetch size does not \
           divide is FET-002's.) Pad the packet to a multiple of the fetch size, or fetch on \
           ctx.main.",
    bad: "// a: DmTensor<i8, .., m![B, A]>, A = 12\nctx.sub.begin(a.view()).fetch_with_zero_point(3) // i8 -> i32, 12-byte packets",
    good: "// A = 16: 16-byte packets, two 8-byte fetches each",
    manual: "L2115-L2116, L2098-L2105",
    generations: Generations::Both,
};

/// FET-006 on a sub-context fetch whose packet is not a whole number of its fetches, when the
/// output packet is aligned (else ALN-005 reports it).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    sub: &SubFetch<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (cfg, bits, to, required, sizes) = (sub.cfg, sub.bits, sub.to, sub.required, &sub.sizes);
    let out_bits = to.map_or(bits, Dtype::bits);
    let out_bytes = derive::bytes(op.packet.size, out_bits);
    if !out_bytes.is_multiple_of(cx.target.fetch_align_bytes) {
        return;
    }
    let steps = derive::time_steps(cfg);
    // The packet the fix pads, where it is written.
    let at = output_arg(
        op.step,
        (op.step.method == Method::Fetch).then_some(2),
        Slot::Packet,
    );
    out.push(at_arg(
        &FET_006,
        op.step,
        at.map(|a| a.span),
        format!(
            "the {}-byte packet is {} of the sub context's {required}-byte fetches: the batching factor (fetches_per_packet) is not whole, so the sequencer's fetch steps (Time::SIZE {steps} × {} / {required} = {}) cannot be grouped into packets (sequencer {cfg}); pad the packet to a multiple of {required} bytes or fetch on ctx.main",
            sizes.packet_bytes,
            fraction(sizes.packet_bytes, required),
            sizes.packet_bytes,
            fraction(steps.saturating_mul(sizes.packet_bytes), required),
        ),
    ));
}

/// `a / b` as a decimal with at most two places (`1.5`).
fn fraction(a: u64, b: u64) -> String {
    if b == 0 {
        return "?".into();
    }
    if a.is_multiple_of(b) {
        return (a / b).to_string();
    }
    let hundredths = u128::from(a) * 100 / u128::from(b);
    let s = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    s.trim_end_matches('0').to_string()
}

//! ALN-005: `fetch` asserts that its output packet (in the FetchTensor's type) is a multiple of
//! the fetch sequencer's 8-byte read granularity. i4 packs two elements per byte, so 8 × i4
//! is 4 bytes and reported. The fix pads the packet wherever the function writes it.

use super::addresses::round_up;
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Generation;
use crate::model::{Chain, Dtype, Method, Slot, Step, output_arg, slot_bytes};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, pad_output};

pub const ALN_005: Rule = Rule {
    code: "ALN-005",
    name: "fetch-packet-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The fetch output packet is a multiple of 8 bytes",
    docs: "`fetch` asserts \"Fetch output packet must be 8-byte aligned\": the packet of the \
           FetchTensor (in the output type D2) must be a multiple of the fetch sequencer's 8-byte \
           read granularity. Pad the packet (`m![C]` → `m![C # 8]` for f8); padding to a full \
           32-byte flit is better still (ALN-011). i4 packs two elements per byte \
           (constraints.md §22 A-3), so the manual's 8 × i4 packets are 4 bytes and reported.",
    bad: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C]>()",
    good: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C # 8]>()",
    manual: "L1711-L1716, L1723, L7657-L7658",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `fetch` no longer asserts it, since `fetch_cast` may widen a packet \
         into alignment; the Switch and Collect inputs assert it on the widened packet instead \
         (`furiosa-opt-std/src/engine/fetch.rs:37-42, 91-94`, `engine/switch.rs:40-44`). visa-lint \
         folds `fetch_cast` into the fetch, so it checks that same widened packet where a `switch` \
         reads it; a Collect pads any packet to a flit (`furiosa-opt-lower/src/verify/engine/\
         collect.rs:91-111`), so a fetch that feeds one is not checked",
    ),
};

/// ALN-005: the fetch output packet is a multiple of 8 bytes. True when it reported.
pub(super) fn check(
    cx: &FnContext<'_>,
    chain: &Chain,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(ty) = step.output.as_ref() else {
        return false;
    };
    if cx.model.library == Generation::OptStd && !feeds_a_switch(chain, step) {
        return false;
    }
    let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
        return false;
    };
    let a = cx.target.fetch_align_bytes;
    if bytes.is_multiple_of(a) {
        return false;
    }
    let generic = (step.method == Method::Fetch).then_some(2);
    let at = output_arg(step, generic, Slot::Packet);
    let mut diag = at_arg(
        &ALN_005,
        step,
        at.map(|a| a.span),
        format!(
            "Fetch output packet must be {a}-byte aligned, got {bytes} bytes ({n} × {d}{})",
            if d == Dtype::I4 {
                ", two i4 per byte"
            } else {
                ""
            }
        ),
    );
    // Padding changes the FetchTensor's type, which the steps after it may spell out: unsafe.
    let target_bytes = round_up(bytes, a).unwrap_or(a);
    if let Some(edits) = d
        .elems_for(target_bytes)
        .and_then(|m| pad_output(cx.scope, chain, step, generic, Slot::Packet, m))
    {
        diag = diag.with_fix(
            format!("pad the packet to {target_bytes} bytes"),
            false,
            edits,
        );
    }
    out.push(diag);
    true
}

/// Whether the stream `step` makes goes straight to a `switch` (furiosa-opt-std asserts the
/// packet's alignment at the Switch input, `engine/switch.rs:40-44`).
fn feeds_a_switch(chain: &Chain, step: &Step) -> bool {
    let at = chain.steps.iter().position(|s| std::ptr::eq(s, step));
    at.and_then(|k| chain.steps.get(k + 1))
        .is_some_and(|next| next.method == Method::Switch)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fetch_packet_fix_pads_where_the_packet_is_written() {
        use crate::rules::fix_testing::assert_fix_clears;
        // The packet written in the function's return type (L1816-L1840) and in the fetch's
        // turbofish; f8 m![C] -> m![C # 8], i4 m![W] -> m![W # 16].
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/manual/1816_fetch_padding_packets.rs"),
            "ALN-005",
        );
        assert!(fixed.contains("m![A, B], m![C # 8]>"), "{fixed}");
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/manual/2061_fetch_batching.rs"),
            "ALN-005",
        );
        assert!(fixed.contains("m![N, C, H], m![W # 16]>"), "{fixed}");
        assert_fix_clears(
            include_str!("../../../../fixtures/rules/ALN-005.rs"),
            "ALN-005",
        );
    }

    /// furiosa-opt-std 0.6 asserts a packet's alignment where a `switch` reads it; a collect
    /// pads any packet to a flit, so a 6-byte fetch feeding one is legal
    /// (`furiosa-opt-std/src/engine/fetch.rs:37-42`, `engine/switch.rs:40-44`).
    #[test]
    fn under_opt_std_only_a_switch_input_is_checked() {
        let kernel = |switch: &str| {
            format!(
                "use furiosa_opt_std::prelude::*;\naxes![A = 8, E = 6, C = 256];\n\
                 #[device(chip = 1)]\n\
                 pub fn k(ctx: &mut Context, x: &DmTensor<i8, m![1], m![1 # 2], m![C], m![A, E]>) {{\n\
                 let _t = ctx.main.begin(x.view()).fetch::<m![A], m![E]>(){switch};\n}}\n"
            )
        };
        let aln = |text: &str| {
            crate::check_text(text)
                .into_iter()
                .filter(|d| d.code() == "ALN-005")
                .count()
        };
        assert_eq!(aln(&kernel(".collect::<m![A], m![E # 32]>()")), 0);
        let switched = ".switch::<m![C], m![A]>(SwitchConfig::InterTranspose { slice1: 1, slice0: 1, time0: 1 })";
        assert_eq!(aln(&kernel(switched)), 1);
    }
}

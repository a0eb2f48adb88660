//! COL-001: the collect output packet is exactly one flit. A smaller packet is padded to a
//! flit; a larger one keeps one flit in the packet and moves the outer flits into Time, which
//! the fixes write where the mappings are written.

use crate::derive::collect::normalize;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::{Chain, Dtype, Slot, Step, TensorTy, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, pad_output, rewrite_output};

pub const COL_001: Rule = Rule {
    code: "COL-001",
    name: "collect-one-flit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The collect output packet is exactly one 32-byte flit",
    docs: "Collect pads a smaller packet to the 32-byte flit and splits a larger one at the flit \
           boundary, moving the outer flit count into Time; every engine downstream consumes \
           exactly one flit per step. So the Packet of `.collect::<Time2, Packet2>()` is 32 bytes: \
           pad a small packet (`m![B # 32]` for 16 × i8) or split a large one (`m![B % 16]` with \
           `B / 16` added to Time, for 32 × bf16). A small Packet2 out of an input packet of \
           several flits is not padded: collect splits the input, so Packet2 is its inner flit \
           and Time2 gains the flit count (COL-002's derivation). The manual's GEMV collects a \
           64-byte packet (constraints.md §22 A-12).",
    bad: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B]>()",
    good: "axes![B = 16]; ...fetch::<i8, m![A], m![B]>().collect::<m![A], m![B # 32]>()",
    manual: "L3039, L3544, L3549, L3561-L3564",
    generations: Generations::Both,
};

/// COL-001 on a collect whose output packet `ty` is `bytes` (`n` × `d`), not one flit.
pub(super) fn check(
    cx: &FnContext<'_>,
    chain: &Chain,
    step: &Step,
    ty: &TensorTy,
    (d, n, bytes): (Dtype, u64, u64),
    out: &mut Vec<Diagnostic>,
) {
    let flit = cx.target.flit_bytes;
    let span = output_arg(step, Some(1), Slot::Packet).map(|a| a.span);
    let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
    let split = split_fix(cx, chain, step);
    // A small packet out of an input packet of several flits is not padded: collect splits
    // the input at the flit boundary, so the packet is the inner flit and Time gains the rest.
    let input_flits = split.as_ref().map_or(1, |(_, flits)| *flits);
    let per = d.elems_for(flit);
    let per_or = |otherwise: &str| per.map_or_else(|| otherwise.to_string(), |m| m.to_string());
    let what = if bytes >= flit {
        format!(
            "keep {} elements in the packet and move the {} outer flits into Time",
            per_or("one flit of"),
            bytes.div_ceil(flit)
        )
    } else if input_flits > 1 {
        format!(
            "collect splits its input packet into {input_flits} flits, so the packet is the \
             inner flit ({} elements) and the flit count is the innermost Time factor",
            per_or("one flit"),
        )
    } else {
        format!("pad it to {} elements", per_or("a full flit of"))
    };
    let message = format!(
        "the collect output packet {text} is {bytes} bytes ({n} × {d}); it must be exactly one \
         {flit}-byte flit: {what}"
    );
    let mut diag = at_arg(&COL_001, step, span, message);
    if bytes < flit && input_flits <= 1 {
        if let Some(edits) =
            per.and_then(|m| pad_output(cx.scope, chain, step, Some(1), Slot::Packet, m))
        {
            diag = diag.with_fix(format!("pad the packet to {flit} bytes"), false, edits);
        }
    } else if let Some((edits, flits)) = split {
        let title = if flits > 1 {
            format!("keep one {flit}-byte flit in the packet, the outer flits in Time")
        } else {
            format!("collect the one {flit}-byte flit the input holds, unpadded")
        };
        diag = diag.with_fix(title, false, edits);
    }
    out.push(diag);
}

/// COL-001's fix of a packet over one flit: Time2 and Packet2 rewritten, where they are
/// written, to what collect derives from its input (the inner flit in the packet, the outer flit count as the
/// innermost Time factor), with the number of flits the input holds. Unsafe: every later step
/// sees the new shape.
fn split_fix(cx: &FnContext<'_>, chain: &Chain, step: &Step) -> Option<(Vec<Edit>, u64)> {
    let (inp, outp) = (step.input.as_ref()?, step.output.as_ref()?);
    let bits = inp.dtype.or(outp.dtype)?.bits();
    let time = inp.get(Slot::Time)?.layout.as_deref()?;
    let packet = inp.get(Slot::Packet)?.layout.as_deref()?;
    // One flit of input padded past it (`m![D % 8 # 16]` of f32) is rewritten the same way:
    // to the flit the input holds.
    let f = normalize(time, packet, bits, cx.target.flit_bytes)?;
    let mut edits = Vec::new();
    for (k, slot, want) in [(0, Slot::Time, &f.time2), (1, Slot::Packet, &f.packet2)] {
        if outp.get(slot)?.layout.as_deref() == Some(want) {
            continue;
        }
        let text = format!("m![{}]", want.to_expr());
        edits.extend(rewrite_output(chain, step, Some(k), slot, &text)?);
    }
    (!edits.is_empty()).then_some((edits, f.flits))
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::assert_fix_clears;

    #[test]
    fn small_packet_fix_pads_the_annotation() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/COL-001-annotation.rs"),
            "COL-001",
        );
        assert!(fixed.contains("m![1], m![A % 16 # 32]> ="), "{fixed}");
        assert_fix_clears(
            include_str!("../../../../fixtures/rules/COL-001.rs"),
            "COL-001",
        );
    }

    /// The manual's GEMV collects `Packet = m![J % 32]` (64 bytes of bf16, L456): the aliases
    /// in the collect's turbofish are replaced there (only) by the derived flit split, as
    /// constraints.md's COL-001 sketch has it; the `align` after it keeps its own `Time,
    /// Packet` (`m![J / 32], m![J % 32]`), which packs two flits again.
    #[test]
    fn large_packet_fix_replaces_aliases_at_the_collect() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/manual/0401_gemv.rs"),
            "COL-001",
        );
        assert!(
            fixed.contains(".collect::<m![J / 16], m![J % 16]>()"),
            "{fixed}"
        );
        assert!(
            fixed.contains(".align::<Time, Packet, _, _>(&vector_trf)"),
            "{fixed}"
        );
    }

    /// A 16-byte packet out of a 512-byte input packet (L3561-L3564): the derived split, not
    /// a padding, written where `ValueGeom` defines both associated mappings.
    #[test]
    fn small_packet_out_of_a_split_input_takes_the_inner_flit() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/COL-001-input-splits-small-packet.rs"),
            "COL-001",
        );
        assert!(
            fixed.contains("type CollectTime = m![D, S / 16];"),
            "{fixed}"
        );
        assert!(fixed.contains("type Flit = m![S % 16];"), "{fixed}");
        assert!(fixed.contains("type Flit = m![D % 16];"), "{fixed}");
    }

    #[test]
    fn large_packet_fix_moves_the_outer_flits_into_time() {
        // L3124-L3135: 32 x f32 = 4 flits; Time2 m![B, C / 8], Packet2 m![C % 8] (L3563-L3564).
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/manual/3124_switch_forwarding.rs"),
            "COL-001",
        );
        assert!(
            fixed.contains("m![A], m![B, C / 8], m![C % 8]> {"),
            "{fixed}"
        );
    }
}

//! FET-002: the sub context fetches a fixed 8 bytes (4 for i4 → i32), which must divide both
//! the packet and the contiguous DM run the sequencer reads. When the packet is a whole
//! number of fetches but its axes lie apart in DM, the fix stores the packet's axes innermost.

use super::sub_fetch::SubFetch;
use crate::derive;
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::edit::top_terms;
use crate::mapping::lower::layout_of;
use crate::model::{Method, Slot, input_arg, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, rewrite_input};

pub const FET_002: Rule = Rule {
    code: "FET-002",
    name: "fetch-size-per-context",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "fetch_size is 1, 2, 4, 8, 16 or 32 bytes (main); 8, or 4 for i4 → i32 (sub)",
    docs: "The main context fetches 1, 2, 4, 8, 16 or 32 bytes at a time; the sub context only \
           8 bytes (4 when casting i4 to i32, so one fetch yields one 32-byte flit). The fetch \
           size must divide both the packet and the contiguous DM run the sequencer reads \
           (L1761), so in `ctx.sub` gcd(packet bytes, contiguous bytes) must be a multiple of 8 \
           (4). visa-lint derives both from the BeginTensor's Element and the fetch's Time and \
           Packet (crate::derive). Store the packet's axes innermost in DM (visa-lint offers \
           this as a fix when the packet is whole fetches: `m![B, C, A]` → `m![C, B, A]` for a \
           packet `m![B, A]`), pad the packet and the DM layout to a multiple of 8 bytes, or \
           run the fetch on `ctx.main`. A strided packet axis is SEQ-004's; a packet that is not a whole number of fetches is FET-006's.",
    bad: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![C], m![B, A]>() // 4-byte runs",
    good: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![B], m![C, A]>() // 16-byte runs",
    manual: "L1757-L1759, L2018-L2021",
    generations: Generations::Both,
};

/// FET-002 on a sub-context fetch whose packet is a whole number of its fetches but whose
/// contiguous run the fetch size does not divide.
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    sub: &SubFetch<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (cfg, required, sizes) = (sub.cfg, sub.required, &sub.sizes);
    let at = output_arg(
        op.step,
        (op.step.method == Method::Fetch).then_some(2),
        Slot::Packet,
    );
    let fix = packet_innermost(cx, op, required);
    let at = fix
        .as_ref()
        .and_then(|(e, _)| e.first())
        .map(|e| e.span)
        .or(at.map(|a| a.span));
    let diag = at_arg(
        &FET_002,
        op.step,
        at,
        format!(
            "a sub-context fetch reads {required} bytes at a time, which must divide the {}-byte \
             packet and the {}-byte contiguous DM run (sequencer {cfg}); store the packet's \
             axes innermost in DM, pad both to a multiple of {required} bytes, or fetch on \
             ctx.main",
            sizes.packet_bytes, sizes.contiguous_bytes
        ),
    );
    out.push(match fix {
        Some((edits, new)) => diag.with_fix(
            format!("store the packet's axes innermost in DM: {new}"),
            false,
            edits,
        ),
        None => diag,
    });
}

/// FET-002's fix when the packet is a whole number of fetches but its axes lie apart in DM:
/// the DM Element, where it is written, with the packet's terms moved innermost in the
/// packet's order (`m![B, C, A]`, packet `m![B, A]` → `m![C, B, A]`), so that the packet is
/// one contiguous run; offered when the fetch derived over it reads `required` bytes at a
/// time. Its edits and the new mapping.
fn packet_innermost(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    required: u64,
) -> Option<(Vec<Edit>, String)> {
    let buf = input_arg(op.step, Slot::Packet)?;
    let packet = op.step.output.as_ref()?.get(Slot::Packet)?;
    let packet: Vec<&str> = top_terms(&packet.text).into_iter().map(|t| t.1).collect();
    let stored: Vec<&str> = top_terms(&buf.text).into_iter().map(|t| t.1).collect();
    if packet.is_empty() || !packet.iter().all(|t| stored.contains(t)) {
        return None;
    }
    let outer = stored.iter().filter(|t| !packet.contains(t));
    let terms: Vec<&str> = outer.chain(&packet).copied().collect();
    let new = format!("m![{}]", terms.join(", "));
    let moved = op.over(layout_of(&new, cx.scope)?, cx.target);
    let (Ok(cfg), Some(bits)) = (&moved.config, moved.bits) else {
        return None;
    };
    derive::fetch_sizes(cfg, bits, &[required]).fetch_size?;
    Some((rewrite_input(cx.model, op.step, Slot::Packet, &new)?, new))
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::assert_fix_clears;

    /// FET-002's fix stores the packet's axes innermost in DM: `m![B, C, A]` with packet
    /// `m![B, A]` becomes `m![C, B, A]`, one 8-byte run the sub context fetches at once
    /// (L1758-L1761).
    #[test]
    fn sub_fetch_fix_stores_the_packet_innermost() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/FET-002.rs"),
            "FET-002",
        );
        assert!(
            fixed.contains("a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![C, B, A]>"),
            "{fixed}"
        );
        assert!(fixed.contains(".fetch::<i8, m![C], m![B, A]>()"), "{fixed}");
    }
}

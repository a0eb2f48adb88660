//! CON-004: every cycle each Reducer Row consumes one 64-byte computation packet (mac_width),
//! so `.align()`'s OutPacket is 64 bytes; one collected flit is zero padded to it.

use super::align::Align;
use super::layouts::pad_where_written;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_004: Rule = Rule {
    code: "CON-004",
    name: "computation-packet-64-bytes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The computation packet (align's OutPacket) is always 64 bytes (mac_width)",
    docs: "Every cycle each Reducer Row consumes exactly mac_width = 64 bytes. With \
           collect_flits = 1 the 32-byte flit is zero padded to 64 bytes (`m![K # 32]` for 16 \
           bf16); with collect_flits = 2 the innermost Time factor of size 2 joins the packet \
           (`m![L, K]`). Collections beyond the 96-byte Flit Buffer are CON-018's; packets that \
           are 64 bytes but not collected from the innermost Time factor are CON-005's.",
    bad: "axes![K = 16]; input.align::<m![M], m![K], _, _>(&trf) // 32 bytes of bf16",
    good: "axes![K = 16]; input.align::<m![M], m![K # 32], _, _>(&trf)",
    manual: "L3921, L3952, L4099",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `contract_outer` also takes an OutPacket of one 32-byte flit and \
         pads it to the 64-byte computation packet itself \
         (`furiosa-opt-lower/src/verify/engine/contraction/outer/stream_adapter.rs:13-15, 46`)",
    ),
};

/// furiosa-opt-std 0.6's `contract_outer` takes an OutPacket of one flit as well as two: the
/// Stream Adapter pads one flit to the 64-byte computation packet itself (its published
/// verifier, `furiosa-opt-lower/src/verify/engine/contraction/stream_adapter.rs` at ebb846a;
/// `library-v06.md` §4 R15).
fn one_flit_in_opt_std(cx: &FnContext<'_>, op_bytes: u64) -> bool {
    cx.model.library == crate::library::Generation::OptStd && op_bytes == cx.target.flit_bytes
}

/// Whether the `.align()`'s OutPacket is a computation packet's size.
pub(super) fn holds(cx: &FnContext<'_>, a: &Align<'_>) -> bool {
    a.out_packet_bytes == cx.target.mac_width_bytes || one_flit_in_opt_std(cx, a.out_packet_bytes)
}

/// CON-004 on an OutPacket of another size, with the padding that makes one collected flit
/// a packet.
pub(super) fn report(cx: &FnContext<'_>, a: &Align<'_>, out: &mut Vec<Diagnostic>) {
    let (d, op_bytes, c, step) = (a.d, a.out_packet_bytes, a.flits, a.step);
    let mac = cx.target.mac_width_bytes;
    let (op_span, op_text) = a.out_packet_at();
    let mut diag = at_arg(
        &CON_004,
        step,
        op_span,
        format!(
            "OutPacket {op_text} is {op_bytes} bytes ({} × {d}); the computation packet is \
             always {mac} bytes (mac_width): {}",
            a.out_packet.size,
            match (c, d.elems_for(mac)) {
                (Some(1), Some(n)) if op_bytes < mac =>
                    format!("zero-pad it to {n} elements (collect_flits = 1)"),
                (_, Some(n)) => format!("make it {n} elements of {d}"),
                _ => format!("make it {mac} bytes"),
            }
        ),
    );
    if c == Some(1)
        && op_bytes < mac
        && let Some(edit) = d
            .elems_for(mac)
            .and_then(|n| pad_where_written(cx.scope, step, (1, Slot::Packet), n))
    {
        diag = diag.with_fix(format!("pad OutPacket to {mac} bytes"), false, vec![edit]);
    }
    out.push(diag);
}

#[cfg(test)]
mod tests {
    /// An OutPacket written only in the `let` annotation is padded there.
    #[test]
    fn packet_fix_pads_the_let_annotation() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/CON-004-let-annotation.rs"),
            "CON-004",
        );
        assert!(fixed.contains("m![N], m![M], m![K # 32]> =\n//"), "{fixed}");
    }
}

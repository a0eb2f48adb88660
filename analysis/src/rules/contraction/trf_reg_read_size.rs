//! CON-009: reg_read_size, the contiguous TRF read the sequencer repeats to fill the 64-byte
//! packet, is a power of two bytes (1 to 64); the fix pads the Element's innermost factor.

use super::align::{Align, TrfSide};
use super::layouts::text;
use crate::derive::trf::{TrfRead, reg_read_size};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Arg, Slot, pad_edit};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_009: Rule = Rule {
    code: "CON-009",
    name: "trf-reg-read-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "reg_read_size, the contiguous TRF read per cycle, is 1, 2, 4, 8, 16, 32 or 64 bytes",
    docs: "The compiler derives reg_read_size from the innermost part common to the TRF Element \
           and the computation packet (within 64 bytes); the rest of mac_width is filled by \
           repeating it. It must be a power of two: a 24-element bf16 Element read against \
           `m![K # 32]` gives 48 bytes. Pad the Element's innermost factor to a power of two \
           (`m![K # 32]`). (The 64-byte alignment that a 64-byte read needs is ALN-009.)",
    bad: "axes![K = 24]; trf: &TrfTensor<bf16, .., m![N], m![K]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    good: "axes![K = 24]; trf: &TrfTensor<bf16, .., m![N], m![K # 32]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L4099-L4108",
    generations: Generations::Both,
};

/// CON-009 on the TRF read `read` of an `.align()`: its reg_read_size in bytes, when it is one.
pub(super) fn check(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    read: &TrfRead,
    out: &mut Vec<Diagnostic>,
) -> Option<u64> {
    let (d, mac, var) = (a.d, cx.target.mac_width_bytes, side.var);
    let bytes = match reg_read_size(read, d, mac)? {
        Ok(reg) => return Some(reg),
        Err(bytes) => bytes,
    };
    let (_, op_text) = a.out_packet_at();
    let e_text = text(&var.ty, Slot::Element);
    let want = bytes.checked_next_power_of_two().unwrap_or(mac);
    let mut diag = at_arg(
        &CON_009,
        a.step,
        var.ty.get(Slot::Element).and_then(|mv| mv.span),
        format!(
            "reg_read_size, the contiguous TRF read common to the Element {e_text} \
             and OutPacket {op_text}, is {} × {d} = {bytes} bytes; it must be 1, 2, \
             4, 8, 16, 32 or 64 bytes: pad the Element's innermost factor to {want} \
             bytes",
            read.elems
        ),
    );
    if let (Some(mv), Some(n)) = (var.ty.get(Slot::Element), d.elems_for(want))
        && side.element.dims.len() == 1
        && let Some(span) = mv.span
        && let Some(edit) = pad_edit(cx.scope, &Arg::mapping(mv, span), n)
    {
        diag = diag.with_fix("pad the TRF Element", false, vec![edit]);
    }
    out.push(diag);
    None
}

#[cfg(test)]
mod tests {
    use super::super::tests::lay;
    use crate::derive::trf;
    use crate::model::Dtype;
    use crate::target::RNGD;

    fn reg(axes: &str, packet: &str, element: &str, d: &str) -> Option<Result<u64, u64>> {
        let read = trf::read(&lay(axes, packet), &lay(axes, element))?;
        assert_eq!(read.stray, None);
        trf::reg_read_size(&read, Dtype::from_name(d)?, RNGD.mac_width_bytes)
    }

    #[test]
    fn reg_read_size_golden() {
        // L4234-L4235: Element [K = 32] against Packet [K]: 64 bytes, no broadcast.
        assert_eq!(reg("M = 32, N = 8, K = 32", "K", "K", "bf16"), Some(Ok(64)));
        // L4281-L4282: Element [O, K = 16] against Packet [L, K]: 32 bytes, broadcast twice.
        assert_eq!(
            reg(
                "M = 32, N = 8, K = 16, L = 2, O = 2",
                "L, K",
                "O, K",
                "bf16"
            ),
            Some(Ok(32))
        );
        // L3855-L3857: Element [O, M, K] against Packet [L, K]: 32 bytes.
        assert_eq!(
            reg(
                "M = 32, N = 8, K = 16, L = 2, O = 2",
                "L, K",
                "O, M, K",
                "bf16"
            ),
            Some(Ok(32))
        );
        // L3998-L4001: Packet [K = 16 # 32] against Element [K]: the 32 data bytes.
        assert_eq!(reg("K = 16", "K # 32", "K", "bf16"), Some(Ok(32)));
        // A 24-byte run is no power of two (L4104); padded to 32 it is.
        assert_eq!(reg("K = 24", "K # 64", "K", "i8"), Some(Err(24)));
        assert_eq!(reg("K = 24", "K # 64", "K # 32", "i8"), Some(Ok(32)));
    }
}

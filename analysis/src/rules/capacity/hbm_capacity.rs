//! CAP-008: a tensor stored in HBM fits a chip's 48 GB, and its constant address leaves room
//! for it.

use super::footprint::{self, Capacity};
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Placement, Slot};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_008: Rule = Rule {
    code: "CAP-008",
    name: "hbm-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An HbmTensor's Element fits the chip's 48 GB of HBM, from its address on",
    docs: "A chip has 48 GB of HBM (2 stacks × 16 channels × 3 slices × 4 bank groups × 4 banks \
           × 16K rows × 2 KB = 48 × 2^30 bytes) in one contiguous address space. The Element of \
           every HbmTensor type must fit, and `to_hbm(.., addr)` with a constant address must \
           end inside it.",
    bad: "host.to_hbm(&mut ctx.pdma, 48 << 30)",
    good: "host.to_hbm(&mut ctx.pdma, 0x1000)",
    manual: "L137, L2949-L2960, L2976",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no HBM addresses (CHANGES.md:26-32), so only the Element's size \
         is checked there",
    ),
};

/// How CAP-008 words the chip's HBM.
fn hbm(cx: &FnContext<'_>) -> Capacity {
    Capacity {
        rule: &CAP_008,
        bytes: cx.target.hbm_bytes_per_chip,
        unit: "chip",
        space: "of HBM",
        advice: "distribute it over more chips",
        mode: "",
        combined: "",
    }
}

/// CAP-008 on the stored tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    footprint::check(cx, s, &hbm(cx), out);
}

/// CAP-008 on a tensor a constructor placed (`HbmTensor::from_addr(KV.v_slot(0, 17))`): it ends
/// within the chip's HBM from that address. A tensor larger than the chip is its type's own
/// finding, wherever it is stored.
pub(super) fn check_placement(cx: &FnContext<'_>, p: &Placement, out: &mut Vec<Diagnostic>) {
    let (Kind::Hbm, Some(dtype)) = (p.ty.kind, p.ty.dtype) else {
        return;
    };
    let Some(elements) = p.ty.get(Slot::Element).and_then(|m| m.layout.as_deref()) else {
        return;
    };
    let elements = elements.size;
    let bytes = crate::derive::bytes(elements, dtype.memory_bits());
    let c = hbm(cx);
    if bytes > c.bytes {
        return;
    }
    let amount = format!("{elements} × {dtype} = {}", footprint::human(bytes));
    let what = "the HbmTensor";
    out.extend(footprint::ends_past(
        &c,
        what,
        &amount,
        (p.address, bytes),
        p.arg.span,
    ));
}

#[cfg(test)]
mod tests {
    use crate::target::RNGD;

    #[test]
    fn l137_l2949_hbm_is_48_gb() {
        // 2 stacks × 16 channels × 3 slices × 4 bank groups × 4 banks × 16K rows × 2K bytes.
        assert_eq!(RNGD.hbm_bytes_per_chip, 2 * 16 * 3 * 4 * 4 * 16384 * 2048);
        assert_eq!(RNGD.hbm_bytes_per_chip, 48 << 30);
    }
}

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

/// CAP-008 on the stored tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let c = Capacity {
        rule: &CAP_008,
        bytes: cx.target.hbm_bytes_per_chip,
        unit: "chip",
        space: "of HBM",
        advice: "distribute it over more chips",
        mode: "",
        combined: "",
    };
    footprint::check(cx, s, &c, out);
}

/// CAP-008 on a tensor a constructor placed (`HbmTensor::from_addr(KV.v_slot(0, 17))`): it ends
/// within the chip's HBM from that address.
pub(super) fn check_placement(cx: &FnContext<'_>, p: &Placement, out: &mut Vec<Diagnostic>) {
    let (Kind::Hbm, Some(dtype)) = (p.ty.kind, p.ty.dtype) else {
        return;
    };
    let Some(element) = p.ty.get(Slot::Element) else {
        return;
    };
    let Some(elements) = element.layout.as_deref().map(|l| l.size) else {
        return;
    };
    let bytes = crate::derive::bytes(elements, dtype.bits());
    let cap = cx.target.hbm_bytes_per_chip;
    let end = p.address.checked_add(bytes);
    if end.is_some_and(|e| e <= cap) || bytes > cap {
        // A tensor larger than the chip is the type's own finding, wherever it is stored.
        return;
    }
    let end = end.map_or_else(|| "2^64 and beyond".to_string(), |e| format!("{e:#x}"));
    out.push(Diagnostic::new(
        &CAP_008,
        p.arg.span,
        format!(
            "the HbmTensor placed at {:#x} occupies {:#x}..{end} ({elements} × {dtype} = {}), \
             past the {} of HBM per chip; the last address that fits is {:#x}",
            p.address,
            p.address,
            footprint::human(bytes),
            footprint::human(cap),
            cap - bytes
        ),
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

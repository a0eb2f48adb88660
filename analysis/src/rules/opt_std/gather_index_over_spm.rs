//! OPT-004: `dma_gather_unscaled` reads its index list from one processing element's SPM, so
//! the list (every entry of the index tensor, its padding and broadcasts left out) must fit
//! in it.

use super::super::context::FnContext;
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::{Dim, Layout};
use crate::model::{Kind, Slot, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};

pub const OPT_004: Rule = Rule {
    code: "OPT-004",
    name: "gather-index-over-spm",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An unscaled gather's index list fits one processing element's 4 KiB SPM (furiosa-opt-std)",
    docs: "`dma_gather_unscaled` reads its index of raw row positions from the scratchpad (SPM) \
           of one processing element, which holds 4 KiB: furiosa-opt-std 0.6 refuses a gather \
           whose index list is larger (the vendor's `negative/scatter_gather.rs` at ebb846a, \
           where 2048 i32 entries, 8 KiB, are refused). The list is every entry of the index \
           tensor (its padding and broadcasts left out). Split the index into chunks of at most \
           4 KiB with a tile loop, each gathered on its own, or scale the index on the chip \
           and use `dma_gather_scaled`, which reads it from DRAM.",
    bad: "let idx: DmTensor<i32, m![1], m![1 # 2], m![R, I / 8], m![I % 8]> = ..; // R × I = 2048 entries\nlet v = table.dma_gather_unscaled(&idx);",
    good: "for c in 0..4 { let chunk = idx_hbm.view().tile::<m![I / 32], 1, ..>(c).to_dm(..); table.dma_gather_unscaled(&chunk); }",
    manual: "",
    generations: Generations::OptStdOnly(
        "`dma_gather_unscaled` exists only there (`furiosa-opt-std/src/tensor/memory.rs:380-406`; \
         `furiosa-opt-examples/src/negative/scatter_gather.rs:10-20`); the manual has no gather",
    ),
};

/// OPT-004: the index list of `dma_gather_unscaled(&index)` against one PE's SPM.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(arg), Some(index)) = (step.args.first(), cx.model.first_arg_tensor(step, Kind::Dm))
    else {
        return;
    };
    let Some(dtype) = index.ty.dtype else { return };
    let Some(n) = entries(&index.ty) else { return };
    let Some(bytes) = dtype.size_bytes(n) else {
        return;
    };
    let spm = cx.target.spm_bytes_per_pe;
    if bytes <= spm {
        return;
    }
    // Every type whose size is known has a whole number of entries in 4 KiB.
    let fit = dtype.elems_for(spm);
    out.push(
        Diagnostic::new(
            &OPT_004,
            arg.span,
            format!(
                "the index list of `dma_gather_unscaled` is {bytes} bytes ({n} {dtype} entries), \
                 but it lives in one processing element's SPM of {spm} bytes: gather it in \
                 chunks of at most {} entries, or scale the index and use `dma_gather_scaled`",
                fit.unwrap_or(0),
            ),
        )
        .with_related(index.span, "the index tensor"),
    );
}

/// The entries a tensor type holds: the valid positions of every axis it places, its padding
/// and broadcasts left out; `None` when a mapping is not known or not regular.
fn entries(ty: &TensorTy) -> Option<u64> {
    let mut n: u64 = 1;
    for slot in ty.kind.params() {
        if matches!(slot, Slot::D | Slot::Other) {
            continue;
        }
        let Some(map) = ty.get(*slot) else { continue };
        let layout: &Layout = map.layout.as_deref()?;
        for dim in &layout.dims {
            let Dim::Factor(f) = dim else { return None };
            if f.axis.is_some() {
                n = n.checked_mul(f.valid)?;
            }
        }
    }
    Some(n)
}

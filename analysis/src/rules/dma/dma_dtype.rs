//! DMA-013: the DMA engine moves only the storable types of the crate's library (i4, i8,
//! f8e4m3, f8e5m2, i16, f16, bf16, i32 and f32 under the manual's).

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const DMA_013: Rule = Rule {
    code: "DMA-013",
    name: "dma-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The DMA engine moves i4, i8, f8e4m3, f8e5m2, i16, f16, bf16, i32 and f32 (furiosa-opt-std: its storable scalars)",
    docs: "The DMA descriptor's dtype field lists i4, i8, f8e4m3, f8e5m2, i16, fp16, bf16, i32 and \
           f32. i5 and i9 exist only as fetch-adapter conversion targets inside the Tensor Unit; a \
           tensor of those types cannot be moved between HBM and DM. Store the data as i8/i16 \
           (or i4) and convert at fetch. furiosa-opt-std 0.6 stores i4, i8, u8, i16, i32, the \
           packed f4e2m1, f8e4m3, f8e5m2, bf16 and f32: no f16, and i5/i9 still only in the \
           stream.",
    bad: "fn k(ctx: &mut Context, h: &HbmTensor<i9, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
    good: "fn k(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
    manual: "L2525",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 stores its `MaterializableScalar`s, i4, i8, u8, i16, i32, f4e2m1, \
         f8e4m3, f8e5m2, bf16 and f32 (`furiosa-opt-std/src/scalar.rs:140,172-183,916,1091`), \
         which an HBM tensor's views and DMA bind (`src/tensor/memory.rs:339-370`): f16 left the \
         DMA dtype listing (CHANGES.md:33-35), u8 and the packed f4e2m1 joined it, and the i5/i9 \
         staging types are not storable (`scalar.rs:912-916`); visa-lint checks that list there",
    ),
};

/// DMA-013: the type of a tensor a DMA moves against the storable types of the crate's library.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, d: Dtype, out: &mut Vec<Diagnostic>) {
    let conversions = cx.conversions();
    if conversions.stores(d) {
        return;
    }
    let moved: Vec<&str> = conversions.storable.iter().map(|d| d.as_str()).collect();
    out.push(Diagnostic::new(
        &DMA_013,
        step.span,
        format!(
            "the DMA engine does not move {d} tensors; it moves {}",
            moved.join(", ")
        ),
    ));
}

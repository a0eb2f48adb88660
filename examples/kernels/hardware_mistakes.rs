//! Kernels that type-check but break hardware rules: what visa-lint reports, with the
//! manual's numbers and the fix. Run `visa-lint examples/kernels/hardware_mistakes.rs`.
use furiosa_visa_std::prelude::*;

axes![S = 256, A = 1024, B = 2048];

/// Only 64 of the 256 slices are mapped: the Slice mapping must be padded (CAP-003).
#[device(chip = 1)]
fn quarter_cluster(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![S, A]>) {
    let x = x.to_dm::<m![1 # 2], m![S / 4], m![S % 4, A]>(&mut ctx.tdma, 0);
}

/// `weight` is placed inside `act`, which is still read afterwards (SCH-001).
#[device(chip = 1)]
fn overlapping(
    ctx: &mut Context,
    act: &HbmTensor<bf16, m![1], m![S, A]>,
    weight: &HbmTensor<bf16, m![1], m![S, A]>,
) -> HbmTensor<bf16, m![1], m![S, A]> {
    let act = act.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, 0);
    let weight = weight.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, 1 << 10);
    weight.to_hbm(&mut ctx.tdma, 1 << 20);
    act.to_hbm(&mut ctx.tdma, 0)
}

/// AddFxp and SubFxp both need the FxpAdd ALU, which runs once per pass (VEC-004; the
/// quick fix splits the work into two Tensor Unit passes).
#[device(chip = 1)]
fn alu_twice(ctx: &mut Context, a: &DmTensor<i32, m![1], m![1 # 2], m![B / 8 # 256], m![B % 8]>) {
    let out = ctx
        .main
        .begin(a.view())
        .fetch::<i32, m![1], m![B % 8]>()
        .collect::<m![1], m![B % 8]>()
        .vector_init()
        .vector_intra_slice_branch(BranchMode::Unconditional)
        .vector_fxp(FxpBinaryOp::AddFxp, 10)
        .vector_fxp(FxpBinaryOp::SubFxp, 5)
        .vector_final()
        .commit::<m![B % 8]>(0x1000);
}

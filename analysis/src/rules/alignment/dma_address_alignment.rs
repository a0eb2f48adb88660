//! ALN-002: an HBM-to-DM transfer writes DM at an 8-byte-aligned address and reads HBM from
//! one; a misaligned DMA is a correctness error or a hardware exception. Checked here on the
//! constant DM address of `to_dm(&mut ctx.tdma, addr)`, and in [`super::hbm_read_address`] on
//! the address the HBM source was placed at; the packet size is ALN-003's (the DMA family).

use super::addresses::round_up_fix;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Arg;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ALN_002: Rule = Rule {
    code: "ALN-002",
    name: "dma-address-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An HBM-to-DM transfer writes DM and reads HBM at 8-byte-aligned addresses",
    docs: "The DMA alignment table asks 8 bytes for DM write addresses and packet sizes, and \
           HBM-to-DM transfers need 8-byte alignment of the read address, the write address and \
           the packet size whatever the table says; violations cause correctness errors or \
           hardware exceptions. visa-lint checks the constant DM address of \
           `hbm.to_dm(&mut ctx.tdma, addr)`, and the HBM address its source was placed at \
           (`to_hbm(&mut ctx.pdma, addr)`, `from_addr`, or the host's placement of a tensor \
           `launch` passes to the kernel; an address known only in part, `POOL + page * \
           0x1_1000 + 4` with `page` a run-time value, is checked by its low bits: 4 past a \
           multiple of 4096), also through a view or a tile of it \
           (`xs.view().tile::<m![S], 1, ..>(step)` starts `step` rows of `S` past it; with \
           `step` unknown, a row stride that is a multiple of 8 keeps every tile as misaligned \
           as the tensor); the packet size is ALN-003. Round the address up to \
           a multiple of 8 (256 for throughput, ALN-010).",
    bad: "let x: DmTensor<i8, ..> = h.to_dm(&mut ctx.tdma, 0x1004);",
    good: "let x: DmTensor<i8, ..> = h.to_dm(&mut ctx.tdma, 0x1000);",
    manual: "L2425-L2427, L2834",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `to_dm(dma)` takes no DM address: the compiler places DM tensors \
         (CHANGES.md:26-32); its 8-byte DMA tail assertion is ALN-003's \
         (`furiosa-opt-std/src/tensor/memory.rs:25-112`)",
    ),
};

/// ALN-002 on the DM address `arg` (`addr`) of a `to_dm`.
pub(super) fn check(cx: &FnContext<'_>, arg: &Arg, addr: u64, out: &mut Vec<Diagnostic>) {
    let a = cx.target.dma_dm_align_bytes;
    if !addr.is_multiple_of(a) {
        let mut d = Diagnostic::new(
            &ALN_002,
            arg.span,
            format!(
                "HBM-to-DM transfers write DM at {a}-byte-aligned addresses; {} is {} bytes past a multiple of {a}",
                arg.text.trim(),
                addr % a
            ),
        );
        d = round_up_fix(d, arg, addr, a);
        out.push(d);
    }
}

//! ALN-010: HBM is accessed in 256-byte units, so an unaligned read costs two transfers and an
//! unaligned write a read-modify-write. Checked on the constant address of `to_hbm(.., addr)`
//! and of a constructor that places an HBM tensor; below 8-byte alignment a `to_dm` reading
//! the tensor is ALN-002's error, which silences this note.

use super::addresses::{address_as_written, misaligned, round_up_fix};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Arg, Kind, Method, Placement, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ALN_010: Rule = Rule {
    code: "ALN-010",
    name: "hbm-256-byte-alignment",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "HBM addresses aligned to 256 bytes avoid the read and read-modify-write penalties",
    docs: "HBM is accessed in 256-byte units: an unaligned read costs two transfers, an \
           unaligned or partial write a read-modify-write (about 50 times slower). visa-lint \
           reports constant HBM addresses of `to_hbm` that are not multiples of 256 (natural \
           element alignment is ALN-001). Round the address up to a multiple of 256.",
    bad: "let h = host.to_hbm(&mut ctx.pdma, 0x1010).await;",
    good: "let h = host.to_hbm(&mut ctx.pdma, 0x1100).await;",
    manual: "L2859, L2983-L2985, L2594",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `to_hbm(dma)` takes no address: the runtime allocates what the host \
         uploads (CHANGES.md:26-32)",
    ),
};

/// ALN-010 on the address `arg` (`addr`) of a `to_hbm`.
pub(super) fn check_to_hbm(
    cx: &FnContext<'_>,
    step: &Step,
    arg: &Arg,
    addr: u64,
    out: &mut Vec<Diagnostic>,
) {
    let a = cx.target.hbm_align_bytes;
    if addr.is_multiple_of(a) {
        return;
    }
    if step
        .output
        .as_ref()
        .is_some_and(|t| aln_002_reports(cx, addr, t))
    {
        return;
    }
    let what = "HBM is accessed in 256-byte units: an unaligned write costs a read-modify-write \
             (about 50 times slower) and an unaligned read two transfers";
    out.push(misaligned(&ALN_010, arg, addr, a, what));
}

/// ALN-010 on an HBM tensor a constructor placed (`Input::from_addr(0x1000)`).
pub(super) fn check_placement(cx: &FnContext<'_>, p: &Placement, out: &mut Vec<Diagnostic>) {
    let a = cx.target.hbm_align_bytes;
    if p.ty.kind != Kind::Hbm
        || p.address.is_multiple_of(a)
        || aln_002_reports(cx, p.address, &p.ty)
    {
        return;
    }
    let d = Diagnostic::new(
        &ALN_010,
        p.arg.span,
        format!(
            "HBM is accessed in {a}-byte units: an unaligned access costs a read-modify-write \
             or a second transfer; the tensor is placed at {}, {} bytes past a multiple of {a}",
            address_as_written(&p.arg, p.address),
            p.address % a
        ),
    );
    out.push(round_up_fix(d, &p.arg, p.address, a));
}

/// Whether an HBM tensor of type `ty` at `addr` is ALN-002's error rather than ALN-010's
/// note: below 8-byte alignment, and read into DM by a `to_dm` of the function.
fn aln_002_reports(cx: &FnContext<'_>, addr: u64, ty: &TensorTy) -> bool {
    !addr.is_multiple_of(cx.target.dma_dm_align_bytes)
        && cx
            .model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .any(|s| s.method == Method::ToDm && s.input.as_ref() == Some(ty))
}

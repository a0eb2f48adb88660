//! ALN-008: the commit sequencer writes DM in 8-byte units from an 8-byte-aligned base, so the
//! constant address of `commit(addr)` is a multiple of 8 bytes. Natural element alignment
//! (ALN-001) is reported first and silences it; the strides are CMT-005's.

use super::addresses::misaligned;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Arg;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ALN_008: Rule = Rule {
    code: "ALN-008",
    name: "commit-address-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A commit writes DM from an 8-byte-aligned base address",
    docs: "The commit sequencer writes DM in 8-byte units and all its strides are multiples of 8 \
           bytes (L2338); DM write addresses align to 8 bytes (L2426). visa-lint checks the \
           constant address of `commit(addr)`; natural element alignment is ALN-001 (reported \
           first) and the strides are CMT-005. Round the address up to a multiple of 8.",
    bad: "...collect::<m![1], m![A # 32]>().commit::<m![A]>(4) // i8",
    good: "...collect::<m![1], m![A # 32]>().commit::<m![A]>(8)",
    manual: "L2338, L2426",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `commit()` takes no address: the compiler places the tensor it \
         writes (CHANGES.md:26-32)",
    ),
};

/// ALN-008 on the address `arg` (`addr`) of a `commit`.
pub(super) fn check(cx: &FnContext<'_>, arg: &Arg, addr: u64, out: &mut Vec<Diagnostic>) {
    let a = cx.target.commit_stride_align_bytes;
    if addr.is_multiple_of(a) {
        return;
    }
    let what = "commits write DM in 8-byte units from an 8-byte-aligned base address";
    out.push(misaligned(&ALN_008, arg, addr, a, what));
}

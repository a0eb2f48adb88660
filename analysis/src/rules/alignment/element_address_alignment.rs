//! ALN-001: a DM or HBM tensor starts at a multiple of its element's size (natural alignment).
//! Checked on the constant address of `commit(addr)`, `to_hbm(.., addr)`, `to_vrf(addr)` and of
//! a constructor that places a tensor (`Input::from_addr(0x1000)`); `to_dm` is ALN-002's, which
//! is stricter.

use super::addresses::{address_as_written, round_up_fix};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Arg, Dtype};
use crate::rule::{Generations, Rule, Status};

pub const ALN_001: Rule = Rule {
    code: "ALN-001",
    name: "element-address-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A tensor's start address is a multiple of `size_of::<D>()`",
    docs: "Alignment applies to the Element dimension: the starting address of a DM, HBM or \
           VRF tensor must be a multiple of the element size (natural alignment); Chip, Cluster \
           and Slice add none. visa-lint checks the constant address of `commit(addr)`, \
           `to_hbm(.., addr)` and `to_vrf(addr)` (`to_dm` is covered by the stricter ALN-002). \
           Round the address up to the next multiple. Packed i4 (half a byte) needs no extra \
           alignment.",
    bad: "...cast::<bf16, m![A % 16]>().commit::<m![A]>(1025)",
    good: "...cast::<bf16, m![A % 16]>().commit::<m![A]>(1024)",
    manual: "L1071-L1073",
    generations: Generations::VisaStdOnly(
        "it reads the constant address of `commit(addr)`, `to_hbm(.., addr)` or `from_addr`, and \
         furiosa-opt-std 0.6 has no addresses: the compiler places a kernel's tensors and the \
         runtime what the host uploads (CHANGES.md:26-32)",
    ),
};

/// ALN-001 on a tensor of `dtype` placed at `addr` (written as `arg`): whether it fired.
pub(super) fn check(arg: &Arg, addr: u64, dtype: Dtype, out: &mut Vec<Diagnostic>) -> bool {
    match element_misaligned(arg, addr, dtype) {
        Some(d) => {
            out.push(d);
            true
        }
        None => false,
    }
}

/// ALN-001: a tensor of `dtype` placed at `addr` (written as `arg`) that does not start at a
/// multiple of its element's size.
fn element_misaligned(arg: &Arg, addr: u64, dtype: Dtype) -> Option<Diagnostic> {
    let bits = dtype.bits();
    let size = if bits.is_multiple_of(8) {
        u64::from(bits / 8)
    } else {
        1
    };
    if addr.is_multiple_of(size) {
        return None;
    }
    let d = Diagnostic::new(
        &ALN_001,
        arg.span,
        format!(
            "a {dtype} tensor starts at a multiple of size_of::<{dtype}>() = {size} bytes; address {} is not",
            address_as_written(arg, addr)
        ),
    );
    Some(round_up_fix(d, arg, addr, size))
}

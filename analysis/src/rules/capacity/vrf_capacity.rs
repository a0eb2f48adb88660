//! CAP-007: a tensor stored in VRF fits a slice's 8 KB, and its constant address leaves room
//! for it.

use super::footprint::{self, Capacity};
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_007: Rule = Rule {
    code: "CAP-007",
    name: "vrf-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A VrfTensor's Element fits the 8 KB VRF of its slice, from its address on",
    docs: "Each slice has an 8 KB VRF; the limit is per slice, not the cluster's 2 MB. \
           `Element::SIZE * size_of::<D>()` must fit, and `to_vrf(addr)` must end inside 8 KB. \
           Split the operand over more slices, or segment it over several passes \
           (L7152-L7195). A VRF load from `begin_interleaved` is CAP-011.",
    bad: "axes![A = 8192];\nlet v: VrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![A]> = ...to_vrf(0); // 16 KB",
    good: "axes![A = 8192];\nlet v: VrfTensor<bf16, m![1], m![1 # 2], m![A / 32 # 256], m![A % 32]> = ...to_vrf(0); // 64 B",
    manual: "L1090, L140, L5256, L7916-L7917, L7189",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no VRF addresses (CHANGES.md:26-32) and asserts the Element's \
         8,192 bytes itself (`furiosa-opt-std/src/constraints.rs:108-117`), so only the size is \
         checked there; the address part is `to_vrf(addr)`'s, under `furiosa_visa_std`",
    ),
};

/// CAP-007 on the stored tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let c = Capacity {
        rule: &CAP_007,
        bytes: cx.target.vrf_bytes_per_slice,
        unit: "slice",
        space: "of VRF",
        advice: "spread it over more slices, or segment it over several passes",
        mode: "",
        combined: "",
    };
    footprint::check(cx, s, &c, out);
}

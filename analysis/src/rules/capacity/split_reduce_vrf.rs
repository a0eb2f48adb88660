//! CAP-011: the two tensors a `begin_interleaved` chain stores in VRF fit a slice's VRF
//! together, after interleaving.

use super::footprint::{self, Capacity};
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_011: Rule = Rule {
    code: "CAP-011",
    name: "split-reduce-vrf",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An interleaved (split-reduce) stream loaded into the VRF fits its 8 KB per slice",
    docs: "Split reduce interleaves two tensor instances (`begin_interleaved`), adding the \
           interleave axis to Time; after interleaving, the combined tensor must fit the VRF \
           (8 KB per slice). Reported on `to_vrf` loads of a `begin_interleaved` chain whose \
           combined Element exceeds the VRF (other VRF loads are CAP-007). Split further, or \
           spread the reduced axis over slices.",
    bad: "ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<..>().collect::<..>().to_vrf(0) // 2 × 4096 bf16 = 16 KB",
    good: "ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<..>().collect::<..>().to_vrf(0) // 2 × 2048 bf16 = 8 KB",
    manual: "L7372, L7156, L7189",
    generations: Generations::Both,
};

/// CAP-011 on the stored tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let c = Capacity {
        rule: &CAP_011,
        bytes: cx.target.vrf_bytes_per_slice,
        unit: "slice",
        space: "of VRF",
        advice: "split the reduction further, or spread the reduced axis over slices",
        mode: "",
        combined: " after interleaving the two tensors",
    };
    footprint::check(cx, s, &c, out);
}

//! CAP-002: every Cluster mapping of a `#[device]` kernel has as many positions as a chip has
//! clusters; an error where the Tensor Unit reads it, a warning where only DMA, views and tiles do.

use super::grid;
use super::sites::Site;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;
use std::collections::HashSet;

pub const CAP_002: Rule = Rule {
    code: "CAP-002",
    name: "cluster-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every Cluster mapping of a device kernel has size exactly 2",
    docs: "A chip has 2 clusters and the runtime uses both (L1080). `furiosa_visa_std` asserts \
           it where a tensor enters the Tensor Unit: `BeginTensor::fetch` panics with \
           \"Cluster size must be 2, got {n}\". A single-cluster kernel writes `m![1 # 2]`. \
           Checked in `#[device]` kernels (see CAP-001 for helper functions). Severity: an \
           error for a Cluster mapping that reaches the Tensor Unit (a `begin`/fetch, switch, \
           collect, contraction, vector, cast, transpose or commit step, or the tensor a commit \
           produces); a warning for a DM or HBM tensor that only DMA, views and tiles touch, \
           which the library does not check (its transfers never look at the Cluster size, and \
           the vendor's tested examples move such tensors). The warning names the risk: the \
           manual states the size for every tensor, and fetching that tensor later panics.",
    bad: "a: &DmTensor<i8, m![1], m![1], m![A / 8 # 256], m![A % 8]>",
    good: "a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>",
    manual: "L1080, L1091-L1092, L1709, L130",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 allows a Cluster of 1 or 2 \
         (`furiosa-opt-std/src/constraints.rs:35-45`) and lays a kernel over the grid of its \
         `#[device(pe)]`: 1 cluster for 1, 2 or 4 processing elements, 2 for 8, the default \
         (`furiosa-opt-examples/src/pe_count.rs:14-20`); visa-lint asks for that grid's size there, \
         as an error outside {1, 2} (the library's assertion) and a warning for the other \
         topology's size, which the library accepts",
    ),
};

/// CAP-002 on the Cluster mappings of `sites`, which must have `want` positions (the
/// grid's clusters); `reached` holds the spans of the mappings that reach the Tensor Unit.
pub(super) fn check(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    reached: &HashSet<Span>,
    want: u64,
    out: &mut Vec<Diagnostic>,
) {
    grid::check(cx, sites, reached, Slot::Cluster, &CAP_002, want, out);
}

//! XSL-006: the inter-slice reduce pays a ring-style tail of about one cycle per slice of the
//! reduction group, which dominates when each slice streams fewer flits than that.

use super::super::context::FnContext;
use super::layouts::{layout, reduced_digits, render};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::{Slot, Step};
use crate::rule::{Generations, Rule, Status};

pub const XSL_006: Rule = Rule {
    code: "XSL-006",
    name: "inter-slice-tail-latency",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "The inter-slice reduce adds a ring-sized tail of about O(r) cycles",
    docs: "The first reduced output appears after roughly one ring traversal of the reduction \
           group: about r cycles for r slices per group (256 slices = 256 cycles), on top of \
           the input streaming time. Reported when the tail is at least 64 cycles and exceeds \
           the flits each slice streams in, so the tail dominates; reduce part of the axis \
           within the slice first (inner part in Time, `vector_intra_slice_reduce`), or stream \
           more data per invocation.",
    bad: "// Slice m![R] (R = 256), Time m![1]: 256-cycle tail for 1 flit\n.vector_inter_slice_reduce::<m![1 # 256], m![1]>(op)",
    good: "// Slice m![R] (R = 256), Time m![B] (B = 1024): the tail hides behind 1024 flits\n.vector_inter_slice_reduce::<m![1 # 256], m![B]>(op)",
    manual: "L4369, L6739-L6754",
    generations: Generations::Both,
};

/// Cycles below which the inter-slice tail is not worth a hint, even when it dominates.
const TAIL_WORTH_REPORTING: u64 = 64;

/// XSL-006: the ring-style tail (about one cycle per slice of the reduction group, L4369,
/// L6743-L6749) dominates when each slice streams fewer flits than the group has slices.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(slice), Some(slice2), Some(time)) = (
        layout(step, false, Slot::Slice),
        layout(step, true, Slot::Slice),
        layout(step, false, Slot::Time),
    ) else {
        return;
    };
    if !(slice.is_regular() && slice2.is_regular()) {
        return;
    }
    let digits = reduced_digits(slice, slice2);
    if digits.is_empty() {
        return;
    }
    let r = digits
        .iter()
        .try_fold(1u64, |acc, (f, _)| acc.checked_mul(f.extent))
        .unwrap_or(u64::MAX);
    let tail = r.saturating_mul(cx.target.xsl_tail_cycles_per_slice);
    let flits = time.size;
    if tail < TAIL_WORTH_REPORTING || tail <= flits {
        return;
    }
    let names: Vec<String> = digits
        .iter()
        .map(|(f, _)| render(&[Dim::Factor((*f).clone())]))
        .collect();
    let msg = format!(
        "the inter-slice reduce over {} ({r} slices per reduction group) pays a ring-style tail \
         of about {tail} cycles, but each slice streams only {flits} flit(s) into it: the tail \
         dominates (about {} of {} cycles). Reduce part of the axis within the slice first (put \
         its inner part in Time and use `vector_intra_slice_reduce`), or stream more data per \
         invocation to amortise the tail",
        names.join(", "),
        tail,
        tail.saturating_add(flits),
    );
    out.push(Diagnostic::new(&XSL_006, step.span, msg));
}

//! ISR-003: the IntraSliceReduce stage accumulates across time steps in 8 slots, one for each
//! position of the non-reduce factors that sit inside the outermost reduce factor of Time.

use super::layouts::{is_axis, layout_of, render_dim, text_of};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::{Slot, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const ISR_003: Rule = Rule {
    code: "ISR-003",
    name: "reduce-accumulator-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "At most 8 accumulator slots: the non-reduce factors inside the outermost reduce factor of Time multiply to <= 8",
    docs: "The IntraSliceReduce stage accumulates across time steps in 8 slots. Every position of \
           the non-reduce factors that sit inside (after) the outermost `R` factor of Time needs \
           its own slot while `R` is being accumulated: `m![R, A % 2, B % 4]` needs 2 x 4 = 8, \
           `m![R, A % 3, B % 4]` needs 12 and is rejected. Move non-reduce factors before the \
           outermost `R` factor in Time, or into Slice.",
    bad: "// Time m![R, A % 3, B % 4]: 12 slots\n.vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(op)",
    good: "// Time m![A % 3, R, B % 4]: 4 slots\n.vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(op)",
    manual: "L5499-L5543",
    generations: Generations::Both,
};

/// ISR-003 on a reduce over `r`: the non-reduce factors inside its outermost Time factor
/// need more slots than the accumulator has.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, r: &str, out: &mut Vec<Diagnostic>) {
    let Some(time) = layout_of(step.input.as_ref(), Slot::Time) else {
        return;
    };
    let Some(first) = time.dims.iter().position(|d| is_axis(d, r)) else {
        return;
    };
    let inner: Vec<&Dim> = time.dims[first + 1..]
        .iter()
        .filter(|d| !is_axis(d, r))
        .collect();
    let slots = inner
        .iter()
        .try_fold(1u64, |acc, d| acc.checked_mul(d.extent()))
        .unwrap_or(u64::MAX);
    let limit = cx.target.isr_accumulator_slots;
    if slots <= limit {
        return;
    }
    let time_txt = text_of(step.input.as_ref(), Slot::Time, time);
    let parts: Vec<String> = inner
        .iter()
        .map(|d| format!("{} ({})", render_dim(d), d.extent()))
        .collect();
    let sizes: Vec<String> = inner.iter().map(|d| d.extent().to_string()).collect();
    let msg = format!(
        "{slots} accumulator slots required, but only {limit} are available: the non-reduce \
         factors {} of Time {time_txt} sit inside the outermost {r} factor ({} = {slots}); move \
         them before it in Time, or into Slice",
        parts.join(", "),
        sizes.join(" x "),
    );
    out.push(Diagnostic::new(&ISR_003, step.span, msg));
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, kernel};

    #[test]
    fn l5519_slot_limit_twelve_rejected_eight_accepted() {
        // L5519-L5520: m![R, A % 2, B % 4] -> 8 slots (ok); m![R, A % 3, B % 4] -> 12 (rejected).
        let bad = kernel(
            "A = 6, B = 8, R = 16",
            "i32",
            "A / 3",
            "R, A % 3, B % 4",
            "B / 4 # 8",
            "B / 4",
            "vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&bad);
        assert!(
            d.iter().any(|(c, m)| c == "ISR-003"
                && m.starts_with("12 accumulator slots required, but only 8 are available")),
            "{d:?}"
        );
        let ok = kernel(
            "A = 4, B = 8, R = 16",
            "i32",
            "A / 2",
            "R, A % 2, B % 4",
            "B / 4 # 8",
            "B / 4",
            "vector_intra_slice_reduce::<R, m![A % 2, B % 4], m![B / 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(!codes(&ok).iter().any(|(c, _)| c == "ISR-003"));
    }
}

//! CON-003: the TRF tensor an `.align()` takes shares the stream's element type (within one
//! integer family under furiosa-opt-std 0.6), Chip, Cluster and Slice.

use super::layouts::{layout, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Slot, Step, TensorTy, TensorVar};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CON_003: Rule = Rule {
    code: "CON-003",
    name: "trf-matches-stream",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The TRF tensor shares D, Chip, Cluster and Slice with the stream it is aligned with",
    docs: "`align(&trf)` takes a `TrfTensor<D, Chip, Cluster, Slice, Row, TrfElement>` with the \
           stream's own D, Chip, Cluster and Slice: the Aligner pairs data and weights of the same \
           slice and type, and the spatial dimensions pass through unchanged. Load the weights with \
           the stream's element type and spatial mapping.",
    bad: "trf: &TrfTensor<i8, m![1], m![1], m![1], m![N], m![K]>; input (bf16).align::<..>(trf)",
    good: "trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![K]>; input (bf16).align::<..>(trf)",
    manual: "L3891-L3899",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 lets the TRF weight's type differ from the stream's within one \
         integer family, i4 with i5 and i8 with i9 (`ContractionWeight`, \
         `furiosa-opt-std/src/cast.rs:320-345`), which visa-lint checks there; Chip, Cluster and \
         Slice are shared under both",
    ),
};

/// CON-003 on an `.align()` of `input` (element type `d`) with `trf`; whether it fired.
pub(super) fn check(
    cx: &FnContext<'_>,
    step: &Step,
    input: &TensorTy,
    d: Option<Dtype>,
    trf: Option<&TensorVar>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(t) = trf else { return false };
    let mut diffs = Vec::new();
    if let (Some(a), Some(b)) = (d, t.ty.dtype)
        && !cx.conversions().weight_pairs(b, a)
    {
        diffs.push(format!("D {b} vs {a}"));
    }
    for slot in [Slot::Chip, Slot::Cluster, Slot::Slice] {
        if let (Some(a), Some(b)) = (layout(input, slot), layout(&t.ty, slot))
            && a != b
        {
            diffs.push(format!(
                "{} {} vs {}",
                slot.name(),
                text(&t.ty, slot),
                text(input, slot)
            ));
        }
    }
    if diffs.is_empty() {
        return false;
    }
    out.push(
        Diagnostic::new(
            &CON_003,
            step.span,
            format!(
                "the TRF tensor `{}` must share D, Chip, Cluster and Slice with the stream it \
                 is aligned with: {} (TRF vs stream)",
                t.name,
                diffs.join(", ")
            ),
        )
        .with_related(t.span, "the TRF tensor is declared here"),
    );
    true
}

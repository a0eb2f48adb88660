//! XSL-002: the inter-slice reduce takes a Way8 stream, so it cannot follow a Way4 stage
//! (Narrow, Fp, IntraSliceReduce, FpDiv) without the stream widened back first.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const XSL_002: Rule = Rule {
    code: "XSL-002",
    name: "inter-slice-from-way8",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An IntraFirst inter-slice reduce follows a Way8 stage, not Narrow, Fp, IntraSliceReduce or FpDiv",
    docs: "From the intra-slice block, `vector_inter_slice_reduce()` is available only from the Way8 \
           stages Branch, Logic, Fxp, FxpToFp, Widen, FpToFxp and Clip. After a Way4 stage widen \
           the stream first (`vector_pad_way8` after `vector_trim_way4`, `vector_concat` after \
           `vector_split`).",
    bad: ".vector_trim_way4::<m![A % 4]>().vector_inter_slice_reduce::<S2, T2>(op)",
    good: ".vector_trim_way4::<m![A % 4]>() /* ... */ .vector_pad_way8::<m![A % 4 # 8]>().vector_inter_slice_reduce::<S2, T2>(op)",
    manual: "L6603-L6604",
    generations: Generations::Both,
};

/// XSL-002: the stage the reduce follows, when it is a Way4 one.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(Kind::Vector(stage)) = step.input.as_ref().map(|t| t.kind) else {
        return;
    };
    let (name, widen) = match stage {
        VeStage::Narrow => (
            "Narrow",
            "`vector_pad_way8` (after `vector_trim_way4`) or `vector_concat` (after `vector_split`)",
        ),
        VeStage::Fp => ("Fp", "`vector_pad_way8` or `vector_concat`"),
        VeStage::IntraSliceReduce => ("IntraSliceReduce", "`vector_pad_way8` or `vector_concat`"),
        VeStage::FpDiv => ("FpDiv", "`vector_pad_way8` or `vector_concat`"),
        _ => return,
    };
    let msg = format!(
        "`vector_inter_slice_reduce` is not available from the Way4 {name} stage: widen the stream \
         back to Way8 first with {widen}"
    );
    out.push(Diagnostic::new(&XSL_002, step.span, msg));
}

//! XSL-001: the inter-slice reduce takes the ops of its element type only: i32 `Add`,
//! `AddSat`, `Max`, `Min`; f32 `Add`, `Max`, `Min`, `Mul`.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Step, ops::op_problem};
use crate::rule::{Generations, Rule, Status};

pub const XSL_001: Rule = Rule {
    code: "XSL-001",
    name: "inter-slice-reduce-ops",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The inter-slice op matches the element type: i32 `Add`/`AddSat`/`Max`/`Min`, f32 `Add`/`Max`/`Min`/`Mul`",
    docs: "`vector_inter_slice_reduce` takes `InterSliceReduceOpI32::{Add, AddSat, Max, Min}` on \
           i32 streams and `InterSliceReduceOpF32::{Add, Max, Min, Mul}` on f32 streams; no other \
           element type reaches the block.",
    bad: ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::Mul) // i32",
    good: ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::AddSat)",
    manual: "L6612-L6625, L6735",
    generations: Generations::Both,
};

/// The i32 and f32 inter-slice reduce ops.
const I32_OPS: &[&str] = &["Add", "AddSat", "Max", "Min"];
const F32_OPS: &[&str] = &["Add", "Max", "Min", "Mul"];

/// XSL-001 on a reduce: an op of its element type.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    if let Some(d) = op_problem(
        &XSL_001,
        step,
        "InterSliceReduceOpI32",
        I32_OPS,
        "InterSliceReduceOpF32",
        F32_OPS,
    ) {
        out.push(d);
    }
}

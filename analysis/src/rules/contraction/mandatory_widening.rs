//! CON-002: `.contract()` widens its result (i4/i8 to i32, f8/bf16 to f32), and the widening is
//! mandatory: a contraction or accumulation declared with the operand's type does not exist.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Method};
use crate::rule::{Generations, Rule, Status};

pub const CON_002: Rule = Rule {
    code: "CON-002",
    name: "mandatory-widening",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Contraction output is widened: i4/i8 -> i32, f8/bf16 -> f32",
    docs: "`.contract()` widens its result (i4/i8 to i32, f8/bf16 to f32) and the widening is \
           mandatory: a `ContractionTensor` or `AccumulationTensor` declared with another element \
           type (for example bf16 after a bf16 contraction) does not exist. Declare the widened \
           type and narrow later with `.cast::<bf16, _>()`.",
    bad: "let acc: AccumulationTensor<'l, T, bf16, ..> = input.align::<..>(&trf).contract::<m![1]>().accumulate::<..>(..);",
    good: "let acc: AccumulationTensor<'l, T, f32, ..> = input.align::<..>(&trf).contract::<m![1]>().accumulate::<..>(..);",
    manual: "L4313, L4388-L4390, L4533",
    generations: Generations::Both,
};

/// CON-002 on a chain: a declared contraction/accumulation type with the unwidened element type.
pub(super) fn check(chain: &Chain, out: &mut Vec<Diagnostic>) {
    let Some(decl) = &chain.declared else { return };
    let Some(last) = chain.steps.last() else {
        return;
    };
    if !matches!(last.method, Method::Contract | Method::Accumulate) {
        return;
    }
    let Some(have) = last.output.as_ref() else {
        return;
    };
    if decl.kind != have.kind {
        return;
    }
    let (Some(want), Some(got)) = (decl.dtype, have.dtype) else {
        return;
    };
    if want == got {
        return;
    }
    let from = chain
        .steps
        .iter()
        .find(|s| s.method == Method::Contract)
        .and_then(|s| s.input.as_ref()?.dtype)
        .map_or_else(|| "its input".to_string(), |d| d.to_string());
    out.push(Diagnostic::new(
        &CON_002,
        last.span,
        format!(
            "the contraction widens {from} to {got} (i4/i8 -> i32, f8/bf16 -> f32, mandatory), but \
             the result is declared as `{}<.., {want}, ..>`: declare {got} and narrow later with \
             `.cast()`",
            decl.kind.type_name()
        ),
    ));
}

//! CON-001: the Reducer multiplies i4, i8, f8 or bf16 operands only (and, under furiosa-opt-std
//! 0.6, i5 and i9). Checked on the stream of each `.align()` and on each TRF load: the TRF feeds
//! only the Reducer.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CON_001: Rule = Rule {
    code: "CON-001",
    name: "reducer-input-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Contraction operands (stream and TRF) are i4, i8, f8 (e4m3/e5m2) or bf16",
    docs: "The Reducer multiplies i4, i8, f8 or bf16 operands only; f32 (and i16, f16, i32) is \
           not accepted and must be processed in the Vector Engine after (or instead of) the \
           contraction. Checked on the stream passed to `.align()` and on every `.to_trf()` load \
           (the TRF only feeds the Reducer).",
    bad: "input: CollectTensor<'l, T, f32, m![1], m![1], m![1], m![M], m![K # 8]>; \
          input.align::<m![M], m![K # 16], _, _>(&trf)",
    good: "input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M], m![K]>; \
           input.align::<m![M], m![K # 32], _, _>(&trf)",
    manual: "L3782, L4532-L4533",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `ContractionCast` adds i5 and i9, an i4 or i8 with its zero point \
         subtracted (`fetch_zero_point_sub`), and lets the TRF weight differ from the stream \
         within one integer family (`furiosa-opt-std/src/cast.rs:294-375`; CHANGES.md:54); \
         visa-lint checks that set there",
    ),
};

/// CON-001 on a TRF load; whether it fired.
pub(super) fn check_load(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) -> bool {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return false;
    };
    let Some(d) = output.dtype.or(input.dtype) else {
        return false;
    };
    if reducer_takes(cx, d) {
        return false;
    }
    out.push(Diagnostic::new(
        &CON_001,
        step.span,
        format!(
            "the TRF feeds only the Reducer, which takes {} operands; this `.to_trf()` loads \
             {d}: process {d} in the Vector Engine instead",
            reducer_operands(cx)
        ),
    ));
    true
}

/// CON-001 on the stream of an `.align()`, of element type `d`; whether it fired.
pub(super) fn check_stream(
    cx: &FnContext<'_>,
    step: &Step,
    d: Option<Dtype>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(d) = d.filter(|&d| !reducer_takes(cx, d)) else {
        return false;
    };
    out.push(Diagnostic::new(
        &CON_001,
        step.span,
        format!(
            "the Reducer takes {} operands; this stream is {d}: process {d} in the Vector \
             Engine (skip the contraction with `.vector_init()`)",
            reducer_operands(cx)
        ),
    ));
    true
}

/// Whether the Reducer multiplies operands of type `d` (CON-001), as the crate's library
/// offers them.
fn reducer_takes(cx: &FnContext<'_>, d: Dtype) -> bool {
    let operand = cx.conversions().contraction_operand(d);
    cx.target.tree_depth(operand).is_some()
}

/// The operand types the Reducer takes under the crate's library, as a message lists them
/// (`i4, i5, i8, i9, f8 or bf16`): each Reducer input, then the library's types that enter its
/// tree.
fn reducer_operands(cx: &FnContext<'_>) -> String {
    let staging = cx.conversions().contraction_staging;
    let mut names: Vec<&str> = Vec::new();
    for &(input, _) in cx.target.reducer_tree_depth {
        let entering = staging.iter().filter(|&&(_, into)| into == input);
        for d in std::iter::once(input).chain(entering.map(|&(s, _)| s)) {
            let name = if d.is_f8() { "f8" } else { d.as_str() };
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

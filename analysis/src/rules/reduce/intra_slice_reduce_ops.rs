//! ISR-001: the intra-slice reduce's tree reduces 4-lane packets, so its stream must have been
//! narrowed to Way4 before it; and it takes the ops of its element type only, with no wrapping
//! i32 `Add` and no saturating f32 add.

use super::layouts::core;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Kind, Slot, Step, VeStage, ops::op_problem};
use crate::rule::{Generations, Rule, Status};

pub const ISR_001: Rule = Rule {
    code: "ISR-001",
    name: "intra-slice-reduce-ops",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The intra-slice reduce takes a Way4 stream and an op of its element type: i32 `AddSat`/`Max`/`Min`, f32 `Add`/`Max`/`Min`",
    docs: "The reduce's tree takes a 4-way input, so the stream must have been narrowed \
           (`vector_trim_way4` or `vector_split`) before it. It takes \
           `IntraSliceReduceOpI32::{AddSat, Max, Min}` on i32 streams and \
           `IntraSliceReduceOpF32::{Add, Max, Min}` on f32 streams; there is no wrapping i32 \
           `Add` and no saturating f32 add.",
    bad: ".vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Add) // i32",
    good: ".vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
    manual: "L4908-L4912, L5384-L5402",
    generations: Generations::Both,
};

/// The i32 and f32 intra-slice reduce ops (L5390-L5402).
const I32_OPS: &[&str] = &["AddSat", "Max", "Min"];
const F32_OPS: &[&str] = &["Add", "Max", "Min"];

/// ISR-001 on a reduce: a Way4 stream, and an op of its element type.
pub(super) fn check(step: &Step, lanes: u64, out: &mut Vec<Diagnostic>) {
    way4(step, lanes, out);
    if let Some(d) = op_problem(
        &ISR_001,
        step,
        "IntraSliceReduceOpI32",
        I32_OPS,
        "IntraSliceReduceOpF32",
        F32_OPS,
    ) {
        out.push(d);
    }
}

/// The reduce consumes a Way4 stream: its receiver comes out of a Narrow (or a later Way4)
/// stage, never straight from a Way8 stage.
fn way4(step: &Step, lanes: u64, out: &mut Vec<Diagnostic>) {
    let Some(Kind::Vector(stage)) = step.input.as_ref().map(|t| t.kind) else {
        return;
    };
    if matches!(
        stage,
        VeStage::Narrow | VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv | VeStage::Pair
    ) {
        return;
    }
    let packet = step.input.as_ref().and_then(|t| t.get(Slot::Packet));
    let msg = format!(
        "`vector_intra_slice_reduce` needs a Way4 stream (its tree reduces 4-lane packets), but this \
         stream is a Way8 {}: narrow it first with `vector_trim_way4` (when lanes \
         4-7 are padding) or `vector_split`",
        Kind::Vector(stage).type_name()
    );
    let mut d = Diagnostic::new(&ISR_001, step.span, msg);
    // `m![X # 8]` whose data fits 4 lanes: insert the trim.
    if let Some(l) = packet.and_then(|p| p.layout.as_deref()) {
        let c = core(l);
        if c.size <= lanes {
            let trimmed = if c.size < lanes { c.window(lanes) } else { c };
            d = d.with_edit(
                format!("narrow with `vector_trim_way4::<m![{trimmed}]>()`"),
                true,
                Span::new(step.span.start as usize, step.span.start as usize),
                format!("vector_trim_way4::<m![{trimmed}]>()."),
            );
        }
    }
    out.push(d);
}

//! XSL: the Vector Engine's inter-slice block, `vector_inter_slice_reduce::<Slice2, Time2>(op)`
//! (constraints.md §14): ops per element type, the stages it may follow, and the output mapping
//! rules (Broadcast, Dummy, Promotion).

use super::FnContext;
use super::reduce::op_problem;
use super::registry::{Rule, Status};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Kind, Slot, Step, VeStage};

pub const RULES: &[Rule] = &[
    Rule {
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
    },
    Rule {
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
    },
    Rule {
        code: "XSL-003",
        name: "inter-slice-scope",
        severity: Severity::Error,
        status: Status::Planned(
            "Chip and Cluster are not parameters of vector_inter_slice_reduce; a changed Chip or \
             Cluster annotation is KRN-004",
        ),
        summary: "The inter-slice reduce reduces Slice factors within one 256-slice cluster",
        docs: "Reducing over Chip or Cluster needs DMA, an interleaved fetch and Vector binary ops \
               (the chip/cluster reduce pattern).",
        bad: "",
        good: "",
        manual: "L6736, L6584, L7383-L7386",
    },
    Rule {
        code: "XSL-004",
        name: "inter-slice-keeps-packet",
        severity: Severity::Error,
        status: Status::Planned(
            "Packet is not a parameter of vector_inter_slice_reduce, so the model carries it through; \
             a differing annotation needs backward type comparison (issue 3)",
        ),
        summary: "Packet, Chip and Cluster pass through the inter-slice reduce unchanged",
        docs: "Only Slice and Time are rewritten, into SliceOut and TimeOut.",
        bad: "",
        good: "",
        manual: "L6585, L6633-L6634, L6737",
    },
    Rule {
        code: "XSL-005",
        name: "inter-slice-output-mapping",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "SliceOut keeps Slice's size; TimeOut is Time minus the axes promoted into SliceOut",
        docs: "After the reduced Slice factor is removed its positions are filled by a new axis \
               (Broadcast, `m![A, X]`), by padding (Dummy, `m![A, 1 # n]`) or by a Time axis \
               (Promotion, `m![A, C]` with that axis removed from TimeOut). SliceOut therefore has \
               as many positions as Slice (256 per cluster), and TimeOut is Time without the \
               promoted factors.",
        bad: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8], m![1]>(op)",
        good: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(op)",
        manual: "L6627-L6634, L6653, L6671-L6675",
    },
    Rule {
        code: "XSL-006",
        name: "inter-slice-tail-latency",
        severity: Severity::Perf,
        status: Status::Planned("needs the cost model (issue 8)"),
        summary: "The inter-slice reduce adds a ring-sized tail of about O(r) cycles",
        docs: "The first reduced output appears after roughly one ring traversal of the reduction group.",
        bad: "",
        good: "",
        manual: "L6739-L6754",
    },
];

const I32_OPS: &[&str] = &["Add", "AddSat", "Max", "Min"];
const F32_OPS: &[&str] = &["Add", "Max", "Min", "Mul"];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method != "vector_inter_slice_reduce" {
                continue;
            }
            if let Some(d) = op_problem(
                "XSL-001",
                step,
                "InterSliceReduceOpI32",
                I32_OPS,
                "InterSliceReduceOpF32",
                F32_OPS,
            ) {
                out.push(d);
            }
            check_stage(step, out);
            check_output(step, out);
        }
    }
}

fn check_stage(step: &Step, out: &mut Vec<Diagnostic>) {
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
    out.push(Diagnostic::new("XSL-002", step.span, msg));
}

fn layout(step: &Step, out: bool, slot: Slot) -> Option<&Layout> {
    let ty = if out {
        step.output.as_ref()
    } else {
        step.input.as_ref()
    };
    ty?.get(slot)?.layout.as_ref()
}

fn render(dims: &[Dim]) -> String {
    match Layout::from_dims(dims.to_vec()) {
        Ok(l) => l.to_expr(),
        Err(_) => "?".to_string(),
    }
}

fn check_output(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(slice), Some(time), Some(slice2), Some(time2)) = (
        layout(step, false, Slot::Slice),
        layout(step, false, Slot::Time),
        layout(step, true, Slot::Slice),
        layout(step, true, Slot::Time),
    ) else {
        return;
    };
    let arg_slice = step.generics.first().filter(|a| a.text.trim() != "_");
    let arg_time = step.generics.get(1).filter(|a| a.text.trim() != "_");
    if slice2.size != slice.size {
        // Dummy replacement: the factors SliceOut dropped become `1 # n` in place.
        let dummy: Vec<String> = slice
            .dims
            .iter()
            .map(|d| {
                if slice2.dims.contains(d) {
                    render(std::slice::from_ref(d))
                } else {
                    format!("1 # {}", d.extent())
                }
            })
            .collect();
        let dummy = dummy.join(", ");
        let msg = format!(
            "SliceOut m![{slice2}] has {} positions but Slice m![{slice}] has {}: the reduced \
             factor's positions must be filled by a new axis (Broadcast), padding (Dummy, \
             m![{dummy}]) or a Time axis (Promotion)",
            slice2.size, slice.size
        );
        let span = arg_slice.map_or(step.span, |a| a.span);
        let mut d = Diagnostic::new("XSL-005", span, msg);
        if let Some(a) = arg_slice {
            d = d.with_edit(
                format!("fill the reduced positions with padding: m![{dummy}]"),
                false,
                a.span,
                format!("m![{dummy}]"),
            );
        }
        out.push(d);
        return;
    }
    if !(time.is_regular() && time2.is_regular() && slice2.is_regular()) {
        return;
    }
    let time_axes: Vec<&str> = time
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) => Some(&*a.name),
            _ => None,
        })
        .collect();
    // Factors of SliceOut that come from Time: promoted. A partial promotion (a piece of a Time
    // factor) is not decided here.
    let mut promoted = Vec::new();
    for d in &slice2.dims {
        if let Dim::Factor(Factor { axis: Some(a), .. }) = d
            && time_axes.contains(&&*a.name)
        {
            if time.dims.contains(d) {
                promoted.push(d.clone());
            } else {
                return;
            }
        }
    }
    let rest: Vec<Dim> = time
        .dims
        .iter()
        .filter(|d| !promoted.contains(d))
        .cloned()
        .collect();
    let Ok(want) = Layout::from_dims(rest) else {
        return;
    };
    if want == *time2 {
        return;
    }
    let what = if promoted.is_empty() {
        "no Time axis is promoted into SliceOut, so TimeOut must equal Time".to_string()
    } else {
        let names: Vec<String> = promoted
            .iter()
            .map(|d| render(std::slice::from_ref(d)))
            .collect();
        format!(
            "{} moves into SliceOut, so TimeOut is Time without it",
            names.join(", ")
        )
    };
    let msg = format!("TimeOut m![{time2}] does not follow the output rule: {what}, m![{want}]");
    let span = arg_time.map_or(step.span, |a| a.span);
    let mut d = Diagnostic::new("XSL-005", span, msg);
    if let Some(a) = arg_time {
        d = d.with_edit(
            format!("write TimeOut = m![{want}]"),
            true,
            a.span,
            format!("m![{want}]"),
        );
    }
    out.push(d);
}

#[cfg(test)]
mod tests {
    use crate::db::analyse_text;

    fn diags(body: &str, op: &str, d: &str) -> Vec<(String, String)> {
        let src = format!(
            "axes![R = 4, A = 512, T0 = 2, T2 = 4];\nfn k<'l, const T: Tu>(input: CollectTensor<'l, T, {d}, m![1], m![1 # 2], m![A / 8, R], m![T0, T2], m![A % 8]>) {{\n    input.vector_init(){body}({op}).vector_final();\n}}\n"
        );
        analyse_text(&src)
            .diagnostics
            .iter()
            .map(|x| (x.code().to_string(), x.message.clone()))
            .collect()
    }

    #[test]
    fn l6638_dummy_and_l6676_promotion_are_silent() {
        // L6638-L6652 (Dummy, here with Time kept) and L6676-L6693 (Promotion of a middle axis).
        let d = diags(
            ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![T0, T2]>",
            "InterSliceReduceOpI32::AddSat",
            "i32",
        );
        assert!(d.is_empty(), "{d:?}");
        let d = diags(
            ".vector_inter_slice_reduce::<m![A / 8, T2], m![T0]>",
            "InterSliceReduceOpF32::Add",
            "f32",
        );
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn shrunk_slice_and_wrong_time_and_ops() {
        let d = diags(
            ".vector_inter_slice_reduce::<m![A / 8], m![T0, T2]>",
            "InterSliceReduceOpI32::AddSat",
            "i32",
        );
        assert!(
            d.iter()
                .any(|(c, m)| c == "XSL-005" && m.contains("Dummy, m![A / 8, 1 # 4]")),
            "{d:?}"
        );
        let d = diags(
            ".vector_inter_slice_reduce::<m![A / 8, T2], m![T0, T2]>",
            "InterSliceReduceOpF32::Mul",
            "f32",
        );
        assert!(
            d.iter()
                .any(|(c, m)| c == "XSL-005" && m.ends_with("m![T0]")),
            "{d:?}"
        );
        let d = diags(
            ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![T0, T2]>",
            "InterSliceReduceOpI32::Mul",
            "i32",
        );
        assert!(d.iter().any(|(c, _)| c == "XSL-001"), "{d:?}");
    }
}

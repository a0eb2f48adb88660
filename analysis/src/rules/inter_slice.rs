//! XSL: the Vector Engine's inter-slice block, `vector_inter_slice_reduce::<Slice2, Time2>(op)`
//! (constraints.md §14): ops per element type, the stages it may follow, and the output mapping
//! rules (Broadcast, Dummy, Promotion).

use super::context::{FnContext, at_arg};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Chain, Kind, Method, Slot, Step, VeStage, ops::op_problem, output_arg};
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

pub const XSL_003: Rule = Rule {
    code: "XSL-003",
    name: "inter-slice-scope",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "The inter-slice reduce reduces Slice factors within one cluster",
    docs: "The Inter-Slice Block aggregates the slices of one cluster (256; under furiosa-opt-std \
           the kernel's device grid, 64, 128 or 256); Chip and Cluster pass \
           through. When the reduced axis (the Slice factor SliceOut drops) is also spread over \
           Cluster or Chip, each cluster or chip ends with its own partial result. Combine them \
           with the chip/cluster reduce pattern (DMA, an interleaved fetch and a Vector Engine \
           binary op), or map the axis to Slice only. Severity: a warning. Nothing fails: \
           `furiosa_visa_std` reduces each cluster's slices and keeps Chip and Cluster, with no \
           assertion on where the reduced axis lives, and the vendor's examples reduce an axis \
           split over Slice and Cluster on purpose before a cluster reduce (matmul_16384). The \
           warning names the risk: a result read as complete holds one partial sum per cluster \
           or chip.",
    bad: "// R = 8: Cluster m![R / 4], Slice m![A / 8, R % 4]\n.vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(op)",
    good: "// R = 4: Cluster m![1 # 2], Slice m![A / 8, R]\n.vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(op)",
    manual: "L6584, L6736, L7081, L7383-L7386",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 runs clusters of 64, 128 or 256 slices by the kernel's \
         `#[device(pe)]` (`furiosa-opt-std/src/constraints.rs:30-31`; \
         `furiosa-opt-examples/src/pe_count.rs:14-20`): the block sums the slices of that \
         cluster, the input Slice's size, which the message names; the check is the same",
    ),
};

pub const XSL_004: Rule = Rule {
    code: "XSL-004",
    name: "inter-slice-keeps-packet",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Packet, Chip and Cluster pass through the inter-slice reduce unchanged",
    docs: "Only Slice and Time are rewritten, into SliceOut and TimeOut; the result keeps the \
           stream's Packet, Chip and Cluster. A result declared (a `let` annotation or the \
           function's return type) with another Packet, when every step after the reduce keeps \
           Packet, is reported here with the carried Packet as the fix. A declared Chip or \
           Cluster that differs is KRN-004, which covers every Tensor Unit chain.",
    bad: "// input Packet m![A % 8]\n-> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 4 # 8]>",
    good: "// input Packet m![A % 8]\n-> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 8]>",
    manual: "L6585, L6633-L6634, L6737",
    generations: Generations::Both,
};

pub const XSL_005: Rule = Rule {
    code: "XSL-005",
    name: "inter-slice-output-mapping",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "SliceOut keeps Slice's size; TimeOut is Time minus the axes promoted into SliceOut",
    docs: "After the reduced Slice factor is removed its positions are filled by a new axis \
           (Broadcast, `m![A, X]`), by padding (Dummy, `m![A, 1 # n]`) or by a Time axis \
           (Promotion, `m![A, C]` with that axis removed from TimeOut). SliceOut therefore has \
           as many positions as Slice (a cluster's slices), and TimeOut is Time without the \
           promoted factors.",
    bad: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8], m![1]>(op)",
    good: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(op)",
    manual: "L6627-L6634, L6653, L6671-L6675",
    generations: Generations::Both,
};

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

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[XSL_001, XSL_002, XSL_003, XSL_004, XSL_005, XSL_006];

const I32_OPS: &[&str] = &["Add", "AddSat", "Max", "Min"];
const F32_OPS: &[&str] = &["Add", "Max", "Min", "Mul"];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        declared_packet(chain, out);
        for step in &chain.steps {
            if step.method != Method::VectorInterSliceReduce {
                continue;
            }
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
            check_stage(step, out);
            check_scope(step, out);
            check_output(step, out);
            check_tail(cx, step, out);
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
    out.push(Diagnostic::new(&XSL_002, step.span, msg));
}

/// XSL-004: the inter-slice reduce keeps Packet (Chip and Cluster too: a changed declaration of
/// those is KRN-004). Compares the Packet a chain's result is declared with against the Packet
/// the reduce carries, when every step after the reduce keeps Packet.
fn declared_packet(chain: &Chain, out: &mut Vec<Diagnostic>) {
    let Some(declared) = &chain.declared else {
        return;
    };
    let Some(k) = chain
        .steps
        .iter()
        .rposition(|s| s.method == Method::VectorInterSliceReduce)
    else {
        return;
    };
    if !chain.steps[k + 1..]
        .iter()
        .all(|s| s.keep.contains(&Slot::Packet))
    {
        return;
    }
    let step = &chain.steps[k];
    let result_kind = chain
        .steps
        .last()
        .and_then(|s| s.output.as_ref())
        .map(|t| t.kind);
    if result_kind != Some(declared.kind) {
        return;
    }
    let (Some(want), Some(have)) = (
        declared.get(Slot::Packet),
        step.input.as_ref().and_then(|t| t.get(Slot::Packet)),
    ) else {
        return;
    };
    let (Some(lw), Some(lh)) = (&want.layout, &have.layout) else {
        return;
    };
    if lw == lh {
        return;
    }
    let msg = format!(
        "the inter-slice reduce keeps Packet: the stream reaches it with Packet {} and leaves \
         with the same, but the result is declared with Packet {}. Only Slice and Time are \
         rewritten (into SliceOut and TimeOut)",
        have.text.trim(),
        want.text.trim()
    );
    let span = want.span.unwrap_or(step.span);
    let mut d = Diagnostic::new(&XSL_004, span, msg)
        .with_related(step.span, "the reduce rewrites only Slice and Time here");
    if let Some(sp) = want.span {
        d = d.with_edit(
            format!("declare Packet {}", have.text.trim()),
            false,
            sp,
            have.text.trim().to_string(),
        );
    }
    out.push(d);
}

/// The digits of Slice the reduce removes (those SliceOut does not keep), with their axis names.
fn reduced_digits<'s>(slice: &'s Layout, slice2: &Layout) -> Vec<(&'s Factor, &'s str)> {
    slice
        .dims
        .iter()
        .filter(|d| !slice2.dims.contains(d))
        .filter_map(|d| match d {
            Dim::Factor(f @ Factor { axis: Some(a), .. }) => Some((f, &*a.name)),
            _ => None,
        })
        .collect()
}

/// XSL-003: the block sums the slices of one cluster; a reduced axis that is also spread over
/// Cluster or Chip leaves one partial result per cluster or chip.
fn check_scope(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(slice), Some(slice2)) = (
        layout(step, false, Slot::Slice),
        layout(step, true, Slot::Slice),
    ) else {
        return;
    };
    if !(slice.is_regular() && slice2.is_regular()) {
        return;
    }
    for (_, name) in reduced_digits(slice, slice2) {
        for (slot, what) in [(Slot::Cluster, "Cluster"), (Slot::Chip, "Chip")] {
            let Some(l) = layout(step, false, slot) else {
                continue;
            };
            let Some(part) = l.dims.iter().find(
                |d| matches!(d, Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name == name),
            ) else {
                continue;
            };
            let text = step
                .input
                .as_ref()
                .and_then(|t| t.get(slot))
                .map_or_else(|| format!("m![{l}]"), |v| v.text.clone());
            let msg = format!(
                "the inter-slice reduce sums over the {} slices of one cluster, but the reduced \
                 axis {name} is also spread over {what} {text}{}: each {} keeps its own \
                 partial result. Combine them with the chip/cluster reduce pattern (DMA, an \
                 interleaved fetch and a Vector Engine binary op), or map {name} to Slice only",
                slice.size,
                {
                    let p = format!("m![{}]", render(std::slice::from_ref(part)));
                    if p == text {
                        String::new()
                    } else {
                        format!(" ({p})")
                    }
                },
                what.to_ascii_lowercase(),
            );
            let span = step.generics.first().map_or(step.span, |a| a.span);
            out.push(Diagnostic::new(&XSL_003, span, msg));
            return;
        }
    }
}

/// Cycles below which the inter-slice tail is not worth a hint, even when it dominates.
const TAIL_WORTH_REPORTING: u64 = 64;

/// XSL-006: the ring-style tail (about one cycle per slice of the reduction group, L4369,
/// L6743-L6749) dominates when each slice streams fewer flits than the group has slices.
fn check_tail(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
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

fn layout(step: &Step, out: bool, slot: Slot) -> Option<&Layout> {
    let ty = if out {
        step.output.as_ref()
    } else {
        step.input.as_ref()
    };
    ty?.get(slot)?.layout.as_deref()
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
    if slice2.size != slice.size {
        slice_out_size(step, slice, slice2, out);
        return;
    }
    time_out_follows(step, time, slice2, time2, out);
}

/// XSL-005 on a SliceOut of another size than Slice: the reduced factor's positions are to be
/// filled; the fix fills them with padding (Dummy) in place.
fn slice_out_size(step: &Step, slice: &Layout, slice2: &Layout, out: &mut Vec<Diagnostic>) {
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
    let arg_slice = step.generics.first().filter(|a| a.text.trim() != "_");
    let at = output_arg(step, Some(0), Slot::Slice).map(|a| a.span);
    let mut d = at_arg(&XSL_005, step, at, msg);
    if let Some(a) = arg_slice {
        d = d.with_edit(
            format!("fill the reduced positions with padding: m![{dummy}]"),
            false,
            a.span,
            format!("m![{dummy}]"),
        );
    }
    out.push(d);
}

/// XSL-005 on TimeOut: Time without the Time factors promoted into SliceOut (a partial
/// promotion, a piece of a Time factor, is not decided here).
fn time_out_follows(
    step: &Step,
    time: &Layout,
    slice2: &Layout,
    time2: &Layout,
    out: &mut Vec<Diagnostic>,
) {
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
    let arg_time = step.generics.get(1).filter(|a| a.text.trim() != "_");
    let at = output_arg(step, Some(1), Slot::Time).map(|a| a.span);
    let mut d = at_arg(&XSL_005, step, at, msg);
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
            .diagnostics()
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

    fn codes_of(src: &str) -> Vec<(String, String)> {
        analyse_text(src)
            .diagnostics()
            .iter()
            .map(|x| (x.code().to_string(), x.message.clone()))
            .collect()
    }

    #[test]
    fn l6736_cluster_part_of_the_reduced_axis() {
        // L6736: the reduction happens within one 256-slice cluster.
        let src = "axes![R = 8, A = 512];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![R / 4], m![A / 8, R % 4], m![1], m![A % 8]>) {\n    c.vector_init().vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::AddSat).vector_final();\n}\n";
        let d = codes_of(src);
        assert!(
            d.iter().any(|(c, m)| c == "XSL-003"
                && m.contains("Cluster m![R / 4]")
                && m.contains("the 256 slices")),
            "{d:?}"
        );
    }

    #[test]
    fn xsl_003_names_the_slices_of_a_smaller_device() {
        // furiosa-opt-std 0.6 at one processing element: a cluster of 64 slices.
        let src = "use furiosa_opt_std::prelude::*;\naxes![R = 8, A = 128];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![R / 4], m![1], m![A / 8, R % 4], m![1], m![A % 8]>) {\n    c.vector_init().vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::AddSat).vector_final();\n}\n";
        let d = codes_of(src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "XSL-003" && m.contains("the 64 slices")),
            "{d:?}"
        );
    }

    #[test]
    fn l6737_declared_packet_and_l4369_ring_tail() {
        // L6737: Packet does not change; L4610-L4624 with a different declared Packet.
        let src = "axes![R = 4, A = 512];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, R], m![1], m![A % 8]>) -> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 4 # 8]> {\n    c.vector_init().vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::AddSat).vector_final()\n}\n";
        let d = codes_of(src);
        assert!(d.iter().any(|(c, _)| c == "XSL-004"), "{d:?}");
        assert!(codes_of(&src.replace("m![A % 4 # 8]", "m![A % 8]")).is_empty());
        // L4369: 256 slices = 256 cycles of tail; one flit per slice does not hide it.
        let src = "axes![R = 256, A = 8, B = 1024];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, f32, m![1], m![1 # 2], m![R], m![1], m![A]>) {\n    c.vector_init().vector_inter_slice_reduce::<m![1 # 256], m![1]>(InterSliceReduceOpF32::Add).vector_final();\n}\n";
        let d = codes_of(src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "XSL-006" && m.contains("about 256 cycles")),
            "{d:?}"
        );
        let hidden = src
            .replace("m![R], m![1]", "m![R], m![B]")
            .replace("<m![1 # 256], m![1]>", "<m![1 # 256], m![B]>");
        assert!(codes_of(&hidden).is_empty(), "{:?}", codes_of(&hidden));
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

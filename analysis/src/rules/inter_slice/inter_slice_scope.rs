//! XSL-003: the inter-slice block sums the slices of one cluster, so a reduced axis also
//! spread over Cluster or Chip leaves one partial result per cluster or chip.

use super::layouts::{layout, reduced_digits, render};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, Step};
use crate::rule::{Generations, Rule, Status};

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

/// XSL-003: the block sums the slices of one cluster; a reduced axis that is also spread over
/// Cluster or Chip leaves one partial result per cluster or chip.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
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

#[cfg(test)]
mod tests {
    use super::super::tests::codes_of;

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
}

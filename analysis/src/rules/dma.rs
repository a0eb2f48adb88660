//! DMA: the DMA engines between HBM and DM (constraints.md §18). Address alignment is ALN-002.

use super::FnContext;
use super::alignment::canonical;
use super::registry::{Rule, Status};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Kind;

const NEEDS_DERIVE: &str =
    "needs the DMA stream derivation (analysis/src/derive, issue 4), not available yet";

pub const RULES: &[Rule] = &[
    Rule {
        code: "DMA-001",
        name: "dma-structural-forms",
        severity: Severity::Error,
        status: Status::Planned("encoded in the `to_dm`/`to_hbm` signatures; rustc reports it"),
        summary: "DMA In/Out/base take the structural form of their media",
        docs: "HBM/SPM tensors have Chip and Element; DM tensors add Cluster and Slice.",
        bad: "",
        good: "",
        manual: "L2415-L2421",
    },
    Rule {
        code: "DMA-002",
        name: "dm-spatial-dimensions",
        severity: Severity::Error,
        status: Status::Planned(
            "needs the model's type inference to say when Cluster/Slice are left to inference",
        ),
        summary: "DM tensor specifications name Chip, Cluster and Slice",
        docs: "`to_dm` without Cluster and Slice lets inference pick sizes that may break CAP-002/003.",
        bad: "",
        good: "",
        manual: "seed 000 L175",
    },
    Rule {
        code: "DMA-003",
        name: "dma-alignment",
        severity: Severity::Error,
        status: Status::Planned("reported as ALN-002, ALN-003 and ALN-004"),
        summary: "DMA alignment and the 4,096-byte packet limit",
        docs: "See ALN-002, ALN-003 and ALN-004.",
        bad: "",
        good: "",
        manual: "L2425-L2429",
    },
    Rule {
        code: "DMA-004",
        name: "dma-tensor-to-tensor",
        severity: Severity::Error,
        status: Status::Planned("the API offers no other DMA forms; nothing to match"),
        summary: "DMA moves only tensor to tensor between HBM, DM and SPM",
        docs: "All nine source-destination pairs between DM, SPM and HBM are tensor moves.",
        bad: "",
        good: "",
        manual: "seed 000 L33, L196",
    },
    Rule {
        code: "DMA-005",
        name: "dma-aggregate-media",
        severity: Severity::Error,
        status: Status::Planned("no per-engine DMA stream API is documented"),
        summary: "Heterogeneous aggregates use one media pair and one mapping",
        docs: "Every participating DMA engine uses the same input and output media types.",
        bad: "",
        good: "",
        manual: "seed 000 L140-L142",
    },
    Rule {
        code: "DMA-006",
        name: "spm-same-chip",
        severity: Severity::Error,
        status: Status::Planned("no SPM tensor type exists in the API (constraints.md §22 A-16)"),
        summary: "SPM transfers stay on one chip",
        docs: "Scratchpad memory is restricted to same-chip transfers.",
        bad: "",
        good: "",
        manual: "seed 000 L469-L471; L2943-L2944",
    },
    Rule {
        code: "DMA-007",
        name: "dma-descriptor-ranges",
        severity: Severity::Error,
        status: Status::Planned("no API for explicit DMA engine selection is documented"),
        summary: "DMA descriptor indices stay in range",
        docs: "Chip < NUM_CHIPS, cluster in {0, 1}, DMN index 0-7.",
        bad: "",
        good: "",
        manual: "seed 000 L160-L163, L50, L477",
    },
    Rule {
        code: "DMA-008",
        name: "dma-uneven-distribution",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Axes that do not divide across DMNs need segmented commands",
        docs: "Pad the axis in source and destination so it divides.",
        bad: "",
        good: "",
        manual: "seed 000 L439, L454, L474",
    },
    Rule {
        code: "DMA-009",
        name: "dma-startup-cost",
        severity: Severity::Perf,
        status: Status::Planned("needs cross-statement analysis of adjacent transfers"),
        summary: "Each DMA command costs about 500 cycles to start",
        docs: "Merge small adjacent transfers.",
        bad: "",
        good: "",
        manual: "seed 000 L113, L212, L473",
    },
    Rule {
        code: "DMA-010",
        name: "dma-bad-divisor",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Innermost runs over 4,096 bytes without a good divisor degrade to tiny packets",
        docs: "A 4,099-byte run (prime) moves one byte per request; pad it.",
        bad: "",
        good: "",
        manual: "seed 000 L115-L118; L2428-L2429",
    },
    Rule {
        code: "DMA-011",
        name: "dma-interleaving",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Interleave DMNs and slices in DM, channels in HBM",
        docs: "Alternate the two DMNs per cluster and toggle HBM channel bits in the inner loops.",
        bad: "",
        good: "",
        manual: "L2854-L2861, L2883-L2895, L2987-L2988",
    },
    Rule {
        code: "DMA-012",
        name: "dma-unneeded-hop",
        severity: Severity::Perf,
        status: Status::Planned("needs cross-statement data-flow analysis"),
        summary: "Avoid routing through an intermediate tier",
        docs: "HBM → SPM → DM when HBM → DM suffices adds latency.",
        bad: "",
        good: "",
        manual: "seed 000 L3; L2851",
    },
    Rule {
        code: "DMA-013",
        name: "dma-dtype",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "The DMA engine moves i4, i8, f8e4m3, f8e5m2, i16, f16, bf16, i32 and f32",
        docs: "The DMA descriptor's dtype field lists i4, i8, f8e4m3, f8e5m2, i16, fp16, bf16, i32 and \
               f32. i5 and i9 exist only as fetch-adapter conversion targets inside the Tensor Unit; a \
               tensor of those types cannot be moved between HBM and DM. Store the data as i8/i16 \
               (or i4) and convert at fetch.",
        bad: "fn k(ctx: &mut Context, h: &HbmTensor<i9, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
        good: "fn k(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
        manual: "L2525",
    },
];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            let dma = match step.method.as_str() {
                "to_dm" => true,
                "to_hbm" => step.input.as_ref().is_some_and(|t| t.kind == Kind::Dm),
                _ => false,
            };
            if !dma {
                continue;
            }
            let Some(d) = step
                .input
                .as_ref()
                .and_then(|t| t.dtype.as_deref())
                .or_else(|| step.output.as_ref().and_then(|t| t.dtype.as_deref()))
            else {
                continue;
            };
            if crate::model::types::dtype_bits(canonical(d)).is_none() {
                continue;
            }
            if !cx.target.dma_dtypes.contains(&canonical(d)) {
                out.push(Diagnostic::new(
                    "DMA-013",
                    step.span,
                    format!(
                        "the DMA engine does not move {d} tensors; it moves {}",
                        cx.target.dma_dtypes.join(", ")
                    ),
                ));
            }
        }
    }
}

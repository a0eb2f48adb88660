//! DMA: the DMA engines between HBM and DM (constraints.md §18). Address alignment is ALN-002.

use super::context::{FnContext, at_arg};
use crate::derive::dma::{DmaOp, DmaPair, Media, partial_share, toggles_stack_bit};
use crate::derive::{Config, bytes, contiguous_elements};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::mapping::edit::pad_innermost;
use crate::mapping::layout::Dim;
use crate::model::{Dtype, Kind, Method, Slot, Step, written};
use crate::rule::{Generations, Rule, Status};

pub const DMA_001: Rule = Rule {
    code: "DMA-001",
    name: "dma-structural-forms",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the `to_dm`/`to_hbm` signatures accept only the legal structural forms, so rustc \
         rejects any other before visa-lint could see it",
    ),
    summary: "DMA In/Out/base take the structural form of their media",
    docs: "HBM/SPM tensors have Chip and Element; DM tensors add Cluster and Slice.",
    bad: "",
    good: "",
    manual: "L2415-L2421",
    generations: Generations::Both,
};

pub const DMA_002: Rule = Rule {
    code: "DMA-002",
    name: "dm-spatial-dimensions",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "DM tensor specifications name Chip, Cluster and Slice",
    docs: "A DM tensor specification must include the chip, cluster and slice dimensions to \
           identify the exact memory location. visa-lint reports `to_dm` calls whose Cluster and \
           Slice mappings are written nowhere (no turbofish, no `let` annotation, no return \
           type): inference may then pick sizes that break CAP-002/CAP-003. Write them, for \
           example `to_dm::<m![1], m![A # 256], m![B]>(..)`.",
    bad: "let dm = hbm.to_dm(&mut ctx.tdma, 0);",
    good: "let dm = hbm.to_dm::<m![1], m![A # 256], m![B]>(&mut ctx.tdma, 0);",
    manual: "seed 000 L175; L2527",
    generations: Generations::Both,
};

pub const DMA_003: Rule = Rule {
    code: "DMA-003",
    name: "dma-hbm-read-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An HBM-to-DM transfer reads HBM from an 8-byte-aligned address",
    docs: "HBM-to-DM transfers need 8-byte alignment of the read address, the write address and \
           the packet size whatever the alignment table says. The DM write address is ALN-002, \
           the packet ALN-003, the 4,096-byte limit ALN-004; DMA-003 reports the HBM read \
           address when it is a constant: the source tensor was placed by \
           `to_hbm(&mut ctx.pdma, addr)` in the same function at an address that is not a \
           multiple of 8. Place the HBM tensor at a multiple of 8 (256 for throughput).",
    bad: "let h = host.to_hbm(&mut ctx.pdma, 0x1004).await; let d = h.to_dm::<..>(&mut ctx.tdma, 0);",
    good: "let h = host.to_hbm(&mut ctx.pdma, 0x1000).await; let d = h.to_dm::<..>(&mut ctx.tdma, 0);",
    manual: "L2425-L2427, L2834",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 places HBM tensors itself and takes no address (CHANGES.md:26-32), so \
         there is no HBM address to check",
    ),
};

pub const DMA_004: Rule = Rule {
    code: "DMA-004",
    name: "dma-tensor-to-tensor",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the API has only tensor-to-tensor DMA methods (to_dm, to_hbm); the manual shows no \
         other DMA form that could be written",
    ),
    summary: "DMA moves only tensor to tensor between HBM, DM and SPM",
    docs: "All nine source-destination pairs between DM, SPM and HBM are tensor moves.",
    bad: "",
    good: "",
    manual: "seed 000 L33, L196",
    generations: Generations::Both,
};

pub const DMA_005: Rule = Rule {
    code: "DMA-005",
    name: "dma-aggregate-media",
    severity: Severity::Error,
    status: Status::Unreachable(
        "no per-engine DMA stream API is documented (the manual describes heterogeneous \
         aggregates in prose only)",
    ),
    summary: "Heterogeneous aggregates use one media pair and one mapping",
    docs: "Every participating DMA engine uses the same input and output media types.",
    bad: "",
    good: "",
    manual: "seed 000 L140-L142",
    generations: Generations::Both,
};

pub const DMA_006: Rule = Rule {
    code: "DMA-006",
    name: "spm-same-chip",
    severity: Severity::Error,
    status: Status::Unreachable("no SPM tensor type exists in the API (constraints.md §22 A-16)"),
    summary: "SPM transfers stay on one chip",
    docs: "Scratchpad memory is restricted to same-chip transfers.",
    bad: "",
    good: "",
    manual: "seed 000 L469-L471; L2943-L2944",
    generations: Generations::Both,
};

pub const DMA_007: Rule = Rule {
    code: "DMA-007",
    name: "dma-descriptor-ranges",
    severity: Severity::Error,
    status: Status::Unreachable("no API for explicit DMA engine selection is documented"),
    summary: "DMA descriptor indices stay in range",
    docs: "Chip < NUM_CHIPS, cluster in {0, 1}, DMN index 0-7.",
    bad: "",
    good: "",
    manual: "seed 000 L160-L163, L50, L477",
    generations: Generations::Both,
};

pub const DMA_008: Rule = Rule {
    code: "DMA-008",
    name: "dma-uneven-distribution",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Axes that do not divide across DMNs need segmented commands",
    docs: "A DM transfer is spread over the DMA Engines, one per pair of DMNs (64 slices of a \
           cluster each, seed 000 L50, L477). When an axis is padded in the DM tensor's layout \
           and split between the Slice digits that select the engine and digits below them \
           (`A = 15` as `A # 16`: `Slice = m![A # 16 / 4, A # 16 / 2 % 2, B]`, Element \
           `m![A # 16 % 2, C]`), the engine that holds the last real positions has a share that \
           is no single loop nest (3 of 4 A positions), and it must not write the extra one: the \
           compiler segments its transfer into several DMA commands, each paying the ~500-cycle \
           startup (1192 instead of 756 cycles in seed 000 L405-L454). visa-lint reports \
           `to_dm` / `to_hbm` whose DM-side layout needs that, with the command count. A \
           padding that leaves whole engine shares (or one smaller loop) is not reported. \
           Choose a size that divides across the engines, or pad the axis in both source and \
           destination so the padding moves as data.",
    bad: "axes![D = 4, A = 15, B = 32, C = 256];\n// DM: Slice m![A # 16 / 4, A # 16 / 2 % 2, B], Element m![A # 16 % 2, C]\ndm.to_hbm(&mut ctx.pdma, 0)",
    good: "axes![D = 4, A = 16, B = 32, C = 256]; // same layout, A divides",
    manual: "seed 000 L439, L454, L474",
    generations: Generations::Both,
};

pub const DMA_009: Rule = Rule {
    code: "DMA-009",
    name: "dma-startup-cost",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Each DMA command costs about 500 cycles to start: merge small adjacent transfers",
    docs: "Each DMA operation incurs about 500 cycles of startup before data moves (seed 000 \
           L113, L212, L473), so a transfer whose data takes fewer cycles than that is mostly \
           overhead. visa-lint reports consecutive `to_dm` / `to_hbm` transfers of tensors of the \
           same type whose sources and destinations both lie back to back at constant addresses \
           (the second source starts where the first ends, and so does the second destination, \
           per slice for DM), each moving fewer bytes than the DMA moves during the startup \
           (256 B/cycle): one transfer of the pair, with an outer axis of 2, moves the same data \
           with one startup. Transfers whose source is a kernel parameter have no address and \
           are not compared.",
    bad: "let r0 = s0.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 0x4000);\nlet r1 = s1.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 0x4040); // s1 follows s0 in HBM",
    good: "let r = s.to_dm::<m![1 # 2], m![S], m![X, B]>(&mut ctx.tdma, 0x4000); // X = 2: both halves",
    manual: "seed 000 L113, L212, L473",
    generations: Generations::VisaStdOnly(
        "it compares transfers at constant addresses, and furiosa-opt-std 0.6 has no addresses \
         (CHANGES.md:26-32)",
    ),
};

pub const DMA_010: Rule = Rule {
    code: "DMA-010",
    name: "dma-bad-divisor",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Innermost runs over 4,096 bytes without a good divisor degrade to tiny packets",
    docs: "The DMA packet divides the innermost contiguous run and is at most 4,096 bytes; a run \
           without a divisor between 256 and 4,096 (4,099 bytes is prime) moves tiny packets, \
           one 256-byte request each. visa-lint derives the packet of every `to_dm`/`to_hbm` \
           and reports it with the request counts. Pad the innermost axis to a multiple of \
           256 bytes (or split the command, about 500 cycles each).",
    bad: "axes![A = 2, C = 4099]; h.to_dm::<m![1], m![1], m![A, C]>(..) // 8,198-byte run: 2-byte packets",
    good: "axes![A = 2, C = 4099]; h.to_dm::<m![1], m![1], m![A, C # 4352]>(..)",
    manual: "L2469-L2472, L2593-L2594",
    generations: Generations::Both,
};

pub const DMA_011: Rule = Rule {
    code: "DMA-011",
    name: "dma-interleaving",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Toggle the HBM stack bit (address bit 8) in the DMA's inner loops",
    docs: "HBM channel selection uses address bits 9-28 and the stack bit is bit 8; an access \
           pattern that never toggles bit 8 uses 16 of the 32 channels and halves the bandwidth \
           (the manual's Example 5: 1,857 instead of about 1,000 cycles). visa-lint derives the \
           HBM read side of every DMA and reports packets of at most 256 bytes when no loop of the \
           stream toggles bit 8 (any loop counts: Example 4's `C / 256` loop of stride 256 gives \
           all 32 channels although the slice loops are inside it). Reorder the stream (an HBM stride of 256 in an inner \
           loop) or make the contiguous run at least 512 bytes. DM-side DMN interleaving is not \
           checked.",
    bad: "axes![B = 64, C = 8, D = 512]; // HBM m![B, C, D], DM element m![C, D % 256]",
    good: "axes![B = 64, C = 8, D = 512]; // HBM m![B, C, D], DM element m![C, D]",
    manual: "L2720-L2756, L2854-L2861, L2987-L2988",
    generations: Generations::Both,
};

pub const DMA_012: Rule = Rule {
    code: "DMA-012",
    name: "dma-unneeded-hop",
    severity: Severity::Perf,
    status: Status::Unreachable(
        "no SPM tensor type exists in the API (constraints.md §22 A-16), so no intermediate-tier \
         hop can be written",
    ),
    summary: "Avoid routing through an intermediate tier",
    docs: "HBM → SPM → DM when HBM → DM suffices adds latency.",
    bad: "",
    good: "",
    manual: "seed 000 L3; L2851",
    generations: Generations::Both,
};

pub const DMA_013: Rule = Rule {
    code: "DMA-013",
    name: "dma-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The DMA engine moves i4, i8, f8e4m3, f8e5m2, i16, f16, bf16, i32 and f32 (furiosa-opt-std: its storable scalars)",
    docs: "The DMA descriptor's dtype field lists i4, i8, f8e4m3, f8e5m2, i16, fp16, bf16, i32 and \
           f32. i5 and i9 exist only as fetch-adapter conversion targets inside the Tensor Unit; a \
           tensor of those types cannot be moved between HBM and DM. Store the data as i8/i16 \
           (or i4) and convert at fetch. furiosa-opt-std 0.6 stores i4, i8, u8, i16, i32, the \
           packed f4e2m1, f8e4m3, f8e5m2, bf16 and f32: no f16, and i5/i9 still only in the \
           stream.",
    bad: "fn k(ctx: &mut Context, h: &HbmTensor<i9, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
    good: "fn k(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A]>) { h.to_dm::<..>(&mut ctx.tdma, 0); }",
    manual: "L2525",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 stores its `MaterializableScalar`s, i4, i8, u8, i16, i32, f4e2m1, \
         f8e4m3, f8e5m2, bf16 and f32 (`furiosa-opt-std/src/scalar.rs:140,172-183,916,1091`), \
         which an HBM tensor's views and DMA bind (`src/tensor/memory.rs:339-370`): f16 left the \
         DMA dtype listing (CHANGES.md:33-35), u8 and the packed f4e2m1 joined it, and the i5/i9 \
         staging types are not storable (`scalar.rs:912-916`); visa-lint checks that list there",
    ),
};

pub const SEQ_012: Rule = Rule {
    code: "SEQ-012",
    name: "dma-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "DMA sequencers have 8 entries of at most 65,536 iterations",
    docs: "The DMA engine chains a read and a write sequencer with shared loop sizes and their \
           own strides (one DmaSequencer); they obey the sequencer limits (8 entries, 65,536 \
           iterations each) and `stride0` is 1..=4,096 bytes dividing the last consecutive \
           entry (visa-lint derives it that way, ALN-004 and DMA-010 report poor choices). \
           visa-lint derives the pair for `to_dm`/`to_hbm` and reports an entry count or size \
           over the limit (SEQ-001/SEQ-002 cover the fetch and commit sequencers). Merge axes \
           that are contiguous on both sides or split the transfer.",
    bad: "axes![A = 131072, B = 2]; h.to_dm::<m![1], m![1], m![B, A]>(..) // HBM m![A, B]: entry 131072",
    good: "axes![A = 131072, B = 2]; h.to_dm::<m![1], m![1], m![A, B]>(..)",
    manual: "L1225, L2512, L2545, seed 000 L69, L94, L157-L158, L191",
    generations: Generations::Both,
};

pub const ALN_003: Rule = Rule {
    code: "ALN-003",
    name: "dma-packet-alignment",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A DMA packet written to DM (or moved HBM to DM) is a multiple of 8 bytes",
    docs: "The DMA packet (`stride0`) divides the innermost run of bytes that is contiguous in \
           both the source and the destination layouts; the manual requires it to be a multiple \
           of 8 bytes for DM writes and HBM-to-DM moves (L2425-L2427, L2834), or the transfer \
           fails with a hardware exception. visa-lint derives the DMA read/write sequencer pair \
           of `to_dm` (crate::derive::dma) and reports a common contiguous run that is not a \
           multiple of 8 bytes. Severity: a warning, not an error. The `furiosa_visa_std` \
           library these kernels are written against does not check DMA packets at all (its \
           transfers only check that the destination holds the source, see MAP-010), and the \
           vendor's own tested examples move 1- and 4-byte runs (a transposing `to_dm`), so \
           such a kernel runs on the library's simulator; later vendor libraries do assert an \
           8-byte DMA tail for writes into DM, and the manual says the hardware faults. Treat \
           the warning as a portability risk to real hardware and newer libraries. Pad the \
           innermost Element axis of the DM tensor (`m![A, C]` → `m![A, C # 16]` for i8, \
           C = 13): the padded positions are written with the packet; when the DM layout \
           reorders the source's innermost axis, transpose in the Tensor Unit instead.",
    bad: "axes![A = 3, C = 13]; let d = h.to_dm::<m![1], m![1], m![A, C]>(&mut ctx.tdma, 0); // 39-byte run",
    good: "axes![A = 3, C = 13]; let d = h.to_dm::<m![1], m![1], m![A, C # 16]>(&mut ctx.tdma, 0);",
    manual: "L2425-L2427, L2593, L2834",
    generations: Generations::Differs(
        "an error under furiosa-opt-std 0.6, whose DMA into DM asserts an 8-byte destination tail \
         (`assert_dma_layout`, `furiosa-opt-std/src/tensor/memory.rs:25-112`); a warning under \
         `furiosa_visa_std`, which checks no DMA packet (the hardware rule is L2425-L2427)",
    ),
};

pub const ALN_004: Rule = Rule {
    code: "ALN-004",
    name: "dma-packet-limit",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A DMA packet is at most 4,096 bytes (AXI: 256 beats of 16 bytes)",
    docs: "A DMA packet (`stride0`, 1..=4096) is at most 4,096 bytes and divides the innermost \
           contiguous run. When the run is longer and 4,096 does not divide it, the compiler \
           picks a smaller divisor; visa-lint reports the packet it derives when that divisor \
           is at least 256 bytes but its packets need more 256-byte requests than the run \
           itself (below 256 bytes it is the DMA-010 performance problem). Pad the innermost \
           axis so the run is a multiple of 4,096 bytes.",
    bad: "axes![S = 256, C = 8200]; h.to_dm::<m![1 # 2], m![S], m![C]>(&mut ctx.tdma, 0) // 1,640-byte packets, 7 requests each",
    good: "axes![S = 256, C = 8192]; h.to_dm::<m![1 # 2], m![S], m![C]>(&mut ctx.tdma, 0)",
    manual: "L2428-L2429, L2512, L2448",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    DMA_001, DMA_002, DMA_003, DMA_004, DMA_005, DMA_006, DMA_007, DMA_008, DMA_009, DMA_010,
    DMA_011, DMA_012, DMA_013, SEQ_012, ALN_003, ALN_004,
];

/// The DM tensor's Element as written for a DMA step: `to_dm`'s third turbofish argument, else
/// the annotation of the DM side's type.
fn dm_element(op: &DmaOp<'_>) -> Option<(Span, String)> {
    let (ty, k) = match op.dst_media {
        Media::Dm => (op.step.output.as_ref()?, 2),
        Media::Hbm => (op.step.input.as_ref()?, usize::MAX),
    };
    if let Some(a) = written(op.step, k) {
        return Some((a.span, a.text.clone()));
    }
    let mv = ty.get(Slot::Element)?;
    Some((mv.span?, mv.text.clone()))
}

fn dtype(step: &Step) -> Option<Dtype> {
    step.input
        .as_ref()
        .and_then(|t| t.dtype)
        .or_else(|| step.output.as_ref().and_then(|t| t.dtype))
}

/// A padding fix of the DM Element's innermost axis to `bytes` per row.
fn pad_fix(op: &DmaOp<'_>, d: Option<Dtype>, row_bytes: u64, diag: Diagnostic) -> Diagnostic {
    let Some((span, text)) = dm_element(op) else {
        return diag;
    };
    let Some(new) = d
        .and_then(|d| d.elems_for(row_bytes))
        .and_then(|n| pad_innermost(&text, n))
    else {
        return diag;
    };
    diag.with_edit(format!("pad the innermost axis: {new}"), false, span, new)
}

fn row_bytes(op: &DmaOp<'_>) -> Option<u64> {
    match op.packet.last()? {
        Dim::Factor(f) => Some(bytes(f.extent, op.bits)),
        Dim::Opaque(_) => None,
    }
}

/// ALN-003, ALN-004, DMA-010, DMA-011 and SEQ-012 on the derived DMA pair.
/// ALN-003 is an error under furiosa-opt-std, whose DMA asserts an 8-byte tail for every
/// write into DM (`tensor/memory.rs:25-112` at ebb846a); a warning under the manual's
/// library, which never checks it (see the rule's docs).
fn dma_tail_severity(cx: &FnContext<'_>, diag: Diagnostic) -> Diagnostic {
    match cx.model.library {
        Generation::OptStd => diag.with_severity(Severity::Error),
        Generation::VisaStd => diag,
    }
}

fn check_pair(cx: &FnContext<'_>, op: &DmaOp<'_>, p: &DmaPair, out: &mut Vec<Diagnostic>) {
    let t = cx.target;
    let d = dtype(op.step);
    // SEQ-012: the sequencer limits.
    for (side, cfg) in [("read", &p.read), ("write", &p.write)] {
        if cfg.entries.len() > t.sequencer_entries {
            out.push(Diagnostic::new(
                &SEQ_012,
                op.span,
                format!(
                    "the DMA {side} sequencer needs {} entries ({cfg}); a DMA sequencer has {}",
                    cfg.entries.len(),
                    t.sequencer_entries
                ),
            ));
            return;
        }
        // The innermost contiguous entry is cut into stride0 packets, and so are the packet's
        // entries when they are one run (`m![M, C]` like `m![Y]`); the loops must fit.
        let n = cfg.entries.len();
        let p = cfg.packet_entries.min(n);
        let loops = match cfg.entries.last() {
            Some(e)
                if e.stride == 1
                    && contiguous_elements(&cfg.entries[n - p..]) == cfg.packet_size =>
            {
                &cfg.entries[..n - p.max(1)]
            }
            Some(e) if e.stride == 1 => &cfg.entries[..n - 1],
            _ => &cfg.entries[..],
        };
        if let Some(e) = loops.iter().find(|e| e.size > t.sequencer_entry_size) {
            out.push(Diagnostic::new(
                &SEQ_012,
                op.span,
                format!(
                    "the DMA {side} sequencer ({cfg}) has an entry of {} iterations ({} : {}); an \
                     entry counts at most {}: make the axis contiguous on both sides so it becomes \
                     part of the packet, or split the transfer",
                    e.size, e.size, e.stride, t.sequencer_entry_size
                ),
            ));
            return;
        }
    }
    let run = p.run_bytes;
    let Some(stride0) = p.stride0 else {
        // ALN-003: no 8-byte packet divides the run.
        if op.align > 1 {
            let row = row_bytes(op).unwrap_or(run);
            if run < row {
                // The layouts disagree on the innermost axis: padding cannot help.
                let diag = at_arg(
                    &ALN_003,
                    op.step,
                    dm_element(op).map(|w| w.0),
                    format!(
                        "the DMA moves {run}-byte runs that are contiguous in both layouts (read \
                         {}, write {}): the DM layout reorders the source's innermost axis, and a \
                         DMA writing DM needs packets that are multiples of {} bytes; padding cannot \
                         lengthen a run that the reordering cuts, so keep the same innermost axis on \
                         both sides (transpose in the Tensor Unit instead)",
                        p.read, p.write, op.align
                    ),
                );
                out.push(dma_tail_severity(cx, diag));
                return;
            }
            let up = row.div_ceil(op.align).saturating_mul(op.align);
            let diag = at_arg(
                &ALN_003,
                op.step,
                dm_element(op).map(|w| w.0),
                format!(
                    "the DMA moves {run}-byte runs that are contiguous in both layouts (read \
                     {}, write {}); a DMA writing DM needs packets that are multiples of {} bytes, \
                     and none divides {run}: pad the DM tensor's innermost axis to {up} bytes",
                    p.read, p.write, op.align
                ),
            );
            out.push(dma_tail_severity(cx, pad_fix(op, d, up, diag)));
        }
        return;
    };
    let max = t.dma_packet_max_bytes;
    let req = t.dma_request_bytes;
    if run > max && stride0 < max {
        let packets = p.packets.unwrap_or(0);
        let requests = p.requests.unwrap_or(0);
        let full_requests = bytes(
            op.time
                .iter()
                .chain(op.packet.iter())
                .fold(1u64, |a, d| a.saturating_mul(d.extent())),
            op.bits,
        )
        .div_ceil(req);
        if stride0 < req {
            let row = row_bytes(op).unwrap_or(run);
            let up = row.div_ceil(max).saturating_mul(max);
            // At the DM Element the fix pads (the call when it is written nowhere).
            let diag = at_arg(
                &DMA_010,
                op.step,
                dm_element(op).map(|w| w.0),
                format!(
                    "the {run}-byte contiguous run has no divisor between {req} and {max} bytes, so \
                     the DMA moves {stride0}-byte packets: {packets} packets of one {req}-byte \
                     request each instead of about {full_requests} requests; pad the innermost axis \
                     to {up} bytes (a multiple of {max}) or split the command"
                ),
            );
            out.push(pad_fix(op, d, up, diag));
        } else if requests
            > run
                .div_ceil(req)
                .saturating_mul(packets / (run / stride0).max(1))
        {
            // The packets that divide the run waste part of their last request.
            out.push(Diagnostic::new(
                &ALN_004,
                op.span,
                format!(
                    "the {run}-byte contiguous run exceeds the {max}-byte DMA packet limit; the \
                     largest divisor within it is {stride0} bytes, so the DMA moves {packets} \
                     packets in {requests} requests ({} each) where {}-byte runs would need {}",
                    stride0.div_ceil(req),
                    run,
                    run.div_ceil(req)
                        .saturating_mul(packets / (run / stride0).max(1))
                ),
            ));
        }
        return;
    }
    check_stack_bit(cx, op, p, stride0, out);
}

/// DMA-011: the HBM side never toggles address bit 8 (the stack bit, L2744-L2746).
fn check_stack_bit(
    cx: &FnContext<'_>,
    op: &DmaOp<'_>,
    p: &DmaPair,
    stride0: u64,
    out: &mut Vec<Diagnostic>,
) {
    let req = cx.target.dma_request_bytes;
    let stack = req.saturating_mul(2);
    // Reads (the manual's Example 5); partial HBM writes are ALN-010's read-modify-write.
    if op.src_media != Media::Hbm {
        return;
    }
    let cfg: &Config = &p.read;
    if stride0 > req || p.packets.unwrap_or(0) < 2 {
        return;
    }
    if toggles_stack_bit(cfg, op.bits, stride0, cx.target.hbm_stack_bit) {
        return;
    }
    let n = cfg.entries.len();
    // The innermost loop, named in the message.
    let Some(inner) = cfg.entries[..n.saturating_sub(cfg.packet_entries)]
        .iter()
        .rev()
        .find(|e| e.size > 1)
    else {
        return;
    };
    let b = bytes(inner.stride, op.bits);
    out.push(Diagnostic::new(
        &DMA_011,
        op.span,
        format!(
            "the DMA reads HBM in {stride0}-byte packets and no loop of its stream toggles address \
             bit 8 (the stack bit; the innermost steps {b} bytes, {} : {} in {cfg}), so the \
             requests reach 16 of the 32 HBM channels and the bandwidth halves; make a loop's HBM \
             stride {req} bytes or the contiguous run at least {stack} bytes",
            inner.size, inner.stride
        ),
    ));
}

/// DMA-002: `to_dm` whose Cluster and Slice are written nowhere.
fn check_spatial_written(step: &Step, out: &mut Vec<Diagnostic>) {
    if step.method != Method::ToDm || written(step, 0).is_some() || written(step, 1).is_some() {
        return;
    }
    let known = |s: Slot| {
        step.output
            .as_ref()
            .and_then(|o| o.get(s))
            .is_some_and(|m| m.span.is_some())
    };
    if known(Slot::Cluster) || known(Slot::Slice) {
        return;
    }
    out.push(Diagnostic::new(
        &DMA_002,
        step.span,
        "`to_dm` leaves the DM tensor's Cluster and Slice to inference: a DM tensor specification \
         names chip, cluster and slice; write them (`to_dm::<Cluster, Slice, Element>`) or annotate \
         the binding"
            .to_string(),
    ));
}

/// DMA-003: the HBM source of `to_dm` was placed at a constant address that is not 8-aligned.
fn check_hbm_read_address(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let a = cx.target.dma_dm_align_bytes;
    // The placed HBM tensors by type, once (a lookup per DMA, not a scan of every tensor): a
    // DMA's source is known when exactly one placed HBM tensor has its type.
    let mut placed: std::collections::HashMap<
        &crate::model::TensorTy,
        (&crate::model::TensorVar, usize),
    > = std::collections::HashMap::new();
    for t in &cx.model.tensors {
        if matches!(t.ty.kind, Kind::Hbm) && t.address.is_some() {
            placed.entry(&t.ty).or_insert((t, 0)).1 += 1;
        }
    }
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method != Method::ToDm {
                continue;
            }
            let Some(i) = step.input.as_ref() else {
                continue;
            };
            let Some(&(t, 1)) = placed.get(i) else {
                continue;
            };
            let Some(addr) = t.address else { continue };
            if addr.is_multiple_of(a) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &DMA_003,
                    step.span,
                    format!(
                        "HBM-to-DM transfers read HBM from {a}-byte-aligned addresses; `{}` was \
                         placed at {addr}, {} bytes past a multiple of {a}",
                        t.name,
                        addr % a
                    ),
                )
                .with_related(t.span, format!("`{}` is placed here", t.name)),
            );
        }
    }
}

/// A DMA transfer straight from a tensor with a constant address to a constant address.
struct Transfer<'a> {
    step: &'a Step,
    src_name: &'a str,
    src: u64,
    dst: u64,
    /// Bytes one source / destination occupies from its address (per slice for DM).
    src_bytes: u64,
    dst_bytes: u64,
    /// Bytes the transfer moves (the HBM side's Element).
    moved: u64,
}

/// The written type of a tensor as text, to compare two transfers' types.
fn type_key(t: &crate::model::TensorTy) -> String {
    let mut k = format!("{:?}/{}", t.kind, t.dtype.map_or("?", Dtype::as_str));
    for (slot, mv) in &t.maps {
        k.push_str(&format!("/{slot:?}={}", mv.text));
    }
    k
}

fn element_bytes(t: &crate::model::TensorTy) -> Option<u64> {
    let d = t.dtype?;
    let n = t.get(Slot::Element)?.layout.as_deref()?.size;
    d.size_bytes(n)
}

/// DMA-009: back-to-back small transfers that one transfer would do with one startup.
fn check_startup(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let mut transfers: Vec<(Transfer<'_>, String)> = Vec::new();
    for chain in &cx.model.chains {
        let (Some(step), Some(recv)) = (chain.steps.first(), chain.receiver.as_deref()) else {
            continue;
        };
        if !step.method.is_dm_hbm_dma() {
            continue;
        }
        let (Some(i), Some(o), Some(dst)) = (&step.input, &step.output, step.address) else {
            continue;
        };
        let Some(var) = cx.model.tensors.iter().rev().find(|t| {
            t.name == recv && t.span.start < chain.span.start && type_key(&t.ty) == type_key(i)
        }) else {
            continue;
        };
        let Some(src) = var.address else { continue };
        let (Some(src_bytes), Some(dst_bytes)) = (element_bytes(i), element_bytes(o)) else {
            continue;
        };
        let hbm = |t: &crate::model::TensorTy| matches!(t.kind, Kind::Hbm | Kind::HbmView);
        let moved = if hbm(i) {
            src_bytes
        } else if hbm(o) {
            dst_bytes
        } else {
            continue;
        };
        let key = format!("{}|{}|{}", step.method, type_key(i), type_key(o));
        transfers.push((
            Transfer {
                step,
                src_name: &var.name,
                src,
                dst,
                src_bytes,
                dst_bytes,
                moved,
            },
            key,
        ));
    }
    let startup = cx.target.dma_startup_cycles;
    let bw = cx.target.dma_dm_bytes_per_cycle.max(1);
    for w in transfers.windows(2) {
        let ((a, ka), (b, kb)) = (&w[0], &w[1]);
        if ka != kb || a.step.span.start >= b.step.span.start {
            continue;
        }
        let cycles = a.moved.div_ceil(bw);
        if cycles >= startup {
            continue;
        }
        if a.src.checked_add(a.src_bytes) != Some(b.src)
            || a.dst.checked_add(a.dst_bytes) != Some(b.dst)
        {
            continue;
        }
        out.push(
            Diagnostic::new(
                &DMA_009,
                b.step.span,
                format!(
                    "this `{m}` continues the previous one: `{bn}` at {bs:#x} follows `{an}` \
                     ({asz} bytes from {as_:#x}) and the destination {bd:#x} follows {ad:#x} + {dsz} \
                     bytes; each DMA command costs ~{startup} cycles to start while each moves {mv} \
                     bytes in ~{cycles} cycles at {bw} B/cycle: one transfer of both (an outer axis \
                     of 2) saves ~{startup} cycles",
                    m = b.step.method,
                    bn = b.src_name,
                    bs = b.src,
                    an = a.src_name,
                    asz = a.src_bytes,
                    as_ = a.src,
                    bd = b.dst,
                    ad = a.dst,
                    dsz = a.dst_bytes,
                    mv = a.moved,
                ),
            )
            .with_related(a.step.span, "the previous transfer"),
        );
    }
}

/// One digit of an axis in a DM tensor: its weight in the axis, its extent, and whether it lies
/// in the Slice digits that select the DMA Engine.
/// DMA-008: a DM-side layout whose padded axis leaves one DMA Engine a share that needs several
/// commands (seed 000 L405-L454), as `derive::dma` derived it.
fn check_segmentation(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let seg = match cx.dma_ops.iter().find(|o| o.span == step.span) {
        Some(op) => op.segmented.clone(),
        // The other side is not known: the DM side's layout alone decides.
        None => {
            let ty = match step.method {
                Method::ToDm => step.output.as_ref(),
                Method::ToHbm => step.input.as_ref(),
                _ => None,
            };
            ty.filter(|t| matches!(t.kind, Kind::Dm | Kind::DmView | Kind::DmViewMut))
                .and_then(|t| partial_share(t, cx.target))
        }
    };
    let Some(seg) = seg else { return };
    let share = cx
        .target
        .slices_per_dmn
        .saturating_mul(cx.target.dmns_per_dma_engine);
    let startup = cx.target.dma_startup_cycles;
    let (axis, c, r, commands) = (&seg.axis, seg.share, seg.real, seg.count);
    let engines = axis.size.div_ceil(c);
    let first = axis.size - r;
    out.push(Diagnostic::new(
        &DMA_008,
        step.span,
        format!(
            "`{name}` ({name} = {size}) is padded to {padded} in the DM tensor and split across \
             the DMA Engines' {share}-slice shares, {c} of {name} each: the engine holding {name} \
             = {first}..{last} moves {r} of {c}, which is no single loop nest, so the compiler \
             segments its transfer into {commands} DMA commands (~{startup} cycles of startup \
             each: {extra} extra cycles on the slowest of {engines} engines). Choose a size of \
             {name} that divides into shares of {c}, or pad it in both source and destination",
            name = axis.name,
            size = axis.size,
            padded = seg
                .digits
                .iter()
                .try_fold(1u64, |a, d| a.checked_mul(d.extent))
                .unwrap_or(0),
            last = axis.size - 1,
            extra = (commands - 1).saturating_mul(startup),
        ),
    ));
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.dma_ops {
        if let Ok(p) = &op.pair {
            check_pair(cx, op, p, out);
        }
    }
    check_hbm_read_address(cx, out);
    for step in cx.model.chains.iter().flat_map(|c| c.steps.iter()) {
        check_segmentation(cx, step, out);
    }
    check_startup(cx, out);
    for chain in &cx.model.chains {
        for step in &chain.steps {
            check_spatial_written(step, out);
        }
    }
    for chain in &cx.model.chains {
        for step in &chain.steps {
            let dma = match step.method {
                Method::ToDm => true,
                Method::ToHbm => step.input.as_ref().is_some_and(|t| t.kind == Kind::Dm),
                _ => false,
            };
            if !dma {
                continue;
            }
            let Some(d) = step
                .input
                .as_ref()
                .and_then(|t| t.dtype)
                .or_else(|| step.output.as_ref().and_then(|t| t.dtype))
            else {
                continue;
            };
            check_dtype(cx, step, d, out);
        }
    }
}

/// DMA-013: the type of a tensor a DMA moves against the storable types of the crate's library.
fn check_dtype(cx: &FnContext<'_>, step: &Step, d: Dtype, out: &mut Vec<Diagnostic>) {
    let conversions = cx.conversions();
    if conversions.stores(d) {
        return;
    }
    let moved: Vec<&str> = conversions.storable.iter().map(|d| d.as_str()).collect();
    out.push(Diagnostic::new(
        &DMA_013,
        step.span,
        format!(
            "the DMA engine does not move {d} tensors; it moves {}",
            moved.join(", ")
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dm_to_hbm(axes: &str, slice: &str, element: &str) -> Vec<Diagnostic> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![{axes}];\n#[device(chip = 1)]\n\
             fn k(ctx: &mut Context, dm: &DmTensor<i8, m![1], m![1 # 2], m![{slice}], m![{element}]>) {{\n\
             dm.to_hbm(&mut ctx.tdma, 0);\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "DMA-008")
            .cloned()
            .collect()
    }

    #[test]
    fn tail_pad_fix_pads_an_innermost_term_with_operators() {
        // L1183: the DM Element m![B % 2] (bf16) keeps 4-byte rows; pad it to 8 bytes.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../fixtures/manual/1183_hbm_to_dm_fn.rs"),
            "ALN-003",
        );
        assert!(fixed.contains("m![B / 2], m![B % 2 # 4]>"), "{fixed}");
    }

    #[test]
    fn seed_000_example_6_golden() {
        // seed 000 L405-L454: A = 15 over 4 DMNs; DMN #3 runs two commands (1192 vs 756 cycles:
        // one extra 500-cycle startup).
        let d = dm_to_hbm(
            "A = 15, B = 32, C = 256",
            "A # 16 / 4, A # 16 / 2 % 2, B",
            "A # 16 % 2, C",
        );
        assert_eq!(d.len(), 1, "{d:?}");
        let m = &d[0].message;
        assert!(m.contains("A = 12..14 moves 3 of 4"), "{m}");
        assert!(m.contains("2 DMA commands"), "{m}");
        assert!(m.contains("500 extra cycles"), "{m}");
        assert!(m.contains("of 4 engines"), "{m}");
    }

    #[test]
    fn whole_shares_and_single_loops_are_silent() {
        // A divides: no padding.
        assert!(dm_to_hbm("A = 16, B = 32, C = 256", "A / 4, A / 2 % 2, B", "A % 2, C").is_empty());
        // The padding lies in one Slice digit: the last engine runs one shorter loop.
        assert!(dm_to_hbm("A = 200, C = 256", "A # 256", "C").is_empty());
        // The remainder is whole blocks of the lower digits: one command.
        assert!(
            dm_to_hbm(
                "A = 14, B = 32, C = 256",
                "A # 16 / 4, A # 16 / 2 % 2, B",
                "A # 16 % 2, C"
            )
            .is_empty()
        );
    }

    fn reload(b: u64, s1: u64, d1: u64) -> Vec<String> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![S = 256, B = {b}];\n#[device(chip = 1)]\n\
             fn k(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![B]>,\n\
             b: &DmTensor<i8, m![1], m![1 # 2], m![S], m![B]>) {{\n\
             let s0: HbmTensor<i8, m![1], m![S, B]> = a.to_hbm(&mut ctx.tdma, 0);\n\
             let s1: HbmTensor<i8, m![1], m![S, B]> = b.to_hbm(&mut ctx.tdma, {s1});\n\
             let r0 = s0.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 65536);\n\
             let r1 = s1.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, {d1});\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "DMA-009")
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn adjacent_small_transfers_merge() {
        // seed 000 L113: ~500 cycles per DMA operation; 16 KB at 256 B/cycle is 64 cycles.
        let d = reload(64, 16384, 65536 + 64);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("16384 bytes in ~64 cycles"), "{}", d[0]);
        assert!(d[0].contains("~500 cycles to start"), "{}", d[0]);
        // Not adjacent in HBM, or in DM: nothing to merge.
        assert!(reload(64, 16384 + 256, 65536 + 64).is_empty());
        assert!(reload(64, 16384, 65536 + 128).is_empty());
        // 256 KB take 1024 cycles, more than the startup: not reported.
        assert!(reload(1024, 262144, 65536 + 1024).is_empty());
    }
}

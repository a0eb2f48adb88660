//! CAP: the chip, cluster, slice and row sizes and the DM/TRF/VRF/HBM capacities (constraints.md §4),
//! and KRN-010 (the chip count of `#[device(chip = N)]`, catalog §2).
//!
//! Every mapping is checked once, where it is written: a parameter type, a `let` annotation or
//! a turbofish argument (`MapVal::span`). A mapping inferred from elsewhere is checked where it
//! is written; a mapping alias (`type Slice = m![...]`) is reported once per function, at its
//! first use, naming the alias (its definition is what to edit).

use super::context::{FnContext, at_arg};
use crate::derive;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::model::{
    Arg, Chain, Dtype, Engine, FnKind, Kind, MapVal, Method, Origin, Slot, Step, TensorTy, pad_edit,
};
use crate::rule::{Generations, Rule, Status};
use std::collections::HashSet;

pub const CAP_001: Rule = Rule {
    code: "CAP-001",
    name: "chip-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "In a `#[device(chip = N)]` kernel every Chip mapping has size exactly N",
    docs: "The runtime launches kernels at chip granularity, so a device tensor's Chip mapping \
           covers exactly the kernel's chips: `Chip::SIZE == NUM_CHIPS`. Use fewer chips by \
           padding (`m![1]` → `m![1 # N]`); a Chip mapping larger than N does not fit and its \
           extra factors belong in Element (or the kernel runs on more chips). Checked on every \
           Chip mapping written in a `#[device]` kernel (parameters, `let` annotations, \
           turbofish); helper functions are generic over the launch and are not checked \
           (constraints.md §22 A-2). The manual's first program puts `HbmTensor<i8, m![A], m![B]>` \
           (A = 8) under `chip = 1` (§22 A-12). KRN-010 reports a `#[device]` attribute whose chip \
           count is missing; this rule compares the mappings with it.",
    bad: "axes![A = 8, B = 512];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![A], m![B]>) {}",
    good: "axes![A = 8, B = 512];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![A, B]>) {}",
    manual: "L1079, L1083-L1084, L1751, L55-L63",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `#[device]` without `chip` runs on one chip \
         (`furiosa-opt-macro/src/lib.rs:179-187`), so there the Chip mappings of such a kernel \
         have size 1; under the manual's library it is KRN-010 and the Chip mappings are not \
         checked",
    ),
};

pub const CAP_002: Rule = Rule {
    code: "CAP-002",
    name: "cluster-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every Cluster mapping of a device kernel has size exactly 2",
    docs: "A chip has 2 clusters and the runtime uses both (L1080). `furiosa_visa_std` asserts \
           it where a tensor enters the Tensor Unit: `BeginTensor::fetch` panics with \
           \"Cluster size must be 2, got {n}\". A single-cluster kernel writes `m![1 # 2]`. \
           Checked in `#[device]` kernels (see CAP-001 for helper functions). Severity: an \
           error for a Cluster mapping that reaches the Tensor Unit (a `begin`/fetch, switch, \
           collect, contraction, vector, cast, transpose or commit step, or the tensor a commit \
           produces); a warning for a DM or HBM tensor that only DMA, views and tiles touch, \
           which the library does not check (its transfers never look at the Cluster size, and \
           the vendor's tested examples move such tensors). The warning names the risk: the \
           manual states the size for every tensor, and fetching that tensor later panics.",
    bad: "a: &DmTensor<i8, m![1], m![1], m![A / 8 # 256], m![A % 8]>",
    good: "a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>",
    manual: "L1080, L1091-L1092, L1709, L130",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 allows a Cluster of 1 or 2 \
         (`furiosa-opt-std/src/constraints.rs:35-45`) and lays a kernel over the grid of its \
         `#[device(pe)]`: 1 cluster for 1, 2 or 4 processing elements, 2 for 8, the default \
         (`furiosa-opt-examples/src/pe_count.rs:14-20`); visa-lint asks for that grid's size there, \
         as an error outside {1, 2} (the library's assertion) and a warning for the other \
         topology's size, which the library accepts",
    ),
};

pub const CAP_003: Rule = Rule {
    code: "CAP-003",
    name: "slice-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every Slice mapping of a device kernel has size exactly 256",
    docs: "A cluster has 256 slices and partial-cluster operation is not supported (L1081): \
           `furiosa_visa_std`'s `BeginTensor::fetch` asserts \"Slice size must be 256, got \
           {n}\" and the Switch Engine requires `InSlice::SIZE = OutSlice::SIZE`. Pad a \
           smaller mapping (`m![A / 8]` of size 64 → `m![A / 8 # 256]`); a larger one must \
           move factors into Time or Element. Checked in `#[device]` kernels (see CAP-001). \
           Severity: an error for a Slice mapping that reaches the Tensor Unit (as CAP-002); a \
           warning for a DM or HBM tensor only DMA, views and tiles touch: the library does not \
           check those (the vendor's tested `view_padding` example keeps a DM tensor of 4 \
           slices), but the manual states the size for every tensor and fetching it later \
           panics.",
    bad: "axes![A = 512];\ntype Slice = m![A / 8];",
    good: "axes![A = 512];\ntype Slice = m![A / 8 # 256];",
    manual: "L1081, L1710, L3501-L3502",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 allows a Slice of 64, 128 or 256 \
         (`furiosa-opt-std/src/constraints.rs:48-56`): 64 slices for 1 processing element, 128 for \
         2, 256 for 4 or 8 (`furiosa-opt-examples/src/pe_count.rs:14-20`); visa-lint asks for the \
         size of the `#[device(pe)]` grid there, as an error outside {64, 128, 256} (the library's \
         assertion) and a warning for another topology's size, which the library accepts",
    ),
};

pub const CAP_004: Rule = Rule {
    code: "CAP-004",
    name: "trf-row-count",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The TRF Row mapping has size 1, 2, 4 or 8",
    docs: "A slice has 8 MAC rows, one TRF bank row each; an operation uses 1, 2, 4 or 8 of them \
           and the Row dimension must have one of these sizes. Pad a Row of 3, 5, 6 or 7 to the \
           next allowed size (`m![N # 8]` for N = 6); a Row over 8 moves factors into Element. \
           Checked on TrfTensor types and the Row of `to_trf`, `align` and the contraction types.",
    bad: "axes![N = 6, K = 64];\nlet w: TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N], m![K]> = ...;",
    good: "axes![N = 6, K = 64];\nlet w: TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N # 8], m![K]> = ...;",
    manual: "L1089, L4529-L4530, L4162-L4167, L132",
    generations: Generations::Both,
};

pub const CAP_005: Rule = Rule {
    code: "CAP-005",
    name: "dm-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A DmTensor's Element fits the 512 KB of its slice, from its address on",
    docs: "Each slice has 512 KB (524,288 bytes) of DM with its own address space, and a \
           `DmTensor<D, ..., Element>` at `addr` occupies `addr .. addr + Element::SIZE * \
           size_of::<D>()` (i4 counts half a byte). The Element of every DmTensor type is \
           checked against 512 KB, and `to_dm(.., addr)` / `commit(addr)` with a constant \
           address against the end of the slice. Tile along Time, or distribute more factors \
           over Slice, Cluster or Chip. `furiosa_visa_std` does not check it (its CPU backend \
           keeps every tensor in host memory and ignores DM addresses), so a kernel breaking it \
           can pass the library's tests; the rule stays an error because the size is the \
           hardware's (L1088): such a tensor does not fit the slice's DM. The one vendor \
           example that breaks it (`matmul_16384`, 1 MB per slice) has its test ignored.",
    bad: "axes![A = 1024, B = 1024];\nlet a: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A, B]> = hbm.to_dm(&mut ctx.tdma, 0); // 1 MiB",
    good: "axes![A = 1024, B = 1024];\nlet a: DmTensor<i8, m![1], m![1 # 2], m![A / 4], m![A % 4, B]> = hbm.to_dm(&mut ctx.tdma, 0); // 4 KiB",
    manual: "L1088, L1093, L1075, L2863-L2879, L2874",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no DM addresses (CHANGES.md:26-32), so only the Element's 512 KB \
         per slice is checked there; its open code asserts no DM limit of its own (library-v06.md \
         §7)",
    ),
};

pub const CAP_006: Rule = Rule {
    code: "CAP-006",
    name: "trf-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A TrfTensor's Element fits 8 KB per Row (4 KB in FirstHalf / SecondHalf); under furiosa-opt-std, Lane × Element fits 64 KiB",
    docs: "The TRF is 8 bank rows × 2 bank columns × 128 rows of 32 bytes: 8 KB per Row in \
           `TrfAddress::Full`, half of it (64 rows, 4 KB) in `FirstHalf` and `SecondHalf`. \
           `Element::SIZE * size_of::<D>()` must fit. The manual notes that fewer rows extend \
           the per-Row space (L4148); visa-lint keeps the stated conservative limit \
           (constraints.md §22 A-21). A TrfTensor parameter, whose region is not known, is \
           checked against the Full 8 KB. The manual's GEMM stores `m![J / 8 % 4, K]` of bf16 \
           (K = 2048): 16 KB per Row (§22 A-12). Tile the contraction axis over passes.",
    bad: "axes![J = 512, K = 2048];\n.to_trf::<m![J % 8], m![J / 8 % 4, K]>(TrfAddress::Full) // bf16: 16 KB per Row",
    good: "axes![J = 512, K = 512];\n.to_trf::<m![J % 8], m![J / 8 % 4, K]>(TrfAddress::Full) // bf16: 4 KB per Row",
    manual: "L1089, L139, L4116-L4118, L4141-L4155",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no TRF regions and checks the whole TRF: Lane × Element bytes fit \
         its 64 KiB (`TRF_CAPACITY_BYTES`, \
         `furiosa-opt-lower/src/verify/engine/collect.rs:150-159`), so 4 lanes of 16 KB are legal \
         there; the manual's library asks 8 KB per Row (L1089)",
    ),
};

pub const CAP_007: Rule = Rule {
    code: "CAP-007",
    name: "vrf-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A VrfTensor's Element fits the 8 KB VRF of its slice, from its address on",
    docs: "Each slice has an 8 KB VRF; the limit is per slice, not the cluster's 2 MB. \
           `Element::SIZE * size_of::<D>()` must fit, and `to_vrf(addr)` must end inside 8 KB. \
           Split the operand over more slices, or segment it over several passes \
           (L7152-L7195). A VRF load from `begin_interleaved` is CAP-011.",
    bad: "axes![A = 8192];\nlet v: VrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![A]> = ...to_vrf(0); // 16 KB",
    good: "axes![A = 8192];\nlet v: VrfTensor<bf16, m![1], m![1 # 2], m![A / 32 # 256], m![A % 32]> = ...to_vrf(0); // 64 B",
    manual: "L1090, L140, L5256, L7916-L7917, L7189",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no VRF addresses (CHANGES.md:26-32) and asserts the Element's \
         8,192 bytes itself (`furiosa-opt-std/src/constraints.rs:108-117`), so only the size is \
         checked there; the address part is `to_vrf(addr)`'s, under `furiosa_visa_std`",
    ),
};

pub const CAP_008: Rule = Rule {
    code: "CAP-008",
    name: "hbm-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An HbmTensor's Element fits the chip's 48 GB of HBM, from its address on",
    docs: "A chip has 48 GB of HBM (2 stacks × 16 channels × 3 slices × 4 bank groups × 4 banks \
           × 16K rows × 2 KB = 48 × 2^30 bytes) in one contiguous address space. The Element of \
           every HbmTensor type must fit, and `to_hbm(.., addr)` with a constant address must \
           end inside it.",
    bad: "host.to_hbm(&mut ctx.pdma, 48 << 30)",
    good: "host.to_hbm(&mut ctx.pdma, 0x1000)",
    manual: "L137, L2949-L2960, L2976",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no HBM addresses (CHANGES.md:26-32), so only the Element's size \
         is checked there",
    ),
};

pub const CAP_009: Rule = Rule {
    code: "CAP-009",
    name: "time-unbounded",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Time has no size limit: no capacity rule reports a Time mapping's size",
    docs: "Unlike the spatial dimensions, Time grows with the data; only its decomposition into \
           sequencer entries is limited (at most 8 entries of at most 65,536 iterations, \
           SEQ-001 and SEQ-002). This rule is permissive: the CAP checks never look at Time \
           sizes, and it reports nothing itself.",
    bad: "",
    good: "axes![T = 1048576, C = 32];\n.fetch::<i8, m![T], m![C]>() // Time::SIZE = 2^20 is fine",
    manual: "L1099",
    generations: Generations::Both,
};

pub const CAP_010: Rule = Rule {
    code: "CAP-010",
    name: "trf-region-overlap",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Live TRF tensors occupy distinct regions: Full is exclusive, FirstHalf and SecondHalf one each",
    docs: "`TrfAddress::Full` dedicates the whole TRF to one tensor; `FirstHalf` and \
           `SecondHalf` isolate up to two (double buffering). Loading a TRF tensor into a region \
           that overlaps one whose tensor is still used later (`.align(&trf)`) overwrites it \
           silently. Reported at the second `to_trf` when the first tensor's binding is used \
           after it; use the other half, or finish with the first tensor before loading.",
    bad: "let w0 = ..to_trf(TrfAddress::Full);\nlet w1 = ..to_trf(TrfAddress::FirstHalf);\n..align::<_, _, _, _>(&w0)",
    good: "let w0 = ..to_trf(TrfAddress::FirstHalf);\nlet w1 = ..to_trf(TrfAddress::SecondHalf);\n..align::<_, _, _, _>(&w0)",
    manual: "L304, L4151-L4159",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 has no `TrfAddress`: the scheduler assigns the TRF regions \
         (CHANGES.md:26-32; `docs/src/computing-tensors/register-files.md:122`)",
    ),
};

pub const CAP_011: Rule = Rule {
    code: "CAP-011",
    name: "split-reduce-vrf",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An interleaved (split-reduce) stream loaded into the VRF fits its 8 KB per slice",
    docs: "Split reduce interleaves two tensor instances (`begin_interleaved`), adding the \
           interleave axis to Time; after interleaving, the combined tensor must fit the VRF \
           (8 KB per slice). Reported on `to_vrf` loads of a `begin_interleaved` chain whose \
           combined Element exceeds the VRF (other VRF loads are CAP-007). Split further, or \
           spread the reduced axis over slices.",
    bad: "ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<..>().collect::<..>().to_vrf(0) // 2 × 4096 bf16 = 16 KB",
    good: "ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<..>().collect::<..>().to_vrf(0) // 2 × 2048 bf16 = 8 KB",
    manual: "L7372, L7156, L7189",
    generations: Generations::Both,
};

pub const KRN_010: Rule = Rule {
    code: "KRN-010",
    name: "device-chip-count",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`#[device(chip = N)]` names the kernel's chip count, N >= 1",
    docs: "The device attribute sets NUM_CHIPS, the size every Chip mapping of the kernel must \
           have: the runtime launches kernels at chip granularity. A `#[device]` without \
           `chip = N` (an integer literal), or with `chip = 0`, gives the kernel no chip count; \
           this rule reports the attribute (at the function's name). Each Chip mapping that \
           disagrees with N is CAP-001, reported where the mapping is written.",
    bad: "#[device]\nfn kernel(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A, B]>) {}",
    good: "#[device(chip = 1)]\nfn kernel(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A, B]>) {}",
    manual: "L62, L1083-L1084, L1751",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `#[device]` defaults `chip` to 1 and `pe` to 8 \
         (`furiosa-opt-macro/src/lib.rs:179-188`; the macro also takes a `chip` that is not an \
         integer literal as 1), so an attribute without `chip` is legal there: visa-lint reads it \
         as one chip (CAP-001 sizes the Chip mappings by 1) and reports only `chip = 0`",
    ),
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    CAP_001, CAP_002, CAP_003, CAP_004, CAP_005, CAP_006, CAP_007, CAP_008, CAP_009, CAP_010,
    CAP_011, KRN_010,
];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let sites = written_sites(cx);
    if matches!(cx.model.kind, FnKind::Device { .. }) {
        match cx.chips() {
            Some(n) if n > 0 => spatial(cx, &sites, Slot::Chip, &CAP_001, n, out),
            chips => out.push(krn_010(cx, chips)),
        }
        grid_sizes(cx, &sites, out);
    }
    rows(cx, &sites, out);
    capacities(cx, out);
    trf_regions(cx, out);
}

/// KRN-010: a `#[device]` kernel with no chip count (`chips` is `None`) or `chip = 0`.
fn krn_010(cx: &FnContext<'_>, chips: Option<u64>) -> Diagnostic {
    let message = match chips {
        Some(_) => {
            "`#[device(chip = 0)]`: a kernel runs on at least one chip; write the number \
             of chips it uses"
        }
        None => {
            "`#[device]` needs `chip = N` with N an integer literal, the number of chips the \
             kernel runs on; every Chip mapping of the kernel is sized by it"
        }
    };
    Diagnostic::new(&KRN_010, cx.model.span, message)
}

/// CAP-002/003: the Cluster and Slice mappings of a `#[device]` kernel have its grid's sizes
/// ([`FnContext::grid`]); an error where the Tensor Unit reads them, a warning where only DMA,
/// views and tiles do. Under furiosa-opt-std a size of another topology's grid is a warning
/// ([`other_topology`]).
fn grid_sizes(cx: &FnContext<'_>, sites: &[Site<'_>], out: &mut Vec<Diagnostic>) {
    let Some(grid) = cx.grid() else {
        return;
    };
    let reached = tensor_unit_sites(cx);
    for (slot, rule, want) in [
        (Slot::Cluster, &CAP_002, grid.clusters),
        (Slot::Slice, &CAP_003, grid.slices),
    ] {
        let mut found = Vec::new();
        spatial(cx, sites, slot, rule, want, &mut found);
        for d in found {
            if let Some(d) = other_topology(cx, sites, slot, &d) {
                out.push(d);
                continue;
            }
            let at_tu = reached.contains(&d.span)
                || sites.iter().any(|s| {
                    s.at == d.span
                        && (!is_dma_kind(s.kind)
                            || alias(cx, s.map)
                                .is_some_and(|a| reached_alias(cx, &reached, a, slot)))
                });
            out.push(if at_tu {
                d
            } else {
                let mut d = d.with_severity(Severity::Warning);
                d.message.push_str(
                    "; only DMA, views and tiles use this tensor, which the library does not \
                     check: fetching it would panic",
                );
                d
            });
        }
    }
}

/// `d` (a CAP-002/003 finding) as a warning, when the size it found is one furiosa-opt-std
/// accepts for the slot (a Cluster of 1 or 2, a Slice of 64, 128 or 256: the library's const
/// assertion, `furiosa-opt-std/src/constraints.rs:35-56` at ebb846a) but belongs to another
/// `pe` topology than the kernel's. The library accepts it; the grid of each topology comes
/// from the vendor's examples, not from a published check (`library-v06.md` P1), so a
/// mismatch is flagged, not refused.
fn other_topology(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    slot: Slot,
    d: &Diagnostic,
) -> Option<Diagnostic> {
    if cx.model.library != Generation::OptStd {
        return None;
    }
    let site = sites.iter().find(|s| s.at == d.span && s.slot == slot)?;
    let n = site.map.layout.as_deref()?.size;
    let accepted = match slot {
        Slot::Cluster => crate::target::is_pe_cluster_count(n),
        _ => crate::target::is_pe_slice_count(n),
    };
    accepted.then(|| {
        let mut d = d.clone().with_severity(Severity::Warning);
        d.message.push_str(&format!(
            "; furiosa-opt-std accepts a {} of {n} (another `pe` topology's), so the library \
             does not refuse it, but the kernel's tensors are laid out over its own grid",
            title(slot)
        ));
        d
    })
}

/// A memory tensor kind (HBM, DM, host): the library checks its Cluster and Slice only when
/// it enters the Tensor Unit.
fn is_dma_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::Host | Kind::Hbm | Kind::HbmView | Kind::Dm | Kind::DmView | Kind::DmViewMut
    )
}

/// The spans of the mappings that reach the Tensor Unit, where `furiosa_visa_std` checks the
/// Cluster and Slice sizes (CAP-002/003): every mapping of a Tensor Unit step's input and
/// output (types flow with their written spans, so the `to_dm` turbofish that made a fetched
/// tensor is among them), and the declared type of a chain that runs a Tensor Unit step (the
/// annotation of a commit's result).
fn tensor_unit_sites(cx: &FnContext<'_>) -> HashSet<Span> {
    let mut out = HashSet::new();
    let mut add = |ty: &TensorTy| {
        out.extend(ty.maps.values().filter_map(|m| m.span));
    };
    for chain in &cx.model.chains {
        let mut tu = false;
        for step in &chain.steps {
            if step.engine.is_some_and(|e| e != Engine::Memory) {
                tu = true;
                step.input
                    .iter()
                    .chain(step.output.iter())
                    .for_each(&mut add);
            }
        }
        if tu && let Some(d) = &chain.declared {
            add(d);
        }
    }
    out
}

/// Whether some use of the alias `name` in `slot` reaches the Tensor Unit.
fn reached_alias(cx: &FnContext<'_>, reached: &HashSet<Span>, name: &str, slot: Slot) -> bool {
    let types = cx.model.tensors.iter().map(|t| &t.ty).chain(
        cx.model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .filter_map(|s| s.output.as_ref()),
    );
    types
        .filter_map(|ty| ty.get(slot))
        .filter(|m| m.text.trim() == name)
        .filter_map(|m| m.span)
        .any(|sp| reached.contains(&sp))
}

/// A mapping written in the function (a parameter type, a `let` annotation, a turbofish
/// argument), or named through an alias.
struct Site<'a> {
    kind: Kind,
    slot: Slot,
    map: &'a MapVal,
    at: Span,
}

/// The mapping alias a mapping names (`Slice` for `type Slice = m![...]`), if it is one.
fn alias<'s>(cx: &FnContext<'_>, map: &'s MapVal) -> Option<&'s str> {
    let t = map.text.trim();
    cx.scope.aliases.contains_key(t).then_some(t)
}

/// Every mapping written in the function, once per place (an alias once per function).
fn written_sites<'a>(cx: &FnContext<'a>) -> Vec<Site<'a>> {
    // By place and slot: the mappings of a whole tensor alias (`a: &Input`) are all written
    // where the alias is named, one place for several slots.
    let mut seen: HashSet<(Span, Slot)> = HashSet::new();
    let mut aliases: HashSet<(String, Slot)> = HashSet::new();
    let mut out = Vec::new();
    // The Slice written in a `switch` turbofish is SWI-001's (the Switch Engine's own rule).
    let switch_slices: HashSet<Span> = cx
        .model
        .chains
        .iter()
        .flat_map(|c| c.steps.iter())
        .filter(|s| s.method == Method::Switch)
        .filter_map(|s| s.output.as_ref()?.get(Slot::Slice)?.span)
        .collect();
    let types = cx.model.tensors.iter().map(|t| &t.ty).chain(
        cx.model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .filter_map(|s| s.output.as_ref()),
    );
    for ty in types {
        for (slot, map) in &ty.maps {
            let Some(at) = map.span else { continue };
            if *slot == Slot::Slice && switch_slices.contains(&at) {
                continue;
            }
            if seen.insert((at, *slot)) {
                out.push(Site {
                    kind: ty.kind,
                    slot: *slot,
                    map,
                    at,
                });
            }
        }
    }
    out.sort_by_key(|s| s.at);
    // An alias is reported at its first use only.
    out.retain(|s| alias(cx, s.map).is_none_or(|a| aliases.insert((a.to_string(), s.slot))));
    out
}

/// The fix that pads a written mapping to `n` (an alias: at this use; the engine adds the
/// edit of its definition; an alias named inside a tensor type alias: at its definition only).
fn pad_fix(
    cx: &FnContext<'_>,
    d: Diagnostic,
    site: &Site<'_>,
    n: u64,
    title: String,
) -> Diagnostic {
    let arg = Arg::mapping(site.map, site.at);
    if let Some(edit) = pad_edit(cx.scope, &arg, n) {
        return d.with_fix(title, true, vec![edit]);
    }
    // A mapping alias named inside a tensor type alias: no use here to edit, so the alias is
    // padded where it is defined (the engine finds the definition).
    let padded = alias(cx, site.map)
        .filter(|_| site.map.in_tensor_alias)
        .and_then(|a| {
            Some((
                a,
                pad_edit(cx.scope, &Arg::written(a.to_string(), site.at), n)?,
            ))
        });
    match padded {
        Some((a, edit)) => d.with_alias_pad(a, edit.new_text),
        None => d,
    }
}

/// How a mapping is named in a message: `m![A / 8]`, or `Slice` (`= m![A / 8]`) for an alias.
fn shown(cx: &FnContext<'_>, map: &MapVal) -> String {
    match (alias(cx, map), map.layout.as_deref()) {
        (Some(a), Some(l)) => format!("`{a}` (the alias for `m![{}]`)", l.to_expr()),
        _ => format!("`{}`", map.text.trim()),
    }
}

/// CAP-001/002/003: the Chip, Cluster or Slice mappings of a device kernel have exactly `want`
/// positions.
fn spatial(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    slot: Slot,
    code: &'static Rule,
    want: u64,
    out: &mut Vec<Diagnostic>,
) {
    for site in sites.iter().filter(|s| s.slot == slot) {
        let Some(n) = site.map.layout.as_deref().map(|l| l.size) else {
            continue;
        };
        if n == want {
            continue;
        }
        let what = shown(cx, site.map);
        let unit = grid_unit(cx, slot, want);
        let head = match slot {
            Slot::Chip => format!("Chip size must be {want}, got {n}"),
            Slot::Cluster => format!("Cluster size must be {want}, got {n}"),
            _ => format!("Slice size must be {want}, got {n}"),
        };
        let advice = if n < want {
            match alias(cx, site.map) {
                Some(a) => format!("pad it with `# {want}` where `type {a}` is defined"),
                None => format!("pad it with `# {want}` to fill the unused positions"),
            }
        } else {
            let instead = match slot {
                Slot::Chip => "move factors into Element (or run on more chips)",
                _ => "move factors into Time or Element",
            };
            format!(
                "padding only adds positions, so no padding brings {n} down to {want}; {instead}"
            )
        };
        let msg = format!(
            "{head}: the {} mapping {what} of this {} has size {n}; {unit}: {advice}",
            title(slot),
            site.kind.type_name()
        );
        let d = Diagnostic::new(code, site.at, msg);
        let d = if n < want {
            pad_fix(
                cx,
                d,
                site,
                want,
                format!("pad the {} mapping to {want}", title(slot)),
            )
        } else {
            d
        };
        out.push(d);
    }
}

/// What sets the size `want` of a Chip, Cluster or Slice mapping, for CAP-001/002/003's
/// messages: the kernel's `chip`, or the chip's (under furiosa-opt-std, the `pe` device's) grid.
fn grid_unit(cx: &FnContext<'_>, slot: Slot, want: u64) -> String {
    let plural = if want == 1 { "" } else { "s" };
    let (chips, pe) = match cx.model.kind {
        FnKind::Device { chips, pe } => (chips, pe),
        _ => (None, None),
    };
    let device = match (cx.model.library, pe) {
        (Generation::OptStd, Some(pe)) => format!(" of this `#[device(pe = {pe})]` kernel"),
        (Generation::OptStd, None) => format!(
            " of this kernel (`#[device]` without `pe` runs on {} processing elements)",
            crate::target::DEFAULT_PE
        ),
        _ => String::new(),
    };
    match slot {
        Slot::Chip if chips.is_none() => {
            format!("the kernel runs on {want} chip{plural} (`#[device]` without `chip`)")
        }
        Slot::Chip => {
            format!("the kernel runs on {want} chip{plural} (`#[device(chip = {want})]`)")
        }
        Slot::Cluster => format!("a chip{device} has {want} cluster{plural}"),
        _ => format!("a cluster{device} has {want} slices"),
    }
}

fn title(slot: Slot) -> &'static str {
    match slot {
        Slot::Chip => "Chip",
        Slot::Cluster => "Cluster",
        Slot::Slice => "Slice",
        _ => slot.name(),
    }
}

/// CAP-004: Row sizes 1, 2, 4 or 8.
fn rows(cx: &FnContext<'_>, sites: &[Site<'_>], out: &mut Vec<Diagnostic>) {
    let allowed = cx.target.trf_row_sizes;
    for site in sites.iter().filter(|s| s.slot == Slot::Row) {
        let Some(n) = site.map.layout.as_deref().map(|l| l.size) else {
            continue;
        };
        if allowed.contains(&n) {
            continue;
        }
        let list = match allowed.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!(
                "{} or {last}",
                rest.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => allowed
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        };
        let next = allowed.iter().copied().find(|&a| a > n);
        let what = shown(cx, site.map);
        let msg = match next {
            Some(m) => format!(
                "the Row mapping {what} of this {} has size {n}; an operation uses {list} of the {} MAC rows: pad it to {m}",
                site.kind.type_name(),
                cx.target.trf_rows
            ),
            None => format!(
                "the Row mapping {what} of this {} has size {n}; a slice has only {} MAC rows (Row::SIZE is {list}), and padding only adds rows, so no padding brings {n} down to a row count: move factors into Element (keep at most {} in Row)",
                site.kind.type_name(),
                cx.target.trf_rows,
                cx.target.trf_rows
            ),
        };
        let d = Diagnostic::new(&CAP_004, site.at, msg);
        out.push(match next {
            Some(m) => pad_fix(cx, d, site, m, format!("pad the Row mapping to {m}")),
            None => d,
        });
    }
}

/// A tensor stored in DM, TRF, VRF or HBM, with its per-unit footprint.
struct Store<'a> {
    kind: Kind,
    dtype: Dtype,
    elements: u64,
    bytes: u64,
    /// The Element mapping as shown in messages (`None` when computed from the stream).
    element: Option<&'a MapVal>,
    at: Span,
    step: Option<&'a Step>,
    /// Loaded into `TrfAddress::FirstHalf` / `SecondHalf`.
    half: bool,
    /// Loaded from a `begin_interleaved` chain.
    interleaved: bool,
    /// A TRF tensor's Lane (the manual's Row) size, when known.
    lanes: Option<u64>,
}

const STORING: &[Method] = &[
    Method::ToDm,
    Method::Commit,
    Method::CommitView,
    Method::ToTrf,
    Method::ToVrf,
    Method::ToHbm,
];

fn is_memory(k: Kind) -> bool {
    matches!(k, Kind::Dm | Kind::Trf | Kind::Vrf | Kind::Hbm)
}

/// Bytes of `n` elements of `dtype` (i4 is half a byte).
fn bytes_of(dtype: Dtype, n: u64) -> u64 {
    derive::bytes(n, dtype.bits())
}

/// `16384 bytes (16 KB)`.
fn human(b: u64) -> String {
    const KB: u64 = 1024;
    if b >= KB && b.is_multiple_of(KB) {
        let (v, unit) = if b >= KB * KB * KB && b.is_multiple_of(KB * KB * KB) {
            (b / (KB * KB * KB), "GB")
        } else if b >= KB * KB && b.is_multiple_of(KB * KB) {
            (b / (KB * KB), "MB")
        } else {
            (b / KB, "KB")
        };
        format!("{b} bytes ({v} {unit})")
    } else {
        format!("{b} bytes")
    }
}

/// The `let` tensor a chain binds, when its annotation writes `slot`.
fn binding_map<'a>(
    cx: &FnContext<'a>,
    chain: &Chain,
    slot: Slot,
) -> Option<(&'a TensorTy, &'a MapVal)> {
    let name = chain.binding.as_deref()?;
    let tv = cx
        .model
        .tensors
        .iter()
        .filter(|t| t.origin == Origin::Let && t.name == name && t.span.start <= chain.span.start)
        .max_by_key(|t| t.span.start)?;
    let m = tv.ty.get(slot)?;
    (m.span.is_some() && m.layout.is_some()).then_some((&tv.ty, m))
}

fn stores<'a>(cx: &FnContext<'a>) -> Vec<Store<'a>> {
    let mut out: Vec<Store<'a>> = Vec::new();
    let mut seen: HashSet<Span> = HashSet::new();
    for chain in &cx.model.chains {
        let interleaved = chain
            .steps
            .first()
            .is_some_and(|s| s.method == Method::BeginInterleaved);
        for step in &chain.steps {
            let Some(ty) = step.output.as_ref() else {
                continue;
            };
            if !is_memory(ty.kind) || !STORING.contains(&step.method) {
                continue;
            }
            let own = ty.get(Slot::Element).filter(|m| m.layout.is_some());
            let (dtype, element) = match own {
                Some(m) if m.span.is_some() => (ty.dtype, Some(m)),
                _ => match binding_map(cx, chain, Slot::Element) {
                    Some((t, m)) if t.kind == ty.kind => (ty.dtype.or(t.dtype), Some(m)),
                    _ => (ty.dtype, own),
                },
            };
            let Some(dtype) = dtype else { continue };
            let elements = match element.and_then(|m| m.layout.as_deref()) {
                Some(l) => l.size,
                // `to_vrf` stores the collected stream: Time × Packet per slice.
                None if step.method == Method::ToVrf => {
                    let Some(input) = step.input.as_ref() else {
                        continue;
                    };
                    match (slot_size(input, Slot::Time), slot_size(input, Slot::Packet)) {
                        (Some(t), Some(p)) => t.saturating_mul(p),
                        _ => continue,
                    }
                }
                None => continue,
            };
            let bytes = bytes_of(dtype, elements);
            let at = element.and_then(|m| m.span).unwrap_or(step.span);
            seen.insert(at);
            out.push(Store {
                kind: ty.kind,
                dtype,
                elements,
                bytes,
                element,
                at,
                step: Some(step),
                half: step.method == Method::ToTrf
                    && step
                        .args
                        .first()
                        .is_some_and(|a| a.value_text().contains("Half")),
                interleaved,
                lanes: slot_size(ty, Slot::Row),
            });
        }
    }
    for tv in &cx.model.tensors {
        if !is_memory(tv.ty.kind) {
            continue;
        }
        let Some(m) = tv.ty.get(Slot::Element) else {
            continue;
        };
        let Some(l) = m.layout.as_deref() else {
            continue;
        };
        let Some(dtype) = tv.ty.dtype else {
            continue;
        };
        let bytes = bytes_of(dtype, l.size);
        // An unplaced Element was inferred from the chain that binds it (reported there).
        let Some(at) = m.span else {
            continue;
        };
        if !seen.insert(at) {
            continue;
        }
        out.push(Store {
            kind: tv.ty.kind,
            dtype,
            elements: l.size,
            bytes,
            element: Some(m),
            at,
            step: None,
            half: false,
            interleaved: false,
            lanes: slot_size(&tv.ty, Slot::Row),
        });
    }
    out
}

/// The size of one slot of a tensor type, when its layout is known.
fn slot_size(ty: &TensorTy, slot: Slot) -> Option<u64> {
    ty.get(slot)?.layout.as_deref().map(|l| l.size)
}

/// CAP-006 as furiosa-opt-std 0.6 checks it: the whole TRF, `Lane × Element` bytes, against
/// its 64 KiB (`TRF_CAPACITY_BYTES`; the manual's 8 rows × 8 KB), instead of the manual's
/// 8 KB per Row (library-v06.md R4; the manual concedes fewer rows see more, L4148).
fn trf_total(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let cap = cx.target.trf_bytes();
    let lanes = s.lanes.unwrap_or(1);
    let total = s.bytes.saturating_mul(lanes);
    if total <= cap {
        return;
    }
    let plural = if lanes == 1 { "" } else { "s" };
    let what = match s.element {
        Some(m) => format!(
            "{lanes} lane{plural} of the TrfTensor Element {}",
            shown(cx, m)
        ),
        None => format!("{lanes} lane{plural} of the stream loaded into this TrfTensor"),
    };
    let msg = format!(
        "{what} hold {lanes} × {} × {} = {}; the TRF has {} in total (furiosa-opt-std checks \
         Lane × Element): tile the contraction axis over several passes, or use fewer lanes",
        s.elements,
        s.dtype,
        human(total),
        human(cap)
    );
    out.push(match s.step {
        Some(step) => at_arg(&CAP_006, step, Some(s.at), msg),
        None => Diagnostic::new(&CAP_006, s.at, msg),
    });
}

/// CAP-005/006/007/008/011: per-unit capacities, and constant addresses inside them.
fn capacities(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let t = cx.target;
    for s in stores(cx) {
        if s.kind == Kind::Trf && cx.model.library == Generation::OptStd {
            trf_total(cx, &s, out);
            continue;
        }
        let (code, cap, unit, space) = match s.kind {
            Kind::Dm => (&CAP_005, t.dm_bytes_per_slice, "slice", "of DM"),
            Kind::Trf if s.half => (
                &CAP_006,
                t.trf_bytes_per_row / 2,
                "Row",
                "of TRF in FirstHalf/SecondHalf",
            ),
            Kind::Trf => (&CAP_006, t.trf_bytes_per_row, "Row", "of TRF"),
            Kind::Vrf if s.interleaved => (&CAP_011, t.vrf_bytes_per_slice, "slice", "of VRF"),
            Kind::Vrf => (&CAP_007, t.vrf_bytes_per_slice, "slice", "of VRF"),
            Kind::Hbm => (&CAP_008, t.hbm_bytes_per_chip, "chip", "of HBM"),
            _ => continue,
        };
        let what = match s.element {
            Some(m) => format!("the {} Element {}", s.kind.type_name(), shown(cx, m)),
            None => format!("the stream loaded into this {}", s.kind.type_name()),
        };
        let amount = format!("{} × {} = {}", s.elements, s.dtype, human(s.bytes));
        if s.bytes > cap {
            let advice = match s.kind {
                Kind::Dm => {
                    "tile it along Time, or distribute more factors over Slice, Cluster or Chip"
                }
                Kind::Trf => {
                    "tile the contraction axis over several passes, or spread factors over Row and Slice"
                }
                Kind::Vrf if s.interleaved => {
                    "split the reduction further, or spread the reduced axis over slices"
                }
                Kind::Vrf => "spread it over more slices, or segment it over several passes",
                _ => "distribute it over more chips",
            };
            let mode = match (s.kind, s.step.is_some(), s.half) {
                (Kind::Trf, _, true) => " (a half region)",
                (Kind::Trf, false, false) => {
                    " (its TrfAddress is not known here: checked against Full)"
                }
                _ => "",
            };
            let combined = if s.interleaved && s.kind == Kind::Vrf {
                " after interleaving the two tensors"
            } else {
                ""
            };
            let msg = format!(
                "{what} holds {amount} per {unit}{combined}; a {unit} has {} {space}{mode}: {advice}",
                human(cap)
            );
            // At the Element where it is written; the storing call beside it when elsewhere.
            out.push(match s.step {
                Some(step) => at_arg(code, step, Some(s.at), msg),
                None => Diagnostic::new(code, s.at, msg),
            });
            continue;
        }
        let Some(step) = s.step else { continue };
        let Some(addr) = step.address else { continue };
        let end = addr.checked_add(s.bytes);
        if end.is_some_and(|e| e <= cap) {
            continue;
        }
        let span = step
            .method
            .transfer()
            .and_then(|m| m.address_arg)
            .and_then(|i| step.args.get(i))
            .map_or(step.span, |a| a.span);
        let tail = if s.bytes <= cap {
            format!("; the last address that fits is {:#x}", cap - s.bytes)
        } else {
            String::new()
        };
        out.push(Diagnostic::new(
            code,
            span,
            format!(
                "{what} at address {addr:#x} occupies {addr:#x}..{} ({amount}), past the {} {space} per {unit}{tail}",
                end.map_or_else(|| "2^64 and beyond".to_string(), |e| format!("{e:#x}")),
                human(cap)
            ),
        ));
    }
}

/// A `to_trf` load: its chain index, binding and region.
struct TrfLoad<'a> {
    chain: usize,
    step: &'a Step,
    binding: Option<&'a str>,
    region: &'static str,
}

fn mentions(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == name)
}

/// CAP-010: a `to_trf` into a region that overlaps a TRF tensor used later.
fn trf_regions(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let chains = &cx.model.chains;
    let mut loads = Vec::new();
    for (i, c) in chains.iter().enumerate() {
        for step in c.steps.iter().filter(|s| s.method == Method::ToTrf) {
            let text = step
                .args
                .first()
                .map_or_else(String::new, |a| a.value_text().into_owned());
            let region = if text.contains("FirstHalf") {
                "FirstHalf"
            } else if text.contains("SecondHalf") {
                "SecondHalf"
            } else if text.contains("Full") {
                "Full"
            } else {
                continue;
            };
            loads.push(TrfLoad {
                chain: i,
                step,
                binding: c.binding.as_deref(),
                region,
            });
        }
    }
    let uses = |c: &Chain, name: &str| {
        c.steps
            .iter()
            .any(|s| s.args.iter().any(|a| mentions(&a.text, name)))
    };
    for (k, first) in loads.iter().enumerate() {
        let Some(name) = first.binding else { continue };
        // The first tensor's uses, until its name is bound again.
        let mut last_use = None;
        for (j, c) in chains.iter().enumerate().skip(first.chain + 1) {
            if uses(c, name) {
                last_use = Some((j, c));
            }
            if c.binding.as_deref() == Some(name) {
                break;
            }
        }
        let Some((last, used)) = last_use else {
            continue;
        };
        for second in loads.iter().skip(k + 1) {
            if second.chain >= last {
                break;
            }
            let overlap =
                first.region == "Full" || second.region == "Full" || first.region == second.region;
            if !overlap {
                continue;
            }
            let use_span = used
                .steps
                .iter()
                .find(|s| s.args.iter().any(|a| mentions(&a.text, name)))
                .map_or(used.span, |s| s.span);
            // The region argument is what the fix changes (the call when it is not written).
            let region_at = |l: &TrfLoad<'_>| l.step.args.first().map_or(l.step.span, |a| a.span);
            out.push(
                Diagnostic::new(
                    &CAP_010,
                    region_at(second),
                    format!(
                        "this TrfAddress::{} load overlaps TrfAddress::{} of `{name}`, which is still \
                         used later: {}; the second load overwrites it",
                        second.region,
                        first.region,
                        if first.region == "Full" || second.region == "Full" {
                            "Full dedicates the whole TRF to one tensor".to_string()
                        } else {
                            format!("both use the {} of the TRF", first.region)
                        }
                    ),
                )
                .with_related(region_at(first), format!("`{name}` is loaded into TrfAddress::{} here", first.region))
                .with_related(use_span, format!("`{name}` is used here")),
            );
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::db::analyse_text;
    use crate::target::RNGD;

    /// (code, message) of every diagnostic of this module (CAP-*, KRN-010); other families'
    /// findings on the same kernels are not this module's business.
    fn diags(src: &str) -> Vec<(String, String)> {
        analyse_text(src)
            .diagnostics()
            .iter()
            .filter(|d| d.code().starts_with("CAP-") || d.code() == "KRN-010")
            .map(|d| (d.code().to_string(), d.message.clone()))
            .collect()
    }

    fn codes(src: &str) -> Vec<String> {
        diags(src).into_iter().map(|d| d.0).collect()
    }

    fn fix_texts(src: &str, code: &str) -> Vec<String> {
        analyse_text(src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == code)
            .flat_map(|d| {
                d.fixes
                    .iter()
                    .flat_map(|f| f.edits.iter().map(|e| e.new_text.clone()))
            })
            .collect()
    }

    #[test]
    fn l1078_sram_per_chip_and_per_system() {
        // "Each chip has 256MB of SRAM: 2 clusters × 256 slices × 512KB per slice. An 8-chip
        // system provides 2GB total SRAM capacity."
        let per_chip = RNGD.clusters * RNGD.slices * RNGD.dm_bytes_per_slice;
        assert_eq!(per_chip, 256 << 20);
        assert_eq!(8 * per_chip, 2 << 30);
    }

    #[test]
    fn l137_l2949_hbm_is_48_gb() {
        // 2 stacks × 16 channels × 3 slices × 4 bank groups × 4 banks × 16K rows × 2K bytes.
        assert_eq!(RNGD.hbm_bytes_per_chip, 2 * 16 * 3 * 4 * 4 * 16384 * 2048);
        assert_eq!(RNGD.hbm_bytes_per_chip, 48 << 30);
    }

    #[test]
    fn l1088_l1090_per_unit_capacities() {
        // 512 KB per slice, 8 KB per Row (L4116: 2 bank columns × 128 rows × 32 B), 8 KB per slice.
        assert_eq!(RNGD.dm_bytes_per_slice, 524_288);
        assert_eq!(RNGD.trf_bytes_per_row, 2 * 128 * 32);
        assert_eq!(RNGD.vrf_bytes_per_slice, 8192);
        // L140 / L7191: 8 KB ≈ 4096 bf16.
        assert_eq!(RNGD.vrf_bytes_per_slice / 2, 4096);
    }

    const HBM_8_CHIPS: &str = "axes![A = 8, B = 512];\n#[device(chip = CHIPS)]\nfn kernel(ctx: &mut Context, h: &HbmTensor<bf16, m![A], m![B]>) {}\n";

    #[test]
    fn l1069_hbm_over_eight_chips() {
        // "HbmTensor<bf16, m![A], m![B]> distributes 8 × 512 = 4096 elements across 8 chips
        // with 512 elements per chip."
        assert!(codes(&HBM_8_CHIPS.replace("CHIPS", "8")).is_empty());
        let d = diags(&HBM_8_CHIPS.replace("CHIPS", "1"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "CAP-001");
        assert!(
            d[0].1.starts_with("Chip size must be 1, got 8"),
            "{}",
            d[0].1
        );
    }

    #[test]
    fn l55_first_program_breaks_chip_cluster_and_slice() {
        let src = include_str!("../../../fixtures/manual/0023_first_program.rs");
        let d = diags(src);
        let cap: Vec<_> = d.iter().filter(|d| d.0.starts_with("CAP")).collect();
        assert!(
            cap.iter()
                .any(|d| d.0 == "CAP-001" && d.1.contains("got 8")),
            "{d:?}"
        );
        assert!(
            cap.iter()
                .any(|d| d.0 == "CAP-002" && d.1.contains("got 1")),
            "{d:?}"
        );
        assert!(
            cap.iter()
                .any(|d| d.0 == "CAP-003" && d.1.contains("got 8")),
            "{d:?}"
        );
        // The HostTensor in `main` is not a device tensor, and `main` is not a kernel.
        assert_eq!(cap.len(), 3, "{d:?}");
    }

    #[test]
    fn l1141_stream_type_padded_in_a_kernel() {
        // The Tensor Unit Stream example: Cluster `m![1]`, Slice `m![C / 2]` = 32 slices.
        let src = "axes![N = 4, C = 64, H = 32, W = 32];\n#[device(chip = 1)]\nfn k<'l, const T: Tu>(s: FetchTensor<'l, T, bf16, m![1], m![1], m![C / 2], m![N, H, W], m![C % 2]>) {}\n";
        let d = diags(src);
        assert!(
            d.iter()
                .any(|d| d.0 == "CAP-002" && d.1.starts_with("Cluster size must be 2, got 1")),
            "{d:?}"
        );
        assert!(
            d.iter()
                .any(|d| d.0 == "CAP-003" && d.1.starts_with("Slice size must be 256, got 32")),
            "{d:?}"
        );
        assert_eq!(fix_texts(src, "CAP-002"), vec!["m![1 # 2]".to_string()]);
        assert_eq!(
            fix_texts(src, "CAP-003"),
            vec!["m![C / 2 # 256]".to_string()]
        );
    }

    #[test]
    fn helper_functions_are_not_held_to_the_launch_sizes() {
        let src = "axes![C = 64];\nfn helper(d: &DmTensor<bf16, m![1], m![1], m![C / 2], m![C % 2]>) {}\n";
        assert!(codes(src).is_empty());
    }

    #[test]
    fn alias_reported_once_with_its_padded_mapping_at_the_use() {
        let src = "axes![A = 512];\ntype S = m![A / 8];\n#[device(chip = 1)]\nfn k(a: &DmTensor<i8, m![1], m![1 # 2], S, m![A % 8]>, b: &DmTensor<i8, m![1], m![1 # 2], S, m![A % 8]>) {}\n";
        let d = diags(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].1.contains("`S`") && d[0].1.contains("type S"),
            "{}",
            d[0].1
        );
        // The use is replaced by the padded mapping, so the other use keeps its type.
        assert_eq!(fix_texts(src, "CAP-003"), ["m![A / 8 # 256]"]);
    }

    /// `Blocks` is named inside the tensor alias `Input`, so no use in the kernel can be
    /// edited: the fix pads the alias where it is defined, following `Blocks = Strip` to
    /// `Strip`'s `m![...]` (L1081: `m![X / N # 256]`).
    #[test]
    fn alias_inside_a_tensor_alias_is_padded_where_it_is_defined() {
        let src = include_str!("../../../fixtures/rules/CAP-003-form-alias-chain.rs");
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CAP-003");
        assert!(fixed.contains("type Strip = m![A / 16 # 256];"), "{fixed}");
        assert!(fixed.contains("type Blocks = Strip;"), "{fixed}");
        let d = crate::check_text(src);
        let fix = &d[0].fixes[0];
        assert_eq!(fix.title, "pad `Blocks` where it is defined, for every use");
        assert!(fix.edits_definition && fix.alias_pad.is_none());
    }

    #[test]
    fn larger_than_the_hardware_has_no_padding_fix() {
        let src = "axes![A = 1024];\n#[device(chip = 1)]\nfn k(a: &DmTensor<i8, m![1], m![1 # 2], m![A], m![1]>) {}\n";
        let d = diags(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].1.starts_with("Slice size must be 256, got 1024"),
            "{}",
            d[0].1
        );
        assert!(
            d[0].1.contains(
                "padding only adds positions, so no padding brings 1024 down to 256; move \
                 factors into Time or Element"
            ),
            "{}",
            d[0].1
        );
        assert!(fix_texts(src, "CAP-003").is_empty());
    }

    #[test]
    fn row_sizes() {
        let k = |n: &str| {
            format!(
                "axes![N = {n}, K = 64];\n#[device(chip = 1)]\nfn k(w: &TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N], m![K]>) {{}}\n"
            )
        };
        for ok in ["1", "2", "4", "8"] {
            assert!(codes(&k(ok)).is_empty(), "{ok}");
        }
        assert_eq!(codes(&k("6")), vec!["CAP-004"]);
        assert_eq!(fix_texts(&k("6"), "CAP-004"), vec!["m![N # 8]".to_string()]);
        assert_eq!(fix_texts(&k("3"), "CAP-004"), vec!["m![N # 4]".to_string()]);
        assert_eq!(codes(&k("16")), vec!["CAP-004"]);
        assert!(fix_texts(&k("16"), "CAP-004").is_empty());
        let d = diags(&k("16"));
        assert!(
            d[0].1.ends_with(
                "padding only adds rows, so no padding brings 16 down to a row count: move \
                 factors into Element (keep at most 8 in Row)"
            ),
            "{}",
            d[0].1
        );
    }

    const DM: &str = "axes![E = SIZE];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, h: &HbmTensor<D, m![1], m![E]>) {\n    let d: DmTensor<D, m![1], m![1 # 2], m![1 # 256], m![E]> = h.to_dm(&mut ctx.tdma, ADDR);\n}\n";

    fn dm(d: &str, size: &str, addr: &str) -> String {
        DM.replace("SIZE", size)
            .replace("ADDR", addr)
            .replace("D,", &format!("{d},"))
    }

    #[test]
    fn l1088_l1093_dm_footprint_from_the_address() {
        // 512 KB exactly fits at 0; one more byte does not.
        assert!(codes(&dm("i8", "524288", "0")).is_empty());
        let d = diags(&dm("i8", "524289", "0"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "CAP-005");
        assert!(d[0].1.contains("524289 × i8 = 524289 bytes"), "{}", d[0].1);
        // i4 is half a byte: 2^20 i4 = 512 KB fits at 0, not at 8 (addr..addr + 524288).
        assert!(codes(&dm("i4", "1048576", "0")).is_empty());
        let d = diags(&dm("i4", "1048576", "8"));
        assert_eq!(codes(&dm("i4", "1048576", "8")), vec!["CAP-005"]);
        assert!(d[0].1.contains("occupies 0x8..0x80008"), "{}", d[0].1);
        // bf16: 64 Ki elements = 128 KB at 0x60000 ends at 0x80000 (fits), at 0x60008 it does not.
        assert!(codes(&dm("bf16", "65536", "0x60000")).is_empty());
        assert_eq!(codes(&dm("bf16", "65536", "0x60008")), vec!["CAP-005"]);
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        let src = dm("i32", "9223372036854775808", "0xffffffffffffff00");
        let d = codes(&src);
        assert!(d.contains(&"CAP-005".to_string()), "{d:?}");
    }

    #[test]
    fn l503_gemm_trf_is_16_kb_per_row() {
        let src = include_str!("../../../fixtures/manual/0473_gemm.rs");
        let d = diags(src);
        let trf: Vec<_> = d.iter().filter(|d| d.0 == "CAP-006").collect();
        assert_eq!(trf.len(), 1, "{d:?}");
        // 4 × 2048 bf16 = 16 KB against 8 KB per Row.
        assert!(
            trf[0]
                .1
                .contains("8192 × bf16 = 16384 bytes (16 KB) per Row"),
            "{}",
            trf[0].1
        );
        assert!(trf[0].1.contains("8192 bytes (8 KB)"), "{}", trf[0].1);
    }

    #[test]
    fn trf_halves_get_half_the_row() {
        let k = |k: &str, mode: &str| {
            format!(
                "axes![K = {k}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, b: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![K]>) {{\n    let t = ctx.sub.begin(b.view()).fetch::<bf16, m![K / 16], m![K % 16]>().collect::<m![K / 16], m![K % 16]>().to_trf::<m![1], m![K]>(TrfAddress::{mode});\n}}\n"
            )
        };
        assert!(!codes(&k("4096", "Full")).contains(&"CAP-006".to_string()));
        assert!(codes(&k("4096", "SecondHalf")).contains(&"CAP-006".to_string()));
        assert!(!codes(&k("2048", "FirstHalf")).contains(&"CAP-006".to_string()));
    }

    #[test]
    fn vrf_and_interleaved_vrf() {
        let plain = |h: &str, addr: &str| {
            format!(
                "axes![H = {h}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, a: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>) {{\n    let v = ctx.sub.begin(a.view()).fetch::<bf16, m![H / 16], m![H % 16]>().collect::<m![H / 16], m![H % 16]>().to_vrf({addr});\n}}\n"
            )
        };
        assert!(
            !codes(&plain("4096", "0"))
                .iter()
                .any(|c| c.starts_with("CAP"))
        );
        assert!(codes(&plain("8192", "0")).contains(&"CAP-007".to_string()));
        assert!(codes(&plain("2048", "0x1800")).contains(&"CAP-007".to_string()));
        let inter = |h: &str| {
            format!(
                "axes![I = 2, H = {h}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, a: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>, b: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>) {{\n    let v = ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<bf16, m![I, H / 16], m![H % 16]>().collect::<m![I, H / 16], m![H % 16]>().to_vrf(0);\n}}\n"
            )
        };
        let c = codes(&inter("4096"));
        assert!(
            c.contains(&"CAP-011".to_string()) && !c.contains(&"CAP-007".to_string()),
            "{c:?}"
        );
        assert!(!codes(&inter("2048")).iter().any(|c| c.starts_with("CAP")));
    }

    #[test]
    fn krn010_missing_or_zero_chip_count() {
        let k = |attr: &str| {
            format!("axes![A = 8];\n{attr}\nfn k(h: &HbmTensor<i8, m![1], m![A]>) {{}}\n")
        };
        assert_eq!(codes(&k("#[device]")), vec!["KRN-010"]);
        assert_eq!(codes(&k("#[device(chip = 0)]")), vec!["KRN-010"]);
        assert!(codes(&k("#[device(chip = 1)]")).is_empty());
    }

    #[test]
    fn time_is_never_a_capacity_problem() {
        // L1099: Time has no hardware-imposed size limit.
        let src = "axes![T = 1099511627776, C = 32];\n#[device(chip = 1)]\nfn k<'l, const X: Tu>(s: CollectTensor<'l, X, i8, m![1], m![1 # 2], m![1 # 256], m![T], m![C]>) {}\n";
        assert!(!codes(src).iter().any(|c| c.starts_with("CAP")));
    }
}

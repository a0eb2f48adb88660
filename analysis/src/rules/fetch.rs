//! FET: the Fetch Engine, its sequencer and its adapter (constraints.md §7). The adapter rules
//! decided from dtypes and literals are checked here; the ones that need the derived
//! `fetch_size` stay planned until `crate::derive` provides it.

use super::context::{FnContext, at_arg, rewrite_input, rewrite_output};
use crate::derive::{self, OpKind};
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::library::{Conversions, Generation, Stage, ZeroPointRange};
use crate::mapping::edit::top_terms;
use crate::mapping::lower::layout_of;
use crate::model::{Arg, Dtype, Method, Slot, Step, TensorTy, Tu, input_arg, output_arg, written};
use crate::rule::{Generations, Rule, Status};

pub const FET_001: Rule = Rule {
    code: "FET-001",
    name: "fetch-asserts",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["CAP-002", "CAP-003", "FET-004", "ALN-005"],
        why: "no case of its own: each assertion of the fetch primitive (L1700-L1718) is a more \
         specific rule, CAP-002/CAP-003 (Cluster 2, Slice 256), FET-004 (D: FetchCast<D2>) and \
         ALN-005 (8-byte packet), which report it with the precise message",
    },
    summary: "`fetch` asserts Cluster = 2, Slice = 256, a supported cast and an 8-byte packet",
    docs: "The fetch primitive's assertions; each is its own rule so the message can be precise.",
    bad: "",
    good: "",
    manual: "L1700-L1718",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `fetch` asserts a Cluster of 1 or 2 and a Slice of 64, 128 or 256, \
         no cast (that is `fetch_cast`'s trait bound) and no packet alignment \
         (`furiosa-opt-std/src/engine/fetch.rs:80-94`); CAP-002, CAP-003, FET-004 and ALN-005 say \
         how each is checked",
    ),
};

pub const FET_002: Rule = Rule {
    code: "FET-002",
    name: "fetch-size-per-context",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "fetch_size is 1, 2, 4, 8, 16 or 32 bytes (main); 8, or 4 for i4 → i32 (sub)",
    docs: "The main context fetches 1, 2, 4, 8, 16 or 32 bytes at a time; the sub context only \
           8 bytes (4 when casting i4 to i32, so one fetch yields one 32-byte flit). The fetch \
           size must divide both the packet and the contiguous DM run the sequencer reads \
           (L1761), so in `ctx.sub` gcd(packet bytes, contiguous bytes) must be a multiple of 8 \
           (4). visa-lint derives both from the BeginTensor's Element and the fetch's Time and \
           Packet (crate::derive). Store the packet's axes innermost in DM (visa-lint offers \
           this as a fix when the packet is whole fetches: `m![B, C, A]` → `m![C, B, A]` for a \
           packet `m![B, A]`), pad the packet and the DM layout to a multiple of 8 bytes, or \
           run the fetch on `ctx.main`. A strided packet axis is SEQ-004's; a packet that is not a whole number of fetches is FET-006's.",
    bad: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![C], m![B, A]>() // 4-byte runs",
    good: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![B], m![C, A]>() // 16-byte runs",
    manual: "L1757-L1759, L2018-L2021",
    generations: Generations::Both,
};

pub const FET_003: Rule = Rule {
    code: "FET-003",
    name: "fetch-size-derivation",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "fetch_size is the largest supported divisor of gcd(packet, contiguous run)",
    docs: "The compiler reads `fetch_size` bytes per cycle: the largest supported size dividing \
           both the packet and the contiguous DM run (L1761), and for a casting fetch at most 32 \
           bytes of output (L1996). Cycles = Time::SIZE × ceil(packet / fetch_size) (L2060). \
           visa-lint reports a main-context fetch whose packet is smaller than a flit while the \
           DM run continues past it, so that a larger packet (the innermost Time factors moved \
           into the Packet, padded to a power of two: `m![C]` → `m![[B, C] # 16]` → `m![[A, B, \
           C] # 32]`, 15 → 3 → 1 cycles, L1816-L1839) would need at most a quarter of the \
           cycles (\"drastically\", L1818). The message gives both cycle counts. Packets split \
           by the layout are FET-011's; 4-bit fetches are skipped, as the manual's batching \
           page counts i4 as bytes (constraints.md §22 A-3).",
    bad: "// a: DmTensor<f8e4m3, .., m![A, B, C]>, A = 3, B = 5, C = 2\n.fetch::<f8e4m3, m![A, B], m![C]>() // 2-byte fetches, 15 cycles",
    good: ".fetch::<f8e4m3, m![A], m![[B, C] # 16]>() // 16-byte fetches, 3 cycles",
    manual: "L1761, L2060, L2067-L2111, L1816-L1839",
    generations: Generations::Both,
};

pub const FET_004: Rule = Rule {
    code: "FET-004",
    name: "fetch-type-conversion",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The fetch adapter converts only the listed type pairs (`D: FetchCast<D2>`)",
    docs: "On RNGD the fetch adapter converts i4 → i5/i32, i8 → i9/i32, i16 → i32, f8e4m3/f8e5m2 \
           → f32, bf16 → f32, f16 → f32 and f32 → bf16; keeping the type is always allowed. \
           RNGD-S adds i4 → i9, i16 → i9 and f8 → bf16. Any other pair does not implement \
           `FetchCast`. Fetch a supported type and convert later (the Vector Engine or the Cast \
           Engine), or store the tensor in a type that converts directly. furiosa-opt-std 0.6 \
           gives each adapter stage its own table, on either chip, and visa-lint checks each \
           adapter where it is written: `fetch_cast` keeps the type or widens i4/i8/i16 to i32 \
           and f8e4m3/f8e5m2/bf16 to f32, or narrows f32 to bf16 (no f16, no i5/i9); \
           `fetch_zero_point_sub` makes i5 from i4 and i9 from i8 only; `fetch_table_lookup` \
           decodes f4e2m1 to either 8-bit float and either 8-bit float to bf16.",
    bad: "ctx.main.begin(a.view()).fetch::<f32, m![A / 8], m![A % 8]>() // a: i8",
    good: "ctx.main.begin(a.view()).fetch::<i32, m![A / 8], m![A % 8]>() // a: i8",
    manual: "L1962-L1977, L1724, L2116",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 splits the conversions by stage, one trait each, bound where the \
         adapter is called (`furiosa-opt-std/src/engine/fetch_adapter.rs:209-245,307-313`): \
         `fetch_cast` takes `FetchCast`'s pairs (identity, i4/i8/i16 → i32, f8e4m3/f8e5m2/bf16 → \
         f32, f32 → bf16; no f16 and no RNGD-S extras, `furiosa-opt-std/src/cast.rs:20-35`), \
         `fetch_zero_point_sub` `FetchZeroPointSub`'s i4 → i5 and i8 → i9 (`cast.rs:83-108`), \
         `fetch_table_lookup` `TableLookup`'s f4e2m1 → f8e4m3/f8e5m2 and f8 → bf16 \
         (`cast.rs:43-74`); visa-lint checks each adapter against its own table",
    ),
};

pub const FET_005: Rule = Rule {
    code: "FET-005",
    name: "casting-fetch-32-bytes",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["FET-002"],
        why: "never violated by a derivable fetch: the compiler keeps a casting fetch within 32 bytes \
         by its choice of fetch_size (sub: 4 bytes for i4 → i32, else 8, L2018-L2021; main: the \
         manual's i8 → i32 fetch of 32-byte packets, L1729-L1740, is valid, so it lowers the \
         size), and every supported cast has such a size (1 byte in main); visa-lint applies the \
         limit in derive::fetch_size_choices, and a sub size that does not divide the packet or \
         run is FET-006/FET-002's",
    },
    summary: "A casting fetch produces at most 32 bytes per fetch",
    docs: "fetch_size × widening ratio ≤ 32 bytes: i4 → i32 with a 4-byte fetch is valid (32 \
           bytes out); i4 → i32 with 8 bytes or i8 → i32 with 16 bytes (64 bytes out) are not.",
    bad: "",
    good: "",
    manual: "L1996-L2017",
    generations: Generations::Both,
};

pub const FET_006: Rule = Rule {
    code: "FET-006",
    name: "time-divisible-by-batching",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet is a whole number of fetches, so the fetch steps group evenly into packets",
    docs: "Batching groups `fetches_per_packet` consecutive fetches into one packet, so the \
           sequencer's fetch steps (Time::SIZE × packet / fetch_size) must divide evenly by the \
           batching factor (L2115). The stream's own Time need not: the manual's fetch_batch_4 \
           has Time::SIZE 4 and batching factor 3 (L2098-L2105), so visa-lint reads the rule as \
           the sequencer's time steps, which fail to group exactly when the packet is not a \
           whole number of fetches. That happens where the fetch size is fixed: the sub context \
           fetches 8 bytes (4 for i4 → i32), so a 12-byte packet is 1.5 fetches. (A fetch \
           output packet that is not 8-byte aligned is ALN-005's; a run the fetch size does not \
           divide is FET-002's.) Pad the packet to a multiple of the fetch size, or fetch on \
           ctx.main.",
    bad: "// a: DmTensor<i8, .., m![B, A]>, A = 12\nctx.sub.begin(a.view()).fetch_with_zero_point(3) // i8 -> i32, 12-byte packets",
    good: "// A = 16: 16-byte packets, two 8-byte fetches each",
    manual: "L2115-L2116, L2098-L2105",
    generations: Generations::Both,
};

pub const FET_007: Rule = Rule {
    code: "FET-007",
    name: "zero-point-range",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A zero point fits the fetch output type (furiosa-opt-std: the source type)",
    docs: "`fetch_with_zero_point(zp)` and `fetch_with_zero_points([zp0, zp1])` subtract the zero \
           point while converting to the output type D2; the value must be representable in D2 \
           (i9 holds -256..=255, i5 holds -16..=15). furiosa-opt-std 0.6's \
           `fetch_zero_point_sub::<D2>(zp)` asserts the stricter range of the type it reads, \
           -128..=127 for i8 → i9 and -8..=7 for i4 → i5, which keeps every residual within \
           D2. visa-lint checks integer literals. Use a wider output type or requantize.",
    bad: "...fetch_with_zero_point(300) // D2 = i9",
    good: "...fetch_with_zero_point(100) // D2 = i9",
    manual: "L2117, L2030-L2049",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 writes it `fetch_zero_point_sub::<D>(zp)` with one zero point and \
         asserts the range of the source type, -8..=7 for i4 and -128..=127 for i8 \
         (`FetchZeroPointSub::ZERO_POINT_RANGE`, `furiosa-opt-std/src/cast.rs:83-108`, asserted \
         at `engine/fetch_adapter.rs:314-318`); visa-lint checks that range there",
    ),
};

pub const FET_008: Rule = Rule {
    code: "FET-008",
    name: "fetch-masking-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Masked innermost axes stay within the valid-count limits (0-255 for 4-bit, 0-31 for f32)",
    docs: "Fetch masking handles an innermost axis padded on the right (`A # n`, `(# n + A + # m)`): \
           `last_dim_rightmost_valid_count[0]` counts the valid elements of the last packet row \
           and is limited to 0-255 for 4-bit types and 0-31 for f32 (L1902). The stated reason \
           (a 256-byte final packet) does not match these numbers (constraints.md §22 A-25), so \
           visa-lint enforces the literal counts and no byte limit, and no limit for the types \
           the manual does not list. Split the padded axis so the packet row holds at most 31 \
           f32 (or 255 4-bit) elements of it (`m![A # 64]` → Time `A # 64 / 16`, Packet `A # 64 \
           % 16`, as in the manual's padding case 1, L1903-L1911); visa-lint offers this split as \
           a fix when both mappings are written out.",
    bad: "axes![A = 60]; .fetch::<f32, m![1], m![A # 64]>() // 60 valid f32 in the last row",
    good: ".fetch::<f32, m![A # 64 / 16], m![A # 64 % 16]>() // 12 valid in the last row",
    manual: "L1899-L1927",
    generations: Generations::Both,
};

pub const FET_009: Rule = Rule {
    code: "FET-009",
    name: "table-indexing-main-only",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-008"],
        why: "no case of its own: the manual's one condition (table indexing is a main-context \
         stage, L1870) is KRN-008's finding (sub-context fetch adapter); the table's \
         LookupTable<D, D2> types are not modelled (non-tensor parameters)",
    },
    summary: "Table indexing is a main-context adapter stage",
    docs: "`fetch_with_table` in `ctx.sub` is reported by KRN-008.",
    bad: "",
    good: "",
    manual: "L1936-L1953, L1870",
    generations: Generations::Both,
};

pub const FET_010: Rule = Rule {
    code: "FET-010",
    name: "fetch-interleaving",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An interleaved fetch keeps the interleave axis in Time; two zero points need an interleaved input",
    docs: "`begin_interleaved` puts the interleave axis `I = 2` in the BeginTensor's Time: the \
           fetch alternates lhs, rhs, lhs, … one packet per time step (L1846-L1850), so `I` \
           belongs to the fetch's Time and never to its Packet. `fetch_with_zero_points([zp0, \
           zp1])` subtracts one zero point per interleaved tensor (L2036), so its input must be \
           interleaved. (The number of tensors and the axis size are KRN-011's.)",
    bad: "ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<i8, m![A], m![I, B]>()",
    good: "ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<i8, m![A, I], m![B]>()",
    manual: "L1846-L1850, L2030-L2049",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has one zero point per fetch, `fetch_zero_point_sub(zp: i32)` \
         (`furiosa-opt-std/src/engine/fetch_adapter.rs:307`), so only the interleave-axis part \
         applies there",
    ),
};

pub const FET_011: Rule = Rule {
    code: "FET-011",
    name: "prefer-sequencer-packets",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Prefer large packets from the sequencer over adapter batching",
    docs: "When the layout splits a packet of at most one flit into non-contiguous pieces, the \
           adapter batches several smaller fetches per packet (`fetches_per_packet > 1`). Batching \
           is for packets that cannot be read in one cycle because of the layout (L2058-L2059); \
           storing the Element with the Packet's axes innermost, in the Packet's order, reads the \
           packet in one fetch. The message gives both cycle counts. Multi-flit packets are \
           SEQ-005's.",
    bad: "// a: DmTensor<i8, .., m![B, C, A]>, A = 4\n.fetch::<i8, m![C], m![B, A]>() // 8-byte packets in 4-byte pieces",
    good: "// a: DmTensor<i8, .., m![C, B, A]>\n.fetch::<i8, m![C], m![B, A]>()",
    manual: "L2058-L2059",
    generations: Generations::Both,
};

pub const FET_012: Rule = Rule {
    code: "FET-012",
    name: "dual-channel-explicit",
    severity: Severity::Info,
    status: Status::Unreachable(
        "the manual documents no API for dual channel mode (L2125-L2127, L2138-L2142, L3052 \
         describe it in prose only; no code shows it), so there is nothing to recognise",
    ),
    summary: "Dual channel (64-byte flit) mode is never automatic",
    docs: "It combines the main and sub switch channels and makes the sub context unavailable.",
    bad: "",
    good: "",
    manual: "L2125-L2127, L2138-L2142",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    FET_001, FET_002, FET_003, FET_004, FET_005, FET_006, FET_007, FET_008, FET_009, FET_010,
    FET_011, FET_012,
];

/// The fetch stage a fetch method or adapter converts with, under the crate's library, and the
/// name a message gives it: furiosa-opt-std's three adapters each have their own table; the
/// manual's fetch methods share the Fetch Adapter's (which the generation's tables say).
fn stage_of<'t>(conv: &Conversions<'t>, method: &Method) -> Option<(Stage<'t>, &'static str)> {
    Some(match method {
        Method::Fetch | Method::FetchCast => (conv.fetch_cast, "fetch_cast"),
        Method::FetchWithZeroPoint | Method::FetchWithZeroPoints | Method::FetchZeroPointSub => {
            (conv.zero_point_sub, "fetch_zero_point_sub")
        }
        Method::FetchWithTable | Method::FetchTableLookup => {
            (conv.table_lookup, "fetch_table_lookup")
        }
        _ => return None,
    })
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    check_sub_fetch_size(cx, out);
    check_fetch_perf(cx, out);
    check_masking(cx, out);
    check_interleave(cx, out);
    let opt_std = cx.model.library == Generation::OptStd;
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_fetch() {
                continue;
            }
            // furiosa-opt-std's adapters fold into the fetch: each is checked where written
            // (a chain may stop after the fetch and go on from a variable).
            if opt_std {
                continue;
            }
            check_cast(cx, step, out);
            if matches!(
                step.method,
                Method::FetchWithZeroPoint | Method::FetchWithZeroPoints
            ) {
                let dtype = |t: &Option<TensorTy>| t.as_ref().and_then(|t| t.dtype);
                let types = (dtype(&step.input), dtype(&step.output));
                check_zero_point(cx, types, step.args.first(), out);
            }
        }
    }
    if opt_std {
        check_adapters(cx, out);
    }
}

/// FET-002: the sub context's fixed fetch size divides the packet and the contiguous run.
fn check_sub_fetch_size(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        if op.kind != OpKind::Fetch || op.context != Some(Tu::Sub) {
            continue;
        }
        let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
            continue;
        };
        let from = op.step.input.as_ref().and_then(|t| t.dtype);
        let to = op.step.output.as_ref().and_then(|t| t.dtype);
        if bits != 4 && !bits.is_multiple_of(8) {
            continue;
        }
        // `fetch_sizes_sub` is [4, 8]: 4 for i4 -> i32, 8 otherwise (L1758-L1759).
        let subs = cx.target.fetch_sizes_sub.iter().copied();
        let required = if from == Some(Dtype::I4) && to == Some(Dtype::I32) {
            subs.min()
        } else {
            subs.max()
        };
        let Some(required) = required else { continue };
        let sizes = derive::fetch_sizes(cfg, bits, &[required]);
        if sizes.fetch_size.is_some() {
            continue;
        }
        // A strided innermost entry is SEQ-004's (discrete access).
        if cfg.packet_size > 1 && cfg.entries.last().is_some_and(|e| e.stride > 1) {
            continue;
        }
        if !sizes.packet_bytes.is_multiple_of(required) {
            // FET-006 when the output packet is aligned (else ALN-005 reports it).
            let out_bits = to.map_or(bits, Dtype::bits);
            let out_bytes = derive::bytes(op.packet.size, out_bits);
            if out_bytes.is_multiple_of(cx.target.fetch_align_bytes) {
                let steps = derive::time_steps(cfg);
                // The packet the fix pads, where it is written.
                let at = output_arg(
                    op.step,
                    (op.step.method == Method::Fetch).then_some(2),
                    Slot::Packet,
                );
                out.push(at_arg(
                    &FET_006,
                    op.step,
                    at.map(|a| a.span),
                    format!(
                        "the {}-byte packet is {} of the sub context's {required}-byte fetches: the batching factor (fetches_per_packet) is not whole, so the sequencer's fetch steps (Time::SIZE {steps} × {} / {required} = {}) cannot be grouped into packets (sequencer {cfg}); pad the packet to a multiple of {required} bytes or fetch on ctx.main",
                        sizes.packet_bytes,
                        fraction(sizes.packet_bytes, required),
                        sizes.packet_bytes,
                        fraction(steps.saturating_mul(sizes.packet_bytes), required),
                    ),
                ));
            }
            continue;
        }
        let at = output_arg(
            op.step,
            (op.step.method == Method::Fetch).then_some(2),
            Slot::Packet,
        );
        let fix = packet_innermost(cx, op, required);
        let at = fix
            .as_ref()
            .and_then(|(e, _)| e.first())
            .map(|e| e.span)
            .or(at.map(|a| a.span));
        let diag = at_arg(
            &FET_002,
            op.step,
            at,
            format!(
                "a sub-context fetch reads {required} bytes at a time, which must divide the {}-byte \
                 packet and the {}-byte contiguous DM run (sequencer {cfg}); store the packet's \
                 axes innermost in DM, pad both to a multiple of {required} bytes, or fetch on \
                 ctx.main",
                sizes.packet_bytes, sizes.contiguous_bytes
            ),
        );
        out.push(match fix {
            Some((edits, new)) => diag.with_fix(
                format!("store the packet's axes innermost in DM: {new}"),
                false,
                edits,
            ),
            None => diag,
        });
    }
}

/// FET-002's fix when the packet is a whole number of fetches but its axes lie apart in DM:
/// the DM Element, where it is written, with the packet's terms moved innermost in the
/// packet's order (`m![B, C, A]`, packet `m![B, A]` → `m![C, B, A]`), so that the packet is
/// one contiguous run; offered when the fetch derived over it reads `required` bytes at a
/// time. Its edits and the new mapping.
fn packet_innermost(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    required: u64,
) -> Option<(Vec<Edit>, String)> {
    let buf = input_arg(op.step, Slot::Packet)?;
    let packet = op.step.output.as_ref()?.get(Slot::Packet)?;
    let packet: Vec<&str> = top_terms(&packet.text).into_iter().map(|t| t.1).collect();
    let stored: Vec<&str> = top_terms(&buf.text).into_iter().map(|t| t.1).collect();
    if packet.is_empty() || !packet.iter().all(|t| stored.contains(t)) {
        return None;
    }
    let outer = stored.iter().filter(|t| !packet.contains(t));
    let terms: Vec<&str> = outer.chain(&packet).copied().collect();
    let new = format!("m![{}]", terms.join(", "));
    let moved = op.over(layout_of(&new, cx.scope)?, cx.target);
    let (Ok(cfg), Some(bits)) = (&moved.config, moved.bits) else {
        return None;
    };
    derive::fetch_sizes(cfg, bits, &[required]).fetch_size?;
    Some((rewrite_input(cx.model, op.step, Slot::Packet, &new)?, new))
}

/// `a / b` as a decimal with at most two places (`1.5`).
fn fraction(a: u64, b: u64) -> String {
    if b == 0 {
        return "?".into();
    }
    if a.is_multiple_of(b) {
        return (a / b).to_string();
    }
    let hundredths = u128::from(a) * 100 / u128::from(b);
    let s = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    s.trim_end_matches('0').to_string()
}

/// The fetch sizes the compiler may use for a fetch op.
fn choices(cx: &FnContext<'_>, op: &derive::Op<'_>) -> Vec<u64> {
    let from = op.step.input.as_ref().and_then(|t| t.dtype);
    let to = op.step.output.as_ref().and_then(|t| t.dtype);
    derive::fetch_size_choices(cx.target, op.context == Some(Tu::Sub), from, to)
}

/// FET-003 and FET-011: main-context fetches that read less per cycle than the layout allows.
fn check_fetch_perf(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    for op in &cx.ops {
        if op.kind != OpKind::Fetch || op.context == Some(Tu::Sub) {
            continue;
        }
        let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
            continue;
        };
        if cfg.entries.last().is_none_or(|e| e.stride > 1) {
            continue; // SEQ-004
        }
        let allowed = choices(cx, op);
        let cap = allowed.iter().copied().max().unwrap_or(flit).min(flit);
        let f = derive::fetch_sizes(cfg, bits, &allowed);
        let (Some(fetch), Some(per), Some(cycles)) = (f.fetch_size, f.fetches_per_packet, f.cycles)
        else {
            continue;
        };
        let steps = derive::time_steps(cfg);
        if f.packet_bytes == 0 || f.packet_bytes > flit || fetch >= cap {
            continue;
        }
        if per > 1 && f.contiguous_bytes < f.packet_bytes {
            // FET-011: the layout splits a one-flit packet.
            let best_fetch =
                derive::largest_divisor(f.packet_bytes, f.packet_bytes, &allowed).unwrap_or(fetch);
            let best = steps.saturating_mul(f.packet_bytes.div_ceil(best_fetch));
            if best < cycles {
                out.push(Diagnostic::new(
                    &FET_011,
                    op.span,
                    format!(
                        "the {}-byte packet lies in {}-byte contiguous pieces in DM (sequencer {cfg}), so the adapter batches {per} fetches of {fetch} bytes per packet: {cycles} cycles; stored with the Packet's axes innermost it would be read {best_fetch} bytes at a time: {best} cycles",
                        f.packet_bytes, f.contiguous_bytes
                    ),
                ));
            }
            continue;
        }
        if per == 1 && f.contiguous_bytes >= f.packet_bytes.saturating_mul(2) {
            // FET-003: the DM run continues past a small packet.
            let run = f.contiguous_bytes.min(flit);
            let best_fetch = allowed
                .iter()
                .copied()
                .filter(|&s| s <= run)
                .max()
                .unwrap_or(fetch);
            let total = steps.saturating_mul(f.packet_bytes);
            let best = total.div_ceil(best_fetch);
            if best.saturating_mul(4) <= cycles && bits >= 8 {
                // The small packet the fix grows (and the call when it is written nowhere).
                let at = output_arg(
                    op.step,
                    (op.step.method == Method::Fetch).then_some(2),
                    Slot::Packet,
                );
                let mut d = at_arg(
                    &FET_003,
                    op.step,
                    at.map(|a| a.span),
                    format!(
                        "fetch_size is {fetch} bytes (the {}-byte packet; the DM run is {} contiguous bytes, sequencer {cfg}): {cycles} cycles; moving the innermost Time factors into the Packet (padded to {best_fetch} bytes) would take about {best}",
                        f.packet_bytes, f.contiguous_bytes
                    ),
                );
                if let Some((edits, new_cycles, packet)) = grow_packet(cx, op, bits, &allowed) {
                    d = d.with_fix(
                        format!(
                            "fetch `{packet}` packets ({new_cycles} cycle{})",
                            if new_cycles == 1 { "" } else { "s" }
                        ),
                        false,
                        edits,
                    );
                }
                out.push(d);
            }
        }
    }
}

/// FET-003's fix (L1816-L1839): move the innermost written Time terms into the Packet while
/// it stays within one flit, padded to a power-of-two byte size. Returns the edits, the new
/// cycle count and the new Packet text.
fn grow_packet(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    bits: u32,
    allowed: &[u64],
) -> Option<(Vec<crate::diagnostic::Edit>, u64, String)> {
    if op.step.method != Method::Fetch {
        return None;
    }
    let (ta, pa) = (written(op.step, 1)?, written(op.step, 2)?);
    let ty = op.step.output.as_ref()?;
    let (tm, pm) = (ty.get(Slot::Time)?, ty.get(Slot::Packet)?);
    let mut time = cx.scope.lowered_terms(&tm.text)?;
    let packet = cx.scope.lowered_terms(&pm.text)?;
    let mut moved: Vec<String> = packet.iter().map(|(t, _)| t.clone()).collect();
    let mut size = packet
        .iter()
        .try_fold(1u64, |a, (_, l)| a.checked_mul(l.size))?;
    let flit = cx.target.flit_bytes;
    let mut grown = false;
    while let Some((t, l)) = time.last() {
        let next = size.checked_mul(l.size)?;
        if derive::bytes(next, bits) > flit {
            break;
        }
        size = next;
        moved.insert(0, t.clone());
        time.pop();
        grown = true;
    }
    // Split the next Time term when only part of it fits: `A` → `A / k` stays, `A % k` moves.
    if let Some((t, l)) = time.last().cloned() {
        let room = flit.checked_mul(8)? / u64::from(bits) / size.max(1);
        let simple = !t.contains(['%', '#', '[', ',', '=', '(']);
        if simple && room > 1 && l.size > room && l.size.is_multiple_of(room) {
            let inner = format!("{t} % {room}");
            let lowered = cx.scope.lowered_terms(&format!("m![{t} / {room}]"))?;
            time.pop();
            time.extend(
                lowered
                    .into_iter()
                    .map(|(_, l)| (format!("{t} / {room}"), l)),
            );
            moved.insert(0, inner);
            size = size.checked_mul(room)?;
            grown = true;
        }
    }
    if !grown {
        return None;
    }
    let want = derive::bytes(size, bits).next_power_of_two().min(flit);
    let elems = want.checked_mul(8)? / u64::from(bits);
    let body = moved.join(", ");
    let packet_text = if elems == size {
        format!("m![{body}]")
    } else if moved.len() == 1 {
        format!("m![{body} # {elems}]")
    } else {
        format!("m![[{body}] # {elems}]")
    };
    let time_text = if time.is_empty() {
        "m![1]".to_string()
    } else {
        format!(
            "m![{}]",
            time.iter()
                .map(|(t, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    // Check the new configuration and its cycles.
    let new_packet = cx.scope.lowered_terms(&packet_text)?;
    let time_dims: Vec<_> = time.iter().flat_map(|(_, l)| l.dims.clone()).collect();
    let packet_dims: Vec<_> = new_packet.into_iter().flat_map(|(_, l)| l.dims).collect();
    let cfg = derive::configure(
        &op.buf,
        &time_dims,
        &packet_dims,
        derive::Direction::Read,
        cx.target.sequencer_entries,
    )
    .ok()?;
    let cycles = derive::fetch_sizes(&cfg, bits, allowed).cycles?;
    let edits = vec![
        crate::diagnostic::Edit {
            span: ta.span,
            new_text: time_text,
        },
        crate::diagnostic::Edit {
            span: pa.span,
            new_text: packet_text.clone(),
        },
    ];
    Some((edits, cycles, packet_text))
}

/// FET-008: the rightmost valid count of a masked innermost axis.
fn check_masking(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    use crate::mapping::layout::Dim;
    for op in &cx.ops {
        if op.kind != OpKind::Fetch {
            continue;
        }
        let Some(dtype) = op.step.input.as_ref().and_then(|t| t.dtype) else {
            continue;
        };
        let Some(&(_, max)) = cx
            .target
            .fetch_mask_valid_max
            .iter()
            .find(|(d, _)| *d == dtype.canonical())
        else {
            continue;
        };
        let Some(Dim::Factor(f)) = op.packet.dims.last() else {
            continue;
        };
        let Some(axis) = &f.axis else { continue };
        if f.coef != 1 || f.extent == 0 {
            continue;
        }
        // The valid elements of the axis in the last packet row.
        let covered = op
            .time
            .dims
            .iter()
            .chain(op.packet.dims.iter())
            .filter_map(|d| match d {
                Dim::Factor(g) if g.axis.as_ref().is_some_and(|a| a.name == axis.name) => {
                    Some(g.coef.saturating_mul(g.valid))
                }
                _ => None,
            })
            .max()
            .unwrap_or(f.valid)
            .min(axis.size);
        let rem = covered % f.extent;
        let rightmost = if covered < f.extent {
            covered
        } else if rem != 0 {
            rem
        } else {
            continue;
        };
        if f.valid == f.extent && covered >= f.extent && rem == 0 {
            continue;
        }
        if rightmost <= max {
            continue;
        }
        let at = output_arg(
            op.step,
            (op.step.method == Method::Fetch).then_some(2),
            Slot::Packet,
        );
        let diag = at_arg(
            &FET_008,
            op.step,
            at.map(|a| a.span),
            format!(
                "masking the padded `{}` leaves {rightmost} valid {dtype} elements in the last {}-element packet row (last_dim_rightmost_valid_count); the Fetch Engine counts 0-{max} for {dtype} (L1902, constraints.md §22 A-25). Split the axis so a packet row holds at most {max} of its elements",
                axis.name, f.extent
            ),
        );
        out.push(match split_masked(cx, op, f.extent, max) {
            Some((edits, title)) => diag.with_fix(title, false, edits),
            None => diag,
        });
    }
}

/// FET-008's fix (the manual's padding case 1, L1903-L1911): the masked innermost Packet term
/// `T` (of `extent` positions) split into Time `T / k` and Packet `T % k`, `k` the largest
/// divisor of `extent` within the valid-count limit `max` that keeps the packet a whole
/// number of 8-byte units (ALN-005), so the last packet row holds at most `k` valid
/// elements. Both mappings are rewritten where they are written (the turbofish and the
/// chain's declared type). Its edits and title.
fn split_masked(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    extent: u64,
    max: u64,
) -> Option<(Vec<Edit>, String)> {
    if op.step.method != Method::Fetch {
        return None;
    }
    let ty = op.step.output.as_ref()?;
    let (tm, pm) = (ty.get(Slot::Time)?, ty.get(Slot::Packet)?);
    let time = cx.scope.lowered_terms(&tm.text)?;
    let mut packet = cx.scope.lowered_terms(&pm.text)?;
    let (term, l) = packet.pop()?;
    if l.size != extent || term.contains([',', '[', '(']) {
        return None;
    }
    let outer = packet
        .iter()
        .try_fold(1u64, |a, (_, l)| a.checked_mul(l.size))?;
    let bits = op.bits?;
    let align = cx.target.fetch_align_bytes;
    let k = (2..=max.min(extent - 1)).rev().find(|&k| {
        extent.is_multiple_of(k)
            && outer
                .checked_mul(k)
                .is_some_and(|n| derive::bytes(n, bits).is_multiple_of(align))
    })?;
    let list = |terms: Vec<String>| format!("m![{}]", terms.join(", "));
    let mut time: Vec<String> = time.into_iter().map(|(t, _)| t).collect();
    time.retain(|t| t != "1");
    time.push(format!("{term} / {k}"));
    let mut packet: Vec<String> = packet.into_iter().map(|(t, _)| t).collect();
    packet.push(format!("{term} % {k}"));
    let (time, packet) = (list(time), list(packet));
    let chain = cx
        .model
        .chains
        .iter()
        .find(|c| c.steps.iter().any(|s| std::ptr::eq(s, op.step)))?;
    let mut edits = rewrite_output(chain, op.step, Some(1), Slot::Time, &time)?;
    edits.extend(rewrite_output(
        chain,
        op.step,
        Some(2),
        Slot::Packet,
        &packet,
    )?);
    Some((
        edits,
        format!("split `{term}` by {k}: Time {time}, Packet {packet}"),
    ))
}

/// FET-010: the interleave axis stays in Time; two zero points need an interleaved input.
fn check_interleave(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    use crate::mapping::layout::Dim;
    let axes = |l: &crate::mapping::Layout| -> Vec<String> {
        l.dims
            .iter()
            .filter_map(|d| match d {
                Dim::Factor(f) => f.axis.as_ref().map(|a| a.name.to_string()),
                Dim::Opaque(_) => None,
            })
            .collect()
    };
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_fetch() {
                continue;
            }
            let Some(time_in) = step
                .input
                .as_ref()
                .and_then(|t| t.get(Slot::Time))
                .and_then(|m| m.layout.as_deref())
            else {
                continue;
            };
            let inter = axes(time_in);
            if step.method == Method::FetchWithZeroPoints && time_in.size == 1 {
                out.push(Diagnostic::new(
                    &FET_010,
                    step.span,
                    "`fetch_with_zero_points` subtracts one zero point per interleaved tensor, but this input is not interleaved (its Time is `m![1]`): start the chain with `begin_interleaved`, or use `fetch_with_zero_point`",
                ));
                continue;
            }
            if inter.is_empty() {
                continue;
            }
            let Some(out_ty) = step.output.as_ref() else {
                continue;
            };
            let (Some(t2), Some(p2)) = (out_ty.get(Slot::Time), out_ty.get(Slot::Packet)) else {
                continue;
            };
            let (Some(tl), Some(pl)) = (t2.layout.as_deref(), p2.layout.as_deref()) else {
                continue;
            };
            let (in_t, in_p) = (axes(tl), axes(pl));
            for a in &inter {
                if in_p.contains(a) || !in_t.contains(a) {
                    let arg = if step.method == Method::Fetch {
                        written(step, if in_p.contains(a) { 2 } else { 1 })
                    } else {
                        None
                    };
                    let Some(sp) =
                        arg.map(|x| x.span)
                            .or(if in_p.contains(a) { p2.span } else { t2.span })
                    else {
                        continue;
                    };
                    let msg = if in_p.contains(a) {
                        format!(
                            "the interleave axis `{a}` is in the fetch's Packet `{}`: interleaving alternates the tensors one packet per time step (L1846-L1848), so `{a}` belongs in Time",
                            p2.text
                        )
                    } else {
                        format!(
                            "the interleave axis `{a}` is missing from the fetch's Time `{}`: an interleaved fetch alternates the two tensors over Time (L1846-L1848)",
                            t2.text
                        )
                    };
                    out.push(at_arg(&FET_010, step, Some(sp), msg));
                }
            }
        }
    }
}

/// FET-004 on a fetch of the manual's library: its input and output types against the Fetch
/// Adapter's table of the target.
fn check_cast(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(from), Some(to)) = (
        step.input.as_ref().and_then(|t| t.dtype),
        step.output.as_ref().and_then(|t| t.dtype),
    ) else {
        return;
    };
    let Some((stage, _)) = stage_of(&cx.conversions(), &step.method) else {
        return;
    };
    if stage.converts(from, to) {
        return;
    }
    let span = if step.method == Method::Fetch {
        written(step, 0).map_or(step.span, |a| a.span)
    } else {
        step.span
    };
    out.push(Diagnostic::new(
        &FET_004,
        span,
        format!(
            "the {} fetch adapter cannot convert {from} to {to}: {}",
            cx.target.name,
            options(stage, from)
        ),
    ));
}

/// What `from` converts to in a stage, for messages.
fn options(stage: Stage<'_>, from: Dtype) -> String {
    let list: Vec<&str> = stage.targets(from).iter().map(|d| d.as_str()).collect();
    match (list.is_empty(), stage.identity) {
        (true, true) => format!("{from} can only be fetched as {from}"),
        (true, false) => format!("it converts no {from}"),
        (false, true) => format!("{from} converts to {} (or stays {from})", list.join(", ")),
        (false, false) => format!("{from} converts to {} only", list.join(", ")),
    }
}

/// FET-004 under furiosa-opt-std 0.6: each fetch adapter (`fetch_cast`,
/// `fetch_zero_point_sub`, `fetch_table_lookup`) against its own stage's table, from the
/// stream it receives to the type it names; and FET-007 on `fetch_zero_point_sub`'s zero point.
fn check_adapters(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let conv = cx.conversions();
    for adapter in &cx.model.adapters {
        let Some((stage, name)) = stage_of(&conv, &adapter.method) else {
            continue;
        };
        let Some((arg, _)) = &adapter.generic else {
            continue;
        };
        let (Some(from), Some(to)) = (adapter.input.dtype, Dtype::from_name(arg.text.trim()))
        else {
            continue;
        };
        if adapter.method == Method::FetchZeroPointSub {
            check_zero_point(cx, (Some(from), Some(to)), adapter.args.first(), out);
        }
        if stage.converts(from, to) {
            continue;
        }
        // The fetch stage that does convert the pair, if any.
        let elsewhere = [
            (conv.fetch_cast, "fetch_cast"),
            (conv.zero_point_sub, "fetch_zero_point_sub"),
            (conv.table_lookup, "fetch_table_lookup"),
        ]
        .into_iter()
        .find(|(s, _)| from != to && s.converts(from, to))
        .map_or(String::new(), |(_, other)| {
            format!("; {from} → {to} is `{other}`'s")
        });
        out.push(
            Diagnostic::new(
                &FET_004,
                arg.span,
                format!(
                    "`{name}` cannot convert {from} to {to}: {}{elsewhere}",
                    options(stage, from)
                ),
            )
            .with_related(adapter.span, format!("the `{name}` stage")),
        );
    }
}

/// An integer literal (`-10`, `100i8`, `0x7f`, `1_000`), or `None`.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim().replace('_', "");
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start().to_string()),
        None => (false, t),
    };
    let (radix, body) = match t.strip_prefix("0x") {
        Some(h) => (16, h),
        None => (10, t.as_str()),
    };
    let end = body
        .find(|c: char| !c.is_digit(radix) || (radix == 16 && matches!(c, 'i' | 'u')))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(end);
    let typed = ["", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];
    if digits.is_empty() || !typed.contains(&suffix) {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// FET-007 where the zero point is given: a fetch of the manual's library (`step`), or
/// furiosa-opt-std's `fetch_zero_point_sub` adapter, from its input type to the one it names.
fn check_zero_point(
    cx: &FnContext<'_>,
    (from, to): (Option<Dtype>, Option<Dtype>),
    arg: Option<&Arg>,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(to), Some(arg)) = (to, arg) else {
        return;
    };
    let Some((what, (lo, hi), why)) = zero_point_range(cx, from, to) else {
        return;
    };
    let value = arg.value_text();
    let text = value.as_ref();
    // The literals of `zp` or `[zp0, zp1]`, with their offsets in the argument.
    let mut items: Vec<(usize, &str)> = Vec::new();
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    if let Some(body) = trimmed.strip_prefix('[') {
        let body = body.trim_end().strip_suffix(']').unwrap_or(body);
        let mut off = lead + 1;
        for part in body.split(',') {
            items.push((off, part));
            off += part.len() + 1;
        }
    } else {
        items.push((0, text));
    }
    for (off, part) in items {
        let Some(v) = parse_int(part) else { continue };
        if v < lo || v > hi {
            let start = off + (part.len() - part.trim_start().len());
            // A zero point the argument names is not written here: the argument is the place.
            let span = if arg.in_place() {
                Span::new(
                    arg.span.start as usize + start,
                    arg.span.start as usize + start + part.trim().len(),
                )
            } else {
                arg.span
            };
            out.push(Diagnostic::new(
                &FET_007,
                span,
                format!("the zero point {v} does not fit {what} ({lo}..={hi}){why}"),
            ));
        }
    }
}

/// The range a zero-point fetch's zero point must lie in, what it is the range of, and why
/// (for a message's end): the output type's for the manual (L2117); for furiosa-opt-std 0.6
/// the source type's, which `fetch_zero_point_sub` asserts (`fetch_adapter.rs:314-318`), when
/// the fetch is one of its pairs (another is FET-004's).
fn zero_point_range(
    cx: &FnContext<'_>,
    from: Option<Dtype>,
    to: Dtype,
) -> Option<(String, (i64, i64), String)> {
    let conv = cx.conversions();
    match conv.zero_point_range {
        ZeroPointRange::Output => Some((
            format!("the fetch output type {to}"),
            to.int_range()?,
            String::new(),
        )),
        ZeroPointRange::Source => {
            let from = from?;
            if !conv.zero_point_sub.pairs.contains(&(from, to)) {
                return None;
            }
            let why = format!(
                ": `fetch_zero_point_sub` asserts the range of the type it reads, which keeps \
                 every residual within {to}"
            );
            Some((format!("the source type {from}"), from.int_range()?, why))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fix_testing::assert_fix_clears;

    /// FET-008's fix follows the manual's padding case 1 (L1903-L1911): `A # 64` split by 16
    /// leaves 60 - 48 = 12 valid f32 in the last packet row, within 0-31 (L1902).
    #[test]
    fn masking_fix_splits_the_padded_axis() {
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/FET-008.rs"),
            "FET-008",
        );
        assert!(
            fixed.contains(".fetch::<f32, m![B, A # 64 / 16], m![A # 64 % 16]>()"),
            "{fixed}"
        );
    }

    /// FET-002's fix stores the packet's axes innermost in DM: `m![B, C, A]` with packet
    /// `m![B, A]` becomes `m![C, B, A]`, one 8-byte run the sub context fetches at once
    /// (L1758-L1761).
    #[test]
    fn sub_fetch_fix_stores_the_packet_innermost() {
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/FET-002.rs"),
            "FET-002",
        );
        assert!(
            fixed.contains("a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![C, B, A]>"),
            "{fixed}"
        );
        assert!(fixed.contains(".fetch::<i8, m![C], m![B, A]>()"), "{fixed}");
    }

    fn dtype(name: &str) -> Dtype {
        Dtype::from_name(name).expect("an element type")
    }
    use crate::target::RNGD;

    #[test]
    fn rngd_type_cast_table_l1962() {
        let stage = Generation::VisaStd.conversions(&RNGD).fetch_cast;
        let converts = |a, b| stage.converts(a, b);
        // L1962-L1971: the RNGD conversion table.
        for (a, b) in [
            ("i4", "i5"),
            ("i4", "i32"),
            ("i8", "i9"),
            ("i8", "i32"),
            ("i16", "i32"),
            ("f8e4m3", "f32"),
            ("f8e5m2", "f32"),
            ("bf16", "f32"),
            ("f16", "f32"),
            ("f32", "bf16"),
            ("i8", "i8"),
            ("f8", "f32"),
        ] {
            assert!(converts(dtype(a), dtype(b)), "{a} -> {b}");
        }
        // L1972-L1977: RNGD-S-only conversions are not RNGD's.
        for (a, b) in [
            ("i4", "i9"),
            ("i16", "i9"),
            ("f8e4m3", "bf16"),
            ("i8", "f32"),
        ] {
            assert!(!converts(dtype(a), dtype(b)), "{a} -> {b}");
        }
    }

    #[test]
    fn zero_point_ranges_l2117() {
        assert_eq!(Dtype::I9.int_range(), Some((-256, 255)));
        assert_eq!(
            Dtype::I32.int_range(),
            Some((i64::from(i32::MIN), i64::from(i32::MAX)))
        );
        assert_eq!(Dtype::F32.int_range(), None);
        assert_eq!(parse_int("-100"), Some(-100));
        assert_eq!(parse_int("100i8"), Some(100));
        assert_eq!(parse_int(" 0x7f "), Some(127));
        assert_eq!(parse_int("1_000i32"), Some(1000));
        assert_eq!(parse_int("zero_point"), None);
    }

    #[test]
    fn cast_fetch_widths_l2000() {
        // L2000-L2017: i4 -> i32 with a 4-byte fetch produces 32 bytes; with 8 bytes, 64; i8 ->
        // i32 with 16 bytes, 64. Widening ratio × fetch_size is the output per fetch.
        let out = |from: &str, to: &str, fetch: u64| {
            let (f, t) = (
                u64::from(Dtype::from_name(from).map_or(8, Dtype::bits)),
                u64::from(Dtype::from_name(to).map_or(8, Dtype::bits)),
            );
            fetch * t / f
        };
        assert_eq!(out("i4", "i32", 4), 32);
        assert_eq!(out("i4", "i32", 8), 64);
        assert_eq!(out("i8", "i32", 16), 64);
    }

    /// The Batching page's four fetches of `m![N, C, H, W]` (L2067-L2111): packet, fetch size,
    /// batching factor and cycles. The manual counts one byte per i4 element (constraints.md §22
    /// A-3), so its numbers are reproduced at 8 bits; packed i4 halves the packets.
    #[test]
    fn batching_page_l2067() {
        use crate::derive::{Direction, configure, fetch_sizes};
        use crate::mapping::evaluate;
        let axes = "axes![N = 4, C = 3, H = 4, W = 8];";
        let lay = |m: &str| evaluate(axes, m).layout.expect("layout");
        let buf = lay("m![N, C, H, W]");
        let cases = [
            ("m![N, C, H]", "m![W]", (8, 8, 1, 48), (4, 4, 1, 48)),
            (
                "m![N, C, H / 2]",
                "m![H % 2, W]",
                (16, 16, 1, 24),
                (8, 8, 1, 24),
            ),
            ("m![N, C]", "m![H, W]", (32, 32, 1, 12), (16, 16, 1, 12)),
            ("m![N]", "m![C, H, W]", (96, 32, 3, 12), (48, 16, 3, 12)),
        ];
        for (time, packet, manual, packed) in cases {
            let (t, p) = (lay(time), lay(packet));
            let cfg = configure(
                &buf,
                &t.dims,
                &p.dims,
                Direction::Read,
                RNGD.sequencer_entries,
            )
            .expect("configures");
            assert_eq!(
                crate::derive::contiguous_elements(&cfg.entries),
                384,
                "{time} {packet}"
            );
            for (bits, want) in [(8, manual), (4, packed)] {
                let f = fetch_sizes(&cfg, bits, RNGD.fetch_sizes_main);
                let got = (
                    f.packet_bytes,
                    f.fetch_size.unwrap_or(0),
                    f.fetches_per_packet.unwrap_or(0),
                    f.cycles.unwrap_or(0),
                );
                assert_eq!(got, want, "{time} {packet} at {bits} bits");
            }
        }
    }

    /// L2123-L2124: 5 batched 8-byte fetches make a 40-byte packet, which Collect pads with 24
    /// zero bytes to 64 bytes (2 flits).
    #[test]
    fn collect_padding_l2123() {
        let packet = 5 * 8;
        let flits = u64::div_ceil(packet, RNGD.flit_bytes);
        assert_eq!((flits, flits * RNGD.flit_bytes - packet), (2, 24));
    }
}

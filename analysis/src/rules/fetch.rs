//! FET: the Fetch Engine, its sequencer and its adapter (constraints.md §7). The adapter rules
//! decided from dtypes and literals are checked here; the ones that need the derived
//! `fetch_size` stay planned until `crate::derive` provides it.

use super::FnContext;
use super::alignment::{canonical, written};
use super::registry::{Rule, Status};
use crate::derive::{self, OpKind};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::types::dtype_bits;
use crate::model::{Step, Tu};
use crate::target::Target;

const NEEDS_DERIVE: &str =
    "needs the derived fetch_size (analysis/src/derive, issue 4), not available yet";

pub const RULES: &[Rule] = &[
    Rule {
        code: "FET-001",
        name: "fetch-asserts",
        severity: Severity::Error,
        status: Status::Planned(
            "reported by its parts: CAP-002/CAP-003 (spatial sizes), FET-004 (cast), ALN-005 (packet)",
        ),
        summary: "`fetch` asserts Cluster = 2, Slice = 256, a supported cast and an 8-byte packet",
        docs: "The fetch primitive's assertions; each is its own rule so the message can be precise.",
        bad: "",
        good: "",
        manual: "L1700-L1718",
    },
    Rule {
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
               Packet (crate::derive). Pad the packet and the DM layout to a multiple of 8 bytes, or \
               run the fetch on `ctx.main",
        bad: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![C], m![B, A]>() // 4-byte runs",
        good: "// a: DmTensor<i8, .., m![S], m![B, C, A]>, A = 4\nctx.sub.begin(a.view()).fetch::<i8, m![B], m![C, A]>() // 16-byte runs",
        manual: "L1757-L1759, L2018-L2021",
    },
    Rule {
        code: "FET-003",
        name: "fetch-size-derivation",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "fetch_size is the largest supported divisor of gcd(packet, contiguous run)",
        docs: "Cycles = Time::SIZE × ceil(Packet::SIZE / fetch_size); padding packets to 32 bytes \
               gives one-cycle fetches.",
        bad: "",
        good: "",
        manual: "L1761, L2060, L2067-L2111",
    },
    Rule {
        code: "FET-004",
        name: "fetch-type-conversion",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "The fetch adapter converts only the listed type pairs (`D: FetchCast<D2>`)",
        docs: "On RNGD the fetch adapter converts i4 → i5/i32, i8 → i9/i32, i16 → i32, f8e4m3/f8e5m2 \
               → f32, bf16 → f32, f16 → f32 and f32 → bf16; keeping the type is always allowed. \
               RNGD-S adds i4 → i9, i16 → i9 and f8 → bf16. Any other pair does not implement \
               `FetchCast`. Fetch a supported type and convert later (the Vector Engine or the Cast \
               Engine), or store the tensor in a type that converts directly.",
        bad: "ctx.main.begin(a.view()).fetch::<f32, m![A / 8], m![A % 8]>() // a: i8",
        good: "ctx.main.begin(a.view()).fetch::<i32, m![A / 8], m![A % 8]>() // a: i8",
        manual: "L1962-L1977, L1724, L2116",
    },
    Rule {
        code: "FET-005",
        name: "casting-fetch-32-bytes",
        severity: Severity::Error,
        status: Status::Planned(
            "the compiler lowers the main-context fetch_size to keep a casting fetch within 32 bytes \
             (L2018-L2021); the fixed sub-context sizes are checked by FET-002",
        ),
        summary: "A casting fetch produces at most 32 bytes per fetch",
        docs: "fetch_size × widening ratio ≤ 32 bytes: i4 → i32 with a 4-byte fetch is valid (32 \
               bytes out); i4 → i32 with 8 bytes or i8 → i32 with 16 bytes (64 bytes out) are not.",
        bad: "",
        good: "",
        manual: "L1996-L2017",
    },
    Rule {
        code: "FET-006",
        name: "time-divisible-by-batching",
        severity: Severity::Error,
        status: Status::Planned(
            "which Time is meant is unclear: the manual's own batching example has Time 4 and \
             batching factor 3 (L2098-L2105 vs L2115)",
        ),
        summary: "Time::SIZE is a multiple of fetches_per_packet",
        docs: "Batching groups consecutive time steps; the Time size must divide evenly.",
        bad: "",
        good: "",
        manual: "L2115-L2116",
    },
    Rule {
        code: "FET-007",
        name: "zero-point-range",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "A zero point fits the fetch output type",
        docs: "`fetch_with_zero_point(zp)` and `fetch_with_zero_points([zp0, zp1])` subtract the zero \
               point while converting to the output type D2; the value must be representable in D2 \
               (i9 holds -256..=255, i5 holds -16..=15). visa-lint checks integer literals. Use a \
               wider output type or requantize.",
        bad: "...fetch_with_zero_point(300) // D2 = i9",
        good: "...fetch_with_zero_point(100) // D2 = i9",
        manual: "L2117, L2030-L2049",
    },
    Rule {
        code: "FET-008",
        name: "fetch-masking-limits",
        severity: Severity::Error,
        status: Status::Planned(
            "the masking limits are numerically inconsistent (constraints.md §22 A-25)",
        ),
        summary: "Masked innermost axes stay within the valid-count limits",
        docs: "Masking handles `(# n + A + # m)`; the valid counts are limited to 0-255 (4-bit) and 0-31 (f32).",
        bad: "",
        good: "",
        manual: "L1899-L1927",
    },
    Rule {
        code: "FET-009",
        name: "table-indexing-main-only",
        severity: Severity::Error,
        status: Status::Planned("reported as KRN-008 (sub-context fetch adapter)"),
        summary: "Table indexing is a main-context adapter stage",
        docs: "`fetch_with_table` in `ctx.sub` is reported by KRN-008.",
        bad: "",
        good: "",
        manual: "L1936-L1953, L1870",
    },
    Rule {
        code: "FET-010",
        name: "fetch-interleaving",
        severity: Severity::Error,
        status: Status::Planned("reported as KRN-011 (begin_interleaved)"),
        summary: "Interleaving combines two tensors; Time gains `I = 2`",
        docs: "`begin_interleaved` is checked by KRN-011.",
        bad: "",
        good: "",
        manual: "L1846-L1850, L2036",
    },
    Rule {
        code: "FET-011",
        name: "prefer-sequencer-packets",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Prefer large packets from the sequencer over adapter batching",
        docs: "Batching is for packets that cannot be read in one cycle because of the layout.",
        bad: "",
        good: "",
        manual: "L2058-L2059",
    },
    Rule {
        code: "FET-012",
        name: "dual-channel-explicit",
        severity: Severity::Info,
        status: Status::Planned("no user API for dual channel mode is documented"),
        summary: "Dual channel (64-byte flit) mode is never automatic",
        docs: "It combines the main and sub switch channels and makes the sub context unavailable.",
        bad: "",
        good: "",
        manual: "L2125-L2127, L2138-L2142",
    },
];

/// `true` when the fetch adapter converts `from` to `to` (identity included); `f8` stands for
/// either 8-bit float (constraints.md §22 A-14).
pub fn converts(target: &Target, from: &str, to: &str) -> bool {
    let spell = |d: &str| -> Vec<String> {
        if d == "f8" {
            vec!["f8e4m3".into(), "f8e5m2".into(), "f8".into()]
        } else if d == "fp16" {
            vec!["f16".into()]
        } else {
            vec![d.to_string()]
        }
    };
    let (fs, ts) = (spell(from), spell(to));
    fs.iter().any(|f| {
        ts.iter()
            .any(|t| f == t || target.fetch_casts.iter().any(|&(a, b)| a == f && b == t))
    })
}

/// The types `from` converts to on `target`, for messages.
fn conversions(target: &Target, from: &str) -> Vec<&'static str> {
    let f = canonical(from);
    target
        .fetch_casts
        .iter()
        .filter(|&&(a, _)| a == f || (from == "f8" && a.starts_with("f8")))
        .map(|&(_, b)| b)
        .collect()
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    check_sub_fetch_size(cx, out);
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.starts_with("fetch") {
                continue;
            }
            check_cast(cx, step, out);
            if step.method.starts_with("fetch_with_zero_point") {
                check_zero_point(step, out);
            }
        }
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
        let from = op.step.input.as_ref().and_then(|t| t.dtype.as_deref());
        let to = op.step.output.as_ref().and_then(|t| t.dtype.as_deref());
        if bits != 4 && !bits.is_multiple_of(8) {
            continue;
        }
        // `fetch_sizes_sub` is [4, 8]: 4 for i4 -> i32, 8 otherwise (L1758-L1759).
        let subs = cx.target.fetch_sizes_sub.iter().copied();
        let required = if from == Some("i4") && to == Some("i32") {
            subs.min()
        } else {
            subs.max()
        };
        let Some(required) = required else { continue };
        let sizes = derive::fetch_sizes(cfg, bits, &[required]);
        if sizes.fetch_size.is_some() {
            continue;
        }
        let arg = if op.step.method == "fetch" {
            written(op.step, 2)
        } else {
            None
        };
        let span = arg.map_or(op.span, |a| a.span);
        out.push(Diagnostic::new(
            "FET-002",
            span,
            format!(
                "a sub-context fetch reads {required} bytes at a time, which must divide the {}-byte \
                 packet and the {}-byte contiguous DM run (sequencer {cfg}); pad both to a multiple \
                 of {required} bytes or fetch on ctx.main",
                sizes.packet_bytes, sizes.contiguous_bytes
            ),
        ));
    }
}

/// FET-004.
fn check_cast(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(from), Some(to)) = (
        step.input.as_ref().and_then(|t| t.dtype.as_deref()),
        step.output.as_ref().and_then(|t| t.dtype.as_deref()),
    ) else {
        return;
    };
    if dtype_bits(canonical(from)).is_none() || dtype_bits(canonical(to)).is_none() {
        return;
    }
    if converts(cx.target, from, to) {
        return;
    }
    let span = if step.method == "fetch" {
        written(step, 0).map_or(step.span, |a| a.span)
    } else {
        step.span
    };
    let list = conversions(cx.target, from);
    let options = if list.is_empty() {
        format!("{from} can only be fetched as {from}")
    } else {
        format!("{from} converts to {} (or stays {from})", list.join(", "))
    };
    out.push(Diagnostic::new(
        "FET-004",
        span,
        format!(
            "the {} fetch adapter cannot convert {from} to {to}: {options}",
            cx.target.name
        ),
    ));
}

/// The representable range of an integer dtype.
fn int_range(dtype: &str) -> Option<(i64, i64)> {
    if !dtype.starts_with('i') {
        return None;
    }
    let bits = dtype_bits(dtype)?;
    let half = 1i64 << (bits - 1);
    Some((-half, half - 1))
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

/// FET-007.
fn check_zero_point(step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(to) = step.output.as_ref().and_then(|t| t.dtype.as_deref()) else {
        return;
    };
    let Some((lo, hi)) = int_range(to) else {
        return;
    };
    let Some(arg) = step.args.first() else { return };
    let text = arg.text.as_str();
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
            let span = Span::new(
                arg.span.start as usize + start,
                arg.span.start as usize + start + part.trim().len(),
            );
            out.push(Diagnostic::new(
                "FET-007",
                span,
                format!("the zero point {v} does not fit the fetch output type {to} ({lo}..={hi})"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::RNGD;

    #[test]
    fn rngd_type_cast_table_l1962() {
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
            assert!(converts(&RNGD, a, b), "{a} -> {b}");
        }
        // L1972-L1977: RNGD-S-only conversions are not RNGD's.
        for (a, b) in [
            ("i4", "i9"),
            ("i16", "i9"),
            ("f8e4m3", "bf16"),
            ("i8", "f32"),
        ] {
            assert!(!converts(&RNGD, a, b), "{a} -> {b}");
        }
    }

    #[test]
    fn zero_point_ranges_l2117() {
        assert_eq!(int_range("i9"), Some((-256, 255)));
        assert_eq!(
            int_range("i32"),
            Some((i64::from(i32::MIN), i64::from(i32::MAX)))
        );
        assert_eq!(int_range("f32"), None);
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
                u64::from(dtype_bits(from).unwrap_or(8)),
                u64::from(dtype_bits(to).unwrap_or(8)),
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

//! ALN: address and packet alignment (constraints.md §5). The checks here are decided from
//! dtypes, mapping sizes and constant addresses; the ones that need the compiler's sequencer
//! derivation (strides, contiguous runs) stay planned until `crate::derive` provides it.
//!
//! Also holds the small byte-size and padding-fix helpers the FET/COL/CMT/DMA families share.

use super::FnContext;
use super::registry::{Rule, Status};
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::types::dtype_bits;
use crate::model::{Arg, Slot, Step, TensorTy};

const NEEDS_DERIVE: &str =
    "needs the compiler's sequencer derivation (analysis/src/derive, issue 4), not available yet";

pub const RULES: &[Rule] = &[
    Rule {
        code: "ALN-001",
        name: "element-address-alignment",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "A tensor's start address is a multiple of `size_of::<D>()`",
        docs: "Alignment applies to the Element dimension: the starting address of a DM or HBM \
               tensor must be a multiple of the element size (natural alignment); Chip, Cluster and \
               Slice add none. visa-lint checks the constant address of `commit(addr)` and of \
               `to_hbm(.., addr)` (`to_dm` is covered by the stricter ALN-002). Round the address up \
               to the next multiple. Packed i4 (half a byte) needs no extra alignment.",
        bad: "...cast::<bf16, m![A % 16]>().commit::<m![A]>(1025)",
        good: "...cast::<bf16, m![A % 16]>().commit::<m![A]>(1024)",
        manual: "L1071-L1073",
    },
    Rule {
        code: "ALN-002",
        name: "dma-address-alignment",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "An HBM-to-DM transfer writes DM at an 8-byte-aligned address",
        docs: "The DMA alignment table asks 8 bytes for DM write addresses and packet sizes, and \
               HBM-to-DM transfers need 8-byte alignment of the read address, the write address and \
               the packet size whatever the table says; violations cause correctness errors or \
               hardware exceptions. visa-lint checks the constant DM address of \
               `hbm.to_dm(&mut ctx.tdma, addr)` (the HBM source address when it is a kernel parameter \
               is not known; the packet size is ALN-003). Round the address up to a multiple of 8 \
               (256 for throughput, ALN-010).",
        bad: "let x: DmTensor<i8, ..> = h.to_dm(&mut ctx.tdma, 0x1004);",
        good: "let x: DmTensor<i8, ..> = h.to_dm(&mut ctx.tdma, 0x1000);",
        manual: "L2425-L2427",
    },
    Rule {
        code: "ALN-003",
        name: "dma-packet-alignment",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "A DMA packet written to DM (or moved HBM to DM) is a multiple of 8 bytes",
        docs: "The DMA packet is the innermost contiguous run common to the source and destination \
               layouts; for DM writes and HBM-to-DM moves it must be a multiple of 8 bytes. Pad the \
               innermost Element axis of the DM tensor (`m![N, C # 16]` for i8, C = 13).",
        bad: "hbm(i8, m![A, C]) -> dm(i8, .., m![A, C]) // C = 13",
        good: "hbm(i8, m![A, C]) -> dm(i8, .., m![A, C # 16])",
        manual: "L2425-L2427",
    },
    Rule {
        code: "ALN-004",
        name: "dma-packet-limit",
        severity: Severity::Info,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "A DMA packet is at most 4,096 bytes (AXI: 256 beats of 16 bytes)",
        docs: "The compiler picks a packet size that divides the innermost contiguous run and is at \
               most 4,096 bytes; runs without a convenient divisor degrade (DMA-010).",
        bad: "",
        good: "",
        manual: "L2428-L2429",
    },
    Rule {
        code: "ALN-005",
        name: "fetch-packet-alignment",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "The fetch output packet is a multiple of 8 bytes",
        docs: "`fetch` asserts \"Fetch output packet must be 8-byte aligned\": the packet of the \
               FetchTensor (in the output type D2) must be a multiple of the fetch sequencer's 8-byte \
               read granularity. Pad the packet (`m![C]` → `m![C # 8]` for f8); padding to a full \
               32-byte flit is better still (ALN-011). i4 packs two elements per byte \
               (constraints.md §22 A-3), so the manual's 8 × i4 packets are 4 bytes and reported.",
        bad: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C]>()",
        good: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C # 8]>()",
        manual: "L1711-L1716, L1723, L7657-L7658",
    },
    Rule {
        code: "ALN-006",
        name: "fetch-address-alignment",
        severity: Severity::Info,
        status: Status::Planned(
            "informational only: fetch reads need 1-byte alignment beyond ALN-001",
        ),
        summary: "Fetch addresses need 1-byte alignment (plus element alignment)",
        docs: "Fetch reads impose no alignment beyond the element alignment of ALN-001; the 8-byte \
               alignment \"for certain DMA operations\" is ALN-002.",
        bad: "",
        good: "",
        manual: "L1755-L1756",
    },
    Rule {
        code: "ALN-007",
        name: "commit-8-byte-units",
        severity: Severity::Warning,
        status: Status::Implemented,
        summary: "A committed Element spans whole 8-byte units",
        docs: "commit_in_size and commit_size are 8, 16, 24 or 32 bytes, so a commit always writes \
               an 8-byte-aligned range; when the Element mapping is not a multiple of 8 bytes the \
               compiler appends a dummy tail that writes past the tensor and can clobber its \
               neighbour (CMT-007). visa-lint checks the committed Element's total size; the per-flit \
               split needs the commit-sequencer derivation. Make the padding explicit: bf16 `m![1]` → \
               `m![1 # 4]`.",
        bad: "...cast::<bf16, m![1 # 16]>().commit::<m![1]>(0)",
        good: "...cast::<bf16, m![1 # 16]>().commit::<m![1 # 4]>(0)",
        manual: "L2193, L2330, L7699",
    },
    Rule {
        code: "ALN-008",
        name: "commit-stride-alignment",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Commit-sequencer strides are multiples of 8 bytes",
        docs: "The commit sequencer shares the fetch sequencer's limits and every stride must be a \
               multiple of 8 bytes. Pad inner Element axes (`m![K, M, W # 8]` for i8, W = 5).",
        bad: "",
        good: "",
        manual: "L2338",
    },
    Rule {
        code: "ALN-009",
        name: "trf-64-byte-alignment",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "With reg_read_size = 64 bytes, TRF base and strides are 64-byte aligned",
        docs: "A 64-byte TRF read may not cross a bank column; pad the TRF Element's inner axis to 64 bytes.",
        bad: "",
        good: "",
        manual: "L4110-L4111",
    },
    Rule {
        code: "ALN-010",
        name: "hbm-256-byte-alignment",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "HBM addresses and DMA packets aligned to 256 bytes avoid penalties",
        docs: "Unaligned HBM reads cost two NoC transfers; unaligned writes trigger read-modify-write.",
        bad: "",
        good: "",
        manual: "L2859, L2983-L2985",
    },
    Rule {
        code: "ALN-011",
        name: "fetch-packet-32-bytes",
        severity: Severity::Perf,
        status: Status::Planned("perf hint; scheduled after the error rules (issue 4)"),
        summary: "Prefer fetch packets that are multiples of 32 bytes",
        docs: "Collect zero-pads packets to 32-byte flits; the unused share of each flit is wasted.",
        bad: "",
        good: "",
        manual: "L2122, L2128-L2130",
    },
    Rule {
        code: "ALN-012",
        name: "tail-padding-32-bytes",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Tail padding to a multiple of 32 bytes enables 32-byte fetches and commits",
        docs: "With A = 65 (f8): dummy 7 gives 24-byte fetches (6 cycles), 31 gives 32-byte ones.",
        bad: "",
        good: "",
        manual: "L7860-L7881",
    },
];

/// Bytes that `n` elements of `dtype` occupy; i4 packs two elements per byte (§22 A-3). `None`
/// for i5/i9, whose in-stream width the manual does not give (§22 A-21).
pub(crate) fn size_bytes(dtype: &str, n: u64) -> Option<u64> {
    let bits = u64::from(dtype_bits(canonical(dtype))?);
    if bits != 4 && !bits.is_multiple_of(8) {
        return None;
    }
    n.checked_mul(bits).map(|b| b.div_ceil(8))
}

/// `f8` (the manual's shorthand) measured as an 8-bit float.
pub(crate) fn canonical(dtype: &str) -> &str {
    if dtype == "f8" { "f8e4m3" } else { dtype }
}

/// The dtype, element count and bytes of one slot of a type, when all are known.
pub(crate) fn slot_bytes(ty: &TensorTy, slot: Slot) -> Option<(&str, u64, u64)> {
    let d = ty.dtype.as_deref()?;
    let n = ty.get(slot)?.layout.as_ref()?.size;
    Some((d, n, size_bytes(d, n)?))
}

/// The turbofish argument at `i` when it is written out (not `_`).
pub(crate) fn written(step: &Step, i: usize) -> Option<&Arg> {
    step.generics.get(i).filter(|a| a.text.trim() != "_")
}

/// Elements of `dtype` that fill exactly `bytes` bytes, when whole.
pub(crate) fn elems_for(dtype: &str, bytes: u64) -> Option<u64> {
    let bits = u64::from(dtype_bits(canonical(dtype))?);
    let b = bytes.checked_mul(8)?;
    (b.is_multiple_of(bits)).then_some(b / bits)
}

/// The edit that pads a written `m![...]` argument to `n` positions: `m![C]` → `m![C # 8]`,
/// `m![B, C]` → `m![[B, C] # 16]`, `m![C # 6]` → `m![C # 8]`.
pub(crate) fn pad_edit(arg: &Arg, n: u64) -> Option<Edit> {
    let text = arg.text.trim();
    let inner = text.strip_prefix("m![")?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return None;
    }
    let mut depth = 0i32;
    let mut comma = false;
    let mut last_hash = None;
    for (i, c) in inner.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => comma = true,
            '#' if depth == 0 => last_hash = Some(i),
            _ => {}
        }
    }
    let new_inner = if comma {
        format!("[{inner}] # {n}")
    } else if let Some(h) = last_hash.filter(|&h| {
        let rest = inner[h + 1..].trim();
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '_')
    }) {
        format!("{} # {n}", inner[..h].trim_end())
    } else {
        format!("{inner} # {n}")
    };
    Some(Edit {
        span: arg.span,
        new_text: format!("m![{new_inner}]"),
    })
}

/// The index of the address argument of a method with a constant address.
fn address_arg(method: &str) -> Option<usize> {
    match method {
        "to_dm" | "to_hbm" => Some(1),
        "commit" => Some(0),
        _ => None,
    }
}

fn round_up(v: u64, m: u64) -> Option<u64> {
    v.div_ceil(m).checked_mul(m)
}

fn address_text(original: &str, v: u64) -> String {
    if original.trim_start().starts_with("0x") {
        format!("{v:#x}")
    } else {
        v.to_string()
    }
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            check_address(cx, step, out);
            match step.method.as_str() {
                "fetch"
                | "fetch_with_table"
                | "fetch_with_zero_point"
                | "fetch_with_zero_points" => check_fetch_packet(cx, step, out),
                "commit" => check_commit_units(cx, step, out),
                _ => {}
            }
        }
    }
}

/// ALN-001 and ALN-002 on constant addresses.
fn check_address(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(addr), Some(k)) = (step.address, address_arg(&step.method)) else {
        return;
    };
    let Some(arg) = step.args.get(k) else { return };
    let Some(dtype) = step.output.as_ref().and_then(|t| t.dtype.as_deref()) else {
        return;
    };
    if step.method == "to_dm" {
        let a = cx.target.dma_dm_align_bytes;
        if !addr.is_multiple_of(a) {
            let mut d = Diagnostic::new(
                "ALN-002",
                arg.span,
                format!(
                    "HBM-to-DM transfers write DM at {a}-byte-aligned addresses; {} is {} bytes past a multiple of {a}",
                    arg.text.trim(),
                    addr % a
                ),
            );
            if let Some(up) = round_up(addr, a) {
                d = d.with_edit(
                    format!("round the address up to {}", address_text(&arg.text, up)),
                    false,
                    arg.span,
                    address_text(&arg.text, up),
                );
            }
            out.push(d);
        }
        return;
    }
    let Some(bits) = dtype_bits(canonical(dtype)) else {
        return;
    };
    if !bits.is_multiple_of(8) || bits <= 8 {
        return;
    }
    let size = u64::from(bits / 8);
    if !addr.is_multiple_of(size) {
        let mut d = Diagnostic::new(
            "ALN-001",
            arg.span,
            format!(
                "a {dtype} tensor starts at a multiple of size_of::<{dtype}>() = {size} bytes; address {} is not",
                arg.text.trim()
            ),
        );
        if let Some(up) = round_up(addr, size) {
            d = d.with_edit(
                format!("round the address up to {}", address_text(&arg.text, up)),
                false,
                arg.span,
                address_text(&arg.text, up),
            );
        }
        out.push(d);
    }
}

/// ALN-005: the fetch output packet is a multiple of 8 bytes.
fn check_fetch_packet(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(ty) = step.output.as_ref() else {
        return;
    };
    let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
        return;
    };
    let a = cx.target.fetch_align_bytes;
    if bytes.is_multiple_of(a) {
        return;
    }
    let arg = if step.method == "fetch" {
        written(step, 2)
    } else {
        None
    };
    let span = arg.map_or(step.span, |a| a.span);
    let mut diag = Diagnostic::new(
        "ALN-005",
        span,
        format!(
            "Fetch output packet must be {a}-byte aligned, got {bytes} bytes ({n} × {d}{})",
            if d == "i4" { ", two i4 per byte" } else { "" }
        ),
    );
    let target_bytes = round_up(bytes, a).unwrap_or(a);
    if let Some(edit) = arg
        .zip(elems_for(d, target_bytes))
        .and_then(|(arg, m)| pad_edit(arg, m))
    {
        diag = diag.with_fix(
            format!("pad the packet to {target_bytes} bytes"),
            false,
            vec![edit],
        );
    }
    out.push(diag);
}

/// ALN-007: a committed Element is a whole number of 8-byte units.
fn check_commit_units(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(ty) = step.output.as_ref() else {
        return;
    };
    let Some((d, n, bytes)) = slot_bytes(ty, Slot::Element) else {
        return;
    };
    // Commits write in units of the smallest commit size, 8 bytes (L2193, L7699).
    let Some(u) = cx.target.commit_sizes_main.iter().copied().min() else {
        return;
    };
    if bytes.is_multiple_of(u) {
        return;
    }
    let arg = written(step, 0);
    let span = arg.map_or(step.span, |a| a.span);
    let text = ty.get(Slot::Element).map_or("", |m| m.text.as_str());
    let full = round_up(bytes, u).unwrap_or(u);
    let mut diag = Diagnostic::new(
        "ALN-007",
        span,
        format!(
            "the committed Element {text} is {bytes} bytes ({n} × {d}); commits write whole {u}-byte units, \
             so the compiler adds a {}-byte dummy tail past the tensor",
            full - bytes
        ),
    );
    if let Some(edit) = arg
        .zip(elems_for(d, full))
        .and_then(|(arg, m)| pad_edit(arg, m))
    {
        diag = diag.with_fix(
            format!("make the padding explicit ({full} bytes)"),
            false,
            vec![edit],
        );
    }
    out.push(diag);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Span;

    fn arg(text: &str) -> Arg {
        Arg {
            text: text.to_string(),
            span: Span::new(0, text.len()),
        }
    }

    #[test]
    fn i4_is_packed() {
        // constraints.md §22 A-3; L2002 "Fetches 4 bytes (8 elements of i4)".
        assert_eq!(size_bytes("i4", 8), Some(4));
        assert_eq!(size_bytes("i4", 7), Some(4));
        assert_eq!(size_bytes("bf16", 1), Some(2));
        assert_eq!(size_bytes("f8", 2), Some(2));
        assert_eq!(elems_for("i4", 8), Some(16));
        assert_eq!(elems_for("bf16", 8), Some(4));
        assert_eq!(elems_for("i9", 8), None);
        assert_eq!(size_bytes("i5", 16), None);
    }

    #[test]
    fn padding_edits() {
        let e = |t: &str, n| pad_edit(&arg(t), n).map(|e| e.new_text);
        assert_eq!(e("m![C]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(e("m![B, C]", 16).as_deref(), Some("m![[B, C] # 16]"));
        assert_eq!(e("m![C # 6]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(e("m![A % 8]", 32).as_deref(), Some("m![A % 8 # 32]"));
        assert_eq!(e("Packet", 8), None);
    }

    #[test]
    fn dma_table_l2425() {
        // L2425-L2427: DM writes and HBM-to-DM need 8-byte alignment; L2525 lists the DMA dtypes.
        let t = &crate::target::RNGD;
        assert_eq!(t.dma_dm_align_bytes, 8);
        assert!(t.dma_dtypes.contains(&"bf16") && !t.dma_dtypes.contains(&"i9"));
        // L1723: the fetch packet is 8-byte aligned; L2193: commits in 8-byte units.
        assert_eq!(t.fetch_align_bytes, 8);
        assert_eq!(t.commit_sizes_main.iter().min(), Some(&8));
    }
}

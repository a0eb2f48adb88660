//! ALN: address and packet alignment (constraints.md §5). The checks here are decided from
//! dtypes, mapping sizes and constant addresses; the ones that need the compiler's sequencer
//! derivation (strides, contiguous runs) stay planned until `crate::derive` provides it.
//!
//! Also holds the small byte-size and padding-fix helpers the FET/COL/CMT/DMA families share.

use super::context::{FnContext, at_arg, pad_output};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{
    Arg, Chain, Dtype, Kind, Method, Placement, Slot, Step, TensorTy, output_arg, pad_edit,
    slot_bytes, written,
};
use crate::rule::{Generations, Rule, Status};

pub const ALN_001: Rule = Rule {
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
    generations: Generations::VisaStdOnly(
        "it reads the constant address of `commit(addr)`, `to_hbm(.., addr)` or `from_addr`, and \
         furiosa-opt-std 0.6 has no addresses: the compiler places a kernel's tensors and the \
         runtime what the host uploads (CHANGES.md:26-32)",
    ),
};

pub const ALN_002: Rule = Rule {
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
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `to_dm(dma)` takes no DM address: the compiler places DM tensors \
         (CHANGES.md:26-32); its 8-byte DMA tail assertion is ALN-003's \
         (`furiosa-opt-std/src/tensor/memory.rs:25-112`)",
    ),
};

pub const ALN_005: Rule = Rule {
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
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `fetch` no longer asserts it, since `fetch_cast` may widen a packet \
         into alignment; the Switch and Collect inputs assert it on the widened packet instead \
         (`furiosa-opt-std/src/engine/fetch.rs:37-42, 91-94`, `engine/switch.rs:40-44`). visa-lint \
         folds `fetch_cast` into the fetch, so it checks that same widened packet",
    ),
};

pub const ALN_006: Rule = Rule {
    code: "ALN-006",
    name: "fetch-address-alignment",
    severity: Severity::Info,
    status: Status::Covered {
        by: &["ALN-002", "ALN-008"],
        why: "fetch reads need only 1-byte alignment beyond the element alignment of ALN-001; a \
              DM tensor gets a constant address only from a DMA or a commit, whose 8-byte \
              alignment ALN-002 and ALN-008 check",
    },
    summary: "Fetch addresses need 1-byte alignment (plus element alignment)",
    docs: "Fetch reads impose no alignment beyond the element alignment of ALN-001; the 8-byte \
           alignment \"for certain DMA operations\" is ALN-002.",
    bad: "",
    good: "",
    manual: "L1755-L1756",
    generations: Generations::VisaStdOnly(
        "a fetch address exists only where a tensor has one, and furiosa-opt-std 0.6 has no \
         addresses (CHANGES.md:26-32)",
    ),
};

pub const ALN_007: Rule = Rule {
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
    generations: Generations::Both,
};

pub const ALN_008: Rule = Rule {
    code: "ALN-008",
    name: "commit-address-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A commit writes DM from an 8-byte-aligned base address",
    docs: "The commit sequencer writes DM in 8-byte units and all its strides are multiples of 8 \
           bytes (L2338); DM write addresses align to 8 bytes (L2426). visa-lint checks the \
           constant address of `commit(addr)`; natural element alignment is ALN-001 (reported \
           first) and the strides are CMT-005. Round the address up to a multiple of 8.",
    bad: "...collect::<m![1], m![A # 32]>().commit::<m![A]>(4) // i8",
    good: "...collect::<m![1], m![A # 32]>().commit::<m![A]>(8)",
    manual: "L2338, L2426",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `commit()` takes no address: the compiler places the tensor it \
         writes (CHANGES.md:26-32)",
    ),
};

pub const ALN_009: Rule = Rule {
    code: "ALN-009",
    name: "trf-64-byte-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "With reg_read_size = 64 bytes, TRF base and strides are 64-byte aligned",
    docs: "When reg_read_size (the contiguous TRF read common to the TRF Element and the \
           computation packet, CON-009) equals the 64-byte MAC width, each read spans both \
           32-byte bank columns, so the TRF Sequencer's base address and all its strides must \
           be multiples of 64 bytes (L4110-L4111, L4234-L4236). The base is always aligned: \
           `TrfAddress::Full`, `FirstHalf` and `SecondHalf` start at the TRF or at its half. \
           visa-lint derives reg_read_size as CON-009 does (a size that is not a power of two \
           is CON-009's) and the TRF Sequencer's OutTime entries from the TRF Element \
           (crate::derive), and reports a non-zero stride that is not a multiple of 64 bytes, \
           typically an Element whose inner axis is padded to a row that is not whole 64-byte \
           units (`m![J, K # 48]` in bf16: J strides 96 bytes). Pad (or unpad) the inner axis so \
           the row is a multiple of 64 bytes; the fix does it when that aligns every stride.",
    bad: "// trf: &TrfTensor<bf16, .., m![N], m![J, K # 48]>, K = 32\ninput.align::<m![M, J], m![K], _, _>(trf) // J strides 96 B",
    good: "// trf: &TrfTensor<bf16, .., m![N], m![J, K]>\ninput.align::<m![M, J], m![K], _, _>(trf) // J strides 64 B",
    manual: "L4110-L4111",
    generations: Generations::Both,
};

pub const ALN_010: Rule = Rule {
    code: "ALN-010",
    name: "hbm-256-byte-alignment",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "HBM addresses aligned to 256 bytes avoid the read and read-modify-write penalties",
    docs: "HBM is accessed in 256-byte units: an unaligned read costs two transfers, an \
           unaligned or partial write a read-modify-write (about 50 times slower). visa-lint \
           reports constant HBM addresses of `to_hbm` that are not multiples of 256 (natural \
           element alignment is ALN-001). Round the address up to a multiple of 256.",
    bad: "let h = host.to_hbm(&mut ctx.pdma, 0x1010).await;",
    good: "let h = host.to_hbm(&mut ctx.pdma, 0x1100).await;",
    manual: "L2859, L2983-L2985, L2594",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6's `to_hbm(dma)` takes no address: the runtime allocates what the host \
         uploads (CHANGES.md:26-32)",
    ),
};

pub const ALN_011: Rule = Rule {
    code: "ALN-011",
    name: "fetch-packet-32-bytes",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Prefer fetch packets that are multiples of 32 bytes",
    docs: "Collect zero-pads packets that are not a multiple of the 32-byte flit; the padded \
           share of every flit carries no data, for example (32 - 8) / 32 = 75 % for an 8-byte \
           packet. visa-lint reports fetches whose written packet is already padded (`# n`) to \
           a size that is not a multiple of 32 bytes and is then collected into flits: widening \
           that padding, or moving more data into the packet (`m![[B, C] # 32]`, L1837), costs \
           nothing in the fetch and fills the flit.",
    bad: "axes![C = 2]; ...fetch::<f8e4m3, m![A, B], m![C # 8]>().collect::<m![A, B], m![C # 32]>()",
    good: "axes![C = 2]; ...fetch::<f8e4m3, m![A], m![[B, C] # 32]>().collect::<m![A], m![[B, C] # 32]>()",
    manual: "L2122, L2128-L2130, L2143-L2144",
    generations: Generations::Both,
};

pub const ALN_012: Rule = Rule {
    code: "ALN-012",
    name: "tail-padding-32-bytes",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Tail padding to a multiple of 32 bytes enables 32-byte fetches and commits",
    docs: "When a DM tensor's innermost axis is padded (`m![B, A # 72]`) its rows are the \
           contiguous runs of the fetch and commit sequencers, and the largest fetch/commit \
           size is the largest of 8/16/24/32 bytes dividing the row: with A = 65 (f8), 72 \
           bytes gives 24-byte accesses, 80 bytes 16, 88 bytes 8, 96 bytes 32 (L7860-L7867). \
           visa-lint reports padded innermost axes of fetched or committed tensors whose row is \
           not a multiple of 32 bytes, with the access sizes. Pad to the next multiple of 32 \
           bytes.",
    bad: "let out: DmTensor<f8, m![1], m![1], m![1], m![B, A # 88]> = ...commit(1024);",
    good: "let out: DmTensor<f8, m![1], m![1], m![1], m![B, A # 96]> = ...commit(1024);",
    manual: "L7860-L7881",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    ALN_001, ALN_002, ALN_005, ALN_006, ALN_007, ALN_008, ALN_009, ALN_010, ALN_011, ALN_012,
];

/// The index of the address argument of a method with a constant address.
fn address_arg(method: &Method) -> Option<usize> {
    match method {
        Method::ToDm | Method::ToHbm => Some(1),
        Method::Commit => Some(0),
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
        for (i, step) in chain.steps.iter().enumerate() {
            check_address(cx, step, out);
            match step.method {
                Method::Fetch
                | Method::FetchWithTable
                | Method::FetchWithZeroPoint
                | Method::FetchWithZeroPoints
                    if !check_fetch_packet(cx, chain, step, out) =>
                {
                    check_flit_fill(cx, step, chain.steps.get(i + 1), out);
                }
                Method::Commit
                    if crate::derive::commit_tail_victim(
                        cx.model,
                        cx.target,
                        chain.binding.as_deref(),
                        step,
                    )
                    .is_none() =>
                {
                    check_commit_units(cx, chain, step, out);
                }
                _ => {}
            }
        }
    }
    for p in &cx.model.placements {
        check_placement(cx, p, out);
    }
    check_tail_padding(cx, out);
    check_trf_alignment(cx, out);
}

/// ALN-009: a 64-byte TRF read (reg_read_size = mac_width) whose TRF Sequencer strides are not
/// multiples of 64 bytes.
fn check_trf_alignment(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    use crate::derive::{Direction, configure, trf};
    let mac = cx.target.mac_width_bytes;
    for step in cx.model.chains.iter().flat_map(|c| c.steps.iter()) {
        if step.method != Method::Align {
            continue;
        }
        let Some(output) = &step.output else { continue };
        let Some(var) = cx.model.first_arg_tensor(step, Kind::Trf) else {
            continue;
        };
        let Some(d) = var.ty.dtype else {
            continue;
        };
        let bits = d.bits();
        let (Some(e), Some(ot), Some(op)) = (
            slot_layout(&var.ty, Slot::Element),
            slot_layout(output, Slot::Time),
            slot_layout(output, Slot::Packet),
        ) else {
            continue;
        };
        let Some(read) = trf::read(op, e) else {
            continue;
        };
        if read.stray.is_some() || trf::reg_read_size(&read, d, mac) != Some(Ok(mac)) {
            continue;
        }
        let limit = cx.target.sequencer_entries;
        let Ok(cfg) = configure(e, &ot.dims, &[], Direction::Read, limit) else {
            continue;
        };
        let stride_bytes = |s: u64| crate::derive::bytes(s, bits);
        let Some(bad) = cfg
            .entries
            .iter()
            .find(|en| en.stride != 0 && !stride_bytes(en.stride).is_multiple_of(mac))
        else {
            continue;
        };
        let e_text = var
            .ty
            .get(Slot::Element)
            .map_or_else(|| "?".to_string(), |m| m.text.clone());
        let entries = cfg
            .entries
            .iter()
            .map(|en| format!("{} : {} B", en.size, stride_bytes(en.stride)))
            .collect::<Vec<_>>()
            .join(", ");
        // The Element the fix pads is at fault: written where the TRF tensor is declared.
        let at = var.ty.get(Slot::Element).and_then(|m| m.span);
        let mut diag = at_arg(
            &ALN_009,
            step,
            at,
            format!(
                "reg_read_size is {mac} bytes (the TRF Element {e_text} and OutPacket share {} × \
                 {d}), so every TRF Sequencer stride must be a multiple of {mac} bytes; reading \
                 the Element as OutTime takes [{entries}], and the {}-iteration entry strides {} \
                 bytes: the read would cross a bank column. Make the Element's inner row a \
                 multiple of {mac} bytes",
                read.elems,
                bad.size,
                stride_bytes(bad.stride)
            ),
        )
        .with_related(var.span, "the TRF tensor is declared here");
        if let Some((new, at)) =
            at.and_then(|span| trf_pad_fix(cx, e_text.as_str(), span, d, ot, mac, limit))
        {
            diag = diag.with_edit(
                format!("make the TRF Element's inner row whole {mac}-byte units: {new}"),
                false,
                at,
                new,
            );
        }
        out.push(diag);
    }
}

fn slot_layout(ty: &TensorTy, slot: Slot) -> Option<&crate::mapping::Layout> {
    ty.get(slot)?.layout.as_deref()
}

/// ALN-009's fix: the TRF Element with its innermost term resized to the smallest whole number
/// of `mac`-byte units holding its data, when that aligns every TRF Sequencer stride.
fn trf_pad_fix(
    cx: &FnContext<'_>,
    e_text: &str,
    span: crate::diagnostic::Span,
    d: Dtype,
    ot: &crate::mapping::Layout,
    mac: u64,
    limit: usize,
) -> Option<(String, crate::diagnostic::Span)> {
    use crate::mapping::layout::Dim;
    let terms = cx.scope.lowered_terms(e_text)?;
    let (_, last) = terms.last()?;
    let mut real: u64 = 1;
    for dim in &last.dims {
        let Dim::Factor(f) = dim else { return None };
        real = real.checked_mul(f.valid)?;
    }
    let per = d.elems_for(mac)?;
    let n = real.div_ceil(per).checked_mul(per)?;
    let padded = crate::mapping::edit::pad_last_term(e_text, n)?;
    let new = if n == real {
        padded.replace(&format!(" # {n}]"), "]")
    } else {
        padded
    };
    let dims: Vec<Dim> = cx
        .scope
        .lowered_terms(&new)?
        .into_iter()
        .flat_map(|(_, l)| l.dims)
        .collect();
    let layout = crate::mapping::Layout::from_dims(dims).ok()?;
    let bits = d.bits();
    let cfg = crate::derive::configure(
        &layout,
        &ot.dims,
        &[],
        crate::derive::Direction::Read,
        limit,
    )
    .ok()?;
    let aligned = cfg
        .entries
        .iter()
        .all(|en| en.stride == 0 || crate::derive::bytes(en.stride, bits).is_multiple_of(mac));
    (aligned && new != e_text.trim() && span.end > span.start).then_some((new, span))
}

/// ALN-011: a padded fetch packet that is not a multiple of 32 bytes, collected into flits.
fn check_flit_fill(
    cx: &FnContext<'_>,
    step: &Step,
    next: Option<&Step>,
    out: &mut Vec<Diagnostic>,
) {
    if step.method != Method::Fetch || next.is_none_or(|n| n.method != Method::Collect) {
        return;
    }
    let Some(arg) = written(step, 2) else { return };
    if !arg.text.contains('#') {
        return;
    }
    let Some(ty) = step.output.as_ref() else {
        return;
    };
    let Some((d, _, bytes)) = slot_bytes(ty, Slot::Packet) else {
        return;
    };
    let flit = cx.target.flit_bytes;
    if bytes == 0 || bytes.is_multiple_of(flit) {
        return;
    }
    let Some(full) = round_up(bytes, flit) else {
        return;
    };
    let waste = (full - bytes).saturating_mul(1000) / full;
    let mut diag = Diagnostic::new(
        &ALN_011,
        arg.span,
        format!(
            "the fetch packet {} is {bytes} bytes; Collect zero-pads it to {full}-byte flits, so \
             {}.{} % of every flit carries no data: pad or widen the packet to {full} bytes",
            arg.text.trim(),
            waste / 10,
            waste % 10
        ),
    );
    if let Some(edit) = d.elems_for(full).and_then(|m| pad_edit(cx.scope, arg, m)) {
        diag = diag.with_fix(format!("pad the packet to {full} bytes"), false, vec![edit]);
    }
    out.push(diag);
}

/// ALN-012: a fetched or committed DM tensor whose padded innermost row is longer than a flit
/// and not a multiple of 32 bytes (L7860-L7881).
fn check_tail_padding(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    use crate::derive::OpKind;
    use crate::mapping::layout::Dim;
    let flit = cx.target.flit_bytes;
    let mut seen = Vec::new();
    for op in &cx.ops {
        let (ty, slot) = match op.kind {
            OpKind::Fetch => (op.step.input.as_ref(), Slot::Packet),
            OpKind::Commit => (op.step.output.as_ref(), Slot::Element),
            _ => continue,
        };
        let Some(ty) = ty else { continue };
        let Some(mv) = ty.get(slot) else { continue };
        let (Some(span), Some(d)) = (mv.span, ty.dtype) else {
            continue;
        };
        let Some(Dim::Factor(f)) = op.buf.dims.last() else {
            continue;
        };
        if f.extent <= f.valid || f.axis.is_none() {
            continue;
        }
        let Some(row) = d.size_bytes(f.extent) else {
            continue;
        };
        if row <= flit || row.is_multiple_of(flit) || seen.contains(&span) {
            continue;
        }
        seen.push(span);
        let sizes = cx.target.commit_sizes_main;
        let best = sizes
            .iter()
            .copied()
            .filter(|&s| row.is_multiple_of(s))
            .max()
            .unwrap_or(1);
        let full = round_up(row, flit).unwrap_or(flit);
        let mut diag = at_arg(
            &ALN_012,
            op.step,
            Some(span),
            format!(
                "the padded innermost axis is {} × {d} = {row} bytes per row, so fetches and commits \
                 of it move {best} bytes at a time ({} per row); padding the row to {full} bytes \
                 allows {flit}-byte accesses ({} per row)",
                f.extent,
                row / best,
                full / flit
            ),
        );
        if let Some(new) = d
            .elems_for(full)
            .and_then(|n| crate::mapping::edit::pad_last_term(&mv.text, n))
        {
            diag = diag.with_edit(
                format!("pad the row to {full} bytes: {new}"),
                false,
                span,
                new,
            );
        }
        out.push(diag);
    }
}

/// The fix of a misaligned constant address: round it up to the next multiple of `align`,
/// written in the argument's own notation (`0x..`, `1 << n` or decimal).
fn round_up_fix(d: Diagnostic, arg: &Arg, addr: u64, align: u64) -> Diagnostic {
    match round_up(addr, align) {
        Some(up) => {
            let text = address_text(&arg.text, up);
            d.with_edit(
                format!("round the address up to {text}"),
                false,
                arg.span,
                text,
            )
        }
        None => d,
    }
}

/// ALN-001: a tensor of `dtype` placed at `addr` (written as `arg`) that does not start at a
/// multiple of its element's size.
fn element_misaligned(arg: &Arg, addr: u64, dtype: Dtype) -> Option<Diagnostic> {
    let bits = dtype.bits();
    let size = if bits.is_multiple_of(8) {
        u64::from(bits / 8)
    } else {
        1
    };
    if addr.is_multiple_of(size) {
        return None;
    }
    let d = Diagnostic::new(
        &ALN_001,
        arg.span,
        format!(
            "a {dtype} tensor starts at a multiple of size_of::<{dtype}>() = {size} bytes; address {} is not",
            arg.text.trim()
        ),
    );
    Some(round_up_fix(d, arg, addr, size))
}

/// Whether an HBM tensor of type `ty` at `addr` is DMA-003's error rather than ALN-010's
/// note: below 8-byte alignment, and read into DM by a `to_dm` of the function.
fn dma_003_reports(cx: &FnContext<'_>, addr: u64, ty: &TensorTy) -> bool {
    !addr.is_multiple_of(cx.target.dma_dm_align_bytes)
        && cx
            .model
            .chains
            .iter()
            .flat_map(|c| c.steps.iter())
            .any(|s| s.method == Method::ToDm && s.input.as_ref() == Some(ty))
}

/// ALN-001 and ALN-010 on a tensor a constructor placed (`Input::from_addr(0x1000)`), as on
/// the address of a transfer that writes it: its element's alignment, and HBM's 256-byte
/// units (below 8 bytes, a DMA reading it into DM is DMA-003's error).
fn check_placement(cx: &FnContext<'_>, p: &Placement, out: &mut Vec<Diagnostic>) {
    if let Some(dtype) = p.ty.dtype
        && let Some(d) = element_misaligned(&p.arg, p.address, dtype)
    {
        out.push(d);
        return;
    }
    let a = cx.target.hbm_align_bytes;
    if p.ty.kind != Kind::Hbm
        || p.address.is_multiple_of(a)
        || dma_003_reports(cx, p.address, &p.ty)
    {
        return;
    }
    let d = Diagnostic::new(
        &ALN_010,
        p.arg.span,
        format!(
            "HBM is accessed in {a}-byte units: an unaligned access costs a read-modify-write \
             or a second transfer; the tensor is placed at {}, {} bytes past a multiple of {a}",
            p.arg.text.trim(),
            p.address % a
        ),
    );
    out.push(round_up_fix(d, &p.arg, p.address, a));
}

/// ALN-001 and ALN-002 on constant addresses.
fn check_address(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(addr), Some(k)) = (step.address, address_arg(&step.method)) else {
        return;
    };
    let Some(arg) = step.args.get(k) else { return };
    let Some(dtype) = step.output.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    if step.method == Method::ToDm {
        let a = cx.target.dma_dm_align_bytes;
        if !addr.is_multiple_of(a) {
            let mut d = Diagnostic::new(
                &ALN_002,
                arg.span,
                format!(
                    "HBM-to-DM transfers write DM at {a}-byte-aligned addresses; {} is {} bytes past a multiple of {a}",
                    arg.text.trim(),
                    addr % a
                ),
            );
            d = round_up_fix(d, arg, addr, a);
            out.push(d);
        }
        return;
    }
    if let Some(d) = element_misaligned(arg, addr, dtype) {
        out.push(d);
        return;
    }
    let (code, a, what) = match step.method {
        Method::Commit => (
            &ALN_008,
            cx.target.commit_stride_align_bytes,
            "commits write DM in 8-byte units from an 8-byte-aligned base address".to_string(),
        ),
        Method::ToHbm => (
            &ALN_010,
            cx.target.hbm_align_bytes,
            "HBM is accessed in 256-byte units: an unaligned write costs a read-modify-write \
             (about 50 times slower) and an unaligned read two transfers"
                .to_string(),
        ),
        _ => return,
    };
    if addr.is_multiple_of(a) {
        return;
    }
    if code.code == "ALN-010"
        && step
            .output
            .as_ref()
            .is_some_and(|t| dma_003_reports(cx, addr, t))
    {
        return;
    }
    let mut d = Diagnostic::new(
        code,
        arg.span,
        format!(
            "{what}; address {} is {} bytes past a multiple of {a}",
            arg.text.trim(),
            addr % a
        ),
    );
    d = round_up_fix(d, arg, addr, a);
    out.push(d);
}

/// ALN-005: the fetch output packet is a multiple of 8 bytes. True when it reported.
fn check_fetch_packet(
    cx: &FnContext<'_>,
    chain: &Chain,
    step: &Step,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let Some(ty) = step.output.as_ref() else {
        return false;
    };
    let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
        return false;
    };
    let a = cx.target.fetch_align_bytes;
    if bytes.is_multiple_of(a) {
        return false;
    }
    let generic = (step.method == Method::Fetch).then_some(2);
    let at = output_arg(step, generic, Slot::Packet);
    let mut diag = at_arg(
        &ALN_005,
        step,
        at.map(|a| a.span),
        format!(
            "Fetch output packet must be {a}-byte aligned, got {bytes} bytes ({n} × {d}{})",
            if d == Dtype::I4 {
                ", two i4 per byte"
            } else {
                ""
            }
        ),
    );
    // Padding changes the FetchTensor's type, which the steps after it may spell out: unsafe.
    let target_bytes = round_up(bytes, a).unwrap_or(a);
    if let Some(edits) = d
        .elems_for(target_bytes)
        .and_then(|m| pad_output(cx.scope, chain, step, generic, Slot::Packet, m))
    {
        diag = diag.with_fix(
            format!("pad the packet to {target_bytes} bytes"),
            false,
            edits,
        );
    }
    out.push(diag);
    true
}

/// ALN-007: a committed Element is a whole number of 8-byte units.
fn check_commit_units(cx: &FnContext<'_>, chain: &Chain, step: &Step, out: &mut Vec<Diagnostic>) {
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
    let at = output_arg(step, Some(0), Slot::Element);
    let text = ty.get(Slot::Element).map_or("", |m| m.text.as_str());
    let full = round_up(bytes, u).unwrap_or(u);
    let mut diag = at_arg(
        &ALN_007,
        step,
        at.map(|a| a.span),
        format!(
            "the committed Element {text} is {bytes} bytes ({n} × {d}); commits write whole {u}-byte units, \
             so the compiler adds a {}-byte dummy tail past the tensor",
            full - bytes
        ),
    );
    if let Some(edits) = d
        .elems_for(full)
        .and_then(|m| pad_output(cx.scope, chain, step, Some(0), Slot::Element, m))
    {
        diag = diag.with_fix(
            format!("make the padding explicit ({full} bytes)"),
            false,
            edits,
        );
    }
    out.push(diag);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trf_kernel(element: &str) -> Vec<Diagnostic> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![M = 16, J = 2, N = 8, K = 32];\n\
             fn matmul<'l, const T: Tu>(\n\
             input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M, J, K / 16], m![K % 16]>,\n\
             trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![{element}]>,\n\
             ) -> AccumulationTensor<'l, T, f32, m![1], m![1], m![1], m![M, J], m![N]> {{\n\
             input.align::<m![M, J], m![K], _, _>(trf).contract::<m![1]>()\n\
             .accumulate::<m![M, J], m![N]>(AccumulationKind::Interleaved)\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "ALN-009")
            .cloned()
            .collect()
    }

    #[test]
    fn trf_64_byte_read_needs_64_byte_strides() {
        // L4110-L4111: reg_read_size = 64 B (32 bf16 of K); J strides 48 bf16 = 96 B.
        let d = trf_kernel("J, K # 48");
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].message.contains("[16 : 0 B, 2 : 96 B]"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].fixes[0].edits[0].new_text, "m![J, K]");
        // 64-byte (and 128-byte) rows are aligned.
        assert!(trf_kernel("J, K").is_empty());
        assert!(trf_kernel("J, K # 64").is_empty());
        // A 32-byte read (K # 48 read 16 at a time) is not this rule's: reg_read_size < 64.
    }

    #[test]
    fn trf_manual_basic_broadcast_is_aligned() {
        // L4225-L4236: Element [K = 32] bf16, reg_read_size 64 B, entry M 32 : 0 -> aligned.
        let src = include_str!("../../../fixtures/manual/4203_trf_basic_weight_broadcast.rs");
        let a = crate::db::analyse_text(src);
        assert!(a.diagnostics().iter().all(|d| d.code() != "ALN-009"));
    }
    use crate::diagnostic::Span;

    fn arg(text: &str) -> Arg {
        Arg::written(text.to_string(), Span::new(0, text.len()))
    }

    #[test]
    fn i4_is_packed() {
        // constraints.md §22 A-3; L2002 "Fetches 4 bytes (8 elements of i4)".
        assert_eq!(Dtype::I4.size_bytes(8), Some(4));
        assert_eq!(Dtype::I4.size_bytes(7), Some(4));
        assert_eq!(Dtype::Bf16.size_bytes(1), Some(2));
        assert_eq!(Dtype::F8.size_bytes(2), Some(2));
        assert_eq!(Dtype::I4.elems_for(8), Some(16));
        assert_eq!(Dtype::Bf16.elems_for(8), Some(4));
        assert_eq!(Dtype::I9.elems_for(8), None);
        assert_eq!(Dtype::I5.size_bytes(16), None);
    }

    #[test]
    fn padding_edits() {
        let scope = crate::mapping::Scope::default();
        let e = |t: &str, n| pad_edit(&scope, &arg(t), n).map(|e| e.new_text);
        assert_eq!(e("m![C]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(e("m![B, C]", 16).as_deref(), Some("m![[B, C] # 16]"));
        assert_eq!(e("m![C # 6]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(e("m![A % 8]", 32).as_deref(), Some("m![A % 8 # 32]"));
        assert_eq!(e("Packet", 8), None);
    }

    #[test]
    fn fetch_packet_fix_pads_where_the_packet_is_written() {
        use crate::rules::fix_testing::assert_fix_clears;
        // The packet written in the function's return type (L1816-L1840) and in the fetch's
        // turbofish; f8 m![C] -> m![C # 8], i4 m![W] -> m![W # 16].
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/manual/1816_fetch_padding_packets.rs"),
            "ALN-005",
        );
        assert!(fixed.contains("m![A, B], m![C # 8]>"), "{fixed}");
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/manual/2061_fetch_batching.rs"),
            "ALN-005",
        );
        assert!(fixed.contains("m![N, C, H], m![W # 16]>"), "{fixed}");
        assert_fix_clears(
            include_str!("../../../fixtures/rules/ALN-005.rs"),
            "ALN-005",
        );
    }

    #[test]
    fn commit_units_fix_pads_the_annotation() {
        // GEMV (L452-L461): the committed Element m![1] is written in the `let` annotation.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../fixtures/manual/0401_gemv.rs"),
            "ALN-007",
        );
        assert!(fixed.contains("Slice, m![1 # 4]> = ctx"), "{fixed}");
    }

    #[test]
    fn dma_table_l2425() {
        // L2425-L2427: DM writes and HBM-to-DM need 8-byte alignment; L2525 lists the DMA dtypes.
        let t = &crate::target::RNGD;
        assert_eq!(t.dma_dm_align_bytes, 8);
        assert!(t.dma_dtypes.contains(&Dtype::Bf16) && !t.dma_dtypes.contains(&Dtype::I9));
        // L1723: the fetch packet is 8-byte aligned; L2193: commits in 8-byte units.
        assert_eq!(t.fetch_align_bytes, 8);
        assert_eq!(t.commit_sizes_main.iter().min(), Some(&8));
    }
}

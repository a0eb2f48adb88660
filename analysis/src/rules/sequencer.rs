//! SEQ: sequencers (constraints.md §6). Every `fetch` (BeginTensor Packet = the DM Element →
//! Time/Packet), `commit` (Time/Packet → Element) and the Sequencer page's `BufTensor::read` /
//! `write` is derived with [`crate::derive`] (the manual's term-by-term algorithm, L1337-L1627)
//! and checked against the hardware limits.

use super::context::{FnContext, at_arg};
use crate::derive::{self, Config, DeriveError, Direction, Op, OpKind};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::layout::Dim;
use crate::mapping::{lower, parse};
use crate::model::{Dtype, Slot, Tu, mapping_around};
use crate::rule::{Generations, Rule, Status};

pub const SEQ_001: Rule = Rule {
    code: "SEQ-001",
    name: "sequencer-entry-limit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A sequencer configuration has at most 8 loop entries after merging",
    docs: "The compiler turns the stream mapping `[Time, Packet]` into one loop entry per factor \
           (`size : stride` in the buffer) and, when more than 8 result, merges adjacent entries \
           that are physically contiguous (`s1 == n2 * s2`). If more than 8 remain, compilation \
           fails. Reorder the Time factors to follow the buffer's order so they merge (`C / 2, C % 2` \
           adjacent become `C`), move a factor into Slice, or split the operation.",
    bad: "// Element m![N, C, H, W]; nothing in Time is adjacent as in the buffer\n.fetch::<i8, m![H % 2, N % 2, C % 2, W / 16, H / 2, N / 2, C / 2, W / 8 % 2], m![W % 8]>()",
    good: ".fetch::<i8, m![W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2], m![W % 8]>()",
    manual: "L1568-L1569, L1616-L1627, L1630, L2321, L2338",
    generations: Generations::Both,
};

pub const SEQ_002: Rule = Rule {
    code: "SEQ-002",
    name: "sequencer-entry-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Each sequencer entry iterates at most 65,536 times",
    docs: "A loop entry's size is the iteration count of one factor of the stream (after merging, \
           which can create a large entry). The manual states `size <= 65,536` (L1632, L4174) and \
           also `limit < 65536` (L7699, constraints.md §22 A-5); visa-lint uses <= 65,536. Split \
           the axis in the Time mapping (`X` → `X / 256, X % 256`) with another factor between the \
           two parts so they do not merge back.",
    bad: "axes![A = 131072]; .fetch::<i8, m![A / 8], m![A % 8]>() // entry 16384 : 8 is fine; m![A] in Time with m![1] packet is 131072 : 1",
    good: "axes![A = 131072]; .fetch::<i8, m![A / 8], m![A % 8]>()",
    manual: "L1631-L1632, L4174, L7699",
    generations: Generations::Both,
};

pub const SEQ_003: Rule = Rule {
    code: "SEQ-003",
    name: "sequencer-packet-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The sequencer's base packet (fetch_size) is 1, 2, 4, 8, 16 or 32 bytes",
    docs: "The sequencer reads base packets of 1, 2, 4, 8, 16 or 32 bytes; larger stream packets \
           are built by adapter batching (`fetches_per_packet`). The compiler always picks the \
           largest legal size dividing gcd(packet, contiguous run) (FET-003), so this fails only \
           when no whole-byte size divides them: a 4-bit tensor whose contiguous DM run is an odd \
           number of elements (a strided innermost entry reads single 4-bit elements). Store the \
           Element so the packet's axis is innermost, or fetch an even number of contiguous \
           elements. A packet that is itself not a whole number of 8-byte units is ALN-005's; \
           the tail padding page's 24-byte fetch (L7795) is treated as a commit size \
           (constraints.md §22 A-4).",
    bad: "// a: DmTensor<i4, .., m![W, H]>, W = H = 16\n.fetch::<i4, m![H], m![W]>() // W is strided by 16: 4-bit reads",
    good: "// a: DmTensor<i4, .., m![H, W]>\n.fetch::<i4, m![H], m![W]>() // 8-byte contiguous packets",
    manual: "L1632, L2104, L2118",
    generations: Generations::Both,
};

pub const SEQ_004: Rule = Rule {
    code: "SEQ-004",
    name: "sequencer-packet-fetch",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The innermost entry is contiguous (`(s == 0 || s == 1) && n % packet_size == 0`) or packets are single elements",
    docs: "The innermost loop entry `n : s` either reads contiguously (`s` is 0 or 1) or the \
           sequencer's base packet is one element (discrete access). `packet_size` here is the \
           base packet the sequencer reads (fetch_size): the stream packet may be larger, built \
           by batching, as in the manual's own fetch_batch_2/3 (innermost entry `8 : 1` with \
           16- or 32-element packets, L2076-L2097). A Packet whose innermost axis is strided in \
           the buffer (`Packet = m![A]` while the Element is `m![A, B]`) forces one-element reads: \
           in the sub context, whose fetch size is fixed at 8 bytes (4 for i4 → i32), that is an \
           error; in the main context it is legal but costs one cycle per element, reported as \
           a perf hint with the cycle counts. Store the Element with the packet's axes \
           innermost, or swap the Time and Packet axes. (4-bit elements are SEQ-003's: a single \
           one is not a whole byte.)",
    bad: "// a: DmTensor<i8, .., m![A, B]>, B = 32\nctx.sub.begin(a.view()).fetch::<i8, m![B], m![A]>()",
    good: "ctx.sub.begin(a.view()).fetch::<i8, m![A], m![B]>()",
    manual: "L1633-L1636",
    generations: Generations::Both,
};

pub const SEQ_005: Rule = Rule {
    code: "SEQ-005",
    name: "contiguous-sram-access",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "contiguous_sram_access_size: the product of the innermost physically contiguous entries",
    docs: "Adjacent entries outer `(n1 : s1)` and inner `(n2 : s2)` are physically contiguous iff \
           `s1 == n2 * s2`; the product of the innermost contiguous run is the \
           contiguous_sram_access_size, and the fetch size divides it. visa-lint reports it \
           (with the entry pair that breaks the run) where it is what keeps a multi-flit packet \
           (over 32 bytes) from being read 32 bytes at a time, as in the manual's \
           `four_axes_non_contiguous` (8 contiguous bytes, L1795-L1804). Packets of at most one \
           flit split by the layout are FET-011's; small packets in a long run are FET-003's. \
           `visa-lint derive` prints the size for every operation.",
    bad: "// a: DmTensor<i8, .., m![N, C, H, W]>\n.fetch::<i8, m![1], m![N, H, C, W]>() // 8-byte runs",
    good: ".fetch::<i8, m![C], m![N, H, W]>() // 32-byte runs",
    manual: "L1762, L1769-L1804",
    generations: Generations::Both,
};

pub const SEQ_006: Rule = Rule {
    code: "SEQ-006",
    name: "insufficient-input",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The stream must not iterate indices the buffer does not hold (\"insufficient input\")",
    docs: "Each factor of Time and Packet is located in the buffer mapping to get its stride. A \
           factor of an axis the buffer holds only in part (`N / 512` when the buffer is `m![N % \
           512]`) has no address: the compiler rejects the configuration. (A whole axis absent \
           from the buffer is a broadcast, stride 0.) For writes the reverse also holds: the \
           stream must produce every position of the destination Element.",
    bad: "buf: &BufTensor<i8, m![N % 512]> → StreamTensor<i8, m![N / 512], m![N % 512]>",
    good: "buf: &BufTensor<i8, m![N]> → StreamTensor<i8, m![N / 512], m![N % 512]>",
    manual: "L1639-L1659",
    generations: Generations::Both,
};

pub const SEQ_007: Rule = Rule {
    code: "SEQ-007",
    name: "incompatible-shapes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Buffer and stream must split each axis compatibly (\"incompatible shapes\")",
    docs: "The compiler decomposes the factors of each axis into (inner, intersection, outer) parts \
           to find a common representation. When the buffer splits an axis by 5 and the stream by 3 \
           (A = 15), no sequencer traverses one to produce the other. Split both sides by the same \
           factors.",
    bad: "buf: &BufTensor<i8, m![A % 5, A / 5]> → StreamTensor<i8, m![1], m![A % 3, A / 3]>",
    good: "buf: &BufTensor<i8, m![A % 5, A / 5]> → StreamTensor<i8, m![1], m![A % 5, A / 5]>",
    manual: "L1660-L1683",
    generations: Generations::Both,
};

pub const SEQ_008: Rule = Rule {
    code: "SEQ-008",
    name: "write-stride-zero",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Write sequencers (`BufTensor::write`) need non-zero strides: no broadcast, no selective writes",
    docs: "A stream factor whose axis the destination buffer does not hold would be written with \
           stride 0: every step overwrites the same addresses. Write sequencers require non-zero \
           strides for all entries, so writes cannot discard data (beyond slicing) or reduce a \
           broadcast (the manual's `broadcasting_write`, L1263-L1335, is the reverse of a legal \
           broadcasting read and is rejected). SEQ-008 reports the Sequencer page's \
           `BufTensor::write`; the same condition on a commit (the Commit Engine's write \
           sequencer) is CMT-006, so each write is reported once. Add the axis to the buffer, or \
           reduce it before the write.",
    bad: "// buf: &mut BufTensor<i8, m![A]>\nbuf.write(stream) // stream: StreamTensor<i8, m![T, A], m![P]>",
    good: "// buf: &mut BufTensor<i8, m![T, A, P]>\nbuf.write(stream)",
    manual: "L7775, L2321, L1328-L1335",
    generations: Generations::Both,
};

pub const SEQ_009: Rule = Rule {
    code: "SEQ-009",
    name: "write-within-bounds",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Write sequencers must never write beyond the destination tensor",
    docs: "A read sequencer may overfetch past its tensor (the padding is dummy data), but a write \
           sequencer must stay within the destination: past it lie other tensors. visa-lint \
           derives the write configuration (the commit truncates only the outermost packet \
           factor, L2199) and reports a stream whose padded Time (or inner Packet) factor makes \
           the last written element lie past the Element's extent (`Time = m![M # 8]` committed \
           into `m![M, W]` with M = 4). Slice the padding off before the commit (`= n`), or pad \
           the destination Element as well. The 8-byte tail dummy and DM allocation are \
           CMT-007's.",
    bad: "// stream Time m![M # 8], Packet m![W # 32]; M = 4, W = 8, i8\n.commit::<m![M, W]>(0)",
    good: ".commit::<m![M # 8, W]>(0)",
    manual: "L7884, L7896",
    generations: Generations::Both,
};

pub const SEQ_013: Rule = Rule {
    code: "SEQ-013",
    name: "indirect-access",
    severity: Severity::Info,
    status: Status::NotStatic("IndirectLoop has no user-level API; offsets are runtime data"),
    summary: "Indirect entries `(limit, [offsets])` replace `(limit, stride)` for gathers",
    docs: "The offset list must have `limit` entries; the manual documents no API (L1005 TODO).",
    bad: "",
    good: "",
    manual: "L1684-L1688, L1005",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    SEQ_001, SEQ_002, SEQ_003, SEQ_004, SEQ_005, SEQ_006, SEQ_007, SEQ_008, SEQ_009, SEQ_013,
];

fn who(op: &Op<'_>) -> &'static str {
    match op.kind {
        OpKind::Fetch => "the fetch sequencer",
        OpKind::Commit => "the commit sequencer",
        OpKind::Read => "the read sequencer",
        OpKind::Write => "the write sequencer",
    }
}

fn buffer_name(op: &Op<'_>) -> &'static str {
    match op.kind {
        OpKind::Fetch => "the DM tensor's Element",
        OpKind::Commit => "the Element",
        OpKind::Read | OpKind::Write => "Buf",
    }
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        let span = op.span;
        let cfg = match &op.config {
            Ok(c) => c,
            Err(DeriveError::Insufficient {
                axis,
                needed,
                have,
                reverse,
                slot,
            }) => {
                let msg = if *reverse {
                    format!(
                        "insufficient input: {} holds `{needed}` of `{axis}`, but the stream's Time and Packet never produce it; those positions would not be written",
                        buffer_name(op)
                    )
                } else {
                    format!(
                        "insufficient input: {slot} requires `{needed}`, but {} only contains `{have}`; {} has no address for those indices",
                        buffer_name(op),
                        who(op)
                    )
                };
                out.push(Diagnostic::new(&SEQ_006, span, msg));
                continue;
            }
            Err(DeriveError::Incompatible {
                axis,
                buf_split,
                stream_split,
            }) => {
                let (a, b) = (stream_split.min(buf_split), stream_split.max(buf_split));
                out.push(Diagnostic::new(
                    &SEQ_007,
                    span,
                    format!(
                        "incompatible shapes: `{axis}` is split by {buf_split} in {} but by {stream_split} in the stream; {a} does not divide {b}, so no common factorization exists",
                        buffer_name(op)
                    ),
                ));
                continue;
            }
            Err(DeriveError::Unsupported(_)) => continue,
        };
        let limit = cx.target.sequencer_entries;
        if cfg.entries.len() > limit {
            // At the Time mapping the fix reorders; the call when there is no fix.
            let fix = reorder_fix(cx, op, limit);
            let mut d = at_arg(
                &SEQ_001,
                op.step,
                fix.as_ref().and_then(|f| mapping_around(cx.model, f.0)),
                format!(
                    "{} needs {} entries after merging ({cfg}); the hardware has {limit}. Order the Time factors as in {} so adjacent ones merge, or split the operation",
                    who(op),
                    cfg.entries.len(),
                    buffer_name(op)
                ),
            );
            if let Some((sp, text, n)) = fix {
                d = d.with_edit(
                    format!(
                        "order the Time factors as in the buffer ({n} entr{} after merging)",
                        if n == 1 { "y" } else { "ies" }
                    ),
                    false,
                    sp,
                    text,
                );
            }
            out.push(d);
        }
        let max = cx.target.sequencer_entry_size;
        if let Some(e) = cfg.entries.iter().find(|e| e.size > max) {
            // At the Time mapping the fix splits the factor in; the call when there is no fix.
            let fix = (cfg.entries.len() < limit)
                .then(|| split_fix(cx, op, e.size, max))
                .flatten();
            let mut d = at_arg(
                &SEQ_002,
                op.step,
                fix.as_ref().and_then(|f| mapping_around(cx.model, f.1)),
                format!(
                    "{} has an entry of {} iterations ({} : {}); an entry counts at most {max} (the manual also says < 65536, constraints.md §22 A-5). Split that factor in Time",
                    who(op),
                    e.size,
                    e.size,
                    e.stride
                ),
            );
            if let Some((title, sp, text)) = fix {
                d = d.with_edit(title, false, sp, text);
            }
            out.push(d);
        }
        packet_checks(cx, op, cfg, out);
        bounds_check(op, cfg, out);
        if op.kind == OpKind::Write
            && let Some(what) = op.stride_zero(cfg)
        {
            let it = if op.missing_axes().len() > 1 {
                "them"
            } else {
                "it"
            };
            out.push(Diagnostic::new(
                &SEQ_008,
                span,
                format!(
                    "{} would write {what} with stride 0 ({cfg}): {} does not hold {it}, and write sequencers need non-zero strides (no broadcast, no selective writes)",
                    who(op),
                    buffer_name(op)
                ),
            ));
        }
    }
}

/// SEQ-002's fix: the written Time term of `size` iterations split as `t / outer, t % inner`
/// with both parts within `max` (the split parts stay apart: no merge below 8 entries).
fn split_fix(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    size: u64,
    max: u64,
) -> Option<(String, Span, String)> {
    let ty = stream_ty(op)?;
    let mv = ty.get(Slot::Time)?;
    let at = mv.span?;
    // The largest divisor of `size` within `max` whose cofactor is within `max` too.
    let inner = (1..=max.min(size))
        .rev()
        .take(1 << 16)
        .find(|k| size.is_multiple_of(*k) && size / k <= max)?;
    let outer = size / inner;
    if outer <= 1 {
        return None;
    }
    for (off, term) in crate::mapping::edit::top_terms(&mv.text) {
        let Ok(e) = parse::parse_mapping(term) else {
            continue;
        };
        let Some(l) = lower(&e, cx.scope, &mut Vec::new()) else {
            continue;
        };
        if l.size != size {
            continue;
        }
        let simple = term
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '\'' || c == ' ' || c == '/');
        let base = if simple {
            term.to_string()
        } else {
            format!("({term})")
        };
        let text = format!("{base} / {inner}, {base} % {inner}");
        let start = at.start as usize + off;
        return Some((
            format!("split `{term}` into `{text}`"),
            Span::new(start, start + term.len()),
            text,
        ));
    }
    None
}

/// The stream type whose Time/Packet the user wrote for `op`.
fn stream_ty<'a>(op: &Op<'a>) -> Option<&'a crate::model::TensorTy> {
    if op.kind.direction() == Direction::Read {
        op.step.output.as_ref()
    } else {
        op.step.input.as_ref()
    }
}

/// SEQ-001's fix: the written Time terms sorted by their stride in the buffer (outermost
/// first), when that configuration fits in `limit` entries.
fn reorder_fix(cx: &FnContext<'_>, op: &Op<'_>, limit: usize) -> Option<(Span, String, usize)> {
    let ty = stream_ty(op)?;
    let tm = ty.get(Slot::Time)?;
    let at = tm.span?;
    let terms = cx.scope.lowered_terms(&tm.text)?;
    if terms.len() < 2 {
        return None;
    }
    // Buffer strides of each digit, innermost first.
    let mut strides: Vec<(&crate::mapping::layout::Factor, u64)> = Vec::new();
    let mut st: u64 = 1;
    for d in op.buf.dims.iter().rev() {
        let Dim::Factor(f) = d else { return None };
        strides.push((f, st));
        st = st.checked_mul(f.extent)?;
    }
    let key = |l: &crate::mapping::Layout| -> u64 {
        let Some(Dim::Factor(f)) = l.dims.last() else {
            return u64::MAX;
        };
        let Some(a) = &f.axis else { return u64::MAX };
        strides
            .iter()
            .find(|(h, _)| {
                h.axis.as_ref().is_some_and(|b| b.name == a.name)
                    && f.coef >= h.coef
                    && f.coef < h.coef.saturating_mul(h.valid)
            })
            .map_or(u64::MAX, |(h, s)| s.saturating_mul(f.coef / h.coef.max(1)))
    };
    let mut sorted = terms.clone();
    sorted.sort_by_key(|(_, l)| std::cmp::Reverse(key(l)));
    if sorted
        .iter()
        .map(|(t, _)| t)
        .eq(terms.iter().map(|(t, _)| t))
    {
        return None;
    }
    let time_dims: Vec<Dim> = sorted.iter().flat_map(|(_, l)| l.dims.clone()).collect();
    let packet_dims = ty
        .get(Slot::Packet)
        .and_then(|p| cx.scope.lowered_terms(&p.text))
        .map_or_else(
            || op.packet.dims.clone(),
            |v| v.into_iter().flat_map(|(_, l)| l.dims).collect(),
        );
    let cfg = derive::configure(
        &op.buf,
        &time_dims,
        &packet_dims,
        op.kind.direction(),
        limit,
    )
    .ok()?;
    if cfg.entries.len() > limit {
        return None;
    }
    let text = format!(
        "m![{}]",
        sorted
            .iter()
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Some((at, text, cfg.entries.len()))
}

/// The fetch sizes the compiler may use for `op` (reads only).
fn choices(cx: &FnContext<'_>, op: &Op<'_>) -> Vec<u64> {
    let from = op.step.input.as_ref().and_then(|t| t.dtype);
    let to = op.step.output.as_ref().and_then(|t| t.dtype);
    let sub = op.context == Some(Tu::Sub) && op.kind == OpKind::Fetch;
    derive::fetch_size_choices(cx.target, sub, from, to)
}

/// SEQ-003, SEQ-004, SEQ-005: the base packet of a read sequencer.
fn packet_checks(cx: &FnContext<'_>, op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    if op.kind.direction() != Direction::Read {
        return;
    }
    let Some(bits) = op.bits else { return };
    let Some(last) = cfg.entries.last() else {
        return;
    };
    let run = derive::contiguous_elements(&cfg.entries);
    let packet_bits = cfg.packet_size.saturating_mul(u64::from(bits));
    let dtype = op
        .step
        .input
        .as_ref()
        .and_then(|t| t.dtype)
        .map_or("", Dtype::as_str);
    if bits < 8 {
        // SEQ-003: no whole-byte base packet reads a sub-byte run.
        let run_bits = run.saturating_mul(u64::from(bits));
        if packet_bits.is_multiple_of(8) && !run_bits.is_multiple_of(8) {
            out.push(Diagnostic::new(
                &SEQ_003,
                op.span,
                format!(
                    "{} reads runs of {run} contiguous {dtype} element{} ({run_bits} bits; sequencer {cfg}): a base packet is 1, 2, 4, 8, 16 or 32 bytes, so no fetch size reads it. Store the Element with the packet's axis innermost",
                    who(op),
                    if run == 1 { "" } else { "s" },
                ),
            ));
        }
        return;
    }
    let sub = op.context == Some(Tu::Sub) && op.kind == OpKind::Fetch;
    if cfg.packet_entries > 0 && cfg.packet_size > 1 && last.stride > 1 {
        // SEQ-004: discrete access.
        let steps = derive::time_steps(cfg);
        let per = derive::bytes(1, bits);
        let per = if per == 1 {
            "1 byte".to_string()
        } else {
            format!("{per} bytes")
        };
        if sub {
            let need = choices(cx, op).first().copied().unwrap_or(8);
            out.push(Diagnostic::new(
                &SEQ_004,
                op.span,
                format!(
                    "the packet's innermost entry `{} : {}` is strided, so {} would read one {dtype} element ({per}) at a time; the sub context fetches {need} bytes, so neither contiguous nor single-element access holds (sequencer {cfg}). Store the Element with the packet's axis innermost, or fetch on ctx.main",
                    last.size,
                    last.stride,
                    who(op)
                ),
            ));
        } else {
            let packet_bytes = derive::bytes(cfg.packet_size, bits);
            let now = steps.saturating_mul(cfg.packet_size);
            let best = steps.saturating_mul(packet_bytes.div_ceil(cx.target.flit_bytes));
            let mut d = Diagnostic::new(
                &SEQ_004,
                op.span,
                format!(
                    "the packet's innermost entry `{} : {}` is strided: {} reads single {dtype} elements, {} fetches per {packet_bytes}-byte packet, {now} cycles (sequencer {cfg}); with the packet's axes innermost in the Element it would take {best}",
                    last.size,
                    last.stride,
                    who(op),
                    cfg.packet_size
                ),
            );
            d.severity = Severity::Perf;
            out.push(d);
        }
        return;
    }
    // SEQ-005: a multi-flit packet read in fetches the layout keeps below one flit.
    if sub || last.stride > 1 {
        return;
    }
    let f = derive::fetch_sizes(cfg, bits, &choices(cx, op));
    let flit = cx.target.flit_bytes;
    let Some(fetch) = f.fetch_size else { return };
    if f.packet_bytes > flit && f.contiguous_bytes < flit && fetch < flit {
        let brk = cfg
            .entries
            .windows(2)
            .rev()
            .find(|w| w[0].stride != w[1].size.saturating_mul(w[1].stride))
            .map(|w| {
                format!(
                    "; `{} : {}` is not contiguous with `{} : {}` ({} != {} * {})",
                    w[0].size,
                    w[0].stride,
                    w[1].size,
                    w[1].stride,
                    w[0].stride,
                    w[1].size,
                    w[1].stride
                )
            })
            .unwrap_or_default();
        let best = derive::time_steps(cfg).saturating_mul(f.packet_bytes.div_ceil(flit));
        out.push(Diagnostic::new(
            &SEQ_005,
            op.span,
            format!(
                "contiguous_sram_access_size is {} bytes (sequencer {cfg}{brk}), so fetch_size is {fetch} and each {}-byte packet takes {} fetches: {} cycles; a layout with {flit}-byte runs would take {best}",
                f.contiguous_bytes,
                f.packet_bytes,
                f.fetches_per_packet.unwrap_or(0),
                f.cycles.unwrap_or(0)
            ),
        ));
    }
}

/// `true` when no two factors of the stream cover the same positions of one axis (a stream that
/// repeats indices is another rule's finding, e.g. VEC-006).
fn injective(op: &Op<'_>) -> bool {
    let mut seen: Vec<(&str, u64, u64)> = Vec::new();
    for d in op.time.dims.iter().chain(op.packet.dims.iter()) {
        let Dim::Factor(f) = d else { return false };
        let Some(a) = &f.axis else { continue };
        let (lo, hi) = (f.coef, f.coef.saturating_mul(f.valid));
        if seen
            .iter()
            .any(|&(n, l, h)| n == &*a.name && lo < h && l < hi)
        {
            return false;
        }
        seen.push((&a.name, lo, hi));
    }
    true
}

/// SEQ-009: the last element a write sequencer writes lies within the destination.
fn bounds_check(op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    if op.kind.direction() != Direction::Write || cfg.entries.iter().any(|e| e.stride == 0) {
        return;
    }
    let mut last: u64 = 0;
    for e in &cfg.entries {
        let Some(v) = e.size.checked_sub(1).and_then(|n| n.checked_mul(e.stride)) else {
            return;
        };
        let Some(l) = last.checked_add(v) else { return };
        last = l;
    }
    if last < op.buf.size || !injective(op) {
        return;
    }
    out.push(Diagnostic::new(
        &SEQ_009,
        op.span,
        format!(
            "{} ({cfg}) reaches element {last}, but {} holds {} elements: it would write {} elements past the tensor. Slice the stream's padding off (`= n`) or pad the Element too",
            who(op),
            buffer_name(op),
            op.buf.size,
            last + 1 - op.buf.size
        ),
    ));
}

#[cfg(test)]
mod tests {
    /// Runs the analysis of `src` and returns the codes of SEQ/FET/COL diagnostics.
    fn codes(src: &str) -> Vec<String> {
        let a = crate::db::analyse_text(src);
        a.diagnostics()
            .iter()
            .map(|d| d.code().to_string())
            .filter(|c| c.starts_with("SEQ") || c.starts_with("FET") || c.starts_with("COL"))
            .collect()
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        // 2^58 × 8 elements: checked arithmetic in every derived size.
        let src = "use furiosa_visa_std::prelude::*;\n\
                   axes![S = 256, A = 288230376151711744, B = 8];\n\
                   #[device(chip = 1)]\n\
                   fn k(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![A, B]>) {\n\
                   let x = ctx.main.begin(a.view()).fetch::<i8, m![A], m![B # 32]>()\n\
                   .collect::<m![A], m![B # 32]>();\n}\n";
        let c = codes(src);
        assert!(c.contains(&"SEQ-002".to_string()), "{c:?}");
    }
}

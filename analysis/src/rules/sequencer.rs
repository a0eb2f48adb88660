//! SEQ: sequencers (constraints.md §6). Every `fetch` (BeginTensor Packet = the DM Element →
//! Time/Packet), `commit` (Time/Packet → Element) and the Sequencer page's `BufTensor::read` /
//! `write` is derived with [`crate::derive`] (the manual's term-by-term algorithm, L1337-L1627)
//! and checked against the hardware limits.

use super::FnContext;
use super::registry::{Rule, Status};
use crate::derive::{DeriveError, Direction, Op, OpKind};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;

pub const RULES: &[Rule] = &[
    Rule {
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
    },
    Rule {
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
    },
    Rule {
        code: "SEQ-003",
        name: "sequencer-packet-size",
        severity: Severity::Error,
        status: Status::Planned(
            "the base fetch size is derived (derive::fetch_sizes); reporting a missing legal size is \
             FET-002/FET-003's, which know the context and the cast",
        ),
        summary: "The sequencer's base packet (fetch_size) is 1, 2, 4, 8, 16 or 32 bytes",
        docs: "Larger stream packets are built by adapter batching (`fetches_per_packet`). The tail \
               padding page's 24-byte fetch (L7795) is treated as a commit size (constraints.md §22 A-4).",
        bad: "",
        good: "",
        manual: "L1632, L2104, L2118",
    },
    Rule {
        code: "SEQ-004",
        name: "sequencer-packet-fetch",
        severity: Severity::Error,
        status: Status::Planned(
            "the literal rule contradicts the manual's own valid fetch_batch_2/3 (innermost entry 8 : 1 \
             with a 16- or 32-element packet); needs the compiler's merge of the packet entries",
        ),
        summary: "The innermost entry is contiguous (`(s == 0 || s == 1) && n % packet_size == 0`) or packets are single elements",
        docs: "A packet whose innermost axis is strided in the buffer falls back to single-element reads.",
        bad: "",
        good: "",
        manual: "L1633-L1636",
    },
    Rule {
        code: "SEQ-005",
        name: "contiguous-sram-access",
        severity: Severity::Info,
        status: Status::Planned(
            "infrastructure only (derive::contiguous_elements); shown by `visa-lint derive`, no diagnostic of its own",
        ),
        summary: "contiguous_sram_access_size: the product of the innermost physically contiguous entries",
        docs: "Adjacent entries outer `(n1 : s1)` and inner `(n2 : s2)` are contiguous iff `s1 == n2 * s2`; \
               the run bounds fetch_size and commit_size.",
        bad: "",
        good: "",
        manual: "L1762, L1769-L1804",
    },
    Rule {
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
    },
    Rule {
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
    },
    Rule {
        code: "SEQ-008",
        name: "write-stride-zero",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "Write sequencers (commit) need non-zero strides: no broadcast, no selective writes",
        docs: "A stream factor whose axis the destination Element does not hold would be written with \
               stride 0: every step overwrites the same addresses. Write sequencers require non-zero \
               strides for all entries, so writes cannot discard data (beyond slicing) or reduce a \
               broadcast. Add the axis to the Element, or reduce it before the commit.",
        bad: "// stream Time m![T, A] (T a broadcast)\n.commit::<m![A]>(0)",
        good: ".commit::<m![T, A]>(0)",
        manual: "L7775, L2321",
    },
    Rule {
        code: "SEQ-009",
        name: "write-within-bounds",
        severity: Severity::Warning,
        status: Status::Planned(
            "needs commit_in_size selection and the tail-dummy model (ALN-007)",
        ),
        summary: "Write sequencers must never write beyond the destination tensor",
        docs: "Reads may overfetch past a tensor; writes would clobber neighbouring tensors.",
        bad: "",
        good: "",
        manual: "L7884, L7896",
    },
    Rule {
        code: "SEQ-010",
        name: "trf-sequencer-limits",
        severity: Severity::Error,
        status: Status::Planned("needs the TRF `align` derivation (reg_read_size)"),
        summary: "TRF sequencer: 1-8 entries, size 1-65,536, signed 32-bit strides",
        docs: "The TRF read sequencer shares the sequencer limits; stride 0 broadcasts weights over time.",
        bad: "",
        good: "",
        manual: "L4171-L4177",
    },
    Rule {
        code: "SEQ-011",
        name: "vcg-counter-limit",
        severity: Severity::Error,
        status: Status::Planned(
            "needs the Valid Count Generator model (intra-slice reduce family)",
        ),
        summary: "The Valid Count Generator has at most 8 nested counters",
        docs: "Padded reduce axes are tracked by up to 8 counters L_0..L_7.",
        bad: "",
        good: "",
        manual: "L6202, L6213",
    },
    Rule {
        code: "SEQ-012",
        name: "dma-sequencer-limits",
        severity: Severity::Error,
        status: Status::Planned("needs the DMA read/write pairing (DMA family)"),
        summary: "DMA sequencers share the limits; stride0 in 1..=4096 divides the last consecutive entry",
        docs: "The DMA engine chains a read and a write sequencer with matching amounts.",
        bad: "",
        good: "",
        manual: "L1225, seed 000 L69, L94, L157-L158, L191",
    },
    Rule {
        code: "SEQ-013",
        name: "indirect-access",
        severity: Severity::Info,
        status: Status::NotStatic("IndirectLoop has no user-level API; offsets are runtime data"),
        summary: "Indirect entries `(limit, [offsets])` replace `(limit, stride)` for gathers",
        docs: "The offset list must have `limit` entries; the manual documents no API (L1005 TODO).",
        bad: "",
        good: "",
        manual: "L1684-L1688, L1005",
    },
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
                out.push(Diagnostic::new("SEQ-006", span, msg));
                continue;
            }
            Err(DeriveError::Incompatible {
                axis,
                buf_split,
                stream_split,
            }) => {
                let (a, b) = (stream_split.min(buf_split), stream_split.max(buf_split));
                out.push(Diagnostic::new(
                    "SEQ-007",
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
            out.push(Diagnostic::new(
                "SEQ-001",
                span,
                format!(
                    "{} needs {} entries after merging ({cfg}); the hardware has {limit}. Order the Time factors as in {} so adjacent ones merge, or split the operation",
                    who(op),
                    cfg.entries.len(),
                    buffer_name(op)
                ),
            ));
        }
        let max = cx.target.sequencer_entry_size;
        if let Some(e) = cfg.entries.iter().find(|e| e.size > max) {
            out.push(Diagnostic::new(
                "SEQ-002",
                span,
                format!(
                    "{} has an entry of {} iterations ({} : {}); an entry counts at most {max} (the manual also says < 65536, constraints.md §22 A-5). Split that factor in Time",
                    who(op),
                    e.size,
                    e.size,
                    e.stride
                ),
            ));
        }
        if op.kind.direction() == Direction::Write && cfg.entries.iter().any(|e| e.stride == 0) {
            let in_buf = |name: &str| {
                op.buf.dims.iter().any(|d| {
                    matches!(d, Dim::Factor(f) if f.axis.as_ref().is_some_and(|a| &*a.name == name))
                })
            };
            let missing: Vec<String> = op
                .time
                .dims
                .iter()
                .chain(op.packet.dims.iter())
                .filter_map(|d| match d {
                    Dim::Factor(f) => f.axis.as_ref().map(|a| a.name.to_string()),
                    Dim::Opaque(_) => None,
                })
                .filter(|n| !in_buf(n))
                .collect();
            let what = if missing.is_empty() {
                "padding of the stream".to_string()
            } else {
                format!("`{}`", missing.join("`, `"))
            };
            out.push(Diagnostic::new(
                "SEQ-008",
                span,
                format!(
                    "{} would write {what} with stride 0 ({cfg}): {} does not hold it, and write sequencers need non-zero strides (no broadcast, no selective writes)",
                    who(op),
                    buffer_name(op)
                ),
            ));
        }
    }
}

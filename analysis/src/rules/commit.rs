//! CMT: the Commit Engine, which writes flits back to DM (constraints.md §17). The packet check
//! is decided from types; commit_in_size / commit_size need the commit-sequencer derivation.

use super::FnContext;
use super::alignment::{slot_bytes, written};
use super::registry::{Rule, Status};
use crate::derive::{self, OpKind};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Slot, Tu};

const NEEDS_DERIVE: &str =
    "needs the commit-sequencer derivation (analysis/src/derive, issue 4), not available yet";

pub const RULES: &[Rule] = &[
    Rule {
        code: "CMT-001",
        name: "commit-input-flit",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "The commit input packet is a full 32-byte flit",
        docs: "The Commit Engine takes one 32-byte flit per step. Collect, Cast and Transpose produce \
               flits (COL-001 and their own rules report those); this rule checks commits whose input \
               comes from elsewhere, such as a hand-typed stream parameter or a `let` annotation. \
               Pad the packet to 32 bytes (`m![A # 8]` for f32) and truncate at the commit instead.",
        bad: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 4]>) { s.commit::<m![B, A]>(0); }",
        good: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 8]>) { s.commit::<m![B, A]>(0); }",
        manual: "L2192, L2328",
    },
    Rule {
        code: "CMT-002",
        name: "commit-truncation",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "Truncation keeps a leading 8, 16, 24 or 32 bytes of each flit",
        docs: "The Element may drop trailing packet elements; the kept prefix is commit_in_size.",
        bad: "",
        good: "",
        manual: "L2191-L2194, L2330, L2201-L2238",
    },
    Rule {
        code: "CMT-003",
        name: "commit-size-per-context",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "commit_size is 8, 16, 24 or 32 bytes (main), 8 (sub)",
        docs: "The Commit Engine writes commit_size = gcd(contiguous DM run, commit_in_size) bytes at \
               a time; the main context supports 8, 16, 24 or 32, the sub context only 8. visa-lint \
               derives the commit sequencer from the stream's Time/Packet and the destination \
               Element (crate::derive) and reports sub-context commits whose contiguous DM run breaks \
               the 8-byte units (a commit_in_size that is not a multiple of 8 is ALN-007). Keep the \
               innermost Element run a multiple of 8 bytes (pad it), or commit on `ctx.main`.",
        bad: "axes![B = 2, A = 4]; ctx.sub...collect::<m![1], m![[B, A] # 32]>().commit::<m![A, B]>(0) // 1-byte runs",
        good: "axes![B = 2, A = 4]; ctx.sub...collect::<m![1], m![[B, A] # 32]>().commit::<m![B, A]>(0)",
        manual: "L2243, L2247-L2248, L2330",
    },
    Rule {
        code: "CMT-004",
        name: "sub-commit-restrictions",
        severity: Severity::Error,
        status: Status::Planned("reported as KRN-006 and KRN-007"),
        summary: "Sub-context commits follow fetch only; packing and generate modes are sub-only",
        docs: "See KRN-006 and KRN-007.",
        bad: "",
        good: "",
        manual: "L2332-L2338",
    },
    Rule {
        code: "CMT-005",
        name: "commit-sequencer-limits",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "The commit sequencer has the fetch sequencer's limits and 8-byte strides",
        docs: "See SEQ-001/SEQ-002 and ALN-008.",
        bad: "",
        good: "",
        manual: "L2321, L2338, L7699",
    },
    Rule {
        code: "CMT-006",
        name: "commit-stores-every-factor",
        severity: Severity::Error,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "No broadcast or selective writes: every stream factor is stored",
        docs: "A stream factor absent from the Element (and not padding) would need a stride-0 write.",
        bad: "",
        good: "",
        manual: "L7775",
    },
    Rule {
        code: "CMT-007",
        name: "commit-within-tensor",
        severity: Severity::Warning,
        status: Status::Planned("needs the DM allocation model (SCH family)"),
        summary: "A commit never writes past its tensor, tail dummy included",
        docs: "The footprint is addr .. addr + round_up8(bytes); overlap with a live tensor clobbers it.",
        bad: "",
        good: "",
        manual: "L7699, L7884, L7896",
    },
    Rule {
        code: "CMT-008",
        name: "commit-slice-bitmap",
        severity: Severity::Error,
        status: Status::Planned("no API for the slice bitmap is documented"),
        summary: "The selective-commit slice bitmap has 256 bits",
        docs: "Bit i selects slice i.",
        bad: "",
        good: "",
        manual: "L2315-L2318, L2343",
    },
    Rule {
        code: "CMT-009",
        name: "full-flit-commit",
        severity: Severity::Perf,
        status: Status::Planned(NEEDS_DERIVE),
        summary: "32-byte Element rows give full-flit commits",
        docs: "Pad the innermost Element run to 32 bytes (3 vs 15 cycles in the manual's example).",
        bad: "",
        good: "",
        manual: "L7709-L7764, L2341-L2345",
    },
];

/// CMT-003: a sub-context commit writes 8 bytes at a time, so the derived
/// gcd(contiguous run, commit_in_size) is a multiple of 8.
fn check_sub_commit_size(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(unit) = cx.target.commit_sizes_sub.iter().copied().max() else {
        return;
    };
    for op in &cx.ops {
        if op.kind != OpKind::Commit || op.context != Some(Tu::Sub) {
            continue;
        }
        let (Ok(cfg), Some(bits)) = (&op.config, op.bits) else {
            continue;
        };
        if bits != 4 && !bits.is_multiple_of(8) {
            continue;
        }
        let sizes = derive::commit_sizes(cfg, bits, cx.target.commit_sizes_sub);
        let (cin, run) = (sizes.commit_in_size, sizes.contiguous_bytes);
        if cin == 0 || !cin.is_multiple_of(unit) || run.is_multiple_of(unit) {
            continue;
        }
        let span = written(op.step, 0).map_or(op.span, |a| a.span);
        out.push(Diagnostic::new(
            "CMT-003",
            span,
            format!(
                "a sub-context commit writes {unit} bytes at a time, but the Element's contiguous DM \
                 run is {run} bytes (commit_in_size {cin}, sequencer {cfg}); pad the innermost run \
                 to a multiple of {unit} bytes or commit on ctx.main"
            ),
        ));
    }
}

/// Producers whose own rules (COL-001, CST, TRN) already check the flit.
const FLIT_PRODUCERS: &[&str] = &["collect", "cast", "transpose"];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    check_sub_commit_size(cx, out);
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            if step.method != "commit" && step.method != "commit_view" {
                continue;
            }
            if i > 0 && FLIT_PRODUCERS.contains(&chain.steps[i - 1].method.as_str()) {
                continue;
            }
            let Some(ty) = step.input.as_ref() else {
                continue;
            };
            // A commit straight after fetch or switch lacks its collect: KRN-002.
            if matches!(ty.kind, Kind::Fetch | Kind::Switch | Kind::Begin) {
                continue;
            }
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes != flit {
                let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
                out.push(Diagnostic::new(
                    "CMT-001",
                    step.span,
                    format!(
                        "the commit input packet {text} is {bytes} bytes ({n} × {d}); the Commit \
                         Engine takes full {flit}-byte flits"
                    ),
                ));
            }
        }
    }
}

//! CMT: the Commit Engine, which writes flits back to DM (constraints.md §17). The packet check
//! is decided from types; commit_in_size / commit_size need the commit-sequencer derivation.

use super::context::{FnContext, at_arg};
use crate::derive::{self, Op, OpKind};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::mapping::layout::{Dim, Layout};
use crate::model::{Dtype, Kind, Method, Slot, Step, Tu, output_arg, slot_bytes};
use crate::rule::{Generations, Rule, Status};

pub const CMT_001: Rule = Rule {
    code: "CMT-001",
    name: "commit-input-flit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The commit input packet is a full 32-byte flit",
    docs: "The Commit Engine takes one 32-byte flit per step; the library asserts \
           \"Commit input packet must be exactly 32 bytes (one flit)\" at every commit, so this is \
           an error. Collect, Cast and Transpose produce flits (COL-001 and their own rules report \
           those); this rule checks commits whose input comes from elsewhere: straight after a \
           fetch or switch (the library allows `fetch → commit`, so the fetched packet must be a \
           full flit), a hand-typed stream parameter or a `let` annotation. Pad the packet to 32 \
           bytes (`m![A # 8]` for f32) and truncate at the commit instead.",
    bad: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 4]>) { s.commit::<m![B, A]>(0); }",
    good: "fn k(s: CollectTensor<'_, T, f32, C, Cl, S, m![B], m![A # 8]>) { s.commit::<m![B, A]>(0); }",
    manual: "L2192, L2328",
    generations: Generations::Both,
};

pub const CMT_002: Rule = Rule {
    code: "CMT-002",
    name: "commit-truncation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Truncation keeps a leading 8, 16, 24 or 32 bytes of each flit",
    docs: "The Element mapping may drop the trailing elements of each 32-byte flit (`W # 32` → \
           `W`, `N` → `N = 8`); what it keeps is commit_in_size, which must be 8, 16, 24 or 32 \
           bytes. visa-lint derives the commit sequencer (crate::derive) and reports a kept \
           prefix of another size, for example 12 i8 elements. When the Element as a whole is not \
           a multiple of 8 bytes, ALN-007 reports it instead (one finding per commit). Pad the \
           Element's innermost axis so the commit also writes the padding (`m![M, K, W]` → \
           `m![M, K, W # 16]`) or resize it to 8/16/24/32 bytes.",
    bad: "axes![M = 4, K = 2, W = 12]; ...cast::<i8, m![W # 32]>().commit::<m![M, K, W]>(0)",
    good: "axes![M = 4, K = 2, W = 12]; ...cast::<i8, m![W # 32]>().commit::<m![M, K, W # 16]>(0)",
    manual: "L2191-L2194, L2330, L2201-L2238",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 the kept part is written, `commit_trim::<P>()`: P must be 8, \
         16, 24 or 32 bytes and the leading part of the packet it trims \
         (`furiosa-opt-lower/src/verify/engine/commit_adapter.rs:8-39`); under `furiosa_visa_std` \
         the commit's Element implies it (L2191-L2194)",
    ),
};

pub const CMT_003: Rule = Rule {
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
    generations: Generations::Both,
};

pub const CMT_004: Rule = Rule {
    code: "CMT-004",
    name: "sub-commit-restrictions",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["KRN-006"],
        why: "a sub-context commit that does not follow a fetch directly is KRN-006; the sub-only \
              packing and generate modes have no API in the manual (KRN-007 is unreachable)",
    },
    summary: "Sub-context commits follow fetch only; packing and generate modes are sub-only",
    docs: "See KRN-006 and KRN-007.",
    bad: "",
    good: "",
    manual: "L2332-L2338",
    generations: Generations::Both,
};

pub const CMT_005: Rule = Rule {
    code: "CMT-005",
    name: "commit-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The commit sequencer has the fetch sequencer's limits and 8-byte strides",
    docs: "The commit sequencer shares the fetch sequencer's limits (at most 8 entries of at most \
           65,536 iterations; SEQ-001 and SEQ-002 report those for every sequencer) and \
           additionally every stride must be a multiple of 8 bytes. visa-lint derives the \
           commit sequencer and reports strides that are not (the packet's own contiguous entry \
           excepted); the base address is ALN-008, a kept prefix that is not 8/16/24/32 bytes \
           CMT-002. Keep the packet's elements innermost and contiguous in the Element and pad \
           inner axes to 8 bytes.",
    bad: "axes![M = 4, K = 2, W = 8]; ...cast::<i8, m![W # 32]>().commit::<m![K, W, M]>(0) // W stride 4 B",
    good: "axes![M = 4, K = 2, W = 8]; ...cast::<i8, m![W # 32]>().commit::<m![K, M, W]>(0)",
    manual: "L2321, L2338, L7699",
    generations: Generations::Both,
};

pub const CMT_006: Rule = Rule {
    code: "CMT-006",
    name: "commit-stores-every-factor",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "No broadcast or selective writes: every stream factor is stored",
    docs: "The commit sequencer is a write sequencer, and write sequencers require non-zero \
           strides for all entries (L7775): a stream Time or Packet factor whose axis the \
           committed Element does not hold would be written with stride 0, every step \
           overwriting the same DM addresses, so broadcast (reuse) is impossible during a commit \
           although a fetch may broadcast freely. visa-lint derives the commit sequencer \
           (crate::derive) and reports such a factor, naming the axes. CMT-006 covers commits; \
           the same condition on the Sequencer page's `BufTensor::write` is SEQ-008 (one \
           finding per write). An Element factor the stream never produces is SEQ-006. Keep the \
           axis in the Element (the fix prepends it, which enlarges the tensor), or reduce it \
           (Vector Engine / accumulate) before the commit.",
    bad: "// stream Time m![T, A / 32], Packet m![A % 32] (T repeats A)\n.commit::<m![A]>(0x1000)",
    good: ".commit::<m![T, A]>(0x1000)",
    manual: "L7775",
    generations: Generations::Both,
};

pub const CMT_007: Rule = Rule {
    code: "CMT-007",
    name: "commit-within-tensor",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A commit never writes past its tensor, tail dummy included",
    docs: "Commits write whole 8-byte units, so a committed Element that is not a multiple of \
           8 bytes gets a dummy tail: the footprint is `addr .. addr + round_up8(bytes)`. When \
           that tail (and only the tail) reaches another DM tensor of the function, the commit \
           overwrites its first bytes. visa-lint compares the constant addresses of the \
           function's DM tensors; an overlap of the tensors themselves is SCH-001, a tail that \
           overlaps nothing is ALN-007. Pad the Element to a multiple of 8 bytes and move the \
           neighbour, or place the commit lower.",
    bad: "let a: DmTensor<bf16, .., m![N]> = ...commit(0); // N = 3: 6 bytes + 2 dummy\nlet b = ...commit(6);",
    good: "let a: DmTensor<bf16, .., m![N # 4]> = ...commit(0);\nlet b = ...commit(8);",
    manual: "L7699, L7884, L7896",
    generations: Generations::Both,
};

pub const CMT_008: Rule = Rule {
    code: "CMT-008",
    name: "commit-slice-bitmap",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the manual documents no API for the slice bitmap: L2314-L2318 describe it in prose \
         only, no code sets it",
    ),
    summary: "The selective-commit slice bitmap has 256 bits",
    docs: "Bit i selects slice i.",
    bad: "",
    good: "",
    manual: "L2315-L2318, L2343",
    generations: Generations::Both,
};

pub const CMT_009: Rule = Rule {
    code: "CMT-009",
    name: "full-flit-commit",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Commit each flit in one write: keep the packet's axes adjacent in the Element",
    docs: "commit_size = gcd(contiguous DM run, commit_in_size): when the packet's elements lie \
           in pieces of the Element, each flit is split into commit_in_size / commit_size writes \
           (L2244-L2245) and the commit takes that many times more cycles (full-flit commits \
           are the fast case, L7709-L7764). visa-lint reports main-context commits split this \
           way by a permutation (pieces separated by the Element's own padding are a layout \
           choice and not reported; a fetch that could take more per step is FET-003). Store \
           the packet's axes innermost and adjacent in the Element.",
    bad: "axes![K = 2, M = 4, W = 8]; ...collect::<m![K], m![M, W]>().commit::<m![M, K, W]>(0) // 4 writes per flit",
    good: "axes![K = 2, M = 4, W = 8]; ...collect::<m![K], m![M, W]>().commit::<m![K, M, W]>(0)",
    manual: "L2244-L2245, L2341-L2345, L7709-L7764",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    CMT_001, CMT_002, CMT_003, CMT_004, CMT_005, CMT_006, CMT_007, CMT_008, CMT_009,
];

/// The Element mapping of a commit as written: the turbofish argument, else the annotation the
/// output type came from (a `let` type or the function's return type).
pub(crate) fn element_written(step: &Step) -> Option<(Span, String)> {
    output_arg(step, Some(0), Slot::Element).map(|a| (a.span, a.text))
}

fn dtype(op: &Op<'_>) -> Option<Dtype> {
    op.step.output.as_ref().and_then(|t| t.dtype)
}

/// CMT-006: a commit whose write sequencer would need a stride-0 entry (a broadcast factor).
fn check_stride_zero(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        if op.kind != OpKind::Commit {
            continue;
        }
        let Ok(cfg) = &op.config else { continue };
        let Some(what) = op.stride_zero(cfg) else {
            continue;
        };
        let missing = op.missing_axes();
        let it = if missing.len() > 1 { "them" } else { "it" };
        let written_el = element_written(op.step);
        let el_text = written_el.as_ref().map_or_else(
            || "the Element".to_string(),
            |(_, t)| format!("the Element `{t}`"),
        );
        // The Element the fix extends is at fault; the commit when it is written nowhere.
        let mut d = at_arg(
            &CMT_006,
            op.step,
            written_el.as_ref().map(|w| w.0),
            format!(
                "the commit sequencer would store {what} with stride 0 (commit sequencer {cfg}): \
                 {el_text} does not hold {it}, and a write sequencer needs non-zero strides, so a \
                 commit can neither broadcast nor drop a factor; keep it in the Element or reduce it \
                 before the commit"
            ),
        );
        if !missing.is_empty()
            && let Some((sp, text)) = &written_el
            && let Some(inner) = text
                .trim()
                .strip_prefix("m![")
                .and_then(|t| t.strip_suffix(']'))
        {
            let inner = inner.trim();
            let head = missing.join(", ");
            let new = if inner.is_empty() || inner == "1" {
                format!("m![{head}]")
            } else {
                format!("m![{head}, {inner}]")
            };
            d = d.with_edit(
                format!("store {} in the Element: {new}", missing.join(", ")),
                false,
                *sp,
                new,
            );
        }
        out.push(d);
    }
}

/// CMT-002, CMT-003, CMT-005 and CMT-009 on the derived commit sequencer, at most one finding
/// per commit: a committed Element that is not whole 8-byte units is ALN-007's (or CMT-007's).
fn check_commit_ops(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let allowed = cx.target.commit_sizes_main;
    let Some(unit) = allowed.iter().copied().min() else {
        return;
    };
    let flit = cx.target.flit_bytes;
    for op in &cx.ops {
        if op.kind != OpKind::Commit {
            continue;
        }
        let (Ok(cfg), Some(bits), Some(sizes)) = (&op.config, op.bits, op.commit) else {
            continue;
        };
        if bits != 4 && !bits.is_multiple_of(8) {
            continue;
        }
        if !derive::bytes(op.buf.size, bits).is_multiple_of(unit) {
            continue; // ALN-007 / CMT-007
        }
        let d = dtype(op);
        let written_el = element_written(op.step);
        let span = written_el.as_ref().map(|w| w.0);
        let kept = derive::bytes(cfg.packet_size, bits);
        let cin = sizes.commit_in_size;
        let cin_ok = allowed.contains(&cin) && sizes.widened != derive::Widened::Rounded;
        if !cin_ok {
            let mut diag = at_arg(
                &CMT_002,
                op.step,
                span,
                format!(
                    "the commit keeps {} × {} = {kept} bytes of each {flit}-byte flit (commit \
                     sequencer {cfg}); commit_in_size must be 8, 16, 24 or 32 bytes",
                    cfg.packet_size,
                    d.map_or("", Dtype::as_str)
                ),
            );
            let target = allowed.iter().copied().filter(|&a| a >= kept).min();
            if let Some((t, (sp, text))) = target.zip(written_el.as_ref())
                && let Some(n) = d.and_then(|d| d.elems_for(t))
                && let Some(new) = crate::mapping::edit::pad_last_term(text, n)
            {
                diag = diag.with_edit(
                    format!("pad the innermost axis to {t} bytes: {new}"),
                    false,
                    *sp,
                    new,
                );
            }
            out.push(diag);
            continue;
        }
        let run = sizes.contiguous_bytes;
        if op.context == Some(Tu::Sub)
            && let Some(sub) = cx.target.commit_sizes_sub.iter().copied().max()
            && !run.is_multiple_of(sub)
        {
            out.push(at_arg(
                &CMT_003,
                op.step,
                span,
                format!(
                    "a sub-context commit writes {sub} bytes at a time, but the Element's \
                     contiguous DM run is {run} bytes (commit_in_size {cin}, sequencer {cfg}); pad \
                     the innermost run to a multiple of {sub} bytes or commit on ctx.main"
                ),
            ));
            continue;
        }
        let align = cx.target.commit_stride_align_bytes;
        // Entries inside the innermost contiguous run are one write; the loops around it step.
        let n = cfg.entries.len();
        let mut inner = n;
        if cfg.entries.last().is_some_and(|e| e.stride == 1) {
            inner = n - 1;
            while inner > 0 {
                let (o, i) = (cfg.entries[inner - 1], cfg.entries[inner]);
                if o.stride != i.size.saturating_mul(i.stride) {
                    break;
                }
                inner -= 1;
            }
        }
        let bad = cfg.entries.iter().enumerate().find(|(k, e)| {
            *k < inner
                && e.stride != 0
                && !e
                    .stride
                    .saturating_mul(u64::from(bits))
                    .is_multiple_of(align.saturating_mul(8))
        });
        if let Some((_, e)) = bad {
            let sb = e.stride.saturating_mul(u64::from(bits)) as f64 / 8.0;
            out.push(at_arg(
                &CMT_005,
                op.step,
                span,
                format!(
                    "the commit sequencer {cfg} steps {sb} bytes in its {} : {} entry; \
                     commit-sequencer strides must be multiples of {align} bytes (keep the \
                     packet innermost and contiguous in the Element, pad inner axes to {align} bytes)",
                    e.size, e.stride
                ),
            ));
            continue;
        }
        check_full_flit(op, cfg, cin, span, out);
    }
}

/// CMT-009: the commit splits each flit into several writes because the packet's elements are
/// not contiguous in the Element (a permutation, not padding: L2244-L2245, L2341-L2345).
fn check_full_flit(
    op: &Op<'_>,
    cfg: &derive::Config,
    cin: u64,
    span: Option<Span>,
    out: &mut Vec<Diagnostic>,
) {
    if op.context == Some(Tu::Sub) || cin == 0 {
        return;
    }
    let Some(sizes) = op.commit else { return };
    let Some(cs) = sizes.commit_size else { return };
    if cs >= cin {
        return;
    }
    if matches!(op.buf.dims.last(), Some(Dim::Factor(f)) if f.extent > f.valid) {
        return; // the gaps are the Element's own padding
    }
    let steps = derive::time_steps(cfg);
    let per = cin / cs;
    out.push(at_arg(
        &CMT_009,
        op.step,
        span,
        format!(
            "the packet's {cin} bytes lie in {}-byte contiguous pieces of the Element (commit \
             sequencer {cfg}), so commit_size is {cs} and each flit takes {per} writes: {} write \
             cycles instead of {steps}; store the packet's axes innermost and adjacent in the \
             Element to commit whole flits",
            sizes.contiguous_bytes,
            steps.saturating_mul(per)
        ),
    ));
}

fn check_tail(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method != Method::Commit {
                continue;
            }
            let Some((victim, end, dend)) =
                derive::commit_tail_victim(cx.model, cx.target, chain.binding.as_deref(), step)
            else {
                continue;
            };
            let span = element_written(step).map(|w| w.0);
            let Some(addr) = step.address else { continue };
            out.push(
                at_arg(
                    &CMT_007,
                    step,
                    span,
                    format!(
                        "the commit writes {} bytes at {addr} plus a {}-byte dummy tail up to \
                         {dend} (commits write whole 8-byte units); `{}` starts at {} and loses \
                         its first bytes",
                        end - addr,
                        dend - end,
                        victim.name,
                        victim.address.unwrap_or(0)
                    ),
                )
                .with_related(victim.span, format!("`{}` is placed here", victim.name)),
            );
        }
    }
}

/// Producers whose own rules (COL-001, CST, TRN) already check the flit.
const FLIT_PRODUCERS: &[Method] = &[Method::Collect, Method::Cast, Method::Transpose];

/// CMT-002 under furiosa-opt-std: `commit_trim::<P>()` writes out what each flit keeps, which
/// is a leading 8, 16, 24 or 32 bytes of the packet it trims (`furiosa-opt-lower/src/verify/
/// engine/commit_adapter.rs:8-39` at ebb846a: a Commit Adapter width, and a resize of the
/// packet).
fn check_trims(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if cx.model.library != Generation::OptStd {
        return;
    }
    let trims = cx
        .model
        .adapters
        .iter()
        .filter(|a| a.method == Method::CommitTrim);
    for trim in trims {
        let Some((arg, Some(map))) = &trim.generic else {
            continue;
        };
        let (Some(kept), Some(d)) = (map.layout.as_deref(), trim.input.dtype) else {
            continue;
        };
        let Some(bytes) = d.size_bytes(kept.size) else {
            continue;
        };
        // Where the commit's Element is known, the derived commit sequencer reports the width
        // (below, at the Element); the trim's own width is checked where it is not.
        let widths = cx.target.commit_sizes_main;
        let packet = trim.input.get(Slot::Packet);
        if !widths.contains(&bytes) && !commit_element_known(cx, trim.span) {
            let mut diag = Diagnostic::new(
                &CMT_002,
                arg.span,
                format!(
                    "`commit_trim` keeps {bytes} bytes of each flit ({} {d} elements, `{}`); the \
                     Commit Adapter writes 8, 16, 24 or 32: pad the kept packet to one of them",
                    kept.size, arg.text
                ),
            );
            let wider = packet
                .and_then(|p| p.layout.as_deref())
                .and_then(|p| wider_trim(kept, p, d, widths));
            if let Some((text, w)) = wider.filter(|_| arg.text.trim_start().starts_with("m![")) {
                // It writes more of each flit than the kernel asked for: unsafe.
                diag = diag.with_edit(
                    format!("keep the leading {w} bytes of the packet: {text}"),
                    false,
                    arg.span,
                    text,
                );
            }
            out.push(diag);
            continue;
        }
        let Some(packet) = packet else {
            continue;
        };
        if let Some(p) = packet.layout.as_deref()
            && !leads(kept, p)
        {
            out.push(Diagnostic::new(
                &CMT_002,
                arg.span,
                format!(
                    "`commit_trim` keeps `{}`, which is not the leading part of the packet `{}`: \
                     it may only cut the packet's tail (the same elements, in order), so no trim \
                     keeps these elements; order the packet upstream so that they come first, then \
                     trim the rest",
                    arg.text, packet.text
                ),
            ));
        }
    }
}

/// CMT-002's fix of a trim whose width is not a Commit Adapter width: keep the leading part of
/// `packet` of the next width up (`m![L = 3]` f32 → `m![L % 4]`, 16 bytes) and its width, when
/// the packet is that long.
fn wider_trim(kept: &Layout, packet: &Layout, d: Dtype, widths: &[u64]) -> Option<(String, u64)> {
    let bytes = d.size_bytes(kept.size)?;
    let w = widths.iter().copied().filter(|&w| w > bytes).min()?;
    let n = d.elems_for(w)?;
    if n > packet.size || !leads(kept, packet) {
        return None;
    }
    let lead = packet.window(n);
    (leads(&lead, packet) && d.size_bytes(lead.size) == Some(w))
        .then(|| (format!("m![{}]", lead.to_expr()), w))
}

/// Whether the commit that follows the adapter at `at` in its chain writes a known Element.
fn commit_element_known(cx: &FnContext<'_>, at: Span) -> bool {
    cx.model
        .chains
        .iter()
        .flat_map(|c| &c.steps)
        .filter(|s| s.method.is_commit() && s.span.start > at.start)
        .min_by_key(|s| s.span.start)
        .and_then(|s| s.output.as_ref())
        .and_then(|ty| ty.get(Slot::Element))
        .is_some_and(|m| m.layout.is_some())
}

/// Whether `kept` is the first `kept.size` positions of `packet`, element for element (padding
/// for padding).
fn leads(kept: &Layout, packet: &Layout) -> bool {
    kept.size <= packet.size && (0..kept.size).all(|i| kept.map(i) == packet.map(i))
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    check_trims(cx, out);
    check_stride_zero(cx, out);
    check_commit_ops(cx, out);
    check_tail(cx, out);
    let flit = cx.target.flit_bytes;
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            if !step.method.is_commit() {
                continue;
            }
            if i > 0 && FLIT_PRODUCERS.contains(&chain.steps[i - 1].method) {
                continue;
            }
            let Some(ty) = step.input.as_ref() else {
                continue;
            };
            // A commit of a stream that was never fetched is KRN-001. A commit straight after
            // fetch or switch is allowed (the library defines commit on every stream position)
            // and is checked here: its packet is the fetched one.
            if ty.kind == Kind::Begin {
                continue;
            }
            let Some((d, n, bytes)) = slot_bytes(ty, Slot::Packet) else {
                continue;
            };
            if bytes != flit {
                let text = ty.get(Slot::Packet).map_or("", |m| m.text.as_str());
                out.push(Diagnostic::new(
                    &CMT_001,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::testing::{lay, terms};

    #[test]
    fn narrow_trim_fix_keeps_the_next_width() {
        // 3 f32 = 12 bytes is no Commit Adapter width; the leading 4 (16 bytes) are.
        let src = "use furiosa_opt_std::prelude::*;\naxes![N = 8, L = 8];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L]>) {\n\
                   let _t = ctx.main.begin(x.view()).fetch::<m![N], m![L]>().fetch_cast::<f32>()\n\
                   .collect::<m![N], m![L]>().commit_trim::<m![L = 3]>().commit();\n}\n";
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CMT-002");
        assert!(fixed.contains("commit_trim::<m![L % 4]>()"), "{fixed}");
        assert!(
            crate::check_text(&fixed).is_empty(),
            "{:?}",
            crate::check_text(&fixed)
        );
    }

    /// A trim that keeps every other element is no tail cut: no trim keeps them, and the
    /// message says what to do instead.
    #[test]
    fn strided_trim_has_no_fix_and_says_why() {
        let src = "use furiosa_opt_std::prelude::*;\naxes![N = 8, L = 8];\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L]>) {\n\
                   let _t: DmTensor<f32, m![1], m![1 # 2], m![1 # 256], m![N, L / 2]> = ctx.main.begin(x.view()).fetch::<m![N], m![L]>().fetch_cast::<f32>()\n\
                   .collect::<m![N], m![L]>().commit_trim::<m![L / 2]>().commit();\n}\n";
        let d: Vec<Diagnostic> = crate::check_text(src)
            .into_iter()
            .filter(|d| d.code() == "CMT-002")
            .collect();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].fixes.is_empty());
        assert!(
            d[0].message.ends_with(
                "so no trim keeps these elements; order the packet upstream so that they come \
                 first, then trim the rest"
            ),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn stride_zero_commit_is_cmt_006_and_write_is_seq_008() {
        // L7775: no broadcast during commit; the Sequencer page's BufTensor::write is SEQ-008.
        let commit = include_str!("../../../fixtures/rules/CMT-006.rs");
        let codes: Vec<&str> = crate::db::analyse_text(commit)
            .diagnostics()
            .iter()
            .map(|d| d.code())
            .collect();
        assert_eq!(codes, ["CMT-006"]);
        let a = crate::db::analyse_text(commit);
        assert_eq!(a.diagnostics()[0].fixes[0].edits[0].new_text, "m![T, A]");
        let write = include_str!("../../../fixtures/rules/SEQ-008.rs");
        let codes: Vec<&str> = crate::db::analyse_text(write)
            .diagnostics()
            .iter()
            .map(|d| d.code())
            .collect();
        assert_eq!(codes, ["SEQ-008"]);
    }

    #[test]
    fn merged_commit_sequencer_keeps_the_flit() {
        // Nine contiguous entries merge into one (L1568); the flit's kept bytes do not grow.
        let ok = include_str!("../../../fixtures/ok/CMT-002-merged.rs");
        assert!(crate::db::analyse_text(ok).diagnostics().is_empty());
        let bad = include_str!("../../../fixtures/rules/CMT-002-merged.rs");
        let a = crate::db::analyse_text(bad);
        let d = a.diagnostics();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code(), "CMT-002");
        assert!(
            d[0].message
                .contains("keeps 12 × i8 = 12 bytes of each 32-byte flit")
                && d[0].message.contains("[3072 : 1] : 12"),
            "{}",
            d[0].message
        );
    }

    use crate::derive::{Direction, configure};
    use crate::mapping::layout::Factor;
    use crate::mapping::{Axis, Layout};

    fn write(axes: &str, buf: &str, time: &str, packet: &str) -> derive::Config {
        configure(
            &lay(axes, buf),
            &terms(axes, time),
            &terms(axes, packet),
            Direction::Write,
            8,
        )
        .expect("configures")
    }

    #[test]
    fn l2195_truncation_commit_in_size() {
        // L2201-L2234: commit_in_size 8 (i8 W # 32 → W), 16 (f32 W → W = 4), 16 (bf16 N → N = 8,
        // transposed Time), 32 (i4 J, 64 × 0.5 bytes).
        let ax = "M = 4, K = 2, W = 8, N = 16, J = 64";
        let cin = |buf: &str, t: &str, p: &str, bits| {
            derive::commit_sizes(&write(ax, buf, t, p), bits, &[8, 16, 24, 32]).commit_in_size
        };
        assert_eq!(cin("M, K, W", "M, K", "W # 32", 8), 8);
        assert_eq!(cin("M, K, W = 4", "M, K", "W", 32), 16);
        assert_eq!(cin("K, M, N = 8", "M, K", "N", 16), 16);
        assert_eq!(cin("K, M, J", "M, K", "J", 4), 32);
    }

    #[test]
    fn l7709_full_flit_commit() {
        // L7725-L7760: `m![A, [B, C] # 22]` (§22 A-6: `# n` pads to n, so the manual's 32-byte row
        // is `# 32`): [A=3:32, [B,C]=32:1] @ 1024 / 32, 3 cycles.
        let ax = "A = 3, B = 5, C = 2";
        let c = configure(
            &lay(ax, "A, [B, C] # 32"),
            &lay(ax, "A").dims,
            &lay(ax, "[B, C] # 32").dims,
            Direction::Write,
            8,
        )
        .expect("configures");
        let s = derive::commit_sizes(&c, 8, &[8, 16, 24, 32]);
        assert_eq!(
            c.entries[0],
            derive::Entry {
                size: 3,
                stride: 32
            }
        );
        assert_eq!(derive::time_steps(&c), 3);
        // Truncation keeps the 10 data bytes; the padded row is written with them: 32 bytes.
        assert_eq!((s.commit_in_size, c.packet_size), (10, 10));
        let buf = lay(ax, "A, [B, C] # 32");
        // L7753-L7754: commit_in_size = 32, commit_size = 32 (one write per A).
        let sizes = [8, 16, 24, 32];
        let w = derive::commit_sizes_into(&buf, 32, &c, 8, &sizes, &sizes, 8);
        assert_eq!((w.commit_in_size, w.commit_size), (32, Some(32)));
        assert_eq!(w.widened, derive::Widened::Padding);
    }

    #[test]
    fn l7672_axis_permutation_commit() {
        // L7672-L7676: [A=3:8, B=5:24, C=8:1] @ 1024 / 8 for `m![B, A, C # 6]`, which the text
        // reads as "2 C elements plus 6 bytes padding" (§22 A-6): the 8-byte row is `C # 8`.
        let ax = "A = 3, B = 5, C = 2";
        let c = write(ax, "B, A, C # 8", "A, B", "C # 32");
        assert_eq!(
            &c.entries[..2],
            &[
                derive::Entry { size: 3, stride: 8 },
                derive::Entry {
                    size: 5,
                    stride: 24
                }
            ]
        );
        assert_eq!(derive::time_steps(&c), 15);
        // "Commit size: 8 bytes per write" (L7678).
        let buf = lay(ax, "B, A, C # 8");
        let sizes = [8, 16, 24, 32];
        let w = derive::commit_sizes_into(&buf, 32, &c, 8, &sizes, &sizes, 8);
        assert_eq!((w.commit_in_size, w.commit_size), (8, Some(8)));
    }

    #[test]
    fn l7860_tail_padding_table() {
        // L7809-L7867: A = 65 (f8) padded to 72/80/88/96 bytes per row: the write sequencer
        // [B=2:row, (A # row)/n = row/n : n, A=n:1] / n with n = 24, 16, 8, 32, and fetch cycles
        // 2 * row / n = 6, 10, 22, 6.
        for (row, n, cycles) in [(72u64, 24u64, 6u64), (80, 16, 10), (88, 8, 22), (96, 32, 6)] {
            let a = Axis::new("A", 65);
            let b = Axis::new("B", 2);
            let buf = Layout::from_dims(vec![
                Dim::Factor(Factor {
                    extent: 2,
                    valid: 2,
                    axis: Some(b.clone()),
                    coef: 1,
                    pad: crate::mapping::layout::PadKind::Top,
                }),
                Dim::Factor(Factor {
                    extent: row,
                    valid: 65,
                    axis: Some(a.clone()),
                    coef: 1,
                    pad: crate::mapping::layout::PadKind::Top,
                }),
            ])
            .expect("layout");
            let time = [
                Dim::Factor(Factor {
                    extent: 2,
                    valid: 2,
                    axis: Some(b),
                    coef: 1,
                    pad: crate::mapping::layout::PadKind::Top,
                }),
                Dim::Factor(Factor {
                    extent: row / n,
                    valid: row / n,
                    axis: Some(a.clone()),
                    coef: n,
                    pad: crate::mapping::layout::PadKind::Top,
                }),
            ];
            let packet = [Dim::Factor(Factor {
                extent: n,
                valid: n,
                axis: Some(a),
                coef: 1,
                pad: crate::mapping::layout::PadKind::Top,
            })];
            let c = configure(&buf, &time, &packet, Direction::Read, 8).expect("configures");
            assert_eq!(
                c.entries,
                vec![
                    derive::Entry {
                        size: 2,
                        stride: row
                    },
                    derive::Entry {
                        size: row / n,
                        stride: n
                    },
                    derive::Entry { size: n, stride: 1 },
                ],
                "row {row}"
            );
            let f = derive::fetch_sizes(&c, 8, &[8, 16, 24, 32]);
            assert_eq!(
                (f.fetch_size, f.cycles),
                (Some(n), Some(cycles)),
                "row {row}"
            );
        }
    }

    #[test]
    fn commit_numbers_from_the_target() {
        // L2232-L2233: commit_in_size/commit_size 8, 16, 24, 32 (main), 8 (sub); L2338: strides
        // in multiples of 8 bytes.
        let t = &crate::target::RNGD;
        assert_eq!(t.commit_sizes_main, &[8, 16, 24, 32]);
        assert_eq!(t.commit_sizes_sub, &[8]);
        assert_eq!(t.commit_stride_align_bytes, 8);
    }
}

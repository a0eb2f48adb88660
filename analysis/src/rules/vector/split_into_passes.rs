//! VEC-015: ops that conflict in one pass (a stage out of order, VEC-003, or an ALU used twice,
//! VEC-004) need separate Tensor Unit passes with the intermediate in DM. For the first such
//! conflict of a `ctx.main.begin(..)` pipeline this rule offers the split as a quick fix: the
//! first pass ends in front of the conflicting op with `vector_final()` and a `commit` to a DM
//! address clear of every range the function places, and a second pass begins from the
//! intermediate. It reads what the walk found: the conflicts it reported and where each pass
//! could be cut (not in two-group mode, with a live stash, or after `vector_split`).

use super::ops::{layout, with_pad};
use super::pass::Cut;
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::mapping::Layout;
use crate::model::{Chain, Dtype, Engine, Kind, Slot, Step, TensorTy, Tu};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_015: Rule = Rule {
    code: "VEC-015",
    name: "split-into-passes",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Conflicting ops need separate Tensor Unit passes with the intermediate in DM or TRF",
    docs: "The quick fix that goes with the first VEC-003 (stage order) or VEC-004 (ALU reuse) of \
           a `ctx.main.begin(..)` pipeline: the first pass ends in front of the conflicting op \
           with `vector_final()` and `commit::<Element>(addr)`, and a second pass begins from the \
           intermediate (`begin(tmp.view()).fetch().collect().vector_init()\
           .vector_intra_slice_branch(BranchMode::Unconditional)`) and continues with the \
           conflicting op. The intermediate's Element is the stream's Time and Packet; `addr` is \
           8-byte aligned, fits the 512 KB slice and clears every DM range the function places \
           with a known address (parameters' addresses are not known: review them). A cut in a \
           Way4 section after `vector_trim_way4` widens (`vector_pad_way8`) before the commit and \
           narrows again after the new branch. Not offered inside two-group mode, with a live \
           stash, or after `vector_split`.",
    bad: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sqrt).vector_fp_unary(FpUnaryOp::Tanh)",
    good: "let pass1 = ctx.main.begin(x.view())/* .. */.vector_fp_unary(FpUnaryOp::Sqrt).vector_pad_way8::<m![A % 2 # 8]>().vector_final().commit::<m![B, A % 2 # 8]>(0x2100);\nctx.main.begin(pass1.view()).fetch::<f32, m![B], m![A % 2 # 8]>().collect::<m![B], m![A % 2 # 8]>().vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Tanh)/* .. */",
    manual: "L4750, L5253",
    generations: Generations::Both,
};

/// VEC-015: the quick fix for the first VEC-003/VEC-004 of a chain: end the pass in front of
/// the conflicting op (`vector_final()` + `commit` to a free DM address) and begin a second
/// pass from the intermediate. The walk of the chain pushed `out[before..]` and found `cuts`.
pub(super) fn check(
    cx: &FnContext<'_>,
    chain: &Chain,
    cuts: &[Option<Cut>],
    before: usize,
    out: &mut Vec<Diagnostic>,
) {
    let Some((at, code, j)) = conflict(chain, &out[before..]) else {
        return;
    };
    let step = &chain.steps[j];
    let Some(Some(cut)) = cuts.get(j) else {
        return;
    };
    let Some(mid) = step
        .input
        .as_ref()
        .and_then(|input| Intermediate::of(cx, input, cut))
    else {
        return;
    };
    let Some(addr) = free_dm_address(cx, mid.bytes) else {
        return;
    };
    let (bytes, element) = (mid.bytes, &mid.element);
    let msg = format!(
        "split the pass in front of `{}`: end the first Tensor Unit pass with `vector_final()` and \
         commit the intermediate ({bytes} bytes per slice, Element `{element}`) to DM at \
         {addr:#x} (8-byte aligned, clear of every DM range this function places); a second \
         pass begins from it and runs `{}` onwards",
        step.method, step.method
    );
    // The fix cuts the chain in front of this call: the call is the primary span, the
    // conflict it resolves a related one.
    let mut d = Diagnostic::new(&VEC_015, step.span, msg);
    if at != step.span {
        d = d.with_related(at, format!("the conflict ({code}) this split resolves"));
    }
    // The edit rewrites the chain as one statement: a pass written over several `let`s or
    // `match` arms gets the advice without it.
    if chain.written_apart {
        out.push(d);
        return;
    }
    out.push(d.with_fix(
        format!("split into two Tensor Unit passes through DM {addr:#x}"),
        false,
        edits(cx, chain, step, &mid, addr),
    ));
}

/// The first stage-order or ALU conflict among `found`: its span, its code and the index of
/// the step it is at, when a whole main-context pipeline (`ctx.main.begin(..)` ... the
/// conflicting op) leads to that step.
fn conflict(chain: &Chain, found: &[Diagnostic]) -> Option<(Span, &'static str, usize)> {
    let conflict = found
        .iter()
        .find(|d| matches!(d.code(), "VEC-003" | "VEC-004"))?;
    let at = conflict.span;
    let j = chain
        .steps
        .iter()
        .position(|s| s.span == at || s.args.iter().any(|a| a.span == at))?;
    // A whole main-context pipeline: `ctx.main.begin(..)` ... the conflicting op.
    let begins = chain.steps[..j]
        .iter()
        .any(|s| s.engine == Some(Engine::Begin) && s.context == Some(Tu::Main));
    begins.then_some((at, conflict.code(), j))
}

/// The intermediate the first pass commits and the second fetches.
struct Intermediate {
    /// Its element type.
    d: Dtype,
    /// Its Time and Packet as the second pass's fetch and collect spell them.
    time_txt: String,
    packet_txt: String,
    /// The commit's Element: Time and Packet as one mapping.
    element: String,
    /// Its size per slice.
    bytes: u64,
    /// For a cut in Way4: `vector_pad_way8::<..>().` in front of the first pass's
    /// `vector_final()`, and `.vector_trim_way4::<..>()` after the second pass's branch.
    widen: String,
    narrow: String,
}

impl Intermediate {
    /// The intermediate of a cut in front of an op whose input is `input`; none when its type
    /// is not a Vector Engine scalar or its Time or Packet is not known and regular.
    fn of(cx: &FnContext<'_>, input: &TensorTy, cut: &Cut) -> Option<Intermediate> {
        let (Some(d), Some(time), Some(packet)) = (
            input.dtype,
            layout(Some(input), Slot::Time),
            layout(Some(input), Slot::Packet),
        ) else {
            return None;
        };
        if !d.is_ve_scalar() || !time.is_regular() || !packet.is_regular() {
            return None;
        }
        let text = |slot: Slot, l: &Layout| match input.get(slot) {
            Some(v) if v.text.trim_start().starts_with("m!") => v.text.trim().to_string(),
            _ => format!("m![{l}]"),
        };
        let n8 = cx.target.ve_way8_lanes;
        let time_txt = text(Slot::Time, time);
        // In Way4 the first pass widens back (`vector_pad_way8`) and the second narrows again.
        let (packet, packet_txt, widen, narrow) = match cut {
            Cut::Way8 => (
                packet.clone(),
                text(Slot::Packet, packet),
                String::new(),
                String::new(),
            ),
            Cut::Trimmed(p4) => {
                let p8 = with_pad(p4, n8)?;
                (
                    packet.window(n8),
                    p8.clone(),
                    format!("vector_pad_way8::<{p8}>()\n        ."),
                    format!("\n        .vector_trim_way4::<{p4}>()"),
                )
            }
        };
        let packet = &packet;
        let element = if time.size == 1 {
            packet_txt.clone()
        } else {
            match time.pair(packet) {
                Ok(l) => format!("m![{l}]"),
                Err(_) => return None,
            }
        };
        let bytes = time
            .size
            .checked_mul(packet.size)
            .and_then(|n| n.checked_mul(4))?;
        Some(Intermediate {
            d,
            time_txt,
            packet_txt,
            element,
            bytes,
            widen,
            narrow,
        })
    }
}

/// How the fix binds the two passes.
struct Binding {
    /// Written in front of the chain: the first pass's `let` (and the block's opening brace).
    first: Option<String>,
    /// The second pass's `let`, when it takes over the chain's binding.
    second_let: String,
    /// The name the second pass begins from.
    source: String,
    /// A block closes after the chain.
    close: bool,
}

impl Binding {
    /// `let out = ..` continues as `let out = ctx.main.begin(out.view())..` (shadowing); a
    /// declared `let out: T = ..` keeps its type on the second pass by wrapping both in a
    /// block; a plain statement binds the first pass to a new name.
    fn of(cx: &FnContext<'_>, chain: &Chain) -> Binding {
        let names: Vec<&str> = cx.model.tensors.iter().map(|t| t.name.as_str()).collect();
        let mut tmp = "pass1".to_string();
        while names.contains(&tmp.as_str()) {
            tmp.push('_');
        }
        let (first, second_let, source, close) = match (&chain.binding, &chain.declared) {
            (Some(b), None) => (None, format!("let {b} = "), b.clone(), false),
            (Some(_), Some(_)) => (
                Some(format!("{{\n        let {tmp} = ")),
                String::new(),
                tmp,
                true,
            ),
            (None, _) => (Some(format!("let {tmp} = ")), String::new(), tmp, false),
        };
        Binding {
            first,
            second_let,
            source,
            close,
        }
    }
}

/// The fix's edits: the first pass bound, ended in front of `step` and committed to `addr`,
/// and the second pass begun from the intermediate.
fn edits(
    cx: &FnContext<'_>,
    chain: &Chain,
    step: &Step,
    mid: &Intermediate,
    addr: u64,
) -> Vec<Edit> {
    let Binding {
        first,
        second_let,
        source,
        close,
    } = Binding::of(cx, chain);
    let Intermediate {
        d,
        time_txt,
        packet_txt,
        element,
        widen,
        narrow,
        ..
    } = mid;
    let mut edits = Vec::new();
    if let Some(open) = first {
        let s = chain.span.start as usize;
        edits.push(Edit {
            span: Span::new(s, s),
            new_text: open,
        });
    }
    if close {
        let e = chain.span.end as usize;
        edits.push(Edit {
            span: Span::new(e, e),
            new_text: "\n    }".to_string(),
        });
    }
    edits.push(Edit {
        span: Span::new(step.span.start as usize, step.span.start as usize),
        new_text: format!(
            "{widen}vector_final()\n        .commit::<{element}>({addr:#x});\n    {second_let}ctx\n        \
             .main\n        .begin({source}.view())\n        .fetch::<{d}, {time_txt}, \
             {packet_txt}>()\n        .collect::<{time_txt}, {packet_txt}>()\n        \
             .vector_init()\n        .vector_intra_slice_branch(BranchMode::Unconditional){narrow}\n        ."
        ),
    });
    edits.sort_by_key(|e| e.span);
    edits
}

/// DM byte ranges `[start, end)` the function's tensors with a known address occupy.
fn dm_ranges(cx: &FnContext<'_>) -> Vec<(u64, u64)> {
    let footprint = |ty: &TensorTy| -> Option<u64> {
        if !matches!(ty.kind, Kind::Dm | Kind::DmView | Kind::DmViewMut) {
            return None;
        }
        let bits = ty.dtype?.bits();
        let n = layout(Some(ty), Slot::Element)?.size;
        n.checked_mul(u64::from(bits))?
            .checked_add(7)
            .map(|b| b / 8)
    };
    let mut used = Vec::new();
    for t in &cx.model.tensors {
        if let (Some(a), Some(b)) = (t.address, footprint(&t.ty)) {
            used.push((a, a.saturating_add(b)));
        }
    }
    for chain in &cx.model.chains {
        for s in &chain.steps {
            if let (Some(a), Some(b)) = (s.address, s.output.as_ref().and_then(footprint)) {
                used.push((a, a.saturating_add(b)));
            }
        }
    }
    used.sort_unstable();
    used.dedup();
    used
}

/// The first 8-byte-aligned address after every known DM tensor (or, when that does not fit
/// the slice, the first gap) where `bytes` fit.
fn free_dm_address(cx: &FnContext<'_>, bytes: u64) -> Option<u64> {
    let align = cx.target.dma_dm_align_bytes.max(1);
    let cap = cx.target.dm_bytes_per_slice;
    let up = |x: u64| x.checked_add(align - 1).map(|v| v / align * align);
    let used = dm_ranges(cx);
    let fits = |a: u64| {
        a.checked_add(bytes)
            .is_some_and(|e| e <= cap && used.iter().all(|&(s, t)| e <= s || a >= t))
    };
    let top = used.iter().map(|r| r.1).max().unwrap_or(0);
    if let Some(a) = up(top)
        && fits(a)
    {
        return Some(a);
    }
    let mut at = 0u64;
    for &(s, e) in &used {
        if fits(at) && at < s {
            return Some(at);
        }
        at = at.max(up(e)?);
    }
    fits(at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn l5260_alu_conflict_split_fix_commits_past_the_output() {
        // L5260-L5269: AddFxp, MulInt, SubFxp; the split ends the pass before SubFxp. The final
        // output is committed at 0x1000 (32 bytes), so the intermediate goes to 0x1020.
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
                    fn kernel(ctx: &mut Context, a: &DmTensor<i32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
                    let out = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().vector_init()\
                    .vector_intra_slice_branch(BranchMode::Unconditional)\
                    .vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2)\
                    .vector_fxp(FxpBinaryOp::SubFxp, 5)\
                    .vector_final().commit::<m![A % 8]>(0x1000);\n}\n";
        let diags = crate::check_text(text);
        let d = diags.iter().find(|d| d.code() == "VEC-015");
        let d = d.unwrap_or_else(|| panic!("{diags:?}"));
        // At the call the split cuts in front of; the conflicting op argument is related.
        assert_eq!(&text[d.span.range()], "vector_fxp");
        assert_eq!(
            d.related
                .iter()
                .map(|r| &text[r.span.range()])
                .collect::<Vec<_>>(),
            ["FxpBinaryOp::SubFxp"]
        );
        assert!(d.message.contains("32 bytes per slice"), "{}", d.message);
        let edits = &d.fixes[0].edits;
        assert_eq!(edits.len(), 1);
        let e = &edits[0];
        assert!(
            e.new_text
                .starts_with("vector_final()\n        .commit::<m![A % 8]>(0x1020);"),
            "{}",
            e.new_text
        );
        assert!(e.new_text.contains("let out = ctx"), "{}", e.new_text);
        assert!(e.new_text.contains(".begin(out.view())"), "{}", e.new_text);
    }

    #[test]
    fn free_dm_address_skips_used_ranges() {
        // Two tensors at 0 (32 B) and 0x1000 (32 B): the next free 8-byte-aligned is 0x1020;
        // nothing larger than the rest of the 512 KB slice fits.
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
                    fn kernel(ctx: &mut Context, a: &DmTensor<i32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
                    let b = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().commit::<m![A % 8]>(0);\n\
                    let c = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().commit::<m![A % 8]>(0x1000);\n}\n";
        let a = crate::db::analyse_text(text);
        let Some((_, f)) = a.fns.first() else {
            panic!("no function");
        };
        let scope = crate::mapping::Scope::default();
        let cx = FnContext::new(&f.model, &scope, &crate::target::RNGD);
        assert_eq!(dm_ranges(&cx), vec![(0, 32), (0x1000, 0x1020)]);
        assert_eq!(free_dm_address(&cx, 64), Some(0x1020));
        assert_eq!(free_dm_address(&cx, 512 * 1024 - 0x1020), Some(0x1020));
        assert_eq!(free_dm_address(&cx, 512 * 1024 - 0x1020 + 8), None);
        assert_eq!(free_dm_address(&cx, 512 * 1024), None);
        assert_eq!(free_dm_address(&cx, u64::MAX), None);
    }
}

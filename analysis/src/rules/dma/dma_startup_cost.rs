//! DMA-009: each DMA command costs about 500 cycles to start, so two back-to-back small
//! transfers whose sources and destinations are adjacent are better done as one.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Dtype, Kind, Slot, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const DMA_009: Rule = Rule {
    code: "DMA-009",
    name: "dma-startup-cost",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Each DMA command costs about 500 cycles to start: merge small adjacent transfers",
    docs: "Each DMA operation incurs about 500 cycles of startup before data moves (seed 000 \
           L113, L212, L473), so a transfer whose data takes fewer cycles than that is mostly \
           overhead. visa-lint reports consecutive `to_dm` / `to_hbm` transfers of tensors of the \
           same type whose sources and destinations both lie back to back at constant addresses \
           (the second source starts where the first ends, and so does the second destination, \
           per slice for DM), each moving fewer bytes than the DMA moves during the startup \
           (256 B/cycle): one transfer of the pair, with an outer axis of 2, moves the same data \
           with one startup. Transfers whose source is a kernel parameter have no address and \
           are not compared.",
    bad: "let r0 = s0.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 0x4000);\nlet r1 = s1.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 0x4040); // s1 follows s0 in HBM",
    good: "let r = s.to_dm::<m![1 # 2], m![S], m![X, B]>(&mut ctx.tdma, 0x4000); // X = 2: both halves",
    manual: "seed 000 L113, L212, L473",
    generations: Generations::VisaStdOnly(
        "it compares transfers at constant addresses, and furiosa-opt-std 0.6 has no addresses \
         (CHANGES.md:26-32)",
    ),
};

/// A DMA transfer straight from a tensor with a constant address to a constant address.
struct Transfer<'a> {
    step: &'a Step,
    src_name: &'a str,
    src: u64,
    dst: u64,
    /// Bytes one source / destination occupies from its address (per slice for DM).
    src_bytes: u64,
    dst_bytes: u64,
    /// Bytes the transfer moves (the HBM side's Element).
    moved: u64,
}

/// The written type of a tensor as text, to compare two transfers' types.
fn type_key(t: &TensorTy) -> String {
    let mut k = format!("{:?}/{}", t.kind, t.dtype.map_or("?", Dtype::as_str));
    for (slot, mv) in &t.maps {
        k.push_str(&format!("/{slot:?}={}", mv.text));
    }
    k
}

/// The bytes of a tensor type's Element, when its dtype and size are known.
fn element_bytes(t: &TensorTy) -> Option<u64> {
    let d = t.dtype?;
    let n = t.get(Slot::Element)?.layout.as_deref()?.size;
    d.size_bytes(n)
}

/// A DMA chain that moves a tensor with a constant address to a constant address, with the key
/// (its method and both types) that two transfers to merge share.
fn transfer<'a>(cx: &FnContext<'a>, chain: &'a Chain) -> Option<(Transfer<'a>, String)> {
    let (Some(step), Some(recv)) = (chain.steps.first(), chain.receiver.as_deref()) else {
        return None;
    };
    if !step.method.is_dm_hbm_dma() {
        return None;
    }
    let (Some(i), Some(o), Some(dst)) = (&step.input, &step.output, step.address) else {
        return None;
    };
    let var = cx.model.tensors.iter().rev().find(|t| {
        t.name == recv && t.span.start < chain.span.start && type_key(&t.ty) == type_key(i)
    })?;
    let src = var.address?;
    let (Some(src_bytes), Some(dst_bytes)) = (element_bytes(i), element_bytes(o)) else {
        return None;
    };
    let hbm = |t: &TensorTy| matches!(t.kind, Kind::Hbm | Kind::HbmView);
    let moved = if hbm(i) {
        src_bytes
    } else if hbm(o) {
        dst_bytes
    } else {
        return None;
    };
    let key = format!("{}|{}|{}", step.method, type_key(i), type_key(o));
    Some((
        Transfer {
            step,
            src_name: &var.name,
            src,
            dst,
            src_bytes,
            dst_bytes,
            moved,
        },
        key,
    ))
}

/// DMA-009: back-to-back small transfers that one transfer would do with one startup.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let transfers: Vec<(Transfer<'_>, String)> = cx
        .model
        .chains
        .iter()
        .filter_map(|chain| transfer(cx, chain))
        .collect();
    let startup = cx.target.dma_startup_cycles;
    let bw = cx.target.dma_dm_bytes_per_cycle.max(1);
    for w in transfers.windows(2) {
        let ((a, ka), (b, kb)) = (&w[0], &w[1]);
        if ka != kb || a.step.span.start >= b.step.span.start {
            continue;
        }
        let cycles = a.moved.div_ceil(bw);
        if cycles >= startup {
            continue;
        }
        if a.src.checked_add(a.src_bytes) != Some(b.src)
            || a.dst.checked_add(a.dst_bytes) != Some(b.dst)
        {
            continue;
        }
        out.push(report(a, b, startup, cycles, bw));
    }
}

/// DMA-009 on the transfer `b`, which continues `a`; each moves its bytes in `cycles` at `bw`
/// bytes per cycle, less than the `startup`.
fn report(a: &Transfer<'_>, b: &Transfer<'_>, startup: u64, cycles: u64, bw: u64) -> Diagnostic {
    Diagnostic::new(
        &DMA_009,
        b.step.span,
        format!(
            "this `{m}` continues the previous one: `{bn}` at {bs:#x} follows `{an}` \
             ({asz} bytes from {as_:#x}) and the destination {bd:#x} follows {ad:#x} + {dsz} \
             bytes; each DMA command costs ~{startup} cycles to start while each moves {mv} \
             bytes in ~{cycles} cycles at {bw} B/cycle: one transfer of both (an outer axis \
             of 2) saves ~{startup} cycles",
            m = b.step.method,
            bn = b.src_name,
            bs = b.src,
            an = a.src_name,
            asz = a.src_bytes,
            as_ = a.src,
            bd = b.dst,
            ad = a.dst,
            dsz = a.dst_bytes,
            mv = a.moved,
        ),
    )
    .with_related(a.step.span, "the previous transfer")
}

#[cfg(test)]
mod tests {
    fn reload(b: u64, s1: u64, d1: u64) -> Vec<String> {
        let src = format!(
            "use furiosa_visa_std::prelude::*;\naxes![S = 256, B = {b}];\n#[device(chip = 1)]\n\
             fn k(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![S], m![B]>,\n\
             b: &DmTensor<i8, m![1], m![1 # 2], m![S], m![B]>) {{\n\
             let s0: HbmTensor<i8, m![1], m![S, B]> = a.to_hbm(&mut ctx.tdma, 0);\n\
             let s1: HbmTensor<i8, m![1], m![S, B]> = b.to_hbm(&mut ctx.tdma, {s1});\n\
             let r0 = s0.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, 65536);\n\
             let r1 = s1.to_dm::<m![1 # 2], m![S], m![B]>(&mut ctx.tdma, {d1});\n}}\n"
        );
        crate::db::analyse_text(&src)
            .diagnostics()
            .iter()
            .filter(|d| d.code() == "DMA-009")
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn adjacent_small_transfers_merge() {
        // seed 000 L113: ~500 cycles per DMA operation; 16 KB at 256 B/cycle is 64 cycles.
        let d = reload(64, 16384, 65536 + 64);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("16384 bytes in ~64 cycles"), "{}", d[0]);
        assert!(d[0].contains("~500 cycles to start"), "{}", d[0]);
        // Not adjacent in HBM, or in DM: nothing to merge.
        assert!(reload(64, 16384 + 256, 65536 + 64).is_empty());
        assert!(reload(64, 16384, 65536 + 128).is_empty());
        // 256 KB take 1024 cycles, more than the startup: not reported.
        assert!(reload(1024, 262144, 65536 + 1024).is_empty());
    }
}

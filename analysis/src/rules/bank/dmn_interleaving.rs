//! BNK-006: a DM tensor moved by DMA whose data sits in one DMN (a group of slices) cannot
//! alternate DMNs, and loses half the DMA bandwidth.

use crate::derive;
use crate::derive::timeline::{Resource, Timeline};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::{Dtype, Kind, Method, Slot, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const BNK_006: Rule = Rule {
    code: "BNK-006",
    name: "dmn-interleaving",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "DMA into or out of DM should spread over DMNs and their slices",
    docs: "One DMN moves 128 B/cycle; a 256-byte DMA unit needs two DMNs interleaved for full \
           bandwidth (L2857, L2883-L2892), and each slice queues only two DMA requests \
           (L2858, L2935). A DM tensor whose Slice mapping puts all its data in one DMN's 32 \
           slices cannot be interleaved: its DMA runs at 128 instead of 256 B/cycle (50% \
           loss). visa-lint checks the Slice mapping of every `to_dm` destination and `to_hbm` \
           source. The DMA's own access order (strides, HBM channels) is DMA-011.",
    bad: "axes![A = 32, B = 2048]; let x = x.to_dm::<m![1 # 2], m![A # 256], m![B]>(&mut ctx.tdma, 0); // f32, 256 KiB in DMN 0",
    good: "axes![A = 256, B = 256]; let x = x.to_dm::<m![1 # 2], m![A], m![B]>(&mut ctx.tdma, 0); // all 8 DMNs",
    manual: "L2857-L2858, L2883-L2895, L2935",
    generations: Generations::Both,
};

/// BNK-006 reports DMA transfers of at least this many bytes (below, the loss is noise).
const MIN_DMA_BYTES: u64 = 64 * 1024;

/// BNK-006: DM tensors moved by DMA whose data sits in one DMN.
pub(super) fn check(cx: &FnContext<'_>, t: &Timeline<'_>, out: &mut Vec<Diagnostic>) {
    let per = cx.target.slices_per_dmn;
    if per == 0 {
        return;
    }
    for node in &t.nodes {
        if node.resource != Some(Resource::Dma) {
            continue;
        }
        for step in &node.chain.steps {
            if let Some(d) = check_step(cx, step, per) {
                out.push(d);
            }
        }
    }
}

/// BNK-006 on the DMA `step`, with `per` slices to a DMN.
fn check_step(cx: &FnContext<'_>, step: &Step, per: u64) -> Option<Diagnostic> {
    let ty = match step.method {
        Method::ToDm => step.output.as_ref(),
        Method::ToHbm => step.input.as_ref(),
        _ => None,
    };
    let ty = ty.filter(|t| t.kind == Kind::Dm)?;
    let mv = ty.get(Slot::Slice)?;
    let layout = mv.layout.as_deref()?;
    let cluster = cx.cluster_slices(layout.size);
    if layout.size != cluster {
        return None;
    }
    let (dmns, slices) = dmns_with_data(&layout.dims, layout.size, per)?;
    if dmns.len() != 1 || cluster / per < 2 {
        return None;
    }
    // Only where the bandwidth matters: the DMA moves at least MIN_DMA_BYTES.
    let total = ty
        .dtype
        .map(Dtype::bits)
        .zip(ty.get(Slot::Element).and_then(|m| m.layout.as_deref()))
        .map(|(bits, l)| derive::bytes(l.size, bits).saturating_mul(slices));
    let total = total.filter(|&b| b >= MIN_DMA_BYTES)?;
    let lost = (total / cx.target.dmn_bytes_per_cycle.max(1))
        .saturating_sub(total / cx.target.dma_dm_bytes_per_cycle.max(1));
    let k = dmns[0];
    Some(
        Diagnostic::new(
            &BNK_006,
            mv.span.unwrap_or(step.span),
            format!(
                "the Slice mapping {} puts all {total} bytes in DMN {k} (slices {}..{}), so \
             this DMA `{}` cannot alternate DMNs: {} B/cycle instead of {} (50% \
             bandwidth loss, about {lost} extra cycles); spread the data over slices of \
             several DMNs",
                mv.text,
                k * per,
                (k + 1) * per - 1,
                step.method,
                cx.target.dmn_bytes_per_cycle,
                cx.target.dma_dm_bytes_per_cycle
            ),
        )
        .with_related(step.span, "the DMA"),
    )
}

/// The DMNs (groups of `per` slices) that hold data of a Slice layout, or `None` when the
/// layout is irregular or too large to walk.
fn dmns_with_data(dims: &[Dim], size: u64, per: u64) -> Option<(Vec<u64>, u64)> {
    if size > 65_536 {
        return None;
    }
    let mut extents = Vec::new();
    for d in dims {
        match d {
            Dim::Factor(f) => extents.push((f.extent, f.valid)),
            Dim::Opaque(_) => return None,
        }
    }
    let mut out: Vec<u64> = Vec::new();
    let mut count = 0;
    for s in 0..size {
        let mut rest = s;
        let mut data = true;
        for &(ext, valid) in extents.iter().rev() {
            if ext == 0 {
                return None;
            }
            if rest % ext >= valid {
                data = false;
            }
            rest /= ext;
        }
        let k = s / per;
        count += u64::from(data);
        if data && !out.contains(&k) {
            out.push(k);
        }
    }
    Some((out, count))
}

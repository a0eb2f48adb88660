//! DMA-003: an HBM-to-DM transfer reads HBM from an 8-byte-aligned address, so the HBM tensor a
//! `to_dm` reads must not be placed at a constant address that is not.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Method};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const DMA_003: Rule = Rule {
    code: "DMA-003",
    name: "dma-hbm-read-alignment",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An HBM-to-DM transfer reads HBM from an 8-byte-aligned address",
    docs: "HBM-to-DM transfers need 8-byte alignment of the read address, the write address and \
           the packet size whatever the alignment table says. The DM write address is ALN-002, \
           the packet ALN-003, the 4,096-byte limit ALN-004; DMA-003 reports the HBM read \
           address when it is a constant: the source tensor was placed by \
           `to_hbm(&mut ctx.pdma, addr)` in the same function at an address that is not a \
           multiple of 8. Place the HBM tensor at a multiple of 8 (256 for throughput).",
    bad: "let h = host.to_hbm(&mut ctx.pdma, 0x1004).await; let d = h.to_dm::<..>(&mut ctx.tdma, 0);",
    good: "let h = host.to_hbm(&mut ctx.pdma, 0x1000).await; let d = h.to_dm::<..>(&mut ctx.tdma, 0);",
    manual: "L2425-L2427, L2834",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 places HBM tensors itself and takes no address (CHANGES.md:26-32), so \
         there is no HBM address to check",
    ),
};

/// DMA-003: the HBM source of `to_dm` was placed at a constant address that is not 8-aligned.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let a = cx.target.dma_dm_align_bytes;
    // The placed HBM tensors by type, once (a lookup per DMA, not a scan of every tensor): a
    // DMA's source is known when exactly one placed HBM tensor has its type.
    let mut placed: std::collections::HashMap<
        &crate::model::TensorTy,
        (&crate::model::TensorVar, usize),
    > = std::collections::HashMap::new();
    for t in &cx.model.tensors {
        if matches!(t.ty.kind, Kind::Hbm) && t.address.is_some() {
            placed.entry(&t.ty).or_insert((t, 0)).1 += 1;
        }
    }
    for chain in &cx.model.chains {
        for (k, step) in chain.steps.iter().enumerate() {
            if step.method != Method::ToDm {
                continue;
            }
            let Some(i) = step.input.as_ref() else {
                continue;
            };
            // The tensor the chain starts from, by its name, when one placed tensor has it;
            // else the one placed tensor of the source's type.
            let named = (k == 0)
                .then_some(chain.receiver.as_deref())
                .flatten()
                .and_then(|name| source_named(cx, name, i));
            let Some(t) = named.or_else(|| match placed.get(i) {
                Some(&(t, 1)) => Some(t),
                _ => None,
            }) else {
                continue;
            };
            let Some(addr) = t.address else { continue };
            if addr.is_multiple_of(a) {
                continue;
            }
            out.push(
                Diagnostic::new(
                    &DMA_003,
                    step.span,
                    format!(
                        "HBM-to-DM transfers read HBM from {a}-byte-aligned addresses; `{}` was \
                         placed at {addr}, {} bytes past a multiple of {a}",
                        t.name,
                        addr % a
                    ),
                )
                .with_related(t.span, format!("`{}` is placed here", t.name)),
            );
        }
    }
}

/// The one placed HBM tensor called `name` with the type `ty`, if exactly one is.
fn source_named<'m>(
    cx: &FnContext<'m>,
    name: &str,
    ty: &crate::model::TensorTy,
) -> Option<&'m crate::model::TensorVar> {
    let mut found = cx
        .model
        .tensors
        .iter()
        .filter(|t| t.name == name && &t.ty == ty && t.address.is_some());
    let t = found.next()?;
    found.next().is_none().then_some(t)
}

//! ALN-002's second half: an HBM-to-DM transfer reads HBM from an 8-byte-aligned address, so
//! the HBM tensor a `to_dm` reads must not be placed at a constant address that is not (the
//! catalog's source-level check: "the HBM source address % 8 == 0, from the earlier
//! `to_hbm(&mut ctx.pdma, HBM_ADDR)` / `from_addr`").

use super::ALN_002;
use crate::diagnostic::Diagnostic;
use crate::model::{Kind, Method};
use crate::rules::context::FnContext;

/// ALN-002: the HBM source of `to_dm` was placed at a constant address that is not 8-aligned.
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
            // (one placed before the transfer: a tensor placed after it is not what it reads).
            let Some(t) = named.or_else(|| match placed.get(i) {
                Some(&(t, 1)) if t.span.start < step.span.start => Some(t),
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
                    &ALN_002,
                    step.span,
                    format!(
                        "HBM-to-DM transfers read HBM from {a}-byte-aligned addresses; `{}` was \
                         placed at {addr:#x}, {} bytes past a multiple of {a}",
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

//! ALN-002's second half: an HBM-to-DM transfer reads HBM from an 8-byte-aligned address, so
//! the HBM tensor a `to_dm` reads must not be placed at a constant address that is not (the
//! catalog's source-level check: "the HBM source address % 8 == 0, from the earlier
//! `to_hbm(&mut ctx.pdma, HBM_ADDR)` / `from_addr`").

use super::ALN_002;
use crate::diagnostic::Diagnostic;
use crate::model::types::Slot;
use crate::model::{Kind, Method, TensorTy, TensorVar};
use crate::rules::context::FnContext;
use std::collections::HashMap;

/// ALN-002: the HBM source of `to_dm` was placed at a constant address that is not 8-aligned
/// (directly, or through the views and tiles of it the transfer reads).
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let a = cx.target.dma_dm_align_bytes;
    // The placed HBM tensors by type, once (a lookup per DMA, not a scan of every tensor): a
    // DMA's source is known when exactly one placed HBM tensor has its type.
    let mut placed: HashMap<&TensorTy, (&TensorVar, usize)> = HashMap::new();
    for t in &cx.model.tensors {
        if matches!(t.ty.kind, Kind::Hbm) && is_placed(t) {
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
            // The tensor the chain starts from, through its views and tiles; else the one
            // placed tensor of the source's type, placed before the transfer (a tensor placed
            // after it is not what it reads).
            let read = read_through_views(cx, chain, k, 0).or_else(|| match placed.get(i) {
                Some(&(t, 1)) if t.span.start < step.span.start => Some(Read {
                    tensor: t,
                    past: Offset::default(),
                }),
                _ => None,
            });
            if let Some(d) = read.and_then(|r| misaligned(&r, step, a)) {
                out.push(d);
            }
        }
    }
}

/// Where a transfer reads HBM: the placed tensor, and how far past its address.
struct Read<'m> {
    tensor: &'m TensorVar,
    past: Offset,
}

/// Bytes past a tensor's address: `bytes`, plus a multiple of `stride` when a tile's start is
/// not known (the gcd of those tiles' strides).
#[derive(Clone, Copy, Default)]
struct Offset {
    bytes: u64,
    stride: Option<u64>,
}

impl Offset {
    fn add(self, other: Offset) -> Option<Offset> {
        let stride = match (self.stride, other.stride) {
            (Some(x), Some(y)) => Some(crate::mapping::layout::gcd(x, y)),
            (x, y) => x.or(y),
        };
        Some(Offset {
            bytes: self.bytes.checked_add(other.bytes)?,
            stride,
        })
    }
}

/// ALN-002 on `step` reading `r`, when every address it may read from is `a`-misaligned by
/// the same amount (a tile start that is not known moves it by a multiple of `a`).
fn misaligned(r: &Read<'_>, step: &crate::model::Step, a: u64) -> Option<Diagnostic> {
    let (past_multiple, placed) = placed_at(r.tensor, a)?;
    let from = past_multiple.checked_add(r.past.bytes)? % a;
    if from == 0 || r.past.stride.is_some_and(|s| !s.is_multiple_of(a)) {
        return None;
    }
    let name = &r.tensor.name;
    let read = match (r.past.bytes, r.past.stride) {
        (0, None) => String::new(),
        (b, None) => match r.tensor.address {
            Some(base) => format!(
                ", and the tile read here starts {b} bytes past it, at {:#x}",
                base.saturating_add(b)
            ),
            None => format!(", and the tile read here starts {b} bytes past it"),
        },
        (0, Some(s)) => format!(
            ", and the tile read here starts a multiple of {s} bytes past it, whichever it is"
        ),
        (b, Some(s)) => format!(
            ", and the tile read here starts {b} bytes plus a multiple of {s} past it, whichever it is"
        ),
    };
    let d = Diagnostic::new(
        &ALN_002,
        step.span,
        format!(
            "HBM-to-DM transfers read HBM from {a}-byte-aligned addresses; `{name}` was placed \
             {placed}{read}: {from} bytes past a multiple of {a}"
        ),
    )
    .with_related(r.tensor.span, format!("`{name}` is placed here"));
    Some(d)
}

/// How far past a multiple of `a` the tensor `t` was placed, and where, as a message says it:
/// at its address, or where only the address's low bits are known, at any address that
/// many bytes past a multiple of a power of two (`4 bytes past a multiple of 4096`).
fn placed_at(t: &TensorVar, a: u64) -> Option<(u64, String)> {
    match (t.address, t.address_low) {
        (Some(base), _) => Some((base % a, format!("at {base:#x}"))),
        (None, Some(low)) => Some((
            low.past_multiple_of(a)?,
            format!(
                "{} bytes past a multiple of {}, whichever address it is",
                low.value,
                low.modulus()
            ),
        )),
        (None, None) => None,
    }
}

/// Whether where `t` was placed is known, in full or in its low bits.
fn is_placed(t: &TensorVar) -> bool {
    t.address.is_some() || t.address_low.is_some()
}

/// How many view variables deep a transfer's source is followed (`let v = x.view(); let t =
/// v.tile::<..>(i); t.to_dm(..)`).
const MAX_VIEW_DEPTH: u32 = 4;

/// The placed HBM tensor the first `k` steps of `chain` read through views and tiles (`xs
/// .view().tile::<m![S], 1, ..>(step)`), and how far past its address: from the chain's
/// receiver, or from the chain that binds the view variable it starts from.
fn read_through_views<'m>(
    cx: &FnContext<'m>,
    chain: &'m crate::model::Chain,
    k: usize,
    depth: u32,
) -> Option<Read<'m>> {
    let views = chain.steps.get(..k)?;
    let is_view = |m: &Method| matches!(m, Method::View | Method::ViewMut | Method::Tile);
    if depth > MAX_VIEW_DEPTH || !views.iter().all(|s| is_view(&s.method)) {
        return None;
    }
    let mut past = Offset::default();
    for tile in views.iter().filter(|s| s.method == Method::Tile) {
        past = past.add(tile_offset(cx, tile)?)?;
    }
    let name = chain.receiver.as_deref()?;
    let first = chain.steps.first()?.input.as_ref()?;
    if let Some(tensor) = source_named(cx, chain, name, first) {
        return Some(Read { tensor, past });
    }
    // A view variable: the chain before this one that binds it, all views and tiles.
    let bound = cx
        .model
        .chains
        .iter()
        .rfind(|c| c.span.end <= chain.span.start && c.binding.as_deref() == Some(name))?;
    let earlier = read_through_views(cx, bound, bound.steps.len(), depth + 1)?;
    Some(Read {
        tensor: earlier.tensor,
        past: earlier.past.add(past)?,
    })
}

/// How far past its input's first byte `.tile::<Dim, N, _>(start)` starts: `start` positions
/// of `Dim` in the input's Element layout, or a multiple of one position's bytes when `start`
/// is not known.
fn tile_offset(cx: &FnContext<'_>, tile: &crate::model::Step) -> Option<Offset> {
    let [dim, _, _] = tile.generics.as_slice() else {
        return None;
    };
    let input = tile.input.as_ref()?;
    let element = input.maps.get(&Slot::Element)?.layout.as_deref()?;
    let written = crate::model::written_mapping(cx.scope, dim).unwrap_or_else(|| dim.text.clone());
    let dim = crate::mapping::lower::layout_of(&written, cx.scope)?;
    let bytes_at = |start: u64| -> Option<u64> {
        let index = dim.map(start)?;
        input.dtype?.size_bytes(element.position_of(&index)?)
    };
    match start_of(tile.args.first()?) {
        Some(start) => Some(Offset {
            bytes: bytes_at(start)?,
            stride: None,
        }),
        None => Some(Offset {
            bytes: 0,
            stride: Some(bytes_at(1)?).filter(|&s| s > 0),
        }),
    }
}

/// A tile's start when it is known: the value it names, or an integer written in place.
fn start_of(arg: &crate::model::Arg) -> Option<u64> {
    match &arg.value {
        Some(Ok(crate::model::value::Value::Int(n))) => Some(*n),
        Some(_) => None,
        None => {
            let t = arg.text.trim().replace('_', "");
            match t.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => t.parse().ok(),
            }
        }
    }
}

/// The placed HBM tensor called `name` with the type `ty` that `chain` reads: the one its own
/// loop iteration places before it, else the only one placed (a DM tensor's views moved by
/// `to_dm_view` are a DM-to-DM transfer, not an HBM read).
fn source_named<'m>(
    cx: &FnContext<'m>,
    chain: &crate::model::Chain,
    name: &str,
    ty: &TensorTy,
) -> Option<&'m TensorVar> {
    let placed =
        |t: &&TensorVar| t.name == name && &t.ty == ty && is_placed(t) && t.ty.kind == Kind::Hbm;
    // Placed in the same loop iteration as the transfer, before it (`let frame =
    // from_addr(frame_hbm(i))` in the loop's body): that iteration's tensor.
    let in_iteration = cx
        .model
        .tensors
        .iter()
        .filter(placed)
        .filter(|t| chain.iteration.is_some() && t.iteration == chain.iteration)
        .rfind(|t| t.span.start < chain.span.start);
    if in_iteration.is_some() {
        return in_iteration;
    }
    let mut found = cx.model.tensors.iter().filter(placed);
    let t = found.next()?;
    found.next().is_none().then_some(t)
}

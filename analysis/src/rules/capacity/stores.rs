//! The tensors stored in DM, TRF, VRF or HBM, which the capacity rules read: [`Store`], one
//! tensor with its per-unit footprint, derived once by [`stores`] from the calls that store a
//! tensor and from the memory tensors the function declares.

use crate::derive;
use crate::diagnostic::Span;
use crate::model::{Chain, Dtype, Kind, MapVal, Method, Origin, Slot, Step, TensorTy, TensorVar};
use crate::rules::context::FnContext;
use std::collections::HashSet;

/// A tensor stored in DM, TRF, VRF or HBM, with its per-unit footprint.
pub(super) struct Store<'a> {
    pub kind: Kind,
    pub dtype: Dtype,
    pub elements: u64,
    pub bytes: u64,
    /// The Element mapping as shown in messages (`None` when computed from the stream).
    pub element: Option<&'a MapVal>,
    pub at: Span,
    pub step: Option<&'a Step>,
    /// Loaded into `TrfAddress::FirstHalf` / `SecondHalf`.
    pub half: bool,
    /// Loaded from a `begin_interleaved` chain.
    pub interleaved: bool,
    /// A TRF tensor's Lane (the manual's Row) size, when known.
    pub lanes: Option<u64>,
    /// A DM tensor placed by hand (`DmTensor::from_addr(addr)`) at a known address, and
    /// where it is bound: no storing call holds its address.
    pub placed: Option<(u64, Span)>,
}

const STORING: &[Method] = &[
    Method::ToDm,
    Method::Commit,
    Method::CommitView,
    Method::ToTrf,
    Method::ToVrf,
    Method::ToHbm,
];

fn is_memory(k: Kind) -> bool {
    matches!(k, Kind::Dm | Kind::Trf | Kind::Vrf | Kind::Hbm)
}

/// Bytes of `n` elements of `dtype` (i4 is half a byte).
fn bytes_of(dtype: Dtype, n: u64) -> u64 {
    derive::bytes(n, dtype.memory_bits())
}

/// The `let` tensor a chain binds, when its annotation writes `slot`.
fn binding_map<'a>(
    cx: &FnContext<'a>,
    chain: &Chain,
    slot: Slot,
) -> Option<(&'a TensorTy, &'a MapVal)> {
    let name = chain.binding.as_deref()?;
    let tv = cx
        .model
        .tensors
        .iter()
        .filter(|t| t.origin != Origin::Param && t.name == name && t.span.start <= chain.span.start)
        .max_by_key(|t| t.span.start)?;
    let m = tv.ty.get(slot)?;
    (m.span.is_some() && m.layout.is_some()).then_some((&tv.ty, m))
}

/// Every tensor the function stores in a memory: first those a storing call makes, then the
/// declared ones whose Element is written elsewhere than at such a call.
pub(super) fn stores<'a>(cx: &FnContext<'a>) -> Vec<Store<'a>> {
    let mut out: Vec<Store<'a>> = Vec::new();
    let mut seen: HashSet<Span> = HashSet::new();
    for chain in &cx.model.chains {
        let interleaved = chain
            .steps
            .first()
            .is_some_and(|s| s.method == Method::BeginInterleaved);
        for step in &chain.steps {
            if let Some(s) = stored(cx, chain, step, interleaved) {
                seen.insert(s.at);
                out.push(s);
            }
        }
    }
    for tv in &cx.model.tensors {
        if let Some(s) = declared(tv, &mut seen) {
            out.push(s);
        }
    }
    out
}

/// The tensor `step` of `chain` stores in a memory, if it is a storing call whose dtype and
/// size are known.
fn stored<'a>(
    cx: &FnContext<'a>,
    chain: &Chain,
    step: &'a Step,
    interleaved: bool,
) -> Option<Store<'a>> {
    let ty = step.output.as_ref()?;
    if !is_memory(ty.kind) || !STORING.contains(&step.method) {
        return None;
    }
    let own = ty.get(Slot::Element).filter(|m| m.layout.is_some());
    let (dtype, element) = match own {
        Some(m) if m.span.is_some() => (ty.dtype, Some(m)),
        _ => match binding_map(cx, chain, Slot::Element) {
            Some((t, m)) if t.kind == ty.kind => (ty.dtype.or(t.dtype), Some(m)),
            _ => (ty.dtype, own),
        },
    };
    let dtype = dtype?;
    let elements = match element.and_then(|m| m.layout.as_deref()) {
        Some(l) => l.size,
        // `to_vrf` stores the collected stream: Time × Packet per slice.
        None if step.method == Method::ToVrf => {
            let input = step.input.as_ref()?;
            match (slot_size(input, Slot::Time), slot_size(input, Slot::Packet)) {
                (Some(t), Some(p)) => t.saturating_mul(p),
                _ => return None,
            }
        }
        None => return None,
    };
    let bytes = bytes_of(dtype, elements);
    let at = element.and_then(|m| m.span).unwrap_or(step.span);
    Some(Store {
        kind: ty.kind,
        dtype,
        elements,
        bytes,
        element,
        at,
        step: Some(step),
        half: step.method == Method::ToTrf
            && step
                .args
                .first()
                .is_some_and(|a| a.value_text().contains("Half")),
        interleaved,
        lanes: slot_size(ty, Slot::Row),
        placed: None,
    })
}

/// A declared memory tensor `tv` whose Element is written at a place no stored tensor of
/// `seen` is.
fn declared<'a>(tv: &'a TensorVar, seen: &mut HashSet<Span>) -> Option<Store<'a>> {
    if !is_memory(tv.ty.kind) {
        return None;
    }
    let m = tv.ty.get(Slot::Element)?;
    let l = m.layout.as_deref()?;
    let dtype = tv.ty.dtype?;
    let bytes = bytes_of(dtype, l.size);
    // An unplaced Element was inferred from the chain that binds it (reported there).
    let at = m.span?;
    if !seen.insert(at) {
        return None;
    }
    Some(Store {
        kind: tv.ty.kind,
        dtype,
        elements: l.size,
        bytes,
        element: Some(m),
        at,
        step: None,
        half: false,
        interleaved: false,
        lanes: slot_size(&tv.ty, Slot::Row),
        // An HBM placement is checked where it is written (`hbm_capacity::check_placement`).
        placed: tv
            .address
            .filter(|_| tv.from_addr && tv.ty.kind == Kind::Dm)
            .map(|a| (a, tv.span)),
    })
}

/// The size of one slot of a tensor type, when its layout is known.
fn slot_size(ty: &TensorTy, slot: Slot) -> Option<u64> {
    ty.get(slot)?.layout.as_deref().map(|l| l.size)
}

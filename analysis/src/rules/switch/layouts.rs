//! The layout reading the switch rules share: the input's axes ([`axes_of`]), broadcast
//! placeholders ([`tile`]) and the form two outputs are compared in ([`tiled`]), splitting and
//! joining layouts, and rendering an expected output as a mapping to write ([`render`],
//! [`show`]).

use crate::mapping::Layout;
use crate::mapping::layout::{Axis, Dim, Factor};
use crate::model::{Slot, TensorTy};
use std::collections::BTreeSet;

/// The name of the broadcast placeholder axis (`tile` in the manual's tables).
pub(super) const TILE: &str = "~tile";

/// A broadcast placeholder of `n` slices.
pub(super) fn tile(n: u64) -> Layout {
    if n <= 1 {
        return Layout::identity();
    }
    Layout::symbol(Axis::new(TILE, n))
}

/// The layouts `parts`, outermost first, as one.
pub(super) fn cat(parts: &[&Layout]) -> Option<Layout> {
    let mut out = Layout::identity();
    for p in parts {
        out = out.pair(p).ok()?;
    }
    Some(out)
}

/// `[outer, middle, inner]` of `l` with `middle` of size `m` and `inner` of size `i`.
pub(super) fn split3(l: &Layout, m: u64, i: u64) -> Option<(Layout, Layout, Layout)> {
    let mi = m.checked_mul(i)?;
    if m == 0 || i == 0 || !l.size.is_multiple_of(mi) {
        return None;
    }
    Some((l.stride(mi), l.stride(i).window(m), l.window(i)))
}

/// Axis names used by plain factors of `l`; `None` when `l` has irregular digits.
pub(super) fn axes_of(l: &Layout) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for d in &l.dims {
        match d {
            Dim::Factor(f) => {
                if let Some(a) = &f.axis {
                    out.insert(a.name.to_string());
                }
            }
            Dim::Opaque(_) => return None,
        }
    }
    Some(out)
}

/// `l` with every factor of an axis outside `known` read as a broadcast, adjacent broadcasts
/// merged into one: the form two outputs are compared in.
pub(super) fn tiled(l: &Layout, known: &BTreeSet<String>) -> Option<Layout> {
    let mut dims: Vec<Dim> = Vec::new();
    for d in &l.dims {
        let fresh = match d {
            Dim::Factor(Factor { axis: Some(a), .. }) => {
                &*a.name == TILE || !known.contains(&*a.name)
            }
            _ => false,
        };
        if !fresh {
            dims.push(d.clone());
            continue;
        }
        let mut n = d.extent();
        if let Some(Dim::Factor(Factor { axis: Some(a), .. })) = dims.last()
            && &*a.name == TILE
        {
            n = n.checked_mul(a.size)?;
            dims.pop();
        }
        dims.extend(tile(n).dims);
    }
    Layout::from_dims(dims).ok()
}

/// The number of slices `d` broadcasts, when it is a broadcast placeholder.
fn tile_extent(d: &Dim) -> Option<u64> {
    match d {
        Dim::Factor(Factor {
            axis: Some(a),
            extent,
            ..
        }) if &*a.name == TILE => Some(*extent),
        _ => None,
    }
}

/// Renders `l` with each broadcast placeholder written as a term of padding of its own
/// (`m![A / 4, 1 # 4]`): the library reads a broadcast as positions that hold no input axis,
/// and a term of its own keeps them from merging into the next factor's padding.
fn render_padded(l: &Layout) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    let mut run: Vec<Dim> = Vec::new();
    let flush = |run: &mut Vec<Dim>, terms: &mut Vec<String>| -> Option<()> {
        if !run.is_empty() {
            terms.push(Layout::from_dims(std::mem::take(run)).ok()?.to_expr());
        }
        Some(())
    };
    for d in &l.dims {
        match tile_extent(d) {
            Some(extent) => {
                flush(&mut run, &mut terms)?;
                terms.push(format!("1 # {extent}"));
            }
            None => run.push(d.clone()),
        }
    }
    flush(&mut run, &mut terms)?;
    Some(format!("m![{}]", terms.join(", ")))
}

/// Renders `l`, naming its broadcast placeholders after the fresh axes written in `written`
/// (same sizes, same order), or as padding (`1 # 4`) when `written` has none; `None` when they
/// cannot be named.
pub(super) fn render(l: &Layout, written: &Layout, known: &BTreeSet<String>) -> Option<String> {
    let l = &merged(l);
    let fresh: Vec<Axis> = written
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor {
                axis: Some(a),
                extent,
                valid,
                coef: 1,
                ..
            }) if !known.contains(&*a.name) && extent == valid && a.size == *extent => {
                Some(a.clone())
            }
            _ => None,
        })
        .collect();
    if fresh.is_empty() {
        return render_padded(l);
    }
    let mut next = fresh.into_iter();
    let mut dims = Vec::new();
    for d in &l.dims {
        match tile_extent(d) {
            Some(extent) => {
                let name = next.next().filter(|f| f.size == extent)?;
                dims.extend(Layout::symbol(name).dims);
            }
            None => dims.push(d.clone()),
        }
    }
    if next.next().is_some() {
        return None;
    }
    Layout::from_dims(dims)
        .ok()
        .map(|l| format!("m![{}]", l.to_expr()))
}

/// `l` with adjacent broadcast placeholders merged into one.
fn merged(l: &Layout) -> Layout {
    let known: BTreeSet<String> = l
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name != TILE => {
                Some(a.name.to_string())
            }
            _ => None,
        })
        .collect();
    tiled(l, &known).unwrap_or_else(|| l.clone())
}

/// Renders `l` as a mapping, its broadcast placeholders named `X`.
pub(super) fn show(l: &Layout) -> String {
    let l = &merged(l);
    let named = Layout {
        size: l.size,
        dims: l
            .dims
            .iter()
            .map(|d| match d {
                Dim::Factor(f) if f.axis.as_ref().is_some_and(|a| &*a.name == TILE) => {
                    Dim::Factor(Factor {
                        axis: Some(Axis::new("X", f.extent)),
                        ..f.clone()
                    })
                }
                _ => d.clone(),
            })
            .collect(),
    };
    format!("m![{}]", named.to_expr())
}

/// The layout `ty` has in `slot`, when known.
pub(super) fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot)?.layout.as_deref()
}

/// The text `ty` is written with in `slot` (`?` when unknown).
pub(super) fn text(ty: &TensorTy, slot: Slot) -> String {
    ty.get(slot)
        .map_or_else(|| "?".to_string(), |m| m.text.clone())
}

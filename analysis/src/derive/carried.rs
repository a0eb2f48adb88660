//! The DM tensors a loop carries from one iteration into the next through an assignment
//! (`best = Some(keys.commit(best_addr(t)))` at the end of an iteration, read at the top of
//! the next through `match &best`), and the writes of the next iteration that land on one
//! before that iteration's last read of it; and the windows an iteration fills
//! (`commit_view(tiles[t].view_mut())`) that are read after the loop, and the writes of the
//! iterations after it that land on one. The timeline reads a loop's first pass, where
//! nothing is carried yet; this reads each iteration the model iterated after the one before.

use super::timeline::{Footprint, address_span, footprint, idents, step_footprint};
use crate::diagnostic::Span;
use crate::model::{FnModel, Kind, Origin, TensorVar};
use std::collections::HashMap;

/// A write of one iteration over the tensor the iteration before it assigned, which this one
/// still reads afterwards.
pub struct CarriedClash<'m> {
    /// The tensor as the iteration before assigned it, and its footprint.
    pub carried: &'m TensorVar,
    pub fp: Footprint,
    /// The labels of the iteration that assigned it and of the one that writes over it.
    pub from: &'m str,
    pub into: &'m str,
    /// The write: its footprint, where its address is written, and the tensor it binds.
    pub write: Footprint,
    pub at: Span,
    pub writer: Option<&'m str>,
    /// Where the carried tensor is read last, after the write, and the name it is read by
    /// (the variable's, or one a `match` or a loop over an array binds).
    pub read: Span,
    pub read_as: &'m str,
    /// How the loop carries it.
    pub how: Carry,
}

/// How a loop carries a tensor from one iteration into the ones after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carry {
    /// Assigned to a variable declared before the loop, and read by the next iteration.
    Assigned,
    /// A window placed before the loop, filled by one iteration's `commit_view` and read
    /// after the loop.
    Filled,
}

/// Every write over a carried tensor, iteration by iteration.
pub fn carried_clashes(model: &FnModel) -> Vec<CarriedClash<'_>> {
    let mut out = Vec::new();
    if !model
        .tensors
        .iter()
        .any(|t| t.origin == Origin::Assign && t.iteration.is_some())
    {
        return out;
    }
    for (k, it) in model.iterations.iter().enumerate() {
        let (Some(before), Ok(k)) = (it.previous, u32::try_from(k)) else {
            continue;
        };
        let Some(from) = model.iterations.get(before as usize) else {
            continue;
        };
        for carried in assigned_in(model, before) {
            let Some(fp) = carried.address.and_then(|a| footprint(&carried.ty, a)) else {
                continue;
            };
            let Some((read, read_as)) = last_read(model, carried, k) else {
                continue;
            };
            out.extend(
                writes_before(model, k, read.start)
                    .filter(|w| w.0.overlaps(fp))
                    .map(|(write, at, writer)| CarriedClash {
                        carried,
                        fp,
                        from: &from.label,
                        into: &it.label,
                        write,
                        at,
                        writer,
                        read,
                        read_as,
                        how: Carry::Assigned,
                    }),
            );
        }
    }
    out
}

/// The DM tensors iteration `it` leaves in variables declared before its loop: the last
/// assignment of each (a variable its body declares with a `let` is the body's own).
fn assigned_in(model: &FnModel, it: u32) -> Vec<&TensorVar> {
    let mut last: HashMap<&str, &TensorVar> = HashMap::new();
    for t in model
        .tensors
        .iter()
        .filter(|t| t.iteration == Some(it) && t.origin == Origin::Assign && t.ty.kind == Kind::Dm)
    {
        let declared_in_body = model.tensors.iter().any(|l| {
            l.iteration == Some(it)
                && l.origin == Origin::Let
                && l.name == t.name
                && l.span.start < t.span.start
        });
        if !declared_in_body {
            last.insert(&t.name, t);
        }
    }
    let mut out: Vec<&TensorVar> = last.into_values().collect();
    out.sort_by_key(|t| t.span.start);
    out
}

/// Where iteration `it` reads what `carried` holds last, before it assigns the variable
/// again: the variable by name, or a name a `match` on it binds (`prev` of `Some(prev)`), in
/// a chain or an argument of a helper call. A name the iteration binds with a `let` first is
/// another tensor.
fn last_read<'m>(model: &'m FnModel, carried: &'m TensorVar, it: u32) -> Option<(Span, &'m str)> {
    let until = model
        .tensors
        .iter()
        .filter(|t| t.iteration == Some(it) && t.origin == Origin::Assign)
        .filter(|t| t.name == carried.name)
        .map(|t| t.span.start)
        .min()
        .unwrap_or(carried.span.start);
    let mut names: Vec<&str> = vec![carried.name.as_str()];
    names.extend(
        model
            .aliases
            .iter()
            .filter(|a| a.iteration == Some(it) && a.of == carried.name && a.at.start < until)
            .map(|a| a.name.as_str()),
    );
    let rebound = |name: &str, at: u32| {
        name == carried.name
            && model.tensors.iter().any(|t| {
                t.iteration == Some(it)
                    && t.origin == Origin::Let
                    && t.name == name
                    && t.span.start < at
            })
    };
    let read_name = |text: &str, at: Span| {
        idents(text)
            .find(|id| names.contains(id) && !rebound(id, at.start))
            .and_then(|id| names.iter().copied().find(|n| *n == id))
    };
    let mut reads: Vec<(Span, &str)> = Vec::new();
    for c in model
        .chains
        .iter()
        .filter(|c| c.iteration == Some(it) && c.span.start < until)
    {
        let args = c.steps.iter().flat_map(|s| &s.args);
        reads.extend(args.filter_map(|a| Some((a.span, read_name(&a.text, a.span)?))));
        if let (Some(r), Some(first)) = (c.receiver.as_deref(), c.steps.first())
            && let Some(n) = read_name(r, first.span)
        {
            reads.push((first.span, n));
        }
    }
    for c in model
        .calls
        .iter()
        .filter(|c| c.iteration == Some(it) && c.span.start < until)
    {
        reads.extend(
            c.reads
                .iter()
                .filter_map(|(n, s)| Some((*s, read_name(n, *s)?))),
        );
    }
    reads.into_iter().max_by_key(|(s, _)| s.start)
}

/// The DM writes iteration `it` makes before `end`: each chain's (one per chain, the first),
/// and each tensor a helper call places; with where the address is written and the tensor
/// the write binds.
fn writes_before(
    model: &FnModel,
    it: u32,
    end: u32,
) -> impl Iterator<Item = (Footprint, Span, Option<&str>)> {
    let chains = model
        .chains
        .iter()
        .filter(move |c| c.iteration == Some(it) && c.span.start < end)
        .flat_map(move |c| {
            c.steps.iter().filter_map(move |s| match &s.into {
                Some(window) => {
                    let (t, fp) = window_of(model, window, c.span.start)?;
                    Some((fp, s.args.first()?.span, Some(t.name.as_str())))
                }
                None => {
                    let fp = step_footprint(s)?;
                    Some((fp, address_span(s), c.binding.as_deref()))
                }
            })
        });
    let by_calls = model
        .tensors
        .iter()
        .filter(move |t| t.iteration == Some(it) && t.ty.kind == Kind::Dm)
        .filter_map(move |t| {
            let call = t.placed_by_call.filter(|c| c.start < end)?;
            Some((footprint(&t.ty, t.address?)?, call, Some(t.name.as_str())))
        });
    chains.chain(by_calls)
}

/// Every write of an iteration over a window an iteration before it (or its own, earlier)
/// filled, where the window is read after the loop.
pub fn filled_clashes(model: &FnModel) -> Vec<CarriedClash<'_>> {
    let mut out = Vec::new();
    let fills = fills(model);
    if fills.is_empty() {
        return out;
    }
    let next = following(model);
    for (chain, k, window, fp) in fills {
        let Some((read, read_as)) = read_after_loop(model, window, chain, k, &next) else {
            continue;
        };
        let mut it = Some(k);
        while let Some(j) = it {
            let (Some(from), Some(into)) = (
                model.iterations.get(k as usize),
                model.iterations.get(j as usize),
            ) else {
                break;
            };
            let after_fill = |at: Span| j != k || at.start > chain.start;
            out.extend(
                writes_before(model, j, u32::MAX)
                    .filter(|w| w.0.overlaps(fp) && after_fill(w.1) && w.2 != Some(&window.name))
                    .map(|(write, at, writer)| CarriedClash {
                        carried: window,
                        fp,
                        from: &from.label,
                        into: &into.label,
                        write,
                        at,
                        writer,
                        read,
                        read_as,
                        how: Carry::Filled,
                    }),
            );
            it = next.get(&j).copied();
        }
    }
    out
}

/// The windows a loop's iterations fill whole (`commit_view(tiles[t].view_mut())` of a DM
/// tensor placed before the loop): the chain, its iteration, the window and its footprint.
fn fills(model: &FnModel) -> Vec<(Span, u32, &TensorVar, Footprint)> {
    let mut out = Vec::new();
    for c in &model.chains {
        let Some(k) = c.iteration else { continue };
        for window in c.steps.iter().filter_map(|s| s.into.as_deref()) {
            if let Some((t, fp)) = window_of(model, window, c.span.start)
                && t.iteration != Some(k)
            {
                out.push((c.span, k, t, fp));
            }
        }
    }
    out
}

/// The DM tensor `name` names at `at`, and its footprint, when it is placed.
fn window_of<'m>(model: &'m FnModel, name: &str, at: u32) -> Option<(&'m TensorVar, Footprint)> {
    let t = model
        .tensors
        .iter()
        .rev()
        .find(|t| t.name == name && t.span.start < at && t.ty.kind == Kind::Dm)?;
    Some((t, footprint(&t.ty, t.address?)?))
}

/// Each iteration's successor in the same run of its loop.
fn following(model: &FnModel) -> HashMap<u32, u32> {
    (model.iterations.iter().enumerate())
        .filter_map(|(j, it)| Some((it.previous?, u32::try_from(j).ok()?)))
        .collect()
}

/// Where `window`, filled by the chain at `fill` in iteration `k`, is read last after its
/// loop (outside every iteration of the run `k` is part of), and the name it is read by: its
/// own, or one a loop over its array binds (`tile` of `for tile in tiles.iter()`).
fn read_after_loop<'m>(
    model: &'m FnModel,
    window: &'m TensorVar,
    fill: Span,
    k: u32,
    next: &HashMap<u32, u32>,
) -> Option<(Span, &'m str)> {
    let mut run: Vec<u32> = vec![k];
    let mut it = k;
    while let Some(p) = model.iterations.get(it as usize).and_then(|i| i.previous) {
        run.push(p);
        it = p;
    }
    let mut it = k;
    while let Some(&n) = next.get(&it) {
        run.push(n);
        it = n;
    }
    let outside = |i: Option<u32>| i.is_none_or(|i| !run.contains(&i));
    let mut names: Vec<(&str, Option<u32>)> = vec![(window.name.as_str(), None)];
    names.extend(
        (model.aliases.iter())
            .filter(|a| a.of == window.name && a.at.start > fill.end && outside(a.iteration))
            .map(|a| (a.name.as_str(), a.iteration)),
    );
    let reads_in = |text: &str, it: Option<u32>| {
        names
            .iter()
            .find(|(n, bound)| {
                (bound.is_none() || *bound == it) && crate::syntax::mentions(text, n)
            })
            .map(|(n, _)| *n)
    };
    let mut reads: Vec<(Span, &str)> = Vec::new();
    for c in (model.chains.iter()).filter(|c| c.span.start > fill.end && outside(c.iteration)) {
        let args = c.steps.iter().flat_map(|s| &s.args);
        reads.extend(args.filter_map(|a| Some((a.span, reads_in(&a.text, c.iteration)?))));
        if let (Some(r), Some(first)) = (c.receiver.as_deref(), c.steps.first())
            && let Some(n) = reads_in(r, c.iteration)
        {
            reads.push((first.span, n));
        }
    }
    for c in (model.calls.iter()).filter(|c| c.span.start > fill.end && outside(c.iteration)) {
        let it = c.iteration;
        reads.extend(
            c.reads
                .iter()
                .filter_map(|(n, s)| Some((*s, reads_in(n, it)?))),
        );
    }
    reads.into_iter().max_by_key(|(s, _)| s.start)
}

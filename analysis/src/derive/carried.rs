//! The DM tensors a loop carries from one iteration into the next through an assignment
//! (`best = Some(keys.commit(best_addr(t)))` at the end of an iteration, read at the top of
//! the next through `match &best`), and the writes of the next iteration that land on one
//! before that iteration's last read of it. The timeline reads a loop's first pass, where
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
    /// Where the iteration reads the carried tensor last, after the write, and the name it
    /// reads it by (the variable's, or one a `match` on it binds).
    pub read: Span,
    pub read_as: &'m str,
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
        .flat_map(|c| {
            c.steps.iter().filter_map(move |s| {
                let fp = step_footprint(s)?;
                Some((fp, address_span(s), c.binding.as_deref()))
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

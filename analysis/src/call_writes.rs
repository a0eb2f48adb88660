//! What a helper call writes in DM, as the compiler traces it: the helper runs with the
//! call's values, and so do the helpers it calls. A tensor it keeps to itself (a sum of
//! squares parked at `cfg.sq_addr` between two passes) is written at an address the caller
//! chose through its arguments, and lands wherever that is: on a tensor the caller still needs
//! (SCH-001), which neither function sees on its own.

use crate::calls::{Caller, Helper, MAX_CALL_DEPTH, resolve_helpers, traced_analysis};
use crate::derive::timeline::{Footprint, live_across_calls, own_writes};
use crate::diagnostic::Diagnostic;
use crate::model::{FnModel, HelperCall};
use crate::rules::schedule::{CallWrite, SCH_001, scratch_over_live};

/// A DM range a helper's trace writes: whether the helper gives the tensor back (the caller
/// places it there, and checks it as its own), and where, as the trail of calls down to the
/// write (`` `sum_of_squares` at normalize.rs:43, called by `l2_normalize` at
/// normalize.rs:21 ``).
struct HelperWrite {
    fp: Footprint,
    given_back: bool,
    trail: String,
}

/// SCH-001 at the calls of the function `model` describes (made from `at`): a scratch a call's
/// helper writes over a tensor of this function live across the call. Only calls something is
/// live across are followed.
pub fn scratch_diagnostics(
    db: &dyn salsa::Database,
    at: &Caller,
    model: &FnModel,
    calls: &[&HelperCall],
) -> Vec<Diagnostic> {
    if calls.is_empty() || at.depth > MAX_CALL_DEPTH || !SCH_001.generations.applies_to(at.library)
    {
        return Vec::new();
    }
    let live = live_across_calls(model);
    let across: Vec<(&HelperCall, _)> = live
        .into_iter()
        .filter_map(|(k, live)| {
            let call = model.calls.get(k)?;
            calls
                .iter()
                .any(|c| std::ptr::eq(*c, call))
                .then_some((call, live))
        })
        .collect();
    if across.is_empty() {
        return Vec::new();
    }
    let named: Vec<&HelperCall> = across.iter().map(|(c, _)| *c).collect();
    let helpers = resolve_helpers(db, at, &named);
    let mut out = Vec::new();
    for ((call, live), helper) in across.iter().zip(helpers) {
        let Some(helper) = helper.filter(|h| !h.is_expanded()) else {
            continue;
        };
        let own = checked_as_callers(model, call);
        let writes: Vec<CallWrite> = helper_writes(db, at, &helper, call)
            .into_iter()
            .filter(|w| !(w.given_back && own.contains(&w.fp.start)))
            .map(|w| CallWrite {
                fp: w.fp,
                trail: w.trail,
            })
            .collect();
        out.extend(scratch_over_live(call, live, &writes));
    }
    out
}

/// Where the tensors `call` gives back land that the caller checks as its own (placed by the
/// call, see `TensorVar::placed_by_call`). A tensor given back as a window placed by hand
/// (`from_addr(CONCAT)`, which the helper's trace filled) is not one: what the helper wrote
/// into it is checked here, as its scratch is.
fn checked_as_callers(model: &FnModel, call: &HelperCall) -> Vec<u64> {
    model
        .tensors
        .iter()
        .filter(|t| t.placed_by_call == Some(call.span))
        .filter_map(|t| t.address)
        .collect()
}

/// The DM ranges `helper` writes, traced with `call`'s values: its chains' writes, the
/// tensors its calls place, and, up to [`MAX_CALL_DEPTH`] calls deep, the scratch of the
/// helpers it calls.
fn helper_writes(
    db: &dyn salsa::Database,
    at: &Caller,
    helper: &Helper<'_>,
    call: &HelperCall,
) -> Vec<HelperWrite> {
    let inst = helper.instance(db, &call.bound, at.depth);
    let model = &traced_analysis(db, inst).model;
    let name = call.callee_name();
    let here = |span| format!("`{name}` at {}", helper.place_of(db, span));
    let deeper = calls_writes(db, at, helper, model);
    let mut out = Vec::new();
    for w in own_writes(model) {
        // A tensor a call of the helper places: the trail goes on down to the write.
        let inner = w.by_call.and_then(|placed| {
            let (_, ws) = deeper.iter().find(|(c, _)| c.span == placed)?;
            ws.iter().find(|x| x.given_back && x.fp == w.fp)
        });
        let trail = match inner {
            Some(inner) => format!("{}, called by {}", inner.trail, here(w.at)),
            None => here(w.at),
        };
        out.push(HelperWrite {
            fp: w.fp,
            given_back: w.given_back,
            trail,
        });
    }
    for (c, ws) in &deeper {
        out.extend(ws.iter().filter(|x| !x.given_back).map(|x| HelperWrite {
            fp: x.fp,
            given_back: false,
            trail: format!("{}, called by {}", x.trail, here(c.span)),
        }));
    }
    out
}

/// What each call `helper`'s traced `model` makes writes, one call deeper.
fn calls_writes<'m>(
    db: &dyn salsa::Database,
    at: &Caller,
    helper: &Helper<'_>,
    model: &'m FnModel,
) -> Vec<(&'m HelperCall, Vec<HelperWrite>)> {
    if at.depth >= MAX_CALL_DEPTH {
        return Vec::new();
    }
    let deeper = Caller {
        file: helper.file,
        module: helper.module,
        depth: at.depth + 1,
        target: at.target,
        library: at.library,
    };
    let calls: Vec<&HelperCall> = model
        .calls
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
        .collect();
    let helpers = resolve_helpers(db, &deeper, &calls);
    calls
        .into_iter()
        .zip(helpers)
        .filter_map(|(c, h)| {
            let h = h.filter(|h| !h.is_expanded())?;
            Some((c, helper_writes(db, &deeper, &h, c)))
        })
        .collect()
}

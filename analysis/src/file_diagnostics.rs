//! A file's diagnostics as the user sees them: its analysis's findings, what its helper calls
//! give with their values ([`crate::calls`]), the "not checked" notes the crate's calls settle
//! or add ([`crate::callers`]), then suppression comments and the configured rule levels.

use crate::call_writes::scratch_diagnostics;
use crate::calls::{Caller, call_diagnostics, traced_fn};
use crate::db::{self, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::model::HelperCall;
use std::sync::Arc;

/// A file's diagnostics as the user sees them: its analysis's findings and what its helper
/// calls give at each call, with suppression comments and the configured rule levels
/// applied, sorted by position.
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: db::Settings,
) -> Arc<[Diagnostic]> {
    let analysis = db::file_analysis(db, file, settings);
    // A fix of a helper's or a macro's own text carries its edits as another file's until
    // then, the file's own included.
    let path = file.path(db).as_path();
    let mut raw: Vec<Diagnostic> = analysis
        .diagnostics()
        .into_iter()
        .map(|d| d.with_own_file_edits(path))
        .collect();
    let found_before = raw.len();
    let caller = |start: u32| Caller::at(db, file, settings, analysis, start);
    for (start, f) in &analysis.fns {
        // Traced with what its calls give back (a tensor a helper placed, a TRF region it
        // loaded), the function finds more, and its calls bind more.
        let traced = traced_fn(db, &caller(*start), *start, f);
        let model = match &traced {
            Some((model, added)) => {
                raw.extend(
                    added
                        .iter()
                        .map(|d| d.clone().shifted(*start).with_own_file_edits(path)),
                );
                model
            }
            None => &f.model,
        };
        let calls: Vec<&HelperCall> = model.calls.iter().collect();
        let scratch = scratch_diagnostics(db, &caller(*start), model, &calls);
        raw.extend(
            scratch
                .into_iter()
                .map(|d| d.shifted(*start).with_own_file_edits(path)),
        );
        if !model.calls.iter().any(|c| c.bound.traces_anew()) {
            continue;
        }
        let found = call_diagnostics(db, &caller(*start), (model, &f.diagnostics), &calls);
        raw.extend(
            found
                .into_iter()
                .map(|d| d.shifted(*start).with_own_file_edits(path)),
        );
    }
    // A function a macro generated calls from the invocation.
    for g in &analysis.generated {
        let at = caller(g.call.start);
        let traced = traced_fn(db, &at, u32::MAX, &g.analysis);
        let model = match &traced {
            Some((model, added)) => {
                raw.extend(added.iter().map(|d| g.at_call(d).with_own_file_edits(path)));
                model
            }
            None => &g.analysis.model,
        };
        let calls: Vec<&HelperCall> = model.calls.iter().collect();
        let scratch = scratch_diagnostics(db, &at, model, &calls);
        raw.extend(
            scratch
                .iter()
                .map(|d| g.at_call(d).with_own_file_edits(path)),
        );
        if !model.calls.iter().any(|c| c.bound.traces_anew()) {
            continue;
        }
        let own = &g.analysis.diagnostics;
        let found = call_diagnostics(db, &at, (model, own), &calls);
        raw.extend(found.iter().map(|d| g.at_call(d).with_own_file_edits(path)));
    }
    // The generic tensors of functions the crate never calls: not checked anywhere.
    raw.extend(crate::callers::uninstantiated_generics(
        db, file, settings, analysis,
    ));
    // `diagnostics()` is sorted: only what was added above needs sorting in.
    let added = raw.len() > found_before;
    // A helper's "not checked" notes that every call of it in the crate settles.
    let settled = crate::callers::settled_notes(db, file, settings, analysis);
    if !settled.is_empty() {
        raw.retain(|d| !(crate::callers::is_not_checked_note(d) && settled.contains(&d.span)));
    }
    if added {
        raw.sort_by_key(|d| (d.span, d.code()));
        raw.dedup();
    }
    let suppressed = crate::suppress::apply(file.text(db), raw);
    settings.config(db).apply(suppressed).into()
}

//! Who calls each helper of a crate, and with what. A helper's body is checked on its own
//! with its parameters unknown, and again at each call with the values the call gives
//! ([`crate::calls`]). Where its own check cannot know a value a rule needs, it notes "not
//! checked" (VL-009). When every call of the helper in the crate gives that value, each
//! call's check has decided the rule, and the note says something untrue: [`settled_notes`]
//! finds those notes, so the file shows them no more.
//!
//! A call whose value comes from its caller's own parameter (`relay(ctx, x)` calling
//! `stage(ctx, x)`) is followed up through the caller's calls, [`MAX_CALL_DEPTH`] calls
//! deep at most, as the compiler's trace would bind it. A helper that code outside the crate
//! may call (a `pub` function), one the crate never calls, or one whose calls pass a value
//! the crate does not know keeps its note.

use crate::calls::{self, Binding, Caller, Helper, MAX_CALL_DEPTH};
use crate::db::{self, FileAnalysis, Settings, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::diagnostic::Span;
use crate::model::Bound;
use crate::rules::tool::{VL_009, generic_not_instantiated};
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, HasVisibility};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// A function of the crate: its file and where it starts in it.
type FnAt = (PathBuf, u32);

/// The most sets of values followed for one helper (its calls, times its callers' calls):
/// past it the note stays.
const MAX_CONTEXTS: usize = 256;

/// Every call of the crate's helpers, by the helper called.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CrateCalls {
    helpers: HashMap<FnAt, Called>,
}

/// A helper of the crate that is called, and its calls.
#[derive(Clone, PartialEq, Eq)]
struct Called {
    file: SourceFile,
    module: u32,
    index: usize,
    calls: Vec<CallSite>,
}

/// One call of a helper.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CallSite {
    /// The calling function, when it is written in the crate (a function a macro generated
    /// is not followed up to its own callers).
    caller: Option<FnAt>,
    /// The call, relative to the caller's start.
    span: Span,
    /// What it gives the helper's parameters, with its caller's parameters unknown.
    bound: Bound,
}

/// The calls of the crate `file` belongs to, found from every file of it (each function's
/// calls resolved from its module).
#[salsa::tracked(returns(ref))]
pub fn crate_calls(
    db: &dyn salsa::Database,
    root: SourceFile,
    settings: Settings,
) -> Arc<CrateCalls> {
    let root_path = root.path(db).clone();
    let files = db::in_crate_of(db, root, |map| {
        map.module_of(&root_path, 0)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for m in map.modules.iter().filter(|m| m.krate == 0) {
            if !files.contains(&m.file) {
                files.push(m.file.clone());
            }
        }
        Some(files)
    })
    .unwrap_or_default();
    let mut out = CrateCalls::default();
    for path in files {
        let file = match path == root_path {
            true => root,
            false => match db::workspace_file(db, &path) {
                Some(f) => *f,
                None => continue,
            },
        };
        let analysis = db::file_analysis(db, file, settings);
        for (start, f) in analysis
            .fns
            .iter()
            .filter(|(_, f)| !f.model.calls.is_empty())
        {
            let caller = Some((path.clone(), *start));
            out.add(
                db,
                &Caller::at(db, file, settings, analysis, *start),
                caller,
                &f.model,
            );
        }
        for g in &analysis.generated {
            let at = Caller::at(db, file, settings, analysis, g.call.start);
            out.add(db, &at, None, &g.analysis.model);
        }
    }
    Arc::new(out)
}

impl CrateCalls {
    /// The calls `model` (a function of `caller`'s module) makes of the crate's helpers.
    fn add(
        &mut self,
        db: &dyn salsa::Database,
        at: &Caller,
        caller: Option<FnAt>,
        model: &crate::model::FnModel,
    ) {
        let names: Vec<&str> = model.calls.iter().map(|c| c.callee.as_str()).collect();
        let helpers = calls::resolve_helpers(db, at, &names);
        for (call, helper) in model.calls.iter().zip(helpers) {
            let Some(h) = helper else { continue };
            let key = (h.file.path(db).clone(), h.offset);
            let called = self.helpers.entry(key).or_insert_with(|| Called {
                file: h.file,
                module: h.module,
                index: h.index,
                calls: Vec::new(),
            });
            called.calls.push(CallSite {
                caller: caller.clone(),
                span: call.span,
                bound: call.bound.clone(),
            });
        }
    }

    /// The helper at `key`, as a call of it is checked.
    fn helper<'db>(
        &self,
        db: &'db dyn salsa::Database,
        key: &FnAt,
        at: &Caller,
    ) -> Option<Helper<'db>> {
        let c = self.helpers.get(key)?;
        calls::helper_at(db, c.file, c.module as usize, c.index, at)
    }

    /// Every set of values the crate's calls give the helper at `key`, a call whose values
    /// come from its caller's parameters followed up through that caller's own calls. `None`
    /// when the crate does not hold all of its calls: it is `pub` (code outside may call
    /// it), it is never called, or its calls are too many to follow.
    fn contexts(
        &self,
        db: &dyn salsa::Database,
        key: &FnAt,
        at: &Caller,
        depth: u8,
    ) -> Option<Vec<Bound>> {
        let helper = self.helper(db, key, at)?;
        let calls = &self.helpers.get(key)?.calls;
        if exported(db, &helper) || calls.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for site in calls {
            let up = site.caller.as_ref().filter(|_| depth < MAX_CALL_DEPTH);
            let refined = up.and_then(|g| Some((g, self.contexts(db, g, at, depth + 1)?)));
            match refined {
                None => out.push(site.bound.clone()),
                Some((g, bounds)) => {
                    let caller = self.helper(db, g, at)?;
                    for b in bounds {
                        let traced = calls::bound_analysis(db, Binding::new(db, caller.input, b));
                        let here = traced.model.calls.iter().filter(|c| c.span == site.span);
                        out.extend(here.map(|c| c.bound.clone()));
                    }
                }
            }
            if out.len() > MAX_CONTEXTS {
                return None;
            }
        }
        Some(out)
    }
}

/// Whether code outside the crate may call `helper`: it is declared `pub` without a
/// restriction.
fn exported(db: &dyn salsa::Database, helper: &Helper<'_>) -> bool {
    let node = ra_ap_syntax::SyntaxNode::new_root(helper.input.green(db).0.clone());
    ast::Fn::cast(node)
        .and_then(|f| f.visibility())
        .is_some_and(|v| crate::syntax::node_text(v.syntax()) == "pub")
}

/// The "not checked" notes (VL-009, file positions) of `analysis`'s functions that every call
/// of the function in the crate settles: each call's check, with the values it gives (or
/// its callers give), has them no more.
pub fn settled_notes(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: Settings,
    analysis: &FileAnalysis,
) -> HashSet<Span> {
    let noted = analysis.fns.iter().filter(|(_, f)| {
        let mut notes = f.diagnostics.iter();
        notes.any(|d| d.code() == VL_009.code)
    });
    let mut settled = HashSet::new();
    let mut index: Option<&CrateCalls> = None;
    for (start, f) in noted {
        let index = *index.get_or_insert_with(|| crate_calls(db, crate_root(db, file), settings));
        let key = (file.path(db).clone(), *start);
        let at = Caller::at(db, file, settings, analysis, *start);
        let Some(helper) = index.helper(db, &key, &at) else {
            continue;
        };
        let Some(contexts) = index.contexts(db, &key, &at, 1) else {
            continue;
        };
        let traces: Vec<&db::FnAnalysis> = contexts
            .into_iter()
            .map(|b| &**calls::bound_analysis(db, Binding::new(db, helper.input, b)))
            .collect();
        if traces.is_empty() {
            continue;
        }
        for note in f.diagnostics.iter().filter(|d| d.code() == VL_009.code) {
            let still = |t: &&db::FnAnalysis| {
                t.diagnostics
                    .iter()
                    .any(|d| d.code() == VL_009.code && d.span == note.span)
            };
            if !traces.iter().any(still) {
                settled.insert(note.span.shift(*start));
            }
        }
    }
    settled
}

/// VL-009 notes (file positions) at the type parameters typing a tensor parameter of a
/// function of `analysis` that no call of the crate instantiates (`fn widen<D: Scalar>(a:
/// &DmTensor<D, ..>)` never called): its own check cannot read the element type, and no
/// call's check reads it either. One note per type parameter.
pub fn uninstantiated_generics(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: Settings,
    analysis: &FileAnalysis,
) -> Vec<Diagnostic> {
    let generic = analysis
        .fns
        .iter()
        .filter(|(_, f)| !f.model.generic_tensors.is_empty());
    let mut out = Vec::new();
    let mut index: Option<&CrateCalls> = None;
    for (start, f) in generic {
        let index = *index.get_or_insert_with(|| crate_calls(db, crate_root(db, file), settings));
        let key = (file.path(db).clone(), *start);
        if index.helpers.get(&key).is_some_and(|c| !c.calls.is_empty()) {
            continue;
        }
        let mut seen = HashSet::new();
        for g in &f.model.generic_tensors {
            if seen.insert(&g.generic) {
                let at = g.at.shift(*start);
                let name = &f.model.name;
                out.push(generic_not_instantiated(at, name, &g.param, &g.generic));
            }
        }
    }
    out
}

/// The root file of `file`'s crate (the file itself when it is its own crate).
fn crate_root(db: &dyn salsa::Database, file: SourceFile) -> SourceFile {
    let path = file.path(db);
    let root = db::in_crate_of(db, file, |map| {
        map.module_of(path, 0)?;
        Some(map.modules.first()?.file.clone())
    });
    root.filter(|r| r != file.path(db))
        .and_then(|r| db::workspace_file(db, &r).copied())
        .unwrap_or(file)
}

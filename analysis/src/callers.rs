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

use crate::calls::{self, Caller, Helper, MAX_CALL_DEPTH};
use crate::db::{self, FileAnalysis, Settings, SourceFile};
use crate::diagnostic::Diagnostic;
use crate::diagnostic::Span;
use crate::model::Bound;
use crate::rules::tool::{VL_008, VL_009, generic_not_instantiated};
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

/// The calls of the crate `file` belongs to, found from every file of it (each file's calls
/// are its own query, so an edit re-resolves only the calls of the file edited).
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
        for call in file_calls(db, file, settings).iter() {
            let called = out
                .helpers
                .entry(call.helper.clone())
                .or_insert_with(|| Called {
                    file: call.file,
                    module: call.module,
                    index: call.index,
                    calls: Vec::new(),
                });
            called.calls.push(call.site.clone());
        }
    }
    Arc::new(out)
}

/// A call of one of the crate's helpers, resolved from the module it is written in.
#[derive(Clone, PartialEq, Eq)]
struct ResolvedCall {
    /// The helper called: where it is, and its file, module and index there.
    helper: FnAt,
    file: SourceFile,
    module: u32,
    index: usize,
    site: CallSite,
}

/// The calls of crate helpers that the functions of `file` make, in order.
#[salsa::tracked(returns(ref))]
fn file_calls(
    db: &dyn salsa::Database,
    file: SourceFile,
    settings: Settings,
) -> Arc<Vec<ResolvedCall>> {
    let path = file.path(db);
    let analysis = db::file_analysis(db, file, settings);
    let mut out = Vec::new();
    for (start, f) in analysis
        .fns
        .iter()
        .filter(|(_, f)| !f.model.calls.is_empty())
    {
        let caller = Some((path.clone(), *start));
        let at = Caller::at(db, file, settings, analysis, *start);
        resolve_calls(db, &at, caller, &f.model, &mut out);
    }
    for g in &analysis.generated {
        let at = Caller::at(db, file, settings, analysis, g.call.start);
        resolve_calls(db, &at, None, &g.analysis.model, &mut out);
    }
    Arc::new(out)
}

/// The calls `model` (a function of `at`'s module) makes of the crate's helpers.
fn resolve_calls(
    db: &dyn salsa::Database,
    at: &Caller,
    caller: Option<FnAt>,
    model: &crate::model::FnModel,
    out: &mut Vec<ResolvedCall>,
) {
    let calls: Vec<&crate::model::HelperCall> = model.calls.iter().collect();
    let helpers = calls::resolve_helpers(db, at, &calls);
    for (call, helper) in model.calls.iter().zip(helpers) {
        let Some(h) = helper else { continue };
        out.push(ResolvedCall {
            helper: (h.file.path(db).clone(), h.offset),
            file: h.file,
            module: h.module,
            index: h.index,
            site: CallSite {
                caller: caller.clone(),
                span: call.span,
                bound: call.bound.clone(),
            },
        });
    }
}

impl CrateCalls {
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
                        let traced = calls::bound_analysis(db, caller.binding(db, &b));
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

/// A "not checked" note a call's check may settle: a value (VL-009) or a name of an escaped
/// size (VL-008, `{ P::CHUNK }`) the function's own check cannot know.
pub fn is_not_checked_note(d: &Diagnostic) -> bool {
    d.code() == VL_009.code || d.code() == VL_008.code
}

/// The "not checked" notes (VL-009 and VL-008, file positions) of `analysis`'s functions that every call
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
        notes.any(is_not_checked_note)
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
            .map(|b| &**calls::bound_analysis(db, helper.binding(db, &b)))
            .collect();
        if traces.is_empty() {
            continue;
        }
        for note in f.diagnostics.iter().filter(|d| is_not_checked_note(d)) {
            let still = |t: &&db::FnAnalysis| {
                t.diagnostics
                    .iter()
                    .any(|d| d.code() == note.code() && d.span == note.span)
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

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::db::{Database, Settings, SourceFile, Workspace, file_analysis};
    use crate::file_diagnostics::file_diagnostics;
    use crate::project::Package;
    use salsa::Setter;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    const ROOT: &str = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\nmod stage;\nmod first;\nmod second;\n";
    const STAGE: &str = "use super::*;\n\npub(crate) fn stage(ctx: &mut Context, input: &HbmTensor<i32, m![1], m![A]>, at: u64) {\n    let dm = input.to_dm::<m![1 # 2], m![A / 8 # 256], m![A % 8]>(&mut ctx.tdma, at);\n}\n";
    const FIRST: &str = "use super::*;\nuse super::stage::stage;\n\n#[device(chip = 1)]\npub fn first(ctx: &mut Context, input: &HbmTensor<i32, m![1], m![A]>) {\n    stage(ctx, input, 0x4000);\n}\n";

    /// Each file's calls are resolved once: an edit re-resolves the calls of the file edited,
    /// not those of the crate's other files, and the helper's note stays settled.
    #[test]
    fn an_edit_resolves_again_only_the_calls_of_the_file_edited() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let mut db = Database::with_event_log(move |e| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(e)
        });
        let file = |db: &Database, name: &str, text: &str| {
            SourceFile::new(
                db,
                text.to_string(),
                PathBuf::from(format!("/p/src/{name}")),
            )
        };
        let root = file(&db, "lib.rs", ROOT);
        let stage = file(&db, "stage.rs", STAGE);
        let first = file(&db, "first.rs", FIRST);
        let second = file(&db, "second.rs", &FIRST.replace("first", "second"));
        let files = [root, stage, first, second]
            .into_iter()
            .map(|f| (f.path(&db).clone(), f))
            .collect();
        let package = Package {
            library: None,
            dir: PathBuf::from("/p"),
            lib_name: Some("p".to_string()),
            roots: vec![PathBuf::from("/p/src/lib.rs")],
        };
        Workspace::new(&db, Arc::new(files), Arc::new(vec![package]));
        let settings = Settings::new(&db, Config::default());
        let notes = |db: &Database| {
            assert!(
                file_analysis(db, stage, settings)
                    .diagnostics()
                    .iter()
                    .any(|d| d.code() == "VL-009")
            );
            let shown = file_diagnostics(db, stage, settings);
            shown.iter().filter(|d| d.code() == "VL-009").count()
        };
        // How many files' calls were resolved since the last look.
        let resolved = || {
            let events = std::mem::take(&mut *log.lock().unwrap_or_else(|p| p.into_inner()));
            let run = |e: &&String| e.starts_with("WillExecute") && e.contains("file_calls(");
            events.iter().filter(run).count()
        };
        assert_eq!(notes(&db), 0, "both calls give the address");
        assert_eq!(resolved(), 4, "every file's calls are resolved once");
        let edited = FIRST.replace("0x4000);", "0x4000);\n    let x = 1;");
        first.set_text(&mut db).to(edited);
        assert_eq!(notes(&db), 0);
        assert_eq!(
            resolved(),
            1,
            "only the edited file's calls are resolved again"
        );
    }
}

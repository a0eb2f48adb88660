//! Helper calls as the compiler traces them. The vendor compiler runs a kernel's body with
//! every helper called on its arguments, so a helper called with a value known at the call
//! (`stage(ctx, &a, BASE + 1)`, `tile::<4>(ctx, &a)`) is checked again here with that value
//! bound ([`Instance`], one query per helper and values, shared by every call that gives the
//! same ones). What that check finds beyond the helper's own check is reported at the call,
//! naming the helper, where in it, and the values: the helper on its own cannot know them.
//!
//! A helper that calls another with values of its own is followed the same way, up to
//! [`MAX_CALL_DEPTH`] calls deep (recursion included): each depth is its own query, so a
//! helper that calls itself ends at the bound instead of in a cycle.

use crate::config::TargetName;
use crate::db::{self, EnvText, FnInput, SourceFile};
use crate::diagnostic::{Diagnostic, Span};
use crate::library::Generation;
use crate::model::value::Value;
use crate::model::{Bound, CallResults, FnKind, FnModel, HelperCall};
use crate::resolve::ItemKind;
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, HasGenericParams, HasName};
use std::collections::HashSet;
use std::sync::Arc;

/// How many calls deep helpers are followed (a kernel's helper calling a helper is two).
pub const MAX_CALL_DEPTH: u8 = 4;

/// A helper function checked with the values one call binds its parameters to.
#[salsa::interned]
pub struct Instance<'db> {
    pub helper: FnInput<'db>,
    #[returns(ref)]
    pub bound: Bound,
    /// The helper's file and module (index among the file's modules): the calls it makes are
    /// resolved from there.
    pub file: SourceFile,
    pub module: u32,
    /// How many calls deep it is (1 for a call from the function being checked).
    pub depth: u8,
}

/// A helper function with the values of one call bound: [`bound_analysis`] analyses it once
/// for every call (and every depth) that gives the same values.
#[salsa::interned]
pub struct Binding<'db> {
    pub helper: FnInput<'db>,
    #[returns(ref)]
    pub bound: Bound,
    /// What the helper's own calls give back, from their traces (empty until
    /// [`traced_analysis`] has them).
    #[returns(ref)]
    pub results: CallResults,
}

/// The helper's analysis with the binding's values: its body as one call traces it.
#[salsa::tracked(returns(ref))]
pub fn bound_analysis<'db>(
    db: &'db dyn salsa::Database,
    binding: Binding<'db>,
) -> Arc<db::FnAnalysis> {
    let helper = binding.helper(db);
    // Nothing bound: the helper's own analysis (one query with its file's check).
    if binding.results(db).is_empty() && *binding.bound(db) == Bound::default() {
        return db::fn_analysis(db, *helper).clone();
    }
    let root = ra_ap_syntax::SyntaxNode::new_root(helper.green(db).0.clone());
    let env = db::fn_env(db, *helper.module_env(db), *helper.local_env(db));
    let target = helper.target(db).target();
    let library = *helper.library(db);
    Arc::new(db::analyse_fn(
        &root,
        env,
        target,
        (library, helper.self_type(db).as_deref()),
        helper.block_params(db),
        (binding.bound(db), binding.results(db)),
    ))
}

/// The helper as the call traces it, the calls it makes included: analysed with the call's
/// values, then, where its calls of other helpers give back tensors placed at addresses or
/// TRF regions they choose ([`FnModel::result`]), again with those.
#[salsa::tracked(returns(ref))]
pub fn traced_analysis<'db>(
    db: &'db dyn salsa::Database,
    inst: Instance<'db>,
) -> Arc<db::FnAnalysis> {
    let helper = *inst.helper(db);
    let first = bound_analysis(
        db,
        Binding::new(db, helper, inst.bound(db).clone(), Vec::new()),
    );
    let at = Caller {
        file: *inst.file(db),
        module: *inst.module(db),
        depth: *inst.depth(db) + 1,
        target: *helper.target(db),
        library: *helper.library(db),
    };
    let results = call_results(db, &at, &first.model);
    if results.is_empty() {
        return first.clone();
    }
    bound_analysis(
        db,
        Binding::new(db, helper, inst.bound(db).clone(), results),
    )
    .clone()
}

/// The function of `at`'s module that starts at `start` (`first` is its own analysis), traced
/// with what its calls give back: its model then, and the findings that adds (placed in its
/// body as written, spans relative to its start). `None` when its calls give nothing back.
pub fn traced_fn(
    db: &dyn salsa::Database,
    at: &Caller,
    start: u32,
    first: &db::FnAnalysis,
) -> Option<(FnModel, Vec<Diagnostic>)> {
    if !first.model.calls.iter().any(|c| c.gives_placed) {
        return None;
    }
    let results = call_results(db, at, &first.model);
    if results.is_empty() {
        return None;
    }
    // A body with the crate's macros expanded is traced as its own check reads it (not
    // followed here: its findings' places in the expansion would need placing twice).
    let helper = own_helper(db, at, (start, &first.model.name)).filter(|h| h.expanded.is_none())?;
    let traced = bound_analysis(
        db,
        Binding::new(db, helper.input, Bound::default(), results),
    );
    let known: HashSet<(&str, Span, &str)> = first
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.span, d.message.as_str()))
        .collect();
    let added = traced
        .diagnostics
        .iter()
        .map(|d| helper.placed(d))
        .filter(|d| !known.contains(&(d.code(), d.span, d.message.as_str())))
        .collect();
    Some((traced.model.clone(), added))
}

/// The function of `at`'s module that starts at `start` (or, for one a macro invocation
/// generates, is named `name`), as a helper of it. Only the item around `start` (or the
/// declarations named `name`) is looked at.
fn own_helper<'db>(
    db: &'db dyn salsa::Database,
    at: &Caller,
    (start, name): (u32, &str),
) -> Option<Helper<'db>> {
    let items = db::layout_items(db, at.file).get(at.module as usize)?;
    let helper = |index: usize| helper_at(db, at.file, at.module as usize, index, at);
    let mut first = 0;
    let mut named = Vec::new();
    for (item, offset) in items {
        let decls = &db::item_facts(db, *item).decls.items;
        let len = u32::from(item.green(db).0.text_len());
        if *offset <= start && start < offset.saturating_add(len) {
            let found = (first..first + decls.len())
                .filter_map(helper)
                .find(|h| h.offset == start);
            if let Some(h) = found {
                return Some(h.with_macros_expanded(db));
            }
        }
        named.extend(
            decls
                .iter()
                .enumerate()
                .filter(|(_, d)| d.name == name)
                .map(|(k, _)| first + k),
        );
        first += decls.len();
    }
    named
        .into_iter()
        .find_map(helper)
        .map(|h| h.with_macros_expanded(db))
}

/// What the calls of the function `model` describes (made from `at`) give back: for each call
/// whose result holds a DM or TRF tensor, where the helper's trace with the call's values
/// places it. Calls deeper than [`MAX_CALL_DEPTH`] are not followed.
pub fn call_results(db: &dyn salsa::Database, at: &Caller, model: &FnModel) -> CallResults {
    if at.depth > MAX_CALL_DEPTH {
        return Vec::new();
    }
    let calls: Vec<&HelperCall> = model.calls.iter().filter(|c| c.gives_placed).collect();
    if calls.is_empty() {
        return Vec::new();
    }
    let helpers = resolve_helpers(db, at, &calls);
    let mut out = Vec::new();
    for (call, helper) in calls.iter().zip(helpers) {
        let Some(helper) = helper else { continue };
        let inst = helper.instance(db, &call.bound, at.depth);
        if let Some(v) = &traced_analysis(db, inst).model.result
            && !already_placed(model, call, v)
        {
            out.push(((call.expr, call.iteration), v.clone()));
        }
    }
    out
}

/// Whether a call's result says nothing the caller's model does not know: only addresses, each
/// one a tensor the call binds is already placed at (by the helper's placement, which the
/// evaluator reads where the helper returns `from_addr(..)` tensors). The tensors the call
/// binds are the last ones bound before its expression, as many as it gives addresses, in its
/// iteration of a loop around it: a tensor placed earlier at the same address (a window the
/// call's scratch lands on), or after the call, or in another iteration, is another tensor.
fn already_placed(model: &FnModel, call: &HelperCall, v: &Value) -> bool {
    let mut given = Vec::new();
    if !addresses_given(v, &mut given) {
        return false;
    }
    let mut bound: Vec<&crate::model::TensorVar> = (model.tensors.iter())
        .filter(|t| {
            t.span.start <= call.expr.start
                && (t.iteration.is_none() || t.iteration == call.iteration)
        })
        .collect();
    bound.sort_by_key(|t| t.span.start);
    let last = &bound[bound.len().saturating_sub(given.len())..];
    given
        .iter()
        .all(|a| last.iter().any(|t| t.address == Some(*a)))
}

/// The addresses a call's result gives, into `out`; `false` when it gives something else the
/// caller needs (a TRF region).
fn addresses_given(v: &Value, out: &mut Vec<u64>) -> bool {
    match v {
        Value::Int(a) => {
            out.push(*a);
            true
        }
        Value::Tuple(vs) => vs.iter().all(|v| addresses_given(v, out)),
        Value::Variant {
            fields: crate::model::value::Fields::Named(fs),
            ..
        } => fs.iter().all(|(_, v)| addresses_given(v, out)),
        Value::Variant { path, .. } => crate::model::TrfRegion::named(path).is_none(),
        _ => true,
    }
}

/// What the helper gives with the call's values that it does not give on its own: new
/// findings of its body (spans relative to the helper's start), and what the calls it makes
/// with values it now knows give (at those calls).
#[salsa::tracked(returns(ref))]
pub fn instance_findings<'db>(
    db: &'db dyn salsa::Database,
    inst: Instance<'db>,
) -> Arc<Vec<Diagnostic>> {
    let helper = *inst.helper(db);
    let target = helper.target(db);
    let library = *helper.library(db);
    let bound = traced_analysis(db, inst);
    // The helper on its own, its calls' results included (what its own check reports).
    let alone = traced_analysis(
        db,
        Instance::new(
            db,
            helper,
            Bound::default(),
            *inst.file(db),
            *inst.module(db),
            *inst.depth(db),
        ),
    );
    let known: HashSet<(&str, Span)> = alone
        .diagnostics
        .iter()
        .map(|d| (d.code(), d.span))
        .collect();
    let mut out: Vec<Diagnostic> = bound
        .diagnostics
        .iter()
        .filter(|d| d.code() != crate::rules::tool::VL_009.code)
        .filter(|d| !known.contains(&(d.code(), d.span)))
        // The caller's own part of a pass it gives the helper: the caller's check reports it.
        .filter(|d| d.span.start < crate::model::CALLER_PASS)
        .cloned()
        .collect();
    if *inst.depth(db) < MAX_CALL_DEPTH {
        // The calls whose values the helper on its own did not have.
        let fresh: Vec<&HelperCall> = bound
            .model
            .calls
            .iter()
            .filter(|c| !alone.model.calls.contains(c))
            .collect();
        let at = Caller {
            file: *inst.file(db),
            module: *inst.module(db),
            depth: *inst.depth(db) + 1,
            target: *target,
            library,
        };
        let deeper = call_diagnostics(db, &at, (&bound.model, &bound.diagnostics), &fresh);
        // What the helper on its own reports at those calls already (a call traced anew only
        // for the kernel's grid finds the same there): reported there, not again here.
        let same_calls: Vec<&HelperCall> = alone
            .model
            .calls
            .iter()
            .filter(|c| fresh.iter().any(|f| f.span == c.span))
            .collect();
        let known = call_diagnostics(db, &at, (&alone.model, &alone.diagnostics), &same_calls);
        // The same finding, whatever trail of calls and values its message names.
        let finding = |m: &str| m.split(" (in `").next().unwrap_or_default().to_string();
        let repeated = |d: &Diagnostic| {
            known.iter().any(|k| {
                k.code() == d.code()
                    && k.span == d.span
                    && finding(&k.message) == finding(&d.message)
            })
        };
        out.extend(deeper.into_iter().filter(|d| !repeated(d)));
    }
    Arc::new(out)
}

/// Where calls are made from: the module that resolves the helpers they name, and how deep.
pub struct Caller {
    pub file: SourceFile,
    pub module: u32,
    pub depth: u8,
    pub target: TargetName,
    pub library: Generation,
}

impl Caller {
    /// A function of `file` (of `analysis`) starting at `start`, calling: the innermost module
    /// around it resolves the helpers it names.
    pub fn at(
        db: &dyn salsa::Database,
        file: SourceFile,
        settings: db::Settings,
        analysis: &db::FileAnalysis,
        start: u32,
    ) -> Caller {
        let module = analysis
            .modules
            .iter()
            .enumerate()
            .filter(|(_, m)| m.range.start <= start && start < m.range.end.max(1))
            .max_by_key(|(_, m)| m.range.start)
            .map_or(0, |(i, _)| i as u32);
        Caller {
            file,
            module,
            depth: 1,
            target: *db::target_name(db, settings),
            library: db::library_of(db, file, settings).generation,
        }
    }
}

/// The diagnostics of `calls` (made by the function `model` describes, which reports `own`),
/// each at its call (spans relative to the caller's start): what its helper gives with its
/// values beyond what it gives on its own. One per rule and call, the first call's (a loop's
/// first iteration that breaks it). A finding in the caller's continuation of a returned pass
/// that the caller reports itself (the steps after the call read the returned stream's type)
/// is not reported again at the call.
pub fn call_diagnostics(
    db: &dyn salsa::Database,
    at: &Caller,
    (model, own): (&FnModel, &[Diagnostic]),
    calls: &[&HelperCall],
) -> Vec<Diagnostic> {
    if calls.is_empty() || at.depth > MAX_CALL_DEPTH {
        return Vec::new();
    }
    // A call that binds nothing, outside any kernel, gives what the helper's own check gives.
    let calls: Vec<&HelperCall> = calls
        .iter()
        .copied()
        .filter(|c| c.bound.traces_anew())
        .collect();
    let helpers = resolve_helpers(db, at, &calls);
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut keys: Vec<(&str, Span)> = Vec::new();
    for (call, helper) in calls.iter().zip(helpers) {
        let Some(helper) = helper else { continue };
        let inst = helper.instance(db, &call.bound, at.depth);
        let when = call
            .iteration
            .and_then(|k| model.iterations.get(k as usize))
            .map(|it| it.label.as_str());
        for raw in instance_findings(db, inst).iter() {
            let d = &helper.placed(raw);
            let in_continuation = d.span.start >= crate::model::CALLER_CONTINUATION;
            let found = at_the_call(db, d, call, &helper, when);
            // The caller's own check of the same step (it reads the returned stream's type)
            // says it already, in its own words.
            let reported = |o: &Diagnostic| {
                o.rule.code == d.rule.code && (o.message == d.message || o.span == found.span)
            };
            if in_continuation && own.iter().any(reported) {
                continue;
            }
            // Once per rule and call: each iteration of a loop calls the helper anew, and
            // the first that gives a finding names it; an error found later (deeper in the
            // helper, where the Tensor Unit reads the tensor) outranks a warning.
            let key = (found.rule.code, found.span);
            let same = keys.iter().position(|k| *k == key);
            let pointed = |found| at_the_argument(db, found, raw, (call, at.depth), &helper);
            match same {
                Some(i) if out[i].severity < found.severity => out[i] = pointed(found),
                Some(_) => {}
                None => {
                    keys.push(key);
                    out.push(pointed(found));
                }
            }
        }
    }
    out
}

/// `found` (reported at `call`), pointed at the one argument whose value causes it, where
/// one does: the helper's finding `raw` is gone when the call leaves that argument unknown
/// and keeps the others. A finding two values cause together stays at the call.
fn at_the_argument(
    db: &dyn salsa::Database,
    found: Diagnostic,
    raw: &Diagnostic,
    (call, depth): (&HelperCall, u8),
    helper: &Helper<'_>,
) -> Diagnostic {
    if found.span != call.span || raw.span.start >= crate::model::CALLER_CONTINUATION {
        return found;
    }
    // What the call knows of each argument, and each const generic its turbofish writes.
    let b = &call.bound;
    let arguments = (0..call.args.len())
        .filter(|&k| b.knows_argument(k))
        .filter_map(|k| Some((b.without_argument(k), (*call.args.get(k)?)?)));
    let generics = (0..b.generics.len())
        .filter(|&k| b.generics[k].is_some())
        .filter_map(|k| Some((b.without_generic(k), *call.turbofish.get(k)?)));
    let mut causes = arguments.chain(generics).filter(|(without, _)| {
        let findings = instance_findings(db, helper.instance(db, without, depth));
        !findings
            .iter()
            .any(|f| f.code() == raw.code() && f.span == raw.span)
    });
    let (Some((_, at)), None) = (causes.next(), causes.next()) else {
        return found;
    };
    // A fix made at the call (the call renamed to its own copy of the helper) keeps the
    // diagnostic where it edits.
    let touches = |e: &crate::diagnostic::Edit| e.span.start <= at.end && at.start <= e.span.end;
    let fixed_elsewhere = found
        .fixes
        .iter()
        .any(|f| !f.edits_definition && !f.edits_helper && !f.edits.iter().any(touches));
    match fixed_elsewhere {
        true => found,
        false => {
            let what = if call.launched { "launch" } else { "call" };
            found.pointing_at(at, format!("the {what} of `{}`", call.callee_name()))
        }
    }
}

/// `d`, found in `helper`'s body with `call`'s values, reported at the call.
fn at_the_call(
    db: &dyn salsa::Database,
    d: &Diagnostic,
    call: &HelperCall,
    helper: &Helper<'_>,
    when: Option<&str>,
) -> Diagnostic {
    if d.span.start >= crate::model::CALLER_CONTINUATION {
        return in_the_continuation(d, call, helper, when);
    }
    let place = helper.place_of(db, d.span);
    let values = helper.bindings_text(&call.bound);
    let when = when.map(|w| format!(" when {w}")).unwrap_or_default();
    let verb = if call.launched { "launched" } else { "called" };
    let here = match values.is_empty() {
        true => format!("{verb} here{when})"),
        false => format!("{verb} here with {values}{when})"),
    };
    // Found deeper (`stage` called by `relay`): the trail names each call on the way.
    let message = match d.message.rsplit_once(", called here with ") {
        Some((found, inner)) if d.message.ends_with(')') => {
            let inner = inner.strip_suffix(')').unwrap_or(inner);
            format!(
                "{found} with {inner}, called by `{}` at {place}, {here}",
                call.callee_name()
            )
        }
        _ => format!(
            "{} (in `{}` at {place}, {here}",
            d.message,
            call.callee_name()
        ),
    };
    let mut out = Diagnostic::new(d.rule, call.span, message).with_severity(d.severity);
    // An immediate that does not fold because of a value the call gives: where it varies.
    if d.rule.code == crate::rules::opt_std::OPT_003.code {
        for at in &call.run_time_origins {
            out = out.with_related(*at, "this value varies while the kernel runs");
        }
    }
    // Its related spans are places in the helper; a fix that rewrites one of the helper's
    // mapping parameters rewrites, at the call, the argument that binds it.
    // A fix of the helper's own text is every call's; the call's own copy of the helper, with
    // the fix made in it, is the fallback when another call needs the text as it is.
    out.fixes = d
        .fixes
        .iter()
        .flat_map(|f| {
            let lifted = at_the_binding(db, f, (call, d.span), helper);
            let copy = helper
                .own_text(db)
                .and_then(|h| crate::own_copy::own_copy(f, lifted.as_ref(), call, h));
            lifted.into_iter().chain(copy)
        })
        .collect();
    // A parameter the call's expected type binds (`let q: CastTensor<.., Lane16> = f(x);`):
    // the diagnostic points at that annotation, where its fix acts.
    let site = out.fixes.iter().find(|f| !f.edits_definition);
    if let Some(edit) = site.and_then(|f| f.edits.first())
        && !(call.span.start <= edit.span.start && edit.span.end <= call.span.end)
    {
        let at = edit.span;
        out = out.pointing_at(at, "the call whose result this annotation types");
    }
    out
}

/// `fix`, made in `helper`'s body, as the call makes it: each edit replaces a use of a mapping
/// type parameter (`Pk`) by a mapping, which is what the call's turbofish argument that binds
/// the parameter becomes. Any other edit is of the helper's own text, which every call shares:
/// kept, in the helper's file, the crate then analysed with it before it is offered
/// ([`crate::fix_check`]).
fn at_the_binding(
    db: &dyn salsa::Database,
    fix: &crate::diagnostic::Fix,
    (call, found): (&HelperCall, Span),
    helper: &Helper<'_>,
) -> Option<crate::diagnostic::Fix> {
    // An edit of a deeper helper's own text, already placed in that helper's file: the same
    // edit, however many calls up the finding is reported.
    if fix.edits.is_empty() && !fix.other_files.is_empty() && fix.alias_pad.is_empty() {
        return Some(fix.clone());
    }
    // A mapping alias the helper names (`OutSlice` of its parameter's tensor alias) is padded
    // where it is defined, the name read where the helper reads it; the padding of an
    // associated mapping's definition (`HiddenNorm::CastOut`) or of a struct field's declared
    // type, which a deeper call asked for, is the same edit wherever the finding is reported.
    if !fix.alias_pad.is_empty() && fix.edits.is_empty() && fix.other_files.is_empty() {
        let at = helper.offset.saturating_add(found.start);
        let read_at = Some((helper.file.path(db).clone(), at));
        let mut edits = Vec::new();
        let mut alias_pad: Vec<crate::diagnostic::AliasPad> = Vec::new();
        for pad in &fix.alias_pad {
            let param = helper
                .type_params
                .iter()
                .position(|p| p.as_deref() == Some(pad.name.as_str()));
            match pad.read_at {
                // A mapping parameter of the helper (`S` of an inner call's inferred type):
                // what the call binds it to, written in its turbofish or inferred from an
                // argument's type alias.
                None if param.is_some() && pad.field.is_none() && pad.tensor_arg.is_none() => {
                    let k = param?;
                    if let Some(span) = call.mapping_args.get(k).copied().flatten() {
                        edits.push(crate::diagnostic::Edit {
                            span,
                            new_text: pad.new_text.clone(),
                        });
                    } else {
                        let name = call.inferred.get(k).cloned().flatten()?;
                        alias_pad.push(crate::diagnostic::AliasPad {
                            name,
                            ..pad.clone()
                        });
                    }
                }
                None if !pad.name.contains("::") && pad.field.is_none() => {
                    alias_pad.push(crate::diagnostic::AliasPad {
                        read_at: read_at.clone(),
                        ..pad.clone()
                    });
                }
                // An associated mapping of a type parameter the call binds (`<L as
                // Shard>::Slice` of a generic tensor alias, `L` = `NormShard`): that type's,
                // padded where its `impl` block defines it.
                None if pad.field.is_none() && pad.tensor_arg.is_none() => alias_pad.push(
                    associated_pad(helper, call, &pad.name, &pad.new_text)
                        .unwrap_or_else(|| pad.clone()),
                ),
                _ => alias_pad.push(pad.clone()),
            }
        }
        if !edits.is_empty() && !alias_pad.is_empty() {
            return None;
        }
        // The title names each alias as the call reads it (`Wide::Slice`, not `<L as
        // Group>::Slice`).
        let mut title = fix.title.clone();
        for (old, new) in fix.alias_pad.iter().zip(&alias_pad) {
            title = title.replace(&format!("`{}`", old.name), &format!("`{}`", new.name));
        }
        if !edits.is_empty() {
            // The parameter's argument, at this call: this call's own fix.
            return Some(crate::diagnostic::Fix {
                title: format!("pass the padded mapping at this call ({title})"),
                edits,
                edits_definition: false,
                alias_pad,
                ..fix.clone()
            });
        }
        return Some(crate::diagnostic::Fix {
            title,
            alias_pad,
            ..fix.clone()
        });
    }
    if fix.edits.is_empty() || !fix.other_files.is_empty() || !fix.alias_pad.is_empty() {
        return None;
    }
    let text = helper.file.text(db);
    let mut edits = Vec::new();
    let mut shared = Vec::new();
    let mut given = None;
    let mut pads = Vec::new();
    for e in &fix.edits {
        let at = helper.offset as usize;
        let written = text.get(at + e.span.start as usize..at + e.span.end as usize)?;
        // `Padding<m![1], W>` → `Padding<m![1], 2>`: the value the call gives `W` changes,
        // where the call's turbofish writes it.
        let instantiated = with_mappings_bound(written, helper, call);
        if let Some((k, value)) = const_param_change(&instantiated, &e.new_text, &helper.generics)
            && let Some(&span) = call.turbofish.get(k)
        {
            let edit = crate::diagnostic::Edit {
                span,
                new_text: value.clone(),
            };
            if !edits.contains(&edit) {
                edits.push(edit);
            }
            given = helper.generics[k].clone().map(|name| (name, value));
            continue;
        }
        // An edit that keeps the parameter where it writes it (`P` → `m![{ P } # 16]`) is of
        // the helper's own text, not of what the call binds.
        let keeps_param = e.new_text.contains(&format!("{{ {} }}", written.trim()));
        let param = helper
            .type_params
            .iter()
            .position(|p| p.as_deref() == Some(written.trim()))
            .filter(|_| !keeps_param);
        // `S::CastOut` with `S` given a type of the crate: that type's associated mapping,
        // padded where its `impl` defines it.
        if let Some(pad) = associated_pad(helper, call, written.trim(), &e.new_text) {
            pads.push(pad);
            continue;
        }
        let Some(k) = param else {
            // The helper's own text, in its own file (the caller's too, maybe: placed there
            // once the call's diagnostic has file positions, see `with_own_file_edits`).
            shared.push(crate::diagnostic::Edit {
                span: e.span.shift(helper.offset),
                new_text: e.new_text.clone(),
            });
            continue;
        };
        let Some(span) = call.mapping_args.get(k).copied().flatten() else {
            // Not written at the call: inferred from an argument's type, whose alias is
            // padded where it is defined.
            let name = call.inferred.get(k).cloned().flatten()?;
            pads.push(crate::diagnostic::AliasPad {
                name,
                new_text: e.new_text.clone(),
                ..crate::diagnostic::AliasPad::default()
            });
            continue;
        };
        let edit = crate::diagnostic::Edit {
            span,
            new_text: e.new_text.clone(),
        };
        // The parameter written twice (the collect's turbofish and the return type) binds
        // one argument.
        if !edits.contains(&edit) {
            edits.push(edit);
        }
    }
    if !pads.is_empty() {
        let names: Vec<String> = pads.iter().map(|p| format!("`{}`", p.name)).collect();
        let title = match names.as_slice() {
            [one] => format!("{} in {one}", fix.title),
            _ => format!(
                "{}: {} where they are defined",
                fix.title,
                names.join(" and ")
            ),
        };
        return Some(crate::diagnostic::Fix {
            title,
            edits: Vec::new(),
            other_files: Vec::new(),
            edits_definition: true,
            alias_pad: pads,
            ..fix.clone()
        });
    }
    if shared.is_empty() {
        let title = match given {
            Some((name, value)) if !fix.title.starts_with("pass `") => {
                format!("pass `{name}` = {value} at this call ({})", fix.title)
            }
            _ => fix.title.clone(),
        };
        return Some(crate::diagnostic::Fix {
            title,
            edits,
            ..fix.clone()
        });
    }
    Some(crate::diagnostic::Fix {
        title: format!("{} in `{}`, for every call", fix.title, call.callee_name()),
        edits,
        other_files: vec![crate::diagnostic::FileEdits {
            path: helper.file.path(db).clone(),
            edits: shared,
        }],
        // Every call of the helper changes with it.
        edits_helper: true,
        ..fix.clone()
    })
}

/// `written` (a mapping of `helper`'s body) with each escaped mapping parameter (`{ L }`)
/// written out as `call` binds it (`F % 2`), as a rule reads it when it gives its fix.
fn with_mappings_bound(written: &str, helper: &Helper<'_>, call: &HelperCall) -> String {
    let mut text = written.to_string();
    for (name, bound) in helper.type_params.iter().zip(&call.bound.mappings) {
        if let (Some(name), Some(bound)) = (name, bound) {
            text = text
                .replace(&format!("{{ {name} }}"), bound)
                .replace(&format!("{{{name}}}"), bound);
        }
    }
    text
}

/// The const generic parameter (by position among `generics`) whose value an edit changes,
/// and the value it gives it: `new` is `written` with one whole identifier that names a const
/// parameter replaced by a number (`m![S % 2, { Padding<m![1], W> }]` → `m![S % 2, {
/// Padding<m![1], 2> }]`, or `W` → `2`).
fn const_param_change(
    written: &str,
    new: &str,
    generics: &[Option<String>],
) -> Option<(usize, String)> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let (w, n) = (written.as_bytes(), new.as_bytes());
    let mut start = w.iter().zip(n).take_while(|(a, b)| a == b).count();
    while start > 0 && ident(w[start - 1]) {
        start -= 1;
    }
    let end = w[start..]
        .iter()
        .rev()
        .zip(n[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let name = written.get(start..w.len() - end)?;
    // `# { W }` → `# 4`: the braces that escape the name go with it.
    let name = match name.strip_prefix('{').and_then(|b| b.strip_suffix('}')) {
        Some(inner) => inner.trim(),
        None => name,
    };
    let value = new.get(start..n.len() - end)?;
    let whole = w.get(w.len() - end).is_none_or(|&c| !ident(c));
    let number = !value.is_empty() && value.bytes().all(|c| c.is_ascii_digit());
    if !whole || !number {
        return None;
    }
    let k = generics.iter().position(|g| g.as_deref() == Some(name))?;
    Some((k, value.to_string()))
}

/// The padding of `written` (`S::CastOut`, a use of a type parameter's associated mapping in
/// `helper`, or `Self::Flit` in a trait's default) as the definition of the associated mapping
/// of the type `call` gives the parameter (`HiddenNorm::CastOut`).
fn associated_pad(
    helper: &Helper<'_>,
    call: &HelperCall,
    written: &str,
    new_text: &str,
) -> Option<crate::diagnostic::AliasPad> {
    // `<L as Shard>::Slice` names the same item as `L::Slice`.
    let unqualified = crate::syntax::without_trait(written);
    let (param, item) = unqualified.as_deref().unwrap_or(written).split_once("::")?;
    // `Self::Flit` in a trait's default traced for the type the call names.
    let ty = match (param, &call.bound.self_arg) {
        ("Self", Some(ty)) => ty,
        _ => match helper
            .type_params
            .iter()
            .position(|p| p.as_deref() == Some(param))
        {
            Some(k) => call.bound.types.get(k)?.as_ref()?,
            // A parameter of the method's `impl` block, which the receiver's type binds
            // (`L` of `impl<L: ConvLayer> Conv3x3<L>`, given `Head` by `HEAD: Conv3x3<Head>`).
            None => {
                let k = helper
                    .receiver_params
                    .iter()
                    .position(|p| p.as_deref() == Some(param))?;
                call.bound.receiver.as_ref()?.types.get(k)?.as_ref()?
            }
        },
    };
    ty.mappings
        .iter()
        .any(|(m, _)| m == item)
        .then(|| crate::diagnostic::AliasPad {
            name: format!("{}::{item}", ty.name),
            new_text: new_text.to_string(),
            ..crate::diagnostic::AliasPad::default()
        })
}

/// `d`, found where the caller continues the pass `helper` returns (the steps after the
/// call): the pass the two write together breaks the rule. Reported at the caller's own step
/// it is found at (`.vector_clip(..)` after `saturate(acc)`), or at the call when the step has
/// no place of its own.
fn in_the_continuation(
    d: &Diagnostic,
    call: &HelperCall,
    helper: &Helper<'_>,
    when: Option<&str>,
) -> Diagnostic {
    let values = helper.bindings_text(&call.bound);
    let when = when.map(|w| format!(" when {w}")).unwrap_or_default();
    let past = d
        .span
        .start
        .saturating_sub(crate::model::CALLER_CONTINUATION);
    if past == 0 || d.span.start >= crate::model::CALLER_PASS {
        let message = format!(
            "{} (in the pass `{}` returns, which the code after this call continues; called \
             here with {values}{when})",
            d.message,
            call.callee_name()
        );
        return Diagnostic::new(d.rule, call.span, message).with_severity(d.severity);
    }
    let start = call.span.start as usize + past as usize;
    let at = Span::new(start, start + (d.span.end - d.span.start) as usize);
    let message = format!(
        "{} (in the pass `{}` returns, which this code continues; `{}` is called with \
         {values}{when})",
        d.message,
        call.callee_name(),
        call.callee_name()
    );
    Diagnostic::new(d.rule, at, message).with_severity(d.severity)
}

/// A helper function a call names.
#[derive(Clone)]
pub(crate) struct Helper<'db> {
    pub input: FnInput<'db>,
    pub file: SourceFile,
    pub module: u32,
    /// Which declaration of its module it is.
    pub index: usize,
    /// Where the helper starts in its file.
    pub offset: u32,
    /// Its parameters' names, and its type and const generic parameters' (`None` for a type
    /// parameter), by position.
    params: Vec<String>,
    generics: Vec<Option<String>>,
    /// Its type parameters' names (`None` for a const parameter), by the same positions.
    type_params: Vec<Option<String>>,
    /// For a method, the `impl` block's parameter each generic argument of its type binds.
    receiver_params: Vec<Option<String>>,
    /// Its body with the crate's macro invocations expanded, when it makes any: `input` is
    /// then that body's, and its findings are placed back in the body as written.
    expanded: Option<Arc<crate::body_macros::Expanded>>,
    /// The crate's macros, where a fix of one's own text is made.
    macros: Option<Arc<crate::body_macros::CrateMacros>>,
    /// How the call's module names a function declared beside the helper: `""` in the same
    /// module, `"crate::dequant::"` from another (see [`crate::own_copy`]).
    pub(crate) sibling_prefix: Option<String>,
}

impl<'db> Helper<'db> {
    /// This trait's provided method called on a tensor through an `impl` block of the
    /// tensor's type (`scores.add_alibi(bias)` with `impl AlibiExt for ScoreFp`), as the
    /// block's own method: its receiver `self` is the call's first argument, and `Self` is the
    /// block's type (`self_type`, see [`crate::resolve::self_type_written`]).
    fn into_extension_default(
        mut self,
        db: &'db dyn salsa::Database,
        self_type: Option<String>,
    ) -> Helper<'db> {
        let input = self.input;
        if self.params.first().is_none_or(|p| p != "self") {
            self.params.insert(0, "self".to_string());
        }
        self.input = FnInput::new(
            db,
            input.green(db).clone(),
            input.module_env(db),
            input.local_env(db),
            input.target(db),
            input.library(db),
            self_type,
            input.block_params(db).clone(),
        );
        self
    }

    /// This helper analysed as the compiler traces it: with the crate's macros its body
    /// invokes expanded (`load_keys!(ctx, keys, m![J])`), as its own check does.
    /// Its text as a copy of it is made for one call ([`crate::own_copy`]); `None` when its
    /// body is read with macro invocations expanded, or a call cannot name a function beside
    /// it.
    fn own_text<'h>(
        &'h self,
        db: &'h dyn salsa::Database,
    ) -> Option<crate::own_copy::HelperText<'h>> {
        if self.expanded.is_some() {
            return None;
        }
        Some(crate::own_copy::HelperText {
            path: self.file.path(db).clone(),
            text: self.file.text(db),
            start: self.offset as usize,
            syntax: ra_ap_syntax::SyntaxNode::new_root(self.input.green(db).0.clone()),
            sibling_prefix: self.sibling_prefix.as_deref()?,
        })
    }

    fn with_macros_expanded(mut self, db: &'db dyn salsa::Database) -> Helper<'db> {
        if let Some((input, expanded, macros)) = db::macros_expanded(db, self.file, self.input) {
            self.input = input;
            self.expanded = Some(Arc::new(expanded));
            self.macros = Some(macros.clone());
        }
        self
    }

    /// A finding of the helper's analysis, placed in its body as written (one of the
    /// caller's pass or continuation keeps its place past any text).
    fn placed(&self, d: &Diagnostic) -> Diagnostic {
        match &self.expanded {
            Some(e) if d.span.start < crate::model::CALLER_CONTINUATION => e.place(
                d,
                self.macros
                    .as_deref()
                    .unwrap_or(&crate::body_macros::CrateMacros::default()),
            ),
            _ => d.clone(),
        }
    }

    /// The helper with what a call binds (`bound`, from the caller's model), a method's
    /// receiver naming the `impl` block's parameters it binds.
    pub fn binding(&self, db: &'db dyn salsa::Database, bound: &Bound) -> Binding<'db> {
        Binding::new(db, self.input, self.named(bound), Vec::new())
    }

    /// The helper as a call at `depth` traces it with what the call binds.
    /// Where `span` (relative to the helper's start) is, as a message names it: the file's
    /// name and the line (`stats.rs:25`).
    pub(crate) fn place_of(&self, db: &dyn salsa::Database, span: Span) -> String {
        let text = self.file.text(db);
        let offset = (self.offset as usize).saturating_add(span.start as usize);
        let line = 1 + text.get(..offset).map_or(0, |t| t.matches('\n').count());
        let file = self
            .file
            .path(db)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{file}:{line}")
    }

    /// Whether its body is analysed with the crate's macros expanded (its spans are then
    /// the expansion's).
    pub(crate) fn is_expanded(&self) -> bool {
        self.expanded.is_some()
    }

    pub(crate) fn instance(
        &self,
        db: &'db dyn salsa::Database,
        bound: &Bound,
        depth: u8,
    ) -> Instance<'db> {
        Instance::new(
            db,
            self.input,
            self.named(bound),
            self.file,
            self.module,
            depth,
        )
    }

    /// `bound` with its receiver's positions named by the `impl` block's parameters.
    fn named(&self, bound: &Bound) -> Bound {
        let mut bound = bound.clone();
        if let Some(r) = bound.receiver.as_mut() {
            r.params.clone_from(&self.receiver_params);
        }
        bound
    }
}

impl Helper<'_> {
    /// What a call binds, as `at = 8193, N = 4`.
    fn bindings_text(&self, bound: &Bound) -> String {
        let named = |name: Option<&String>, v: &Option<Value>| {
            Some(format!("`{} = {}`", name?, readable(v.as_ref()?)))
        };
        // A const generic is a size or a count (`W = 2050`), never an address.
        let sized = |name: Option<&String>, v: &Option<Value>| {
            Some(format!("`{} = {}`", name?, v.as_ref()?.text()))
        };
        // A tensor instantiated by the caller's: its element type, or its mappings.
        let typed = |name: &String, t: &Option<crate::model::TensorTy>| {
            Some(match t.as_ref()?.dtype {
                Some(d) => format!("`{name}` of {d}"),
                None => format!("`{name}` with the argument's mappings"),
            })
        };
        // A tensor the caller placed at a known address.
        let placed =
            |name: &String, a: &Option<u64>| Some(format!("`{name}` placed at {:#x}", a.as_ref()?));
        // One placed at an address known only modulo a power of two.
        let low_bits = self.params.iter().zip(&bound.address_low);
        let placed_low = |name: &String, l: &Option<crate::model::value::LowBits>| {
            let l = l.as_ref()?;
            Some(format!(
                "`{name}` placed {} bytes past a multiple of {}",
                l.value,
                l.modulus()
            ))
        };
        // A stream given in mid-pass, and the pass returned to the caller.
        let streams = self.params.iter().zip(&bound.streams);
        let passes = streams.filter_map(|(n, s)| {
            s.as_ref()
                .map(|_| format!("`{n}` in the middle of this function's pass"))
        });
        let returned = bound
            .continued
            .as_ref()
            .map(|_| "its result's pass continued after the call".to_string());
        let generics = self.generics.iter().zip(&bound.generics);
        let params = self.params.iter().zip(&bound.params);
        let tensors = self.params.iter().zip(&bound.tensors);
        let addresses = self.params.iter().zip(&bound.addresses);
        // A mapping parameter the turbofish gives (`Lane = m![J]`).
        let mappings = self
            .type_params
            .iter()
            .zip(&bound.mappings)
            .filter_map(|(n, m)| Some(format!("`{} = m![{}]`", n.as_ref()?, m.as_ref()?.trim())));
        // What a method's receiver binds (`BUS = 4`, `self = Plan { tile: 4 }`).
        let receiver = self.named(bound).receiver.unwrap_or_default();
        let of_receiver: Vec<String> = receiver
            .named_consts()
            .into_iter()
            .map(|(n, v)| format!("`{n} = {}`", readable(v)))
            .chain(
                receiver
                    .named_mappings()
                    .into_iter()
                    .map(|(n, m)| format!("`{n} = m![{}]`", m.trim())),
            )
            .chain(
                receiver
                    .value
                    .as_ref()
                    .filter(|v| {
                        // A unit struct says nothing its type does not.
                        !matches!(
                            v,
                            Value::Variant {
                                fields: crate::model::value::Fields::Unit,
                                ..
                            }
                        )
                    })
                    .map(|v| format!("`self = {}`", readable(v))),
            )
            .collect();
        // A type of the crate a type parameter is given (`S = HiddenNorm`).
        let types = self
            .type_params
            .iter()
            .zip(&bound.types)
            .filter_map(|(n, t)| Some(format!("`{} = {}`", n.as_ref()?, t.as_ref()?.name)));
        let given: Vec<String> = of_receiver
            .into_iter()
            .chain(types)
            .chain(generics.filter_map(|(n, v)| sized(n.as_ref(), v)))
            .chain(mappings)
            .chain(params.filter_map(|(n, v)| named(Some(n), v)))
            .chain(tensors.filter_map(|(n, t)| typed(n, t)))
            .chain(addresses.filter_map(|(n, a)| placed(n, a)))
            .chain(low_bits.filter_map(|(n, l)| placed_low(n, l)))
            .chain(passes)
            .chain(returned)
            .collect();
        match bound.kernel {
            // Only the kernel's grid is new to the helper.
            Some(FnKind::Device { chips, pe }) if given.is_empty() => {
                let chips = chips.map(|n| format!("chip = {n}"));
                let pe = pe.map(|n| format!("pe = {n}"));
                let attr: Vec<String> = chips.into_iter().chain(pe).collect();
                format!("the grid of `#[device({})]`", attr.join(", "))
            }
            _ => given.join(", "),
        }
    }
}

/// A value as a message shows it: an address (a number from 0x100 on) in hex, in a struct's
/// fields too.
fn readable(v: &Value) -> String {
    use crate::model::value::Fields;
    match v {
        Value::Int(k) if *k >= 0x100 => format!("{k:#x}"),
        Value::Variant {
            path,
            fields: Fields::Named(fs),
        } => {
            let body: Vec<String> = fs
                .iter()
                .map(|(n, v)| format!("{n}: {}", readable(v)))
                .collect();
            format!("{path} {{ {} }}", body.join(", "))
        }
        v => v.text(),
    }
}

/// The helper each call names in the caller's module (a function of the crate, or the method
/// of a type for a method call), resolved through the crate's module tree in one pass.
pub(crate) fn resolve_helpers<'db>(
    db: &'db dyn salsa::Database,
    at: &Caller,
    calls: &[&HelperCall],
) -> Vec<Option<Helper<'db>>> {
    let path = at.file.path(db).clone();
    let found = db::in_crate_of(db, at.file, |map| {
        let from = map.module_of(&path, at.module as usize)?;
        Some(
            calls
                .iter()
                .map(|call| {
                    let segs: Vec<String> = call.callee.split("::").map(str::to_string).collect();
                    let (last, ty) = segs.split_last()?;
                    // `Type::name(..)`: an associated function of a type of the crate (its
                    // `impl` block's, or a default of a trait it implements).
                    let associated = || match ty.is_empty() {
                        true => None,
                        false => map.resolve_associated(from, ty, last, ItemKind::Fn),
                    };
                    let (module, index) = match call.method {
                        true => associated()?,
                        false => map.resolve_item(from, &segs).or_else(associated)?,
                    };
                    let item = map.item(module, index)?;
                    let m = map.modules.get(module)?;
                    // A trait's provided method called on a tensor of a block's type.
                    let default_of = match (item.name.contains('·'), ty.first()) {
                        (false, Some(block)) => {
                            map.extension_block(block).map(|b| b.self_type.clone())
                        }
                        _ => None,
                    };
                    // Only a path that reaches the helper from the caller (a module it may
                    // name) reaches a copy beside it.
                    let prefix = match module == from {
                        true => Some(String::new()),
                        false => map.module_path(module).filter(|p| {
                            let mut segs: Vec<String> = p.split("::").map(str::to_string).collect();
                            segs.push(item.name.clone());
                            map.resolve_item(from, &segs) == Some((module, index))
                        }),
                    }
                    .map(|p| if p.is_empty() { p } else { format!("{p}::") });
                    (item.kind == ItemKind::Fn && (item.name.contains("::") || !call.method))
                        .then(|| (m.file.clone(), m.in_file, index, default_of, prefix))
                })
                .collect::<Vec<_>>(),
        )
    })
    .unwrap_or_default();
    found
        .into_iter()
        .map(|f| {
            let (file, in_file, index, default_of, prefix) = f?;
            let file = if file == path {
                at.file
            } else {
                *db::workspace_file(db, &file)?
            };
            let mut helper = helper_at(db, file, in_file, index, at)?;
            helper.sibling_prefix = prefix;
            let helper = match default_of {
                Some(self_type) => helper.into_extension_default(db, self_type),
                None => helper,
            };
            Some(helper.with_macros_expanded(db))
        })
        .collect()
}

/// The function that is the `index`-th declaration of module `in_file` of `file`.
pub(crate) fn helper_at<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    in_file: usize,
    index: usize,
    at: &Caller,
) -> Option<Helper<'db>> {
    let items = db::layout_items(db, file).get(in_file)?;
    let mut first = 0;
    let (item, offset) = items.iter().find(|(item, _)| {
        let n = db::item_facts(db, *item).decls.items.len();
        first += n;
        index < first
    })?;
    let facts = db::item_facts(db, *item);
    let decl = facts
        .decls
        .items
        .get(index + facts.decls.items.len() - first)?;
    // A method (`Type::name`) is a function of its `impl` block (or a trait's default);
    // anything else is the item.
    let (within, receiver_params) = match decl.name.split_once("::") {
        Some((_, method)) => method_in_impl(item.green(db), method)?,
        None => (0, Vec::new()),
    };
    let f = facts.fns.iter().find(|f| f.offset == within)?;
    let offset = &(offset + within);
    let module_env = *db::module_envs(db, file).get(in_file)?;
    // What the functions around it declare, as its file's check gives it: the same input, so
    // a call that binds nothing reads the helper's own analysis.
    let local = EnvText::new(db, f.local.clone(), Vec::new(), f.local_pieces.clone());
    let input = FnInput::new(
        db,
        f.green.clone(),
        module_env,
        local,
        at.target,
        at.library,
        f.self_type.clone(),
        f.block_params.clone(),
    );
    let syntax = ra_ap_syntax::SyntaxNode::new_root(f.green.0.clone());
    let fun = ast::Fn::cast(syntax)?;
    // A library tensor type's method (`DmTensor·3f2a19c0::stage`) takes its receiver first.
    let receiver = (decl.name.contains('·')
        && fun.param_list().and_then(|l| l.self_param()).is_some())
    .then(|| "self".to_string());
    let params = receiver
        .clone()
        .into_iter()
        .chain(
            fun.param_list()
                .into_iter()
                .flat_map(|l| l.params())
                .map(|p| match p.pat() {
                    // `mut at` binds `at`.
                    Some(ast::Pat::IdentPat(i)) => ast::HasName::name(&i)
                        .map(|n| n.text().to_string())
                        .unwrap_or_default(),
                    Some(p) => crate::syntax::node_text(p.syntax()),
                    None => String::new(),
                }),
        )
        .collect();
    // A library tensor type's method has its `impl` block's parameters after its own (see
    // `resolve::extension_items`).
    let block_params = match receiver.is_some() {
        true => ast::Impl::cast(ra_ap_syntax::SyntaxNode::new_root(item.green(db).0.clone()))
            .and_then(|imp| ast::HasGenericParams::generic_param_list(&imp)),
        false => None,
    };
    let (generics, type_params) = fun
        .generic_param_list()
        .into_iter()
        .chain(block_params)
        .flat_map(|l| l.generic_params())
        .filter_map(|p| {
            let name = |n: Option<ast::Name>| n.map(|n| n.text().to_string());
            match p {
                ast::GenericParam::ConstParam(c) => Some((name(c.name()), None)),
                ast::GenericParam::TypeParam(t) => Some((None, name(t.name()))),
                ast::GenericParam::LifetimeParam(_) => None,
            }
        })
        .unzip();
    Some(Helper {
        input,
        file,
        module: in_file as u32,
        index,
        offset: *offset,
        params,
        generics,
        type_params,
        receiver_params,
        expanded: None,
        macros: None,
        sibling_prefix: None,
    })
}

/// Where the method `name` of the `impl` block `imp` starts in it, and the block's parameter
/// each generic argument of its type binds (`impl<const BUS: usize> GemvPlan<BUS>`: `BUS`).
fn method_in_impl(imp: &crate::syntax::GreenKey, name: &str) -> Option<(u32, Vec<Option<String>>)> {
    let node = ra_ap_syntax::SyntaxNode::new_root(imp.0.clone());
    let named = |a: ast::AssocItem| match a {
        ast::AssocItem::Fn(f) if f.name().is_some_and(|n| n.text() == name) => Some(f),
        _ => None,
    };
    // A trait's default: its `Self` and parameters are the implementing type's.
    if let Some(t) = ast::Trait::cast(node.clone()) {
        let f = t.assoc_item_list()?.assoc_items().find_map(named)?;
        let start = u32::from(f.syntax().text_range().start() - t.syntax().text_range().start());
        return Some((start, Vec::new()));
    }
    let imp = ast::Impl::cast(node)?;
    let f = imp.assoc_item_list()?.assoc_items().find_map(named)?;
    let start = u32::from(f.syntax().text_range().start() - imp.syntax().text_range().start());
    let declared: HashSet<String> = imp
        .generic_param_list()
        .into_iter()
        .flat_map(|l| l.generic_params())
        .filter_map(|p| match p {
            ast::GenericParam::ConstParam(c) => Some(c.name()?.text().to_string()),
            ast::GenericParam::TypeParam(t) => Some(t.name()?.text().to_string()),
            ast::GenericParam::LifetimeParam(_) => None,
        })
        .collect();
    let args = match imp.self_ty() {
        Some(ast::Type::PathType(p)) => p
            .path()
            .and_then(|p| ast::HasGenericArgs::generic_arg_list(&p.segment()?)),
        _ => None,
    };
    let params = args
        .into_iter()
        .flat_map(|l| l.generic_args())
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .map(|a| {
            let text = crate::syntax::node_text(a.syntax());
            let name = text
                .trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim();
            declared.contains(name).then(|| name.to_string())
        })
        .collect();
    Some((start, params))
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    /// A kernel that gives `narrow` its cast's output packet: `packet` as the turbofish's
    /// last argument, and the commit that continues the pass at `address`.
    fn narrowing(packet: &str, address: u64) -> String {
        format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n\
             pub fn narrow<'l, const T: Tu, Sl: M, Tm: M, Pk: M, OutPk: M>(\n\
             input: VectorFinalTensor<'l, T, f32, m![1], m![1 # 2], Sl, Tm, Pk>,\n\
             ) -> CastTensor<'l, T, bf16, m![1], m![1 # 2], Sl, Tm, OutPk> {{\n\
             input.cast::<bf16, OutPk>()\n}}\n\
             #[device(chip = 1)]\n\
             pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![A / 8], m![A % 8]>) {{\n\
             let fin = ctx.main.begin(x.view()).fetch::<f32, m![1], m![A % 8]>()\n\
             .collect::<m![1], m![A % 8]>().vector_init()\n\
             .vector_intra_slice_branch(BranchMode::Unconditional).vector_final();\n\
             let _out: DmTensor<bf16, m![1], m![1 # 2], m![A / 8], m![A % 8 # 16]> =\n\
             narrow::<{{ Tu::Main }}, _, _, _, {packet}>(fin).commit({address});\n}}\n"
        )
    }

    fn of(code: &str, text: &str) -> Vec<Diagnostic> {
        crate::check_text(text)
            .into_iter()
            .filter(|d| d.code() == code)
            .collect()
    }

    /// The helper's cast pads `OutPk`, which the caller's turbofish binds: the fix pads that
    /// argument at the call, the one place that changes this call alone.
    #[test]
    fn a_fix_of_a_mapping_parameter_edits_the_argument_that_binds_it() {
        let text = narrowing("m![A % 8 # 8]", 0);
        let found = of("CST-002", &text);
        assert_eq!(found.len(), 1, "{found:#?}");
        let fixed = crate::rules::fix_testing::assert_fix_clears(&text, "CST-002");
        assert!(
            fixed.contains("narrow::<{ Tu::Main }, _, _, _, m![A % 8 # 16]>(fin)"),
            "{fixed}"
        );
        assert!(crate::check_text(&fixed).is_empty(), "{fixed}");
    }

    /// The commit after the call reads the returned stream's type, so the caller reports its
    /// misaligned address itself; the helper's trace of the same pass does not repeat it.
    #[test]
    fn a_finding_the_caller_reports_is_not_repeated_at_the_call() {
        let found = of("ALN-001", &narrowing("m![A % 8 # 16]", 1));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            !found[0].message.contains("in the pass"),
            "{}",
            found[0].message
        );
    }

    /// `stage::<i32>` gives its result the element type `D`, and `row_flits` writes its Time
    /// and Packet twice (the collect's turbofish and its return type): the fix rewrites the
    /// two arguments that bind them, once each.
    #[test]
    fn a_parameter_written_twice_in_the_helper_is_one_edit_at_the_call() {
        let text = include_str!("../../fixtures/rules/COL-001-generic-element.rs");
        let fixed = crate::rules::fix_testing::assert_fix_clears(text, "COL-001");
        assert!(
            fixed.contains("row_flits::<{ Tu::Main }, i32, m![K / 8], m![K % 8]>("),
            "{fixed}"
        );
    }

    /// `let q: CastTensor<.., Lane16> = requant(acc);` binds `requant`'s `OutP` as rustc
    /// infers it: the cast is checked with 16 lanes, and the fix pads the annotation.
    #[test]
    fn a_let_annotation_binds_the_generics_the_turbofish_leaves_out() {
        let text = include_str!("../../fixtures/rules/CST-002-inferred-generic.rs");
        let found = of("CST-002", text);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].message.contains("16 bytes (16 × i8)"),
            "{}",
            found[0].message
        );
        crate::rules::fix_testing::assert_fix_clears(text, "CST-002");
    }
}

//! What a helper's trace gives back to its caller besides the result's type: where each DM
//! tensor of the result is placed and which TRF region each TRF tensor is loaded into
//! ([`FnModel::result`]). A function's tail is read into that value; a caller's `let` binds
//! the tensors of a call's result to what the call's trace gave ([`Builder::results`]).
//!
//! [`FnModel::result`]: crate::model::FnModel::result

use super::reading::span_of;
use super::state::Builder;
use crate::diagnostic::Span;
use crate::model::value::{Fields, Value};
use crate::model::{Kind, TrfRegion};
use ra_ap_syntax::{AstNode, ast};

/// What a result holds nothing of (the evaluator's `()`).
fn nothing() -> Value {
    Value::Tuple(Vec::new())
}

/// Whether a value says where something is (an address or a region somewhere in it).
fn says_anything(v: &Value) -> bool {
    match v {
        Value::Int(_) => true,
        Value::Variant { path, fields } => {
            TrfRegion::named(path).is_some()
                || matches!(fields, Fields::Named(fs) if fs.iter().any(|(_, v)| says_anything(v)))
        }
        Value::Tuple(vs) => vs.iter().any(says_anything),
        _ => false,
    }
}

/// The expression under references, parentheses, blocks, `.await`, `?`, `Some(..)` and
/// `Ok(..)`.
pub(super) fn under_wrappers(e: &ast::Expr) -> Option<ast::Expr> {
    Some(match e {
        ast::Expr::CallExpr(c) if let Some(x) = super::reading::wrapped_value(c) => {
            under_wrappers(&x)?
        }
        ast::Expr::RefExpr(r) => under_wrappers(&r.expr()?)?,
        ast::Expr::ParenExpr(p) => under_wrappers(&p.expr()?)?,
        ast::Expr::AwaitExpr(a) => under_wrappers(&a.expr()?)?,
        ast::Expr::TryExpr(t) => under_wrappers(&t.expr()?)?,
        ast::Expr::BlockExpr(b) if b.unsafe_token().is_some() || b.label().is_none() => {
            under_wrappers(&b.stmt_list()?.tail_expr()?)?
        }
        e => e.clone(),
    })
}

impl Builder<'_> {
    /// What the function's tail gives its caller (see [`crate::model::FnModel::result`]);
    /// `None` when it says nothing.
    pub(super) fn result_of(&self, tail: &ast::Expr) -> Option<Value> {
        let v = self.result_part(tail);
        says_anything(&v).then_some(v)
    }

    fn result_part(&self, e: &ast::Expr) -> Value {
        let Some(e) = under_wrappers(e) else {
            return nothing();
        };
        if let Some(v) = self.call_result(&e) {
            return v.clone();
        }
        if let Some(a) = self.hand_placed_address(&e) {
            return Value::Int(a);
        }
        match &e {
            ast::Expr::PathExpr(_) => {
                super::reading::var_name(&e).map_or_else(nothing, |n| self.var_result(&n))
            }
            ast::Expr::TupleExpr(t) => {
                Value::Tuple(t.fields().map(|f| self.result_part(&f)).collect())
            }
            ast::Expr::RecordExpr(r) => {
                let fields = r
                    .record_expr_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                    .filter_map(|f| {
                        let name = f.field_name()?.to_string();
                        let v = match f.expr() {
                            Some(x) => self.result_part(&x),
                            None => self.var_result(&name),
                        };
                        Some((name, v))
                    })
                    .collect();
                let path = r
                    .path()
                    .map(|p| crate::syntax::node_text(p.syntax()))
                    .unwrap_or_default();
                Value::Variant {
                    path,
                    fields: Fields::Named(fields),
                }
            }
            ast::Expr::MethodCallExpr(m) => m
                .name_ref()
                .map(|n| span_of(n.syntax().text_range()))
                .map_or_else(nothing, |at| self.chain_result(at)),
            // Every arm placing its tensor at one address (`Some(best) => keys.vector_clip(..)
            // .commit(at), None => keys.commit(at)`): that address, whichever is taken.
            ast::Expr::MatchExpr(m) => {
                let arms = m.match_arm_list().into_iter().flat_map(|l| l.arms());
                self.same_in_every(arms.filter_map(|a| a.expr()))
            }
            ast::Expr::IfExpr(i) => {
                let then = i.then_branch().map(ast::Expr::BlockExpr);
                let other = i.else_branch().map(|b| match b {
                    ast::ElseBranch::Block(b) => ast::Expr::BlockExpr(b),
                    ast::ElseBranch::IfExpr(i) => ast::Expr::IfExpr(i),
                });
                match (then, other) {
                    (Some(t), Some(o)) => self.same_in_every([t, o].into_iter()),
                    _ => nothing(),
                }
            }
            _ => nothing(),
        }
    }

    /// What each of the branches `arms` gives, when it is the same for all.
    fn same_in_every(&self, arms: impl Iterator<Item = ast::Expr>) -> Value {
        let mut parts = arms.map(|x| self.result_part(&x));
        let Some(first) = parts.next() else {
            return nothing();
        };
        match parts.all(|p| p == first) {
            true => first,
            false => nothing(),
        }
    }

    /// `T::from_addr(a)` with `a` known: the address the tensor is placed at (a method that
    /// returns `unsafe { DmTensor::from_addr(self.plan.scores) }`).
    fn hand_placed_address(&self, e: &ast::Expr) -> Option<u64> {
        let c = crate::syntax::from_addr_call(e)?;
        let [arg] =
            <[ast::Expr; 1]>::try_from(ast::HasArgList::arg_list(&c)?.args().collect::<Vec<_>>())
                .ok()?;
        match self.value_of(&arg).0 {
            Ok(Value::Int(a)) => Some(a),
            _ => None,
        }
    }

    /// What the trace of the call `e` gave back, when `e` is a call the function makes.
    fn call_result(&self, e: &ast::Expr) -> Option<&Value> {
        if !matches!(e, ast::Expr::CallExpr(_) | ast::Expr::MethodCallExpr(_)) {
            return None;
        }
        let key = (span_of(e.syntax().text_range()), self.iteration);
        self.results.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// What the tensor variable `name` holds: its address (DM) or region (TRF).
    fn var_result(&self, name: &str) -> Value {
        let Some(tv) = self.model.tensors.iter().rev().find(|t| t.name == name) else {
            return nothing();
        };
        match tv.ty.kind {
            Kind::Dm => tv.address.map_or_else(nothing, Value::Int),
            Kind::Trf => {
                let loaded = tv.trf_loaded.map(|(r, _)| r).or_else(|| {
                    let chain = self
                        .model
                        .chains
                        .iter()
                        .rev()
                        .find(|c| c.binding.as_deref() == Some(name))?;
                    chain.steps.last()?.trf_region()
                });
                loaded.map_or_else(nothing, TrfRegion::value)
            }
            _ => nothing(),
        }
    }

    /// What the chain whose last method is named at `at` writes: its address or region.
    fn chain_result(&self, at: Span) -> Value {
        let step = self
            .model
            .chains
            .iter()
            .rev()
            .filter_map(|c| c.steps.last())
            .find(|s| s.span == at);
        let Some(step) = step else {
            return nothing();
        };
        if let Some(r) = step.trf_region() {
            return r.value();
        }
        match step.output.as_ref().map(|t| t.kind) {
            Some(Kind::Dm) => step.address.map_or_else(nothing, Value::Int),
            _ => nothing(),
        }
    }

    /// Binds the tensors a `let` pattern takes from a call's result to what the call's trace
    /// gave back: a DM tensor's address, a TRF tensor's region (with the call, where the
    /// load happens).
    pub(super) fn take_call_result(&mut self, pat: &ast::Pat, init: &ast::Expr) {
        if let Some((v, call)) = self.given_back(init) {
            self.take_part(pat, v, call);
        }
    }

    /// As [`Builder::take_call_result`], for the tensor `name` bound at `span` to `init`
    /// (an element of an array of call results).
    pub(super) fn take_call_result_as(&mut self, name: &str, span: Span, init: &ast::Expr) {
        if let Some((v, call)) = self.given_back(init) {
            self.take_into(name, span, v, call);
        }
    }

    /// What the trace of the call `init` gave back, and the call (where the write happens).
    fn given_back(&self, init: &ast::Expr) -> Option<(Value, Span)> {
        let e = under_wrappers(init)?;
        let v = self.call_result(&e)?.clone();
        let expr = span_of(e.syntax().text_range());
        let call = self.model.calls.iter().rev().find(|c| c.expr == expr)?;
        Some((v, call.span))
    }

    /// The tensor `name` bound at `span` takes what a call's trace gave back for it.
    fn take_into(&mut self, name: &str, span: Span, v: Value, call: Span) {
        let Some(tv) = self
            .model
            .tensors
            .iter_mut()
            .rev()
            .find(|t| t.name == name && t.span == span)
        else {
            return;
        };
        match (tv.ty.kind, v) {
            (Kind::Dm, Value::Int(a)) if tv.address.is_none() => {
                tv.address = Some(a);
                tv.placed_by_call = Some(call);
            }
            (Kind::Trf, Value::Variant { path, .. }) => {
                tv.trf_loaded = TrfRegion::named(&path).map(|r| (r, call));
            }
            _ => {}
        }
    }

    fn take_part(&mut self, pat: &ast::Pat, v: Value, call: Span) {
        match (pat, v) {
            (ast::Pat::IdentPat(i), v) => {
                if let Some(n) = ast::HasName::name(i) {
                    let span = span_of(pat.syntax().text_range());
                    self.take_into(n.text().as_ref(), span, v, call);
                }
            }
            (ast::Pat::TuplePat(t), Value::Tuple(vs)) if t.fields().count() == vs.len() => {
                for (f, v) in t.fields().zip(vs) {
                    self.take_part(&f, v, call);
                }
            }
            (
                ast::Pat::RecordPat(r),
                Value::Variant {
                    fields: Fields::Named(fs),
                    ..
                },
            ) => {
                for f in r
                    .record_pat_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                {
                    let (Some(p), Some(name)) = (f.pat(), f.field_name()) else {
                        continue;
                    };
                    if let Some((_, v)) = fs.iter().find(|(n, _)| *n == name.to_string()) {
                        self.take_part(&p, v.clone(), call);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Builder<'_> {
    /// The engine chains a tail tuple or struct literal holds (`KSlots { a: src.to_dm(..), b:
    /// .. }`), each a tensor of the function named after its place in the result (`KSlots.a`,
    /// `result.0`) that the result keeps live to the end, as a `let` of it would.
    pub(super) fn name_returned_chains(&mut self, tail: &ast::Expr) {
        let Some(e) = under_wrappers(tail) else {
            return;
        };
        let parts: Vec<(String, ast::Expr)> = match &e {
            ast::Expr::TupleExpr(t) => t
                .fields()
                .enumerate()
                .map(|(k, f)| (format!("result.{k}"), f))
                .collect(),
            ast::Expr::RecordExpr(r) => {
                let ty = r
                    .path()
                    .and_then(|p| p.segment()?.name_ref())
                    .map_or_else(|| "result".to_string(), |n| n.text().to_string());
                r.record_expr_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                    .filter_map(|f| Some((format!("{ty}.{}", f.field_name()?), f.expr()?)))
                    .collect()
            }
            _ => return,
        };
        for (name, part) in parts {
            let Some(ast::Expr::MethodCallExpr(m)) = under_wrappers(&part) else {
                continue;
            };
            let Some(last) = m.name_ref().map(|n| span_of(n.syntax().text_range())) else {
                continue;
            };
            self.name_chain_ending_at(last, name, span_of(part.syntax().text_range()), true);
        }
    }

    /// Binds the unbound chain whose last method is named at `last` to `name`, a tensor of
    /// the function written at `at` (`returned`: one the result returns, live to the end).
    /// Whether there was such a chain.
    fn name_chain_ending_at(&mut self, last: Span, name: String, at: Span, returned: bool) -> bool {
        let Some(chain) = self
            .model
            .chains
            .iter_mut()
            .rev()
            .find(|c| c.binding.is_none() && c.steps.last().is_some_and(|s| s.span == last))
        else {
            return false;
        };
        let Some(step) = chain.steps.last() else {
            return false;
        };
        let Some(ty) = step
            .output
            .clone()
            .filter(|t| matches!(t.kind, Kind::Dm | Kind::Trf))
        else {
            return false;
        };
        chain.binding = Some(name.clone());
        let tv = crate::model::TensorVar {
            name: name.clone(),
            // Seen from the chain on, as a `let`'s pattern before its initializer is.
            span: Span::new(at.start as usize, at.start as usize),
            origin: crate::model::Origin::Let,
            ty,
            context: step.context,
            address: step.address,
            from_addr: false,
            address_low: None,
            iteration: chain.iteration,
            trf_loaded: None,
            placed_by_call: None,
        };
        self.model.tensors.push(tv);
        if returned {
            self.model.returned.push((name, at));
        }
        true
    }
}

impl Builder<'_> {
    /// The tensors a struct literal bound by `let name = S { f: helper(..), g: chain, .. }`
    /// holds: each a tensor of the function (`name.f`, as `&name.f` reads it), placed or
    /// loaded where its call's trace or its engine chain says.
    pub(super) fn take_field_results(&mut self, name: &str, init: &ast::Expr) {
        let Some(ast::Expr::RecordExpr(r)) = under_wrappers(init) else {
            return;
        };
        for f in r
            .record_expr_field_list()
            .into_iter()
            .flat_map(|l| l.fields())
        {
            let (Some(field), Some(e)) =
                (f.field_name(), f.expr().and_then(|e| under_wrappers(&e)))
            else {
                continue;
            };
            let expr = span_of(e.syntax().text_range());
            if let ast::Expr::MethodCallExpr(m) = &e
                && let Some(last) = m.name_ref().map(|n| span_of(n.syntax().text_range()))
                && self.name_chain_ending_at(last, format!("{name}.{field}"), expr, false)
            {
                continue;
            }
            let Some(v) = self.call_result(&e).cloned() else {
                continue;
            };
            let Some(call) = self.model.calls.iter().rev().find(|c| c.expr == expr) else {
                continue;
            };
            let at = call.span;
            let Some(super::state::Val::Struct(fields)) = self.vars.get(name) else {
                return;
            };
            let Some(super::state::Val::Tensor { ty, tu, .. }) = fields
                .iter()
                .find(|(n, _)| *n == field.to_string())
                .map(|(_, v)| v)
            else {
                continue;
            };
            let (address, trf_loaded) = match (ty.kind, &v) {
                (Kind::Dm, Value::Int(a)) => (Some(*a), None),
                (Kind::Trf, Value::Variant { path, .. }) => {
                    (None, TrfRegion::named(path).map(|r| (r, at)))
                }
                _ => continue,
            };
            let tv = crate::model::TensorVar {
                name: format!("{name}.{field}"),
                span: span_of(f.syntax().text_range()),
                origin: crate::model::Origin::Let,
                ty: ty.clone(),
                context: *tu,
                address,
                from_addr: false,
                address_low: None,
                iteration: self.iteration,
                trf_loaded,
                placed_by_call: address.map(|_| at),
            };
            self.model.tensors.push(tv);
        }
    }
}

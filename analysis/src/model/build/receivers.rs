//! Methods of the crate's `impl` blocks, traced as the compiler traces them: a method called on
//! a value whose type the call writes or names (`GemvPlan::<LANE_BUS>.run(..)`, `FAST_EMIT.emit(..)`
//! with `const FAST_EMIT: ScoreEmitter<{ FlitLanes::F32 }>`, `plan.run(..)` after `let plan:
//! Plan<4> = ..`) is a helper call whose receiver binds the `impl` block's parameters and
//! `self` ([`crate::model::Receiver`]); the method's body is then checked with them at the call.

use super::calls::{CallSite, turbofish_of};
use super::env::{FnSig, map_of};
use super::state::{Builder, Val};
use crate::model::Receiver;
use crate::model::consts;
use crate::model::value::Value;
use crate::syntax::snippet;
use ra_ap_syntax::ast::HasGenericArgs;
use ra_ap_syntax::{AstNode, ast};

/// The type of a method call's receiver as the call knows it: the type's path (`GemvPlan`,
/// `plans::GemvPlan`) and its generic arguments as written (`<LANE_BUS>`).
#[derive(Clone, Debug)]
pub(super) struct ReceiverTy {
    pub name: String,
    pub args: Vec<ast::GenericArg>,
}

impl ReceiverTy {
    /// The type a path names with its last segment's generic arguments (`GemvPlan::<4>`,
    /// `ScoreEmitter<{ F32 }>`); `None` when the last segment does not name a type (a
    /// type's name starts with a capital letter).
    fn of_path(path: &ast::Path) -> Option<ReceiverTy> {
        let last = path.segment()?;
        let name = last.name_ref()?.text().to_string();
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) || name == "Self" {
            return None;
        }
        let mut segs = vec![name];
        let mut q = path.qualifier();
        while let Some(p) = q {
            segs.push(p.segment()?.name_ref()?.text().to_string());
            q = p.qualifier();
        }
        segs.reverse();
        Some(ReceiverTy {
            name: segs.join("::"),
            args: turbofish_of(last.generic_arg_list()),
        })
    }

    /// The type a type expression names (`Plan<4>`, `&Plan<4>`).
    fn of_type(ty: &ast::Type) -> Option<ReceiverTy> {
        match ty {
            ast::Type::PathType(p) => ReceiverTy::of_path(&p.path()?),
            ast::Type::RefType(r) => ReceiverTy::of_type(&r.ty()?),
            _ => None,
        }
    }

    /// The type written `text` (a `const` item's declared type, kept by its environment).
    fn of_text(text: &str) -> Option<ReceiverTy> {
        ReceiverTy::of_type(&crate::syntax::type_of_text(text)?)
    }
}

impl Builder<'_> {
    /// The type of the receiver `e` where the code says it: a value of a unit or record struct
    /// written at the call (`GemvPlan::<4>`, `Plan { tile: 4 }`, `Plan::new(..)`), a `const`
    /// item of a declared type, or a variable a `let` typed ([`Builder::type_let`]).
    pub(super) fn receiver_type(&self, e: &ast::Expr) -> Option<ReceiverTy> {
        match e {
            ast::Expr::ParenExpr(p) => self.receiver_type(&p.expr()?),
            ast::Expr::RefExpr(r) => self.receiver_type(&r.expr()?),
            ast::Expr::PathExpr(p) => {
                let path = p.path()?;
                if path.qualifier().is_none() {
                    let name = path.segment()?.name_ref()?.text().to_string();
                    if let Some(t) = self.receiver_types.get(&name) {
                        return Some(t.clone());
                    }
                }
                let key = crate::model::consts::path_key(&path);
                if let Some(text) = key.and_then(|k| self.env.value_type(&k)) {
                    return ReceiverTy::of_text(text);
                }
                ReceiverTy::of_path(&path)
            }
            ast::Expr::RecordExpr(r) => ReceiverTy::of_path(&r.path()?),
            // `Plan::new(..)`, `Plan::<4>::new(..)`: a constructor of the type.
            ast::Expr::CallExpr(c) => match c.expr()? {
                ast::Expr::PathExpr(p) => ReceiverTy::of_path(&p.path()?.qualifier()?),
                _ => None,
            },
            // `ops.epilogue`, `PLANS[i]`: a part of a value, typed by the value it holds.
            ast::Expr::FieldExpr(_) | ast::Expr::IndexExpr(_) => self.held_type(e),
            _ => None,
        }
    }

    /// The crate type of the value `e` evaluates to, with the generic arguments its value
    /// carries (`Epilogue::<8> { .. }` is an `Epilogue<8>`; an enum's variant its enum).
    fn held_type(&self, e: &ast::Expr) -> Option<ReceiverTy> {
        let Ok(Value::Variant { path, .. }) = self.partial_value_of(e).0 else {
            return None;
        };
        let (base, args) = match path.split_once("::<") {
            Some((base, args)) => (base, format!("<{args}")),
            None => (path.as_str(), String::new()),
        };
        let ty = match self.env.is_local_type(base) {
            true => base,
            false => base.rsplit_once("::")?.0,
        };
        ReceiverTy::of_text(&format!("{ty}{args}"))
    }

    /// Remembers the type a `let` gives its variable, where a method may be called on it:
    /// its annotation (`let plan: Plan<4> = ..`), else its initializer's.
    pub(super) fn type_let(&mut self, name: &str, l: &ast::LetStmt) {
        let ty = match l.ty() {
            Some(t) => ReceiverTy::of_type(&t),
            None => l.initializer().and_then(|e| self.receiver_type(&e)),
        };
        match ty {
            Some(t) => self.receiver_types.insert(name.to_string(), t),
            None => self.receiver_types.remove(name),
        };
    }

    /// Remembers the type a parameter is declared with (`plan: &GemmPlan<true>`), where a
    /// method may be called on it.
    pub(super) fn type_param(&mut self, name: &str, ty: &ast::Type) {
        if let Some(t) = ReceiverTy::of_type(ty) {
            self.receiver_types.insert(name.to_string(), t);
        }
    }

    /// A method of the crate's `impl` blocks (`sig` its signature) called on a receiver whose
    /// type the model knows: a helper call of `Type::method`, its receiver binding the
    /// `impl` block's parameters. `None` when the receiver's type is not known here.
    pub(super) fn crate_method_call(
        &mut self,
        m: &ast::MethodCallExpr,
        sig: FnSig,
        args: &[ast::Expr],
    ) -> Option<Val> {
        let recv = m.receiver()?;
        let ty = self.receiver_type(&recv)?;
        let name = m.name_ref()?;
        let receiver = self.receiver_of(&recv, &ty);
        // A method the type leaves to a trait's default runs with `Self` the type.
        let own = ty.name.rsplit("::").next().unwrap_or(&ty.name);
        let self_arg = match self.env.has_own_method(&format!("{own}::{}", name.text())) {
            true => None,
            false => self.self_of_default(&ty.name),
        };
        let site = CallSite {
            key: format!("{}::{}", ty.name, name.text()),
            turbofish: turbofish_of(m.generic_arg_list()),
            span: super::reading::span_of(name.syntax().text_range()),
            path: None,
            node: m.syntax(),
            what: format!("the result of `{}`", snippet(m.syntax())),
            method: true,
            receiver: Some(receiver),
            self_arg,
            first_evaluated: None,
        };
        Some(self.helper_call(sig, site, args, None))
    }

    /// `LaneTile::<4>::run(..)`, or `NarrowTile::run(..)` with `type NarrowTile =
    /// LaneTile<4>;`: an associated function of a generic type of the crate, called through
    /// the type given its arguments, which bind the `impl` block's parameters as a method's
    /// receiver does. `None` for any other call.
    pub(super) fn generic_type_call(
        &mut self,
        (callee, last): (&ast::PathExpr, &ast::PathSegment),
        args: &[ast::Expr],
        expected: Option<&crate::model::TensorTy>,
    ) -> Option<Val> {
        let q = callee.path()?.qualifier()?;
        let ty = match ast::HasGenericArgs::generic_arg_list(&q.segment()?) {
            Some(_) => ReceiverTy::of_path(&q)?,
            None => ReceiverTy::of_text(self.env.type_alias(&consts::path_key(&q)?)?)?,
        };
        let fname = last.name_ref()?.text().to_string();
        let key = format!("{}::{fname}", ty.name);
        let sig = self.env.fn_sig(&key)?.clone();
        let receiver = self.receiver_of_type(&ty);
        let site = CallSite {
            key,
            turbofish: turbofish_of(last.generic_arg_list()),
            span: super::reading::span_of(callee.syntax().text_range()),
            path: None,
            node: callee.syntax(),
            what: format!("the result of `{}(..)`", snippet(callee.syntax())),
            method: true,
            receiver: Some(receiver),
            self_arg: None,
            first_evaluated: None,
        };
        Some(self.helper_call(sig, site, args, expected))
    }

    /// `x.stage(ctx, ..)`, with `stage` a method the crate's `impl` blocks give library
    /// tensor types: the one block whose receiver type admits `x`'s (`impl Stage for
    /// HbmTensor<bf16, ..>` for a bf16 tensor), as rustc picks it, traced as a helper whose
    /// first argument is the receiver (with `pass`, a stream's pass so far). `None` when no
    /// block admits it, or more than one does as far as visa-lint knows the receiver's type.
    pub(super) fn extension_call(
        &mut self,
        m: &ast::MethodCallExpr,
        args: &[ast::Expr],
        (recv, pass): (&Val, Option<Vec<crate::model::Step>>),
    ) -> Option<Val> {
        let Val::Tensor { ty, .. } = recv else {
            return None;
        };
        let name = m.name_ref()?;
        // A block for a type of the crate (`impl Stage for Plan`) is not a tensor type's.
        let candidates: Vec<(&str, &FnSig)> = self
            .env
            .tensor_methods(name.text())
            .into_iter()
            .filter(|(_, sig)| sig.params.first().is_some_and(Option::is_some))
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let admitting: Vec<(&str, &FnSig)> = candidates
            .into_iter()
            .filter(|(_, sig)| {
                sig.params
                    .first()
                    .and_then(Option::as_ref)
                    .is_some_and(|declared| declared.admits(ty))
            })
            .collect();
        let [(key, sig)] = admitting.as_slice() else {
            return self.extension_not_picked(m, admitting.len());
        };
        let (key, sig) = (key.to_string(), (*sig).clone());
        let all: Vec<ast::Expr> = std::iter::once(m.receiver()?)
            .chain(args.iter().cloned())
            .collect();
        let site = CallSite {
            key,
            turbofish: turbofish_of(m.generic_arg_list()),
            span: super::reading::span_of(name.syntax().text_range()),
            path: None,
            node: m.syntax(),
            what: format!("the result of `{}`", snippet(m.syntax())),
            method: true,
            receiver: None,
            self_arg: None,
            first_evaluated: Some((recv.clone(), pass)),
        };
        Some(self.helper_call(sig, site, &all, None))
    }

    /// A method the crate's `impl` blocks give library tensor types, called on a tensor that
    /// `admitting` of them admit as visa-lint knows its type (none, or several): not followed,
    /// and said (VL-009 at the call).
    fn extension_not_picked(&mut self, m: &ast::MethodCallExpr, admitting: usize) -> Option<Val> {
        let name = m.name_ref()?;
        let why = match admitting {
            0 => "no `impl` block of the crate that gives it is for the receiver's type",
            _ => {
                "several `impl` blocks of the crate that give it may be for the receiver's type, as far as visa-lint knows it"
            }
        };
        let what = format!("`{}` ({why})", snippet(m.syntax()));
        let at = super::reading::span_of(name.syntax().text_range());
        let used = m
            .receiver()
            .map_or(at, |r| super::reading::span_of(r.syntax().text_range()));
        self.not_analysed(crate::model::problem::NotFollowed::Lost {
            at,
            what: what.clone(),
            used,
        });
        Some(Val::Lost(super::state::Construct::new(m.syntax(), what)))
    }

    /// What the receiver `recv` of type `ty` gives its method: its value, where it has fields,
    /// and its type's generic arguments.
    fn receiver_of(&self, recv: &ast::Expr, ty: &ReceiverTy) -> Receiver {
        // A unit struct written at the call (`GemvPlan::<4>`) binds no field, but the
        // methods its method calls run on it.
        let unit = || {
            let ast::Expr::PathExpr(p) = recv else {
                return None;
            };
            let last = p.path()?.segment()?.name_ref()?.text().to_string();
            ty.name
                .rsplit("::")
                .next()
                .is_some_and(|t| t == last)
                .then_some(Value::Variant {
                    path: last,
                    fields: crate::model::value::Fields::Unit,
                })
        };
        // A receiver known in part (`Lora::new(cfg)` with one field not known) keeps what is
        // known: its method reads those fields, and says why of the others.
        let value = self
            .partial_value_of(recv)
            .0
            .ok()
            .filter(|v| matches!(v, Value::Variant { .. } | Value::Tuple(_) | Value::Array(_)))
            .or_else(unit);
        Receiver {
            value,
            ..self.receiver_of_type(ty)
        }
    }

    /// What a value of type `ty` gives its method through the type: its generic arguments,
    /// each a constant or a mapping.
    fn receiver_of_type(&self, ty: &ReceiverTy) -> Receiver {
        let generics: Vec<Option<Value>> =
            ty.args.iter().map(|a| self.const_arg_value(a)).collect();
        let mappings = ty
            .args
            .iter()
            .zip(&generics)
            .map(|(a, v)| match v {
                Some(_) => None,
                None => Some(map_of(a, &self.scope)?.layout.as_deref()?.to_expr()),
            })
            .collect();
        let types = ty
            .args
            .iter()
            .zip(&generics)
            .map(|(a, v)| v.is_none().then(|| self.type_arg(a)).flatten())
            .collect();
        Receiver {
            value: None,
            generics,
            mappings,
            types,
            params: Vec::new(),
        }
    }

    /// In a method of `impl ty`, `Self::NAME` is `ty::NAME`: the type's associated constants
    /// and values, under `Self` too.
    pub(super) fn name_self(&mut self, ty: &str) {
        let prefix = format!("{ty}::");
        for (k, v) in consts::under_self(&self.consts, ty) {
            self.scope.consts.insert(k.clone(), v);
            self.consts.insert(k, v);
        }
        let mut env = Some(self.env);
        while let Some(e) = env {
            for (k, v) in &e.values {
                if let Some(item) = k.strip_prefix(&prefix) {
                    self.values
                        .entry(format!("Self::{item}"))
                        .or_insert_with(|| Ok(v.clone()));
                }
            }
            for (k, body) in &e.deferred_consts {
                if let Some(item) = k.strip_prefix(&prefix) {
                    self.deferred_const(k, item, body);
                }
            }
            env = e.parent.as_deref();
        }
    }

    /// The associated constant `key` (`GemmPlan::TRF`), whose body reads its `impl` block's
    /// parameters, evaluated with what this method's trace binds them to; unknown, with the
    /// reason, where they are not bound.
    fn deferred_const(&mut self, key: &str, item: &str, body: &str) {
        let Some(e) = crate::syntax::expr_of_text(body) else {
            return;
        };
        let v = self.value_of(&e).0;
        for name in [format!("Self::{item}"), key.to_string()] {
            match &v {
                Ok(v) => self.bind_generic(&name, v.clone()),
                Err(u) => {
                    self.values.insert(name, Err(u.clone()));
                }
            }
        }
    }

    /// In a method traced at a call, `self` is a value of the `impl` block's type with the
    /// parameters the call bound (`Plan<N>` with `N = 8`): a method it calls on `self`
    /// (`self.slot(i)`) is traced with them too.
    pub(super) fn type_self(&mut self, ty: &str, r: &Receiver) {
        let params: Vec<&str> = r
            .params
            .iter()
            .map(|p| p.as_deref().unwrap_or("_"))
            .collect();
        let text = match params.is_empty() {
            true => ty.to_string(),
            false => format!("{ty}<{}>", params.join(", ")),
        };
        if let Some(t) = ReceiverTy::of_text(&text) {
            self.receiver_types.insert("self".to_string(), t);
        }
    }

    /// Binds, in a method traced at a call, what the call's receiver gives the `impl` block's
    /// parameters (named where the call was resolved) and `self`.
    pub(super) fn bind_receiver(&mut self, r: &Receiver) {
        for (name, v) in r.named_consts() {
            self.bind_generic(name, v.clone());
        }
        for (name, text) in r.named_mappings() {
            self.bind_named_mapping(name, text);
        }
        for (name, ty) in r.named_types() {
            self.bind_type_arg(name, ty);
        }
        if let Some(v) = &r.value {
            self.bind("self", v.clone());
        }
    }
}

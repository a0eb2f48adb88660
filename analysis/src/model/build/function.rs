//! One function's model: its parameters, its generic and device attributes, its body, and the
//! Sequencer page's simplified buffer interface.

use super::buf_tensor::buf_tensor_chains;
use super::env::{Env, device_attr, plain, tensor_type};
use super::reading::{param_assignments, pat_name, span_of};
use super::state::{Builder, Construct, MAX_ITERATIONS, Val, many_type, struct_param};
use crate::diagnostic::Span;
use crate::library::Generation;
use crate::mapping::Scope;
use crate::model::problem::Problem;
use crate::model::types::TensorTy;
use crate::model::value;
use crate::model::{FnKind, FnModel, GenericTensor, Origin, TensorVar};
use crate::syntax::snippet;
use ra_ap_syntax::{AstNode, ast};
use std::collections::HashMap;

/// Builds the model of one function. `scope` holds the module's axes and aliases plus the
/// function's own (and its generic parameters); `bound` holds what a call binds its
/// parameters to (nothing, when the function is checked on its own). With the model, the
/// scope its rules read: `scope` with the mapping parameters the call binds (`Pk` is
/// `m![K % 32]`), so that a fix can rewrite what the parameter stands for.
pub fn build_fn(
    f: &ast::Fn,
    env: &Env,
    scope: Scope,
    (library, self_type): (crate::library::Generation, Option<&str>),
    (bound, results): (&crate::model::Bound, &crate::model::CallResults),
) -> (FnModel, Scope) {
    let with_local = env_with_local_aliases(f, env, &scope, self_type);
    let env = with_local.as_ref().unwrap_or(env);
    let mut b = Builder::for_fn(f, env, scope, library);
    b.results.clone_from(results);
    if !matches!(b.model.kind, FnKind::Device { .. }) {
        b.model.traced_in = bound.kernel;
    }
    if library == Generation::OptStd {
        b.record_refusals(f, bound);
    }
    b.bind_const_generics(f, &bound.generics);
    b.bind_mapping_generics(f, bound);
    b.bind_type_generics(f, &bound.types);
    if let Some(r) = &bound.receiver {
        b.bind_receiver(r);
    }
    if let Some(t) = &bound.self_arg {
        b.bind_type_arg("Self", t);
    }
    // `Self` of a trait's default is the type the call names.
    let self_type = self_type.or(bound.self_arg.as_ref().map(|t| t.name.as_str()));
    // The head of a library tensor type's `impl` block names no type of the crate.
    let self_name = self_type.map(|t| (crate::resolve::self_type_name(t), t));
    let of_crate = |(name, t): &(String, &str)| name == t || !crate::library::is_tensor_type(name);
    if let Some((ty, _)) = self_name.filter(of_crate) {
        b.name_self(&ty);
        // Checked on its own, the method still knows `self`'s type, without its parameters.
        let unbound = crate::model::Receiver::default();
        b.type_self(&ty, bound.receiver.as_ref().unwrap_or(&unbound));
    }
    // A method of a library tensor type's `impl` block takes its receiver first.
    let first = usize::from(b.tensor_self(f, self_type, bound));
    if first == 0 {
        b.receiver_unknown_unless_bound(f);
    }
    if let Some(pl) = f.param_list() {
        for (k, p) in pl.params().enumerate() {
            b.param(f, k + first, &p, bound);
        }
    }
    b.ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
    if let Some(body) = f.body() {
        let ret = b.ret.clone();
        if let (Some(ast::Type::TupleType(t)), Some(tail)) = (
            f.ret_type().and_then(|r| r.ty()),
            body.stmt_list().and_then(|l| l.tail_expr()),
        ) {
            b.type_tuple(&tail, &t);
        }
        b.block(&body, ret, None);
        if let Some(tail) = body.stmt_list().and_then(|l| l.tail_expr()) {
            b.model.returned = b.returned_by(&tail);
            b.name_returned_chains(&tail);
            b.model.result = b.result_of(&tail);
        }
        if let Some(after) = &bound.continued {
            b.continue_returned(after);
        }
    }
    b.settle_continuations();
    if env.is_local_type("BufTensor") {
        let chains = buf_tensor_chains(f, &b.scope);
        b.model.chains.extend(chains);
    }
    (b.model, b.scope)
}

/// `env` with the whole tensor type aliases declared in `f`'s body (`type Out =
/// DmTensor<..>;`) and, for a method of a library tensor type's `impl` block, the block's
/// associated tensor types as `Self::Out`: the types they name there; `None` when there are
/// none.
fn env_with_local_aliases(
    f: &ast::Fn,
    env: &Env,
    scope: &Scope,
    self_type: Option<&str>,
) -> Option<Env> {
    // A library tensor type's `impl` block's associated types (`type Weights = Trf;`), which
    // its methods name `Self::Weights` (see `resolve::self_type_written`).
    let assoc: Vec<(String, ast::Type)> = self_type
        .and_then(crate::syntax::impl_head)
        .and_then(|imp| imp.assoc_item_list())
        .into_iter()
        .flat_map(|l| l.assoc_items())
        .filter_map(|a| match a {
            ast::AssocItem::TypeAlias(t) => {
                Some((format!("Self::{}", ast::HasName::name(&t)?.text()), t.ty()?))
            }
            _ => None,
        })
        .collect();
    let local: Vec<(String, ast::Type)> = f
        .body()
        .map(|b| {
            crate::syntax::nodes_of_kinds(b.syntax(), &[ra_ap_syntax::SyntaxKind::TYPE_ALIAS])
                .into_iter()
                .filter_map(ast::TypeAlias::cast)
                .filter(|a| {
                    a.syntax()
                        .ancestors()
                        .skip(1)
                        .find_map(ast::Fn::cast)
                        .is_some_and(|g| g.syntax() == f.syntax())
                })
                .filter_map(|a| Some((ast::HasName::name(&a)?.text().to_string(), a.ty()?)))
                .collect()
        })
        .unwrap_or_default();
    if local.is_empty() && assoc.is_empty() {
        return None;
    }
    let mut e = env.clone();
    e.scope = scope.clone();
    for (n, ty) in assoc.iter().chain(&local) {
        if let Some(mut t) = tensor_type(ty, &e, scope, &mut Vec::new()) {
            for m in t.maps.values_mut() {
                m.span = None;
            }
            e.tensor_aliases.insert(n.clone(), t);
        }
    }
    Some(e)
}

impl<'a> Builder<'a> {
    /// A builder for `f`'s body, with nothing bound yet.
    fn for_fn(f: &ast::Fn, env: &'a Env, scope: Scope, library: Generation) -> Builder<'a> {
        let name = ast::HasName::name(f)
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        let name_span = ast::HasName::name(f).map_or(span_of(f.syntax().text_range()), |n| {
            span_of(n.syntax().text_range())
        });
        let kind = match device_attr(f) {
            Some((chips, pe)) => FnKind::Device { chips, pe },
            None if f.async_token().is_some() => FnKind::Host,
            None => FnKind::Plain,
        };
        Builder {
            env,
            scope,
            vars: HashMap::new(),
            ends: HashMap::new(),
            root: None,
            last_ends: Vec::new(),
            call_expected: None,
            declared: HashMap::new(),
            receiver_types: HashMap::new(),
            type_args: HashMap::new(),
            type_bounds: type_bounds(f),
            consts: env.consts.clone(),
            values: HashMap::new(),
            model: FnModel::empty(name, name_span, kind, library),
            ret: None,
            tuple_types: HashMap::new(),
            iteration: None,
            iterations_left: MAX_ITERATIONS,
            lost_reported: std::collections::HashSet::new(),
            counters: HashMap::new(),
            tensor_arrays: HashMap::new(),
            closure_runs: HashMap::new(),
            with_closures: None,
            run_time_params: HashMap::new(),
            contexts: std::collections::HashSet::new(),
            results: Vec::new(),
            skipping: false,
            followed: std::collections::HashSet::new(),
            undecided: 0,
            assigned: Vec::new(),
            changed_by_calls: Vec::new(),
            mutating: value::any_mut_self(&env.value_fns),
        }
    }

    /// What furiosa-opt-std 0.6 refuses in `f`: the constructs of a device function its
    /// compiler refuses, the immediates that do not fold of a helper traced from one (with
    /// the run-time values `bound` gives its parameters), and the defects of the slots it
    /// writes.
    fn record_refusals(&mut self, f: &ast::Fn, bound: &crate::model::Bound) {
        use crate::model::refusals::{self, Folding};
        let params = f.param_list().into_iter().flat_map(|l| l.params());
        for (p, what) in params.zip(&bound.run_time) {
            if let (Some(name), Some(what)) = (p.pat().as_ref().and_then(pat_name), what) {
                self.run_time_params.insert(name, *what);
            }
        }
        let device = matches!(self.model.kind, FnKind::Device { .. });
        let traced = matches!(self.model.traced_in, Some(FnKind::Device { .. }));
        if device || traced {
            let refused = {
                let folding = Folding {
                    of_crate: &|callee: &str| self.of_crate(callee),
                    param: &|name: &str| self.run_time_params.get(name).copied(),
                };
                match device {
                    true => refusals::refusals(f, &folding),
                    false => refusals::helper_immediates(f, &folding),
                }
            };
            self.model
                .problems
                .extend(refused.into_iter().map(Problem::Refused));
        }
        let defects = crate::model::refusals::slot_defects(f)
            .into_iter()
            .map(Problem::Refused);
        self.model.problems.extend(defects);
    }

    /// The `k`th parameter `p` of `f`: its value (what the call binds, else unknown, saying
    /// why) and what it holds: a tensor, a tuple, struct or array of tensors, or something
    /// not followed.
    fn param(&mut self, f: &ast::Fn, k: usize, p: &ast::Param, bound: &crate::model::Bound) {
        let Some(pat) = p.pat() else { return };
        let Some(pname) = pat_name(&pat) else {
            return;
        };
        if p.ty().is_some_and(|t| is_context(&t)) {
            self.contexts.insert(pname.clone());
        }
        // `main: &mut TuContext<{ Tu::Main }>`: the Tensor Unit the caller passes (`&mut
        // ctx.main`), which begins passes as `ctx.main` does; `tdma: &mut DmaContext<{
        // Dma::Tensor }>` a DMA engine, as `ctx.tdma` is.
        if let Some(v) = p.ty().as_ref().and_then(|t| self.engine_context(t)) {
            self.vars.insert(pname.clone(), v);
        } else if let Some(v) = p
            .ty()
            .zip(bound.params.get(k).cloned().flatten())
            .and_then(|(t, given)| generic_context(&t, &given))
        {
            self.vars.insert(pname.clone(), v);
        }
        // `plan: &GemmPlan<true>`: a method of the crate called on it knows its type.
        if let Some(t) = p.ty() {
            self.type_param(&pname, &t);
        }
        // `mut at: usize` assigned in the body: followed as a `let mut` is (see
        // `Builder::bind_let_value`), or unknown where an assignment repeats.
        let mutable = matches!(&pat, ast::Pat::IdentPat(i) if i.mut_token().is_some());
        let assigned = mutable
            .then(|| {
                param_assignments(
                    f,
                    &pname,
                    Some(&self.env.value_fns).filter(|_| self.mutating),
                )
            })
            .flatten();
        if assigned == Some(true) {
            self.followed.insert(pname.clone());
        }
        match bound.params.get(k).cloned().flatten() {
            Some(_) if assigned == Some(false) => {
                let why = value::Unknown::assigned(&pname);
                self.values.insert(pname.clone(), Err(why));
            }
            Some(v) => self.bind(&pname, v),
            None => {
                let why = format!(
                    "`{pname}` is a parameter of `{}`: its body is checked on its own without its callers' values, and again at each call that gives it a known one",
                    self.model.name
                );
                self.values
                    .insert(pname.clone(), Err(value::Unknown::new(why)));
            }
        }
        match self.param_type(f, k, p, &pname, bound) {
            Some(ty) => self.tensor_param(&pat, pname, ty, k, bound),
            None => {
                if let Some(v) = self.param_of_tensors(p) {
                    self.name_array_elements(p, &pname, &v);
                    self.vars.insert(pname, v);
                } else if p
                    .ty()
                    .is_some_and(|t| !plain(&t) && self.engine_context(&t).is_none())
                    && !matches!(self.vars.get(&pname), Some(Val::TuCtx(_) | Val::Dma(_)))
                {
                    // A parameter of a type visa-lint cannot type (a generic, a struct): a
                    // tensor in it is not followed.
                    let what = format!("the parameter `{}`", snippet(p.syntax()));
                    let lost = Val::Lost(Construct::new(p.syntax(), what));
                    self.vars.insert(pname, lost);
                }
            }
        }
    }

    /// `self` of a method checked on its own (no call gave it a receiver): its fields
    /// (`self.plan.base`) are not known, which a rule reading them says (VL-009).
    fn receiver_unknown_unless_bound(&mut self, f: &ast::Fn) {
        if f.param_list().and_then(|l| l.self_param()).is_none() || self.values.contains_key("self")
        {
            return;
        }
        let why = format!(
            "`self` is the receiver of `{}`: its body is checked on its own without its callers' values, and again at each call that gives it a known one",
            self.model.name
        );
        self.values
            .insert("self".to_string(), Err(value::Unknown::new(why)));
    }

    /// `self` of a method of an `impl` block for a library tensor type (`self_type` the type
    /// as written, `DmTensor<bf16, Chip, ..>`): a tensor parameter, the first a call binds, of
    /// that type as the call instantiates it. Whether the method has one.
    fn tensor_self(
        &mut self,
        f: &ast::Fn,
        self_type: Option<&str>,
        bound: &crate::model::Bound,
    ) -> bool {
        let Some(sp) = f.param_list().and_then(|l| l.self_param()) else {
            return false;
        };
        // `impl Stage for Row` with `type Row = DmTensor<..>`: the alias's tensor type.
        if let Some(declared) = self_type.and_then(|t| self.env.tensor_alias(t)).cloned() {
            let at_call = bound.tensors.first().cloned().flatten();
            let what = span_of(sp.syntax().text_range());
            self.tensor_param_at(
                "self".to_string(),
                what,
                at_call.unwrap_or(declared),
                0,
                bound,
            );
            return true;
        }
        let Some(imp) = self_type.and_then(crate::syntax::impl_head) else {
            return false;
        };
        let Some(written) = imp.self_ty() else {
            return false;
        };
        // A library tensor type, or an alias of one (`impl<E: M> Stage<E> for Band<E>`,
        // `impl<'l> ToBf16<'l> for DecodeFinal<'l>`).
        let is_tensor = crate::syntax::last_path_name(&written).is_some_and(|n| {
            crate::library::is_tensor_type(&n)
                || self.env.generic_tensor_alias(&n).is_some()
                || self.env.tensor_alias(&n).is_some()
        });
        if !is_tensor {
            return false;
        }
        // The block's type parameters are generics of the method's scope (`db::analyse_fn` put
        // them there for its mapping sites); the call binds them after the method's own (see
        // `resolve::extension_items`).
        let own = super::calls::type_and_const_params(f).len();
        let params = ast::HasGenericParams::generic_param_list(&imp)
            .into_iter()
            .flat_map(|l| l.generic_params())
            .filter(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)));
        for (k, p) in params.enumerate() {
            if let ast::GenericParam::TypeParam(t) = p
                && let Some(n) = ast::HasName::name(&t)
                && let Some(Some(text)) = bound.mappings.get(own + k)
            {
                self.bind_mapping_generic(n.text().as_ref(), text);
            }
        }
        // The block's head is written before the method, outside its text: its mappings are
        // named at `self`, and an alias among them is padded where it is defined, as one a
        // tensor alias names is.
        let what = span_of(sp.syntax().text_range());
        let declared =
            tensor_type(&written, self.env, &self.scope, &mut Vec::new()).map(|mut t| {
                for m in t.maps.values_mut() {
                    m.span = Some(what);
                    m.in_tensor_alias = true;
                }
                t
            });
        let at_call = bound.tensors.first().cloned().flatten();
        if let (Some(declared), Some(at_call)) = (&declared, &at_call) {
            self.bind_generic_mappings(declared, at_call);
        }
        if let Some(ty) = at_call.or(declared) {
            self.tensor_param_at("self".to_string(), what, ty, 0, bound);
        }
        true
    }

    /// Binds each mapping type parameter a declared type names (`E` of `&HbmTensor<bf16,
    /// Chip, E>`) to the mapping the call's argument gives it, wherever the helper names it
    /// (`to_dm::<.., E>`).
    fn bind_generic_mappings(&mut self, declared: &TensorTy, at_call: &TensorTy) {
        for (slot, mine) in declared.maps.iter() {
            if mine.layout.is_none()
                && let Some(given) = at_call.maps.get(&slot).and_then(|m| m.layout.as_deref())
            {
                self.bind_mapping_generic(mine.text.trim(), &given.to_expr());
            }
        }
    }

    /// The tensor type of the `k`th parameter, its generics as the call instantiates them; a
    /// generic one no call instantiates is recorded (its element type is not checked here).
    fn param_type(
        &mut self,
        f: &ast::Fn,
        k: usize,
        p: &ast::Param,
        pname: &str,
        bound: &crate::model::Bound,
    ) -> Option<TensorTy> {
        let at_call = bound.tensors.get(k).cloned().flatten();
        let Some(declared) = p
            .ty()
            .and_then(|t| tensor_type(&t, self.env, &self.scope, &mut self.model.problems))
        else {
            // A type visa-lint does not read, instantiated by the call's tensor.
            return at_call;
        };
        if let Some(at_call) = at_call {
            self.bind_generic_mappings(&declared, &at_call);
            return Some(declared.instantiated_by(&at_call).unwrap_or(declared));
        }
        let generic = p.ty().map(|t| generic_in(f, &t)).unwrap_or_default();
        let generic = generic.into_iter().map(|(generic, at)| GenericTensor {
            param: pname.to_string(),
            generic,
            at,
        });
        self.model.generic_tensors.extend(generic);
        Some(declared)
    }

    /// A parameter of tensor type `ty`: a tensor of the function, placed where the call says,
    /// in the middle of the caller's pass when the call gives it one.
    fn tensor_param(
        &mut self,
        pat: &ast::Pat,
        pname: String,
        ty: TensorTy,
        k: usize,
        bound: &crate::model::Bound,
    ) {
        let at = span_of(pat.syntax().text_range());
        self.tensor_param_at(pname, at, ty, k, bound);
    }

    /// A parameter of tensor type `ty`, named `pname` at `at` (see [`Self::tensor_param`]).
    fn tensor_param_at(
        &mut self,
        pname: String,
        at: Span,
        ty: TensorTy,
        k: usize,
        bound: &crate::model::Bound,
    ) {
        self.model.tensors.push(TensorVar {
            name: pname.clone(),
            span: at,
            origin: Origin::Param,
            ty: ty.clone(),
            context: None,
            // Where the caller placed it, when the call says.
            address: bound.addresses.get(k).copied().flatten(),
            from_addr: false,
            address_low: bound.address_low.get(k).copied().flatten(),
            iteration: None,
            trf_loaded: None,
            placed_by_call: None,
        });
        // A stream in the middle of the caller's pass runs on the caller's Tensor Unit.
        let mut tu = None;
        if let Some(Some(pass)) = bound.streams.get(k) {
            tu = pass.iter().rev().find_map(|s| s.context);
            self.continue_callers_pass(&pname, pass);
        }
        let tensor = Val::Tensor {
            ty,
            tu,
            engines: Vec::new(),
        };
        self.vars.insert(pname, tensor);
    }

    /// An array parameter of tensors whose length is known (`tables: [&HbmTensor<..>;
    /// NUM_TABLES]`): its elements are `tables[0]`, `tables[1]`, .., each a tensor of the
    /// element type, so a loop over it (`tables.iter().enumerate()`) is unrolled as the
    /// compiler's trace runs it, with the index known in each iteration.
    fn name_array_elements(&mut self, p: &ast::Param, pname: &str, v: &Val) {
        const MAX_ELEMENTS: u64 = 64;
        let mut ty = p.ty();
        while let Some(ast::Type::RefType(r)) = &ty {
            ty = r.ty();
        }
        let (Some(ast::Type::ArrayType(a)), Val::Many { elem, .. }) = (ty, v) else {
            return;
        };
        let Some(n) = a
            .const_arg()
            .and_then(|c| c.expr())
            .and_then(|e| self.const_int(&e))
        else {
            return;
        };
        if n > MAX_ELEMENTS {
            return;
        }
        let names: Vec<String> = (0..n).map(|k| format!("{pname}[{k}]")).collect();
        for name in &names {
            self.vars.insert(name.clone(), (**elem).clone());
        }
        self.tensor_arrays.insert(pname.to_string(), names);
    }

    /// A parameter holding tensors field by field: a tuple of tensors (`inputs: (&HbmTensor<..>,
    /// &DmTensor<..>)`), a struct of the crate holding tensors (`inputs: Inputs<'_>`), or an
    /// array, slice or `Vec` of them.
    fn param_of_tensors(&mut self, p: &ast::Param) -> Option<Val> {
        let ty = p.ty()?;
        if let ast::Type::TupleType(tuple) = &ty
            && tuple.fields().next().is_some()
        {
            let fields: Vec<Val> = tuple
                .fields()
                .map(
                    |f| match tensor_type(&f, self.env, &self.scope, &mut self.model.problems) {
                        Some(ty) => Val::Tensor {
                            ty,
                            tu: None,
                            engines: Vec::new(),
                        },
                        None => Val::Unknown,
                    },
                )
                .collect();
            if fields.iter().any(|v| matches!(v, Val::Tensor { .. })) {
                return Some(Val::Tuple(fields));
            }
        }
        if let Some(fields) = struct_param(&ty, self.env) {
            return Some(fields);
        }
        let many = many_type(&ty, self.env, &self.scope, &mut self.model.problems)?;
        Some(Val::many(many))
    }
}

impl Builder<'_> {
    /// The tensor variables a function's tail gives its caller: a variable, and those a
    /// tuple, a struct literal, a tuple struct or `Some`/`Ok` holds (not those an engine
    /// chain in the tail reads: the chain consumes them).
    fn returned_by(&self, tail: &ast::Expr) -> Vec<(String, Span)> {
        let mut out = Vec::new();
        let mut todo = vec![tail.clone()];
        while let Some(e) = todo.pop() {
            match e {
                ast::Expr::PathExpr(_) | ast::Expr::RefExpr(_) => {
                    if let Some(n) = super::reading::var_name(&e)
                        && matches!(self.vars.get(&n), Some(Val::Tensor { .. }))
                    {
                        out.push((n, span_of(e.syntax().text_range())));
                    }
                }
                ast::Expr::ParenExpr(p) => todo.extend(p.expr()),
                ast::Expr::BlockExpr(b) => {
                    todo.extend(b.stmt_list().and_then(|l| l.tail_expr()));
                }
                ast::Expr::TupleExpr(t) => todo.extend(t.fields()),
                ast::Expr::RecordExpr(r) => todo.extend(
                    r.record_expr_field_list()
                        .into_iter()
                        .flat_map(|l| l.fields())
                        .filter_map(|f| f.expr()),
                ),
                ast::Expr::CallExpr(c) => {
                    todo.extend(
                        ast::HasArgList::arg_list(&c)
                            .into_iter()
                            .flat_map(|l| l.args()),
                    );
                }
                _ => {}
            }
        }
        out
    }
}

/// The type parameters of `f` (not lifetimes or consts) that `ty` names, each with where
/// `f` declares it.
pub(super) fn generic_in(f: &ast::Fn, ty: &ast::Type) -> Vec<(String, Span)> {
    let declared: Vec<(String, Span)> = ast::HasGenericParams::generic_param_list(f)
        .into_iter()
        .flat_map(|l| l.generic_params())
        .filter_map(|p| match p {
            ast::GenericParam::TypeParam(t) => {
                let name = ast::HasName::name(&t)?;
                Some((name.text().to_string(), span_of(name.syntax().text_range())))
            }
            _ => None,
        })
        .collect();
    if declared.is_empty() {
        return Vec::new();
    }
    let named: std::collections::HashSet<String> = ty
        .syntax()
        .descendants()
        .filter_map(ast::PathType::cast)
        .filter_map(|p| {
            let path = p.path()?;
            path.qualifier()
                .is_none()
                .then(|| Some(path.segment()?.name_ref()?.text().to_string()))?
        })
        .collect();
    declared
        .into_iter()
        .filter(|(n, _)| named.contains(n))
        .collect()
}

/// `Context`, `&mut Context`: the kernel's context, whose engines a macro given it may drive.
fn is_context(ty: &ast::Type) -> bool {
    match ty {
        ast::Type::RefType(r) => r.ty().is_some_and(|t| is_context(&t)),
        ast::Type::PathType(p) => p
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| s.name_ref())
            .is_some_and(|n| n.text() == "Context"),
        _ => false,
    }
}

/// The Tensor Unit a `TuContext<{ Tu::Main }>` parameter type names (through references).
impl Builder<'_> {
    /// The Tensor Unit or DMA engine a parameter of type `ty` is, written or through an alias
    /// (`type SubUnit = TuContext<{ Tu::Sub }>;`).
    fn engine_context(&self, ty: &ast::Type) -> Option<Val> {
        let ty = match ty {
            ast::Type::RefType(r) => r.ty()?,
            t => t.clone(),
        };
        engine_context(&ty).or_else(|| {
            let name = crate::syntax::last_path_name(&ty)?;
            let aliased = crate::syntax::type_of_text(self.env.type_alias(&name)?)?;
            engine_context(&aliased)
        })
    }
}

/// A parameter of a generic engine context type given, by the call, the unit or engine it
/// passes: `tu: &mut TuContext<{ T }>` with `&mut ctx.sub`, `dma: &mut DmaContext<DMA>` with
/// `&mut ctx.tdma`.
fn generic_context(ty: &ast::Type, given: &crate::model::value::Value) -> Option<Val> {
    match crate::syntax::last_path_name(&super::env::unwrapped(ty))?.as_str() {
        "TuContext" => crate::model::types::Tu::of_value(given).map(Val::TuCtx),
        "DmaContext" => super::state::Dma::of_value(given).map(Val::Dma),
        _ => None,
    }
}

fn engine_context(ty: &ast::Type) -> Option<Val> {
    use super::state::Dma;
    use crate::model::types::Tu;
    match ty {
        ast::Type::RefType(r) => engine_context(&r.ty()?),
        ast::Type::PathType(p) => {
            let seg = p.path()?.segment()?;
            let args = ast::HasGenericArgs::generic_arg_list(&seg)?;
            let arg = crate::syntax::compact_text(args.syntax());
            let names = |a: &str, b: &str| (arg.contains(a), arg.contains(b));
            match (
                seg.name_ref()?.text().to_string().as_str(),
                names("Tu::Main", "Tu::Sub"),
            ) {
                ("TuContext", (true, false)) => Some(Val::TuCtx(Tu::Main)),
                ("TuContext", (false, true)) => Some(Val::TuCtx(Tu::Sub)),
                ("DmaContext", _) => match names("Dma::Tensor", "Dma::Pcie") {
                    (true, false) => Some(Val::Dma(Dma::Tensor)),
                    (false, true) => Some(Val::Dma(Dma::Pcie)),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// The traits each type parameter of `f` is bounded by, in its list or its `where` clause
/// (`<Rt: Router>`, `where P: Projection + Copy`), by their last path segment.
fn type_bounds(f: &ast::Fn) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut add = |name: String, bounds: Option<ast::TypeBoundList>| {
        let traits = bounds
            .into_iter()
            .flat_map(|l| l.bounds())
            .filter_map(|b| match b.ty()? {
                ast::Type::PathType(p) => crate::syntax::last_path_name(&ast::Type::PathType(p)),
                _ => None,
            });
        out.entry(name).or_default().extend(traits);
    };
    for p in ast::HasGenericParams::generic_param_list(f)
        .into_iter()
        .flat_map(|l| l.generic_params())
    {
        if let ast::GenericParam::TypeParam(t) = p
            && let Some(n) = ast::HasName::name(&t)
        {
            add(
                n.text().to_string(),
                ast::HasTypeBounds::type_bound_list(&t),
            );
        }
    }
    for pred in ast::HasGenericParams::where_clause(f)
        .into_iter()
        .flat_map(|w| w.predicates())
    {
        if let Some(ast::Type::PathType(t)) = pred.ty()
            && let Some(n) = crate::syntax::last_path_name(&ast::Type::PathType(t))
        {
            add(n, ast::HasTypeBounds::type_bound_list(&pred));
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

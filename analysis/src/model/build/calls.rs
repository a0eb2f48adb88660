//! Calls of functions: helpers of the crate (their signatures, what a call binds, a Tensor Unit
//! pass continued across the call), constructors, and `launch`.

use super::env::{FnSig, alias_val, apply_generics, dtype_in, map_of};
use super::reading::{callee_key, passes_a_chain, root_field, span_of, var_name};
use super::state::{Builder, Construct, Val, fill, sig_value};
use crate::diagnostic::Span;
use crate::model::consts::path_key;
use crate::model::problem::Kernel;
use crate::model::refusals::{Folding, RunTime, run_time_argument};
use crate::model::types::{Dtype, Kind, TensorTy};
use crate::model::value;
use crate::model::{Chain, Step};
use crate::model::{FnKind, MapVal};
use crate::syntax::last_path_name;
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs};
use ra_ap_syntax::{AstNode, ast};
use std::collections::HashMap;

/// A function's type and const parameters in order (a turbofish gives them by position);
/// lifetimes left out.
pub(super) fn type_and_const_params(f: &ast::Fn) -> Vec<ast::GenericParam> {
    ast::HasGenericParams::generic_param_list(f)
        .into_iter()
        .flat_map(|l| l.generic_params())
        .filter(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)))
        .collect()
}

/// Where and how a helper is called, for [`Builder::helper_call`].
pub(super) struct CallSite<'s> {
    /// The helper as the call names it (`stage`, `norm::residual`, `GemvPlan::run`).
    pub key: String,
    /// The call's turbofish (lifetimes left out).
    pub turbofish: Vec<ast::GenericArg>,
    /// Where what the helper gives with these values is reported.
    pub span: Span,
    /// The callee's path up to its name, without its turbofish (see
    /// [`crate::model::HelperCall::path`]).
    pub path: Option<Span>,
    /// The call's syntax, and how a message names its result.
    pub node: &'s ra_ap_syntax::SyntaxNode,
    pub what: String,
    /// A method called on a receiver the model types, and what that receiver binds.
    pub method: bool,
    pub receiver: Option<crate::model::Receiver>,
    /// `Self` of a function called through a type (`Rt::normalize(..)`).
    pub self_arg: Option<crate::model::TypeArg>,
    /// The value of the first argument, where the call has already evaluated it, and its pass
    /// so far if a stream: the receiver of a tensor type's method (`x.stage(..)`, see
    /// [`Builder::extension_call`]).
    pub first_evaluated: Option<(Val, Option<Vec<Step>>)>,
}

/// A turbofish's type and const arguments (lifetimes left out).
pub(super) fn turbofish_of(list: Option<ast::GenericArgList>) -> Vec<ast::GenericArg> {
    list.into_iter()
        .flat_map(|g| g.generic_args())
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .collect()
}

impl Builder<'_> {
    /// Binds the function's const generic parameters to the arguments a call wrote for them
    /// (`tile::<4>(..)`), by position among its type and const parameters.
    pub(super) fn bind_const_generics(&mut self, f: &ast::Fn, args: &[Option<value::Value>]) {
        for (k, p) in type_and_const_params(f).into_iter().enumerate() {
            let ast::GenericParam::ConstParam(c) = p else {
                continue;
            };
            let Some(name) = ast::HasName::name(&c).map(|n| n.text().to_string()) else {
                continue;
            };
            match args.get(k).cloned().flatten() {
                Some(v) => self.bind_generic(&name, v),
                None => {
                    let why = format!(
                        "`{name}` is a const generic parameter of `{}`: its body is checked on its own without its callers' arguments, and again at each call that writes one",
                        self.model.name
                    );
                    self.values.insert(name, Err(value::Unknown::new(why)));
                }
            }
        }
    }

    /// Binds a generic's name (a const generic parameter, `BUS` of an `impl` block, `S::LEN`)
    /// to the value a call gives it: a constant the function's mappings read too.
    pub(super) fn bind_generic(&mut self, name: &str, v: value::Value) {
        if let value::Value::Int(n) = v {
            self.scope.consts.insert(name.to_string(), n);
        }
        self.bind(name, v);
    }

    /// Binds a mapping a call names that the function does not declare as a parameter (an
    /// `impl` block's `Out`, a type parameter's associated `S::CastOut`) to the mapping written
    /// `text`.
    pub(super) fn bind_named_mapping(&mut self, name: &str, text: &str) {
        self.scope.generics.insert(name.to_string());
        self.bind_mapping_generic(name, text);
    }

    /// Binds the function's mapping type parameters (`Tm: M`) to the mappings a call wrote for
    /// them (`flits::<{ Tu::Main }, m![K / 32], m![K % 32]>`), by position: the helper's types
    /// and turbofishes that name them read the caller's mappings.
    pub(super) fn bind_mapping_generics(&mut self, f: &ast::Fn, bound: &crate::model::Bound) {
        // The caller's axes its mappings name, where this module declares no axis of the name.
        for axis in &bound.axes {
            self.scope
                .axes
                .entry(axis.name.to_string())
                .or_insert_with(|| crate::mapping::lower::AxisEntry {
                    axis: axis.clone(),
                    decl: Span::default(),
                });
        }
        let mappings = &bound.mappings;
        for (k, p) in type_and_const_params(f).into_iter().enumerate() {
            let ast::GenericParam::TypeParam(t) = p else {
                continue;
            };
            let (Some(name), Some(Some(text))) = (ast::HasName::name(&t), mappings.get(k)) else {
                continue;
            };
            self.bind_mapping_generic(name.text(), text);
        }
    }

    /// Binds the mapping type parameter `name` to the mapping written `text` (`K / 32`): the
    /// helper's types and turbofishes that name it read that mapping.
    pub(super) fn bind_mapping_generic(&mut self, name: &str, text: &str) {
        if !self.scope.generics.contains(name) {
            return;
        }
        let Ok(body) = crate::mapping::parse::parse_mapping(text) else {
            return;
        };
        self.scope.generics.remove(name);
        let alias = crate::mapping::lower::Alias {
            name: crate::mapping::ast::Name {
                text: name.to_string(),
                span: Span::default(),
            },
            body: Some(body),
            generics: Vec::new(),
        };
        self.scope.aliases.insert(name.to_string(), alias);
        self.scope.bound.insert(name.to_string());
    }

    /// The value of a const generic argument (`::<4>`, `::<{ BASE + 1 }>`, `::<N>` with `N` a
    /// const item, which parses as a type), where known.
    pub(super) fn const_arg_value(&self, a: &ast::GenericArg) -> Option<value::Value> {
        match a {
            ast::GenericArg::ConstArg(c) => self.value_of(&c.expr()?).0.ok(),
            ast::GenericArg::TypeArg(t) => match t.ty()? {
                ast::Type::PathType(p) => {
                    let k = path_key(&p.path()?)?;
                    self.consts.get(&k).map(|v| value::Value::Int(*v))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// A type argument naming a type of the crate with associated mappings or constants
    /// (`HiddenNorm` of `scale_rows::<HiddenNorm>`), by what they are here.
    pub(super) fn type_arg(&self, a: &ast::GenericArg) -> Option<crate::model::TypeArg> {
        let ast::GenericArg::TypeArg(t) = a else {
            return None;
        };
        let Some(ast::Type::PathType(p)) = t.ty() else {
            return None;
        };
        let name = path_key(&p.path()?)?;
        // A type parameter a call bound (`C` of `finish::<C>` in `body::<I8Kt>`): that type.
        if let Some(bound) = self.type_args.get(&name) {
            return Some(bound.clone());
        }
        self.type_arg_named(name)
    }

    /// The types of the crate a call gives its helper's type parameters, by position among
    /// its type and const parameters: written in its turbofish (`contract_rows::<Plan>`), or
    /// inferred from a value passed for a parameter of that type (`cast_bf16(t,
    /// Bf16Packed)` with `plan: P`), as rustc infers it.
    fn type_args_of_call(
        &self,
        sig: &FnSig,
        turbofish: &[ast::GenericArg],
        args: &[ast::Expr],
    ) -> Vec<Option<crate::model::TypeArg>> {
        let mut types: Vec<Option<crate::model::TypeArg>> =
            turbofish.iter().map(|a| self.type_arg(a)).collect();
        for (param, arg) in sig.value_params.iter().zip(args) {
            let Some(k) = param
                .as_ref()
                .and_then(|p| sig.generics.iter().position(|g| g == p))
            else {
                continue;
            };
            if types.get(k).is_some_and(Option::is_some) {
                continue;
            }
            let Some(ty) = self.type_of_value(arg) else {
                continue;
            };
            if types.len() <= k {
                types.resize(k + 1, None);
            }
            types[k] = self.type_arg_named(ty);
        }
        types
    }

    /// The type of the crate a value is of, where its value says (`Bf16Packed`, `Plan { .. }`,
    /// `&plan` of a `let` bound to one).
    fn type_of_value(&self, arg: &ast::Expr) -> Option<String> {
        let arg = match arg {
            ast::Expr::RefExpr(r) => r.expr()?,
            a => a.clone(),
        };
        let value::Value::Variant { path, .. } = self.value_of(&arg).0.ok()? else {
            return None;
        };
        self.env.is_local_type(&path).then_some(path)
    }

    /// `axes` and the axes the associated mappings of the types a call gives name
    /// (`type Slice = m![Q # 8, P # 8];` of `TailGeom` in `load_tile::<TailGeom>(..)`): the
    /// helper reads those mappings in its own module, which may not declare them.
    fn axes_with_type_args(
        &self,
        axes: Vec<crate::mapping::layout::Axis>,
        types: &[Option<crate::model::TypeArg>],
    ) -> Vec<crate::mapping::layout::Axis> {
        let mut all: std::collections::BTreeSet<_> = axes.into_iter().collect();
        for ty in types.iter().flatten() {
            for (item, _) in &ty.mappings {
                let key = format!("{}::{item}", ty.name);
                if let Some(l) =
                    alias_val(&key, &self.scope, Span::default()).and_then(|m| m.layout)
                {
                    all.extend(l.axes());
                }
            }
        }
        all.into_iter().collect()
    }

    /// The type of the crate called `name` here, by its associated mappings and constants.
    fn type_arg_named(&self, name: String) -> Option<crate::model::TypeArg> {
        // An element type under another name (`type KvElem = f8e4m3;`) is that type.
        let name = match self.scope.dtypes.get(&name) {
            Some(d) if !self.env.is_local_type(&name) => d.to_string(),
            _ => name,
        };
        let prefix = format!("{name}::");
        let mut mappings: Vec<(String, String)> = self
            .scope
            .aliases
            .keys()
            .filter_map(|k| {
                let item = k.strip_prefix(&prefix)?;
                let layout = alias_val(k, &self.scope, Span::default())?.layout?;
                Some((item.to_string(), layout.to_expr()))
            })
            .collect();
        let mut consts: Vec<(String, value::Value)> = self
            .consts
            .iter()
            .filter_map(|(k, v)| {
                Some((k.strip_prefix(&prefix)?.to_string(), value::Value::Int(*v)))
            })
            .collect();
        // Constants that are not integers (`const SCORE: FpUnaryOp = FpUnaryOp::Sigmoid`).
        for (k, v) in self.env.all_values() {
            if let Some(item) = k.strip_prefix(&prefix)
                && !consts.iter().any(|(c, _)| c == item)
            {
                consts.push((item.to_string(), v.clone()));
            }
        }
        // Element types (`type Elem = i8;`).
        let mut dtypes: Vec<(String, Dtype)> = self
            .scope
            .dtypes
            .iter()
            .filter_map(|(k, d)| Some((k.strip_prefix(&prefix)?.to_string(), *d)))
            .collect();
        // A type of the crate, or an element type (`bf16` for a `D2: Scalar`).
        let scalar = Dtype::from_name(&name).is_some();
        if mappings.is_empty() && consts.is_empty() && !self.env.is_local_type(&name) && !scalar {
            return None;
        }
        mappings.sort();
        consts.sort_by(|a, b| a.0.cmp(&b.0));
        dtypes.sort();
        Some(crate::model::TypeArg {
            name,
            mappings,
            consts,
            dtypes,
        })
    }

    /// Binds the function's type parameters given types of the crate (`S` of
    /// `scale_rows::<HiddenNorm>`) to those types' associated items: `S::CastOut` is
    /// `HiddenNorm::CastOut`, `S::LEN` is `HiddenNorm::LEN`.
    pub(super) fn bind_type_generics(
        &mut self,
        f: &ast::Fn,
        types: &[Option<crate::model::TypeArg>],
    ) {
        for (k, p) in type_and_const_params(f).into_iter().enumerate() {
            let ast::GenericParam::TypeParam(t) = p else {
                continue;
            };
            let (Some(param), Some(Some(ty))) = (ast::HasName::name(&t), types.get(k)) else {
                continue;
            };
            let param = param.text().to_string();
            if let Some(d) = Dtype::from_name(&ty.name) {
                self.scope.dtypes.insert(param.clone(), d);
            }
            self.bind_type_arg(&param, ty);
            // `<R as RowTile>::Rows` names the same items, through each trait bounding `R`.
            let traits = ast::HasTypeBounds::type_bound_list(&t)
                .into_iter()
                .flat_map(|l| l.bounds());
            for tr in traits.filter_map(|b| b.ty().as_ref().and_then(last_path_name)) {
                self.bind_type_arg(&format!("<{param} as {tr}>"), ty);
            }
        }
    }

    /// The constants a trait gives a default value (`const CENTER: FpBinaryOp =
    /// FpBinaryOp::SubF;`), by name, for a type the type parameter `param` is given: the
    /// traits `param` is bounded by, or (an `impl` block's parameter, `<P as Tr>`) the one
    /// trait of the crate with a default of that name.
    fn trait_defaults(&self, param: &str) -> Vec<(String, value::Value)> {
        let (traits, bounded) = match self.type_bounds.get(param) {
            Some(t) => (t.iter().map(String::as_str).collect(), true),
            None => (self.env.all_traits(), false),
        };
        let mut found: Vec<(String, value::Value, usize)> = Vec::new();
        for tr in traits {
            let prefix = format!("{tr}::");
            let ints = self
                .consts
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, value::Value::Int(*v))));
            let others = self
                .env
                .all_values()
                .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, v.clone())));
            let mut own: Vec<(&str, value::Value)> = Vec::new();
            for (item, v) in ints.chain(others) {
                if !own.iter().any(|(c, _)| *c == item) {
                    own.push((item, v));
                }
            }
            for (item, v) in own {
                match found.iter_mut().find(|(c, _, _)| c == item) {
                    Some(f) => f.2 += 1,
                    None => found.push((item.to_string(), v, 1)),
                }
            }
        }
        found
            .into_iter()
            .filter(|(_, _, n)| bounded || *n == 1)
            .map(|(item, v, _)| (item, v))
            .collect()
    }

    /// Binds what the type parameter `param` (or `Self`) reads through the type `ty` a call
    /// gives it: `param::Item` is the type's associated mapping or constant, and a call
    /// `param::f(..)` is the type's function.
    pub(super) fn bind_type_arg(&mut self, param: &str, ty: &crate::model::TypeArg) {
        for (item, text) in &ty.mappings {
            self.bind_named_mapping(&format!("{param}::{item}"), text);
        }
        for (item, v) in &ty.consts {
            self.bind_generic(&format!("{param}::{item}"), v.clone());
        }
        for (item, d) in &ty.dtypes {
            self.scope.dtypes.insert(format!("{param}::{item}"), *d);
        }
        // The trait constants the type's `impl` block leaves at their default.
        for (item, v) in self.trait_defaults(param) {
            if !ty.consts.iter().any(|(c, _)| *c == item) {
                self.bind_generic(&format!("{param}::{item}"), v);
            }
        }
        self.bind_type_fns(param, &ty.name);
        self.type_args.insert(param.to_string(), ty.clone());
    }

    /// The functions the evaluator runs for `param::f(..)` (`B::region(step)`), `param` given
    /// the type `ty`: the type's own (those its `impl` of a trait without a default gives
    /// too: `R::lower()` of `R = ValueCodes`), else the default of a trait `param` is bounded
    /// by, whose body reads the trait's associated items through `param`, as `Self` is the
    /// type.
    fn bind_type_fns(&mut self, param: &str, ty: &str) {
        let traits = self.type_bounds.get(param).cloned().unwrap_or_default();
        let env = self.env;
        let own_prefix = format!("{ty}::");
        let mut found: Vec<(String, crate::model::consts::ConstFn)> = env
            .value_fns
            .iter()
            .filter_map(|(key, f)| {
                let fname = key.strip_prefix(&own_prefix)?;
                Some((format!("{param}::{fname}"), f.clone()))
            })
            .collect();
        for t in &traits {
            let prefix = format!("{t}::");
            for (key, f) in &env.value_fns {
                let Some(fname) = key.strip_prefix(&prefix) else {
                    continue;
                };
                let f = match env.value_fns.get(&format!("{ty}::{fname}")) {
                    Some(own) => own.clone(),
                    None => {
                        let this = HashMap::from([(t.clone(), param.to_string())]);
                        let mut f = f.clone();
                        f.body = crate::model::consts::substituted(&f.body, &this);
                        f
                    }
                };
                found.push((format!("{param}::{fname}"), f));
            }
        }
        if found.is_empty() {
            return;
        }
        let fns = self
            .with_closures
            .get_or_insert_with(|| env.value_fns.clone());
        fns.extend(found);
    }

    /// What a call of a helper binds its parameters to: each argument's compile-time value,
    /// each const generic argument's and each mapping argument of its turbofish (`mappings`,
    /// as the caller's scope reads `turbofish`), where known.
    pub(super) fn bound_by(
        &self,
        args: &[ast::Expr],
        turbofish: &[ast::GenericArg],
        mappings: &[Option<MapVal>],
        sig: &FnSig,
        vals: &[Val],
    ) -> crate::model::Bound {
        // A struct keeps the fields the evaluator knows beside those it does not (a tensor's):
        // the callee reads the ones it knows (`ops.epilogue` of `NormOperands { mean: &m, ..
        // }`).
        let known = |e: &ast::Expr| {
            self.partial_value_of(e)
                .0
                .ok()
                .filter(|v| v.first_unknown().is_none() || v.knows_a_part())
        };
        let layouts = mappings.iter().map(|m| m.as_ref()?.layout.as_deref());
        let axes = layouts
            .clone()
            .flatten()
            .flat_map(|l| l.axes())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mappings = layouts.map(|l| Some(l?.to_expr())).collect();
        let generics = turbofish.iter().map(|a| self.const_arg_value(a)).collect();
        let tensors = vals
            .iter()
            .enumerate()
            .map(|(k, v)| match (sig.params.get(k).cloned().flatten(), v) {
                (Some(declared), Val::Tensor { ty, .. }) => declared.instantiated_by(ty),
                // A parameter of a type visa-lint does not read (`weights: &Self::Weights`,
                // `t: T`) given a tensor is that tensor, as rustc instantiates it.
                (None, Val::Tensor { ty, .. }) if !ty.kind.is_stream() => Some(ty.clone()),
                _ => None,
            })
            .collect();
        crate::model::Bound {
            // A Tensor Unit context (`&mut ctx.sub`) given a parameter of a generic context
            // type (`TuContext<{ T }>`): the unit, as the value that instantiates `T`.
            params: args
                .iter()
                .zip(vals.iter().map(Some).chain(std::iter::repeat(None)))
                .map(|(a, v)| match v {
                    Some(Val::TuCtx(tu)) => Some(tu.value()),
                    // `&mut ctx.tdma` given a `DmaContext<DMA>` parameter.
                    Some(Val::Dma(d)) => Some(d.value()),
                    _ => known(a),
                })
                .collect(),
            generics,
            mappings,
            axes,
            tensors,
            addresses: args.iter().map(|a| self.placed_at(a)).collect(),
            address_low: args.iter().map(|a| self.placed_low_at(a)).collect(),
            streams: Vec::new(),
            continued: None,
            receiver: None,
            // The types the call gives its type parameters: the caller sets them
            // ([`Builder::type_args_of_call`]).
            types: Vec::new(),
            self_arg: None,
            kernel: match self.model.kind {
                kind @ FnKind::Device { .. } => Some(kind),
                _ => self.model.traced_in,
            },
            // The caller sets them ([`Builder::run_time_args`]).
            run_time: Vec::new(),
        }
    }

    /// Whether `callee` (as a call writes it) is a function of the crate, which the 0.6
    /// compiler inlines where it is called.
    pub(super) fn of_crate(&self, callee: &str) -> bool {
        let key: String = callee.chars().filter(|c| !c.is_whitespace()).collect();
        self.env.fn_sig(&key).is_some() || self.env.value_fns.contains_key(&key)
    }

    /// For each argument of a call in a furiosa-opt-std kernel's trace, whether it varies
    /// while the kernel runs (a loop variable, an `if` on one, a parameter given one), and
    /// where that comes from. Empty outside such a trace: a host's values are constants.
    fn run_time_args(&self, args: &[ast::Expr]) -> Vec<Option<(RunTime, Span)>> {
        let in_kernel = matches!(self.model.kind, FnKind::Device { .. })
            || matches!(self.model.traced_in, Some(FnKind::Device { .. }));
        if self.model.library != crate::library::Generation::OptStd || !in_kernel {
            return Vec::new();
        }
        let folding = Folding {
            of_crate: &|callee: &str| self.of_crate(callee),
            param: &|name: &str| self.run_time_params.get(name).copied(),
        };
        args.iter()
            .map(|a| run_time_argument(a, &folding))
            // Only what varies while the kernel runs is followed into the helper.
            .map(|a| a.filter(|(what, _)| !what.folds_in_const_block()))
            .collect()
    }

    /// A stream parameter given the caller's pass so far: the chains from it continue that
    /// pass (one chain of the caller's steps, which the parameter's first use extends).
    pub(super) fn continue_callers_pass(&mut self, param: &str, pass: &[Step]) {
        self.model.chains.push(Chain {
            span: Span::default(),
            binding: None,
            declared: None,
            receiver: None,
            steps: pass.to_vec(),
            written_apart: true,
            iteration: None,
        });
        let index = self.model.chains.len() - 1;
        self.ends
            .insert(param.to_string(), vec![(index, pass.len())]);
    }

    /// The stream the body returns in mid-pass, continued with what the caller does with it.
    pub(super) fn continue_returned(&mut self, after: &[Step]) {
        for (i, n) in std::mem::take(&mut self.last_ends) {
            if let Some(c) = self.model.chains.get_mut(i)
                && c.steps.len() == n
            {
                c.steps.extend(after.iter().cloned());
            }
        }
    }

    /// Once the body is built: each call's [`crate::model::Bound::continued`] from the chain that
    /// continues what it returns, and the chains nothing continued dropped.
    pub(super) fn settle_continuations(&mut self) {
        let chains = &mut self.model.chains;
        for call in &mut self.model.calls {
            let Some(i) = call.result.take() else {
                continue;
            };
            let steps = chains.get(i as usize).map_or(&[][..], |c| &c.steps);
            if !steps.is_empty() {
                let at = crate::model::CALLER_CONTINUATION;
                let origin = Some(call.span.start);
                call.bound.continued = Some(
                    steps
                        .iter()
                        .map(|s| s.from_caller_after(at, origin))
                        .collect(),
                );
            }
        }
        chains.retain(|c| !c.steps.is_empty());
    }

    /// The pass a value in mid-pass has gone through (the steps of the one chain that made
    /// it, as a helper it is passed to holds them): `None` for anything else, or a stream
    /// whose chains differ (the arms of an `if`).
    pub(super) fn pass_so_far(&self, v: &Val) -> Option<Vec<Step>> {
        let Val::Tensor { ty, .. } = v else {
            return None;
        };
        let [(i, n)] = self.last_ends.as_slice() else {
            return None;
        };
        let steps = self.model.chains.get(*i)?.steps.get(..*n)?;
        let at = crate::model::CALLER_PASS;
        (ty.kind.is_stream() && !steps.is_empty())
            .then(|| steps.iter().map(|s| s.from_caller(at)).collect())
    }

    /// The pass a stream `v` being built has gone through (the chain it continues up to
    /// where it starts, then `steps`), as a helper it is passed to holds them; `None` for
    /// anything else.
    pub(super) fn pass_in_flight(&self, v: &Val, steps: &[Step]) -> Option<Vec<Step>> {
        let Val::Tensor { ty, .. } = v else {
            return None;
        };
        if !ty.kind.is_stream() {
            return None;
        }
        let mut pass = match self.root.as_deref() {
            Some([(i, n)]) => self.model.chains.get(*i)?.steps.get(..*n)?.to_vec(),
            Some(_) => return None,
            None => Vec::new(),
        };
        pass.extend(steps.iter().cloned());
        let at = crate::model::CALLER_PASS;
        (!pass.is_empty()).then(|| pass.iter().map(|s| s.from_caller(at)).collect())
    }

    /// For a helper returning a stream in mid-pass, a chain (empty yet) that what the caller
    /// does with the stream continues: the expression being evaluated starts from it.
    pub(super) fn continuation_of(&mut self, sig: &FnSig, call: Span) -> Option<u32> {
        if !sig.ret.as_ref().is_some_and(|t| t.kind.is_stream()) {
            return None;
        }
        self.model.chains.push(Chain {
            span: call,
            binding: None,
            declared: None,
            receiver: None,
            steps: Vec::new(),
            written_apart: true,
            iteration: self.iteration,
        });
        let index = self.model.chains.len() - 1;
        self.root = Some(vec![(index, 0)]);
        Some(index as u32)
    }

    /// A call of a helper of the crate (`sig` its signature, `site` where and how it is
    /// called): its arguments evaluated with the types it declares, its generics bound by the
    /// turbofish and, where that leaves them out, by the type the call's result is expected
    /// to have; the call recorded for its trace, and its result typed.
    pub(super) fn helper_call(
        &mut self,
        sig: FnSig,
        site: CallSite<'_>,
        args: &[ast::Expr],
        expected: Option<&TensorTy>,
    ) -> Val {
        let turbofish = site.turbofish;
        let mut given: Vec<Option<MapVal>> =
            turbofish.iter().map(|a| map_of(a, &self.scope)).collect();
        let mut dtypes: HashMap<String, Dtype> = sig
            .generics
            .iter()
            .zip(&turbofish)
            .filter_map(|(name, a)| Some((name.clone(), dtype_in(a, &self.scope)?)))
            .collect();
        // A trait's default called through a type: `Self::Elem` is the type's element type.
        for (item, d) in site.self_arg.iter().flat_map(|t| &t.dtypes) {
            dtypes.entry(format!("Self::{item}")).or_insert(*d);
        }
        if let Some(expected) = expected {
            inferred_from(&sig, expected, &mut given, &mut dtypes);
        }
        let consts: Vec<(String, u64)> = sig
            .generics
            .iter()
            .zip(&turbofish)
            .filter_map(|(name, a)| match self.const_arg_value(a)? {
                value::Value::Int(v) => Some((name.clone(), v)),
                _ => None,
            })
            .collect();
        let types = self.type_args_of_call(&sig, &turbofish, args);
        let mut sig = sig.instantiated(&given).with_consts(&consts, &self.scope);
        if let Some(t) = &site.self_arg {
            sig = sig.with_self(&t.name, &self.scope);
        }
        for (param, ty) in sig.generics.clone().iter().zip(&types) {
            if let Some(ty) = ty {
                sig = sig.with_type_param(param, &ty.name, &self.scope);
            }
        }
        let typed = sig.clone().with_dtypes(&dtypes);
        let mut streams = Vec::new();
        let mut first = site.first_evaluated;
        let vals: Vec<Val> = args
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let (v, pass) = match first.take() {
                    Some(evaluated) => evaluated,
                    None => {
                        let v = self.top(a, typed.params.get(k).cloned().flatten(), None);
                        let pass = self.pass_so_far(&v);
                        (v, pass)
                    }
                };
                streams.push(pass);
                v
            })
            .collect();
        // The mappings and element types the arguments' types give the type parameters, for
        // the result.
        let more_dtypes = dtypes_from_args(&sig, &vals, &mut dtypes);
        let (sig, typed) = if inferred_from_args(&sig, &vals, &mut given) || more_dtypes {
            let sig = sig.instantiated(&given);
            let typed = sig.clone().with_dtypes(&dtypes);
            (sig, typed)
        } else {
            (sig, typed)
        };
        let mut bound = self.bound_by(args, &turbofish, &given, &sig, &vals);
        bound.axes = self.axes_with_type_args(std::mem::take(&mut bound.axes), &types);
        bound.types = types;
        bound.streams = streams;
        bound.receiver = site.receiver;
        bound.self_arg = site.self_arg;
        let run_time = self.run_time_args(args);
        bound.run_time = run_time.iter().map(|a| a.map(|(what, _)| what)).collect();
        let run_time_origins = run_time.iter().flatten().map(|(_, at)| *at).collect();
        let result = self.continuation_of(&sig, site.span);
        let mapping_args = given
            .iter()
            .map(|m| m.as_ref().filter(|m| !m.in_tensor_alias)?.span)
            .collect();
        let inferred = given
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let m = m.as_ref().filter(|_| k >= turbofish.len())?;
                let text = m.text.trim();
                (m.field.is_none() && crate::syntax::is_item_path(text)).then(|| text.to_string())
            })
            .collect();
        let reads = self.tensors_read(args);
        let turbofish = turbofish
            .iter()
            .map(|a| span_of(a.syntax().text_range()))
            .collect();
        let arg_spans = args
            .iter()
            .zip(&vals)
            .map(|(a, v)| {
                let context = matches!(v, Val::TuCtx(_) | Val::Dma(_));
                (!context).then(|| span_of(a.syntax().text_range()))
            })
            .collect();
        let given = sig_value(typed, Construct::new(site.node, site.what));
        let expr = site
            .node
            .ancestors()
            .find(|n| ast::CallExpr::can_cast(n.kind()) || ast::MethodCallExpr::can_cast(n.kind()))
            .map_or(site.span, |n| span_of(n.text_range()));
        self.model.calls.push(crate::model::HelperCall {
            callee: site.key,
            span: site.span,
            path: site.path,
            bound,
            reads,
            iteration: self.iteration,
            launched: false,
            method: site.method,
            mapping_args,
            inferred,
            turbofish,
            args: arg_spans,
            expr,
            run_time_origins,
            gives_placed: holds_placed(&given),
            result,
        });
        given
    }

    /// The tensor variables `args` name (`&sums`, `t.view()`), with where.
    fn tensors_read(&self, args: &[ast::Expr]) -> Vec<(String, Span)> {
        // An element of a local array of tensors at an index not known (`trfs[i]` in a
        // closure): any of them.
        let any_element = args.iter().flat_map(|a| {
            let at = span_of(a.syntax().text_range());
            let held = match self.root_tensor(a) {
                Some(_) => None,
                None => self.elements_of_indexed(a),
            };
            held.into_iter().flatten().map(move |n| (n, at))
        });
        let mut out: Vec<(String, Span)> = any_element.collect();
        out.extend(args.iter().filter_map(|a| {
            let field = root_field(a);
            let name = self
                .root_tensor(a)
                .or_else(|| Some(field.as_ref()?.split('.').next()?.to_string()))?;
            let at = span_of(a.syntax().text_range());
            match self.vars.get(&name) {
                Some(Val::Tensor { .. }) => Some((name, at)),
                // A tensor field of a struct (`&taps.main`), by its path.
                Some(Val::Struct(fields)) => {
                    let path = field?;
                    let field = path.strip_prefix(&format!("{name}."))?;
                    fields
                        .iter()
                        .any(|(f, v)| f == field && matches!(v, Val::Tensor { .. }))
                        .then_some((path, at))
                }
                _ => None,
            }
        }));
        out
    }

    /// The tensors of the local array `a` indexes (`trfs[i]`, `&tiles[k + 1]`).
    fn elements_of_indexed(&self, a: &ast::Expr) -> Option<Vec<String>> {
        match a {
            ast::Expr::RefExpr(r) => self.elements_of_indexed(&r.expr()?),
            ast::Expr::ParenExpr(p) => self.elements_of_indexed(&p.expr()?),
            ast::Expr::IndexExpr(i) => self.tensor_arrays.get(&var_name(&i.base()?)?).cloned(),
            _ => None,
        }
    }

    /// A call of a helper by its path (`callee`): a free function, or with `self_arg` a
    /// function called through a type (`Rt::normalize(..)`, `Far::load(..)`), traced with
    /// `Self` that type's associated items.
    fn path_call(
        &mut self,
        (sig, key): (FnSig, String),
        (callee, last): (&ast::PathExpr, &ast::PathSegment),
        self_arg: Option<crate::model::TypeArg>,
        (args, expected): (&[ast::Expr], Option<&TensorTy>),
    ) -> Val {
        let span = callee.path().map_or_else(
            || span_of(callee.syntax().text_range()),
            |p| span_of(p.syntax().text_range()),
        );
        // A path that names the function itself (`dequant::tile`, not `<T as Tr>::tile`).
        let path = last
            .name_ref()
            .filter(|_| self_arg.is_none() && !snippet(callee.syntax()).starts_with('<'))
            .map(|n| Span::new(span.start as usize, n.syntax().text_range().end().into()));
        let site = CallSite {
            key,
            turbofish: turbofish_of(last.generic_arg_list()),
            span,
            path,
            node: callee.syntax(),
            what: format!("the result of `{}(..)`", snippet(callee.syntax())),
            method: self_arg.is_some(),
            receiver: None,
            self_arg,
            first_evaluated: None,
        };
        self.helper_call(sig, site, args, expected)
    }

    /// `Rt::normalize(..)` with `Rt` a type parameter a call gave a type of the crate (or
    /// `Self::f(..)` in a function traced for one): that type's function, its `impl` block's
    /// or the default of a trait the parameter is bounded by, traced with `Self` the type.
    fn type_param_call(
        &mut self,
        (callee, last): (&ast::PathExpr, &ast::PathSegment),
        args: &[ast::Expr],
        expected: Option<&TensorTy>,
    ) -> Option<Val> {
        let path = callee.path()?;
        let param = path_key(&path.qualifier()?)?;
        let ty = self.type_args.get(&param)?.clone();
        let fname = last.name_ref()?.text().to_string();
        let key = format!("{}::{fname}", ty.name);
        let traits = self.type_bounds.get(&param).cloned().unwrap_or_default();
        let sig = match self.env.fn_sig(&key) {
            Some(sig) => sig.clone(),
            None => traits
                .iter()
                .find_map(|t| self.env.fn_sig(&format!("{t}::{fname}")))?
                .clone(),
        };
        let mut self_arg = ty;
        // The traits' constants the type leaves at their defaults.
        for t in &traits {
            self.trait_defaults_into(t, &mut self_arg);
        }
        let at = (callee, last);
        Some(self.path_call((sig, key), at, Some(self_arg), (args, expected)))
    }

    /// `Far::load(ctx)` or `<Far as Loader>::load(ctx)`, with `Far` a type of the crate that
    /// leaves `load` to the default of a trait it implements (the one trait in scope with that
    /// default, or the one the path names): the default, traced with `Self` the type, as
    /// rustc resolves the call.
    fn trait_default_call(
        &mut self,
        (callee, last): (&ast::PathExpr, &ast::PathSegment),
        args: &[ast::Expr],
        expected: Option<&TensorTy>,
    ) -> Option<Val> {
        let path = callee.path()?;
        let qualifier = path.qualifier()?;
        let fname = last.name_ref()?.text().to_string();
        let (ty, named_trait) = match qualifier.segment()?.kind()? {
            ast::PathSegmentKind::Type {
                type_ref: Some(t),
                trait_ref: Some(tr),
            } if qualifier.qualifier().is_none() => (
                crate::syntax::last_path_name(&t)?,
                Some(path_key(&tr.path()?)?),
            ),
            _ => (path_key(&qualifier)?, None),
        };
        let own = format!("{ty}::{fname}");
        if !self.env.is_local_type(&ty) || self.env.fn_sig(&own).is_some() {
            return None;
        }
        let trait_name = match named_trait {
            Some(t) => t,
            None => match self.env.traits_defaulting(&fname).as_slice() {
                [t] => t.to_string(),
                _ => return None,
            },
        };
        let sig = self.env.fn_sig(&format!("{trait_name}::{fname}"))?.clone();
        let mut self_arg =
            self.type_arg_named(ty.clone())
                .unwrap_or_else(|| crate::model::TypeArg {
                    name: ty.clone(),
                    ..Default::default()
                });
        self.trait_defaults_into(&trait_name, &mut self_arg);
        let at = (callee, last);
        Some(self.path_call((sig, own), at, Some(self_arg), (args, expected)))
    }

    /// `Self` of a trait's default method called on a value of the crate's type `name`: the
    /// type's associated items, and the constants of the crate's traits it leaves at their
    /// defaults (which trait gives the method is the item tree's to say, at the call).
    pub(super) fn self_of_default(&self, name: &str) -> Option<crate::model::TypeArg> {
        let mut ty = self.type_arg_named(name.to_string())?;
        for t in self.env.all_traits() {
            self.trait_defaults_into(t, &mut ty);
        }
        Some(ty)
    }

    /// Adds to `ty` the associated constants of `trait_name` it does not give itself.
    fn trait_defaults_into(&self, trait_name: &str, ty: &mut crate::model::TypeArg) {
        let prefix = format!("{trait_name}::");
        let mut add = |item: &str, v: value::Value| {
            if !ty.consts.iter().any(|(c, _)| c == item) {
                ty.consts.push((item.to_string(), v));
            }
        };
        for (k, v) in &self.consts {
            if let Some(item) = k.strip_prefix(&prefix) {
                add(item, value::Value::Int(*v));
            }
        }
        for (k, v) in self.env.all_values() {
            if let Some(item) = k.strip_prefix(&prefix) {
                add(item, v.clone());
            }
        }
        ty.consts.sort_by(|a, b| a.0.cmp(&b.0));
    }

    pub(super) fn call(&mut self, c: &ast::CallExpr, awaited: bool) -> Val {
        let expected = self.call_expected.take();
        if let Some(v) = self.array_by_from_fn(c) {
            return v;
        }
        let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
            return Val::Unknown;
        };
        let Some(path) = callee.path() else {
            return Val::Unknown;
        };
        let Some(last) = path.segment() else {
            return Val::Unknown;
        };
        let fname = last
            .name_ref()
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        let args: Vec<ast::Expr> = c.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        // `HbmTensor::<D, Chip, Element>::from_addr(a)`, `HostTensor::<D, M>::rand(..)`,
        // `Output::from_addr(a)` of a whole tensor type alias.
        if let Some(ty) = self.constructed_type(&path) {
            return self.construct(ty, &fname, &args);
        }
        if path.qualifier().is_none() && fname == "launch" {
            if !awaited {
                self.model.problems.push(
                    Kernel::LaunchNotAwaited {
                        at: span_of(last.syntax().text_range()),
                    }
                    .into(),
                );
            }
            return self.launch(span_of(last.syntax().text_range()), &args);
        }
        if let Some(v) = self.type_param_call((&callee, &last), &args, expected.as_ref()) {
            return v;
        }
        if let Some(v) = self.trait_default_call((&callee, &last), &args, expected.as_ref()) {
            return v;
        }
        if let Some(v) = self.generic_type_call((&callee, &last), &args, expected.as_ref()) {
            return v;
        }
        let key = callee_key(&path);
        if let Some(k) = &key
            && let Some(sig) = self.env.fn_sig(k).cloned()
        {
            let at = (&callee, &last);
            return self.path_call((sig, k.clone()), at, None, (&args, expected.as_ref()));
        }
        // A closure bound to a variable: every call gives what its body gives.
        if path.qualifier().is_none()
            && let Some(v) = self.vars.get(&fname).cloned()
        {
            for a in &args {
                self.arg_expr(a);
            }
            return match v {
                Val::Closure(body) => *body,
                Val::Lost(c) => Val::Lost(c),
                _ => Val::Unknown,
            };
        }
        // A tuple struct of the crate holding tensors (`TileOut(y, rstd)`): its fields.
        if let Some(fields) = key.as_deref().and_then(|k| self.env.struct_fields(k))
            && fields.iter().all(|(n, _)| n.parse::<usize>().is_ok())
        {
            let fields = fields.to_vec();
            let vals: Vec<(String, Val)> = args
                .iter()
                .zip(&fields)
                .map(|(a, (n, ty))| {
                    let at = span_of(a.syntax().text_range());
                    let expected = ty.clone().map(|t| super::expressions::named_at(t, at));
                    (n.clone(), self.top(a, expected, None))
                })
                .collect();
            self.last_ends.clear();
            return typed_by_fields(vals, &fields);
        }
        // Wrappers the model sees through (`Ok(t)` as a helper's tail, `Some(t)`).
        let through = matches!(
            key.as_deref(),
            Some("Some" | "Ok" | "Box::new" | "Rc::new" | "Arc::new" | "std::hint::black_box")
        );
        if through && let [a] = args.as_slice() {
            return self.top(a, None, None);
        }
        // An engine chain passed straight to a function is still a chain.
        for a in &args {
            if passes_a_chain(a) {
                self.top(a, None, None);
            } else {
                self.arg_expr(a);
            }
        }
        self.last_ends.clear();
        let what = format!("the result of `{}(..)`", snippet(callee.syntax()));
        Val::Lost(Construct::new(callee.syntax(), what))
    }

    /// The tensor type a constructor's path names (`Output::from_addr`,
    /// `HbmTensor::<D, Chip, Element>::from_addr`), when it names one.
    pub(super) fn constructed_type(&self, path: &ast::Path) -> Option<TensorTy> {
        let q = path.qualifier()?;
        if let Some(ty) = path_key(&q).and_then(|k| self.env.tensor_alias(&k)) {
            return Some(ty.clone());
        }
        let seg = q.segment()?;
        let kind = Kind::from_name(seg.name_ref()?.text())?;
        let mut ty = TensorTy::new(kind);
        if let Some(ga) = seg.generic_arg_list() {
            apply_generics(&mut ty, kind.params(), &ga, &self.scope);
        }
        Some(ty)
    }

    /// A tensor made by the constructor `fname` of its type: `from_addr(a)` places it at `a`
    /// when `a` is a constant.
    pub(super) fn construct(&mut self, ty: TensorTy, fname: &str, args: &[ast::Expr]) -> Val {
        for a in args {
            self.arg_expr(a);
        }
        if fname == "from_addr"
            && let [a] = args
            && let Ok(value::Value::Int(address)) = self.value_of(a).0
        {
            self.model.placements.push(crate::model::Placement {
                arg: self.value_arg(a),
                address,
                ty: ty.clone(),
                iteration: self.iteration,
            });
        }
        Val::Tensor {
            ty,
            tu: None,
            engines: Vec::new(),
        }
    }

    /// `launch(kernel, (&mut ctx, &a, &b))`: the tuple takes the kernel's parameter types (as
    /// rustc infers them), the kernel is checked again with the addresses the host placed its
    /// tensors at (a [`crate::model::HelperCall`] launched), and the result is the kernel's return
    /// type. What the kernel gives with the host's values is reported at `launch` (`at`), or at
    /// the tensor whose placement alone causes it.
    pub(super) fn launch(&mut self, at: Span, args: &[ast::Expr]) -> Val {
        let Some(ast::Expr::PathExpr(k)) = args.first() else {
            return Val::Unknown;
        };
        let Some(kname) = k.path().as_ref().and_then(path_key) else {
            return Val::Unknown;
        };
        let Some(sig) = self.env.fn_sig(&kname).cloned() else {
            return Val::Unknown;
        };
        if let Some(ast::Expr::TupleExpr(t)) = args.get(1) {
            let fields: Vec<ast::Expr> = t.fields().collect();
            for (field, param) in fields.iter().zip(&sig.params) {
                let (Some(param), Some(var)) = (param, var_name(field)) else {
                    continue;
                };
                self.refine_var(&var, param);
            }
            // The kernel is checked again with what the host placed where.
            let vals: Vec<Val> = fields
                .iter()
                .map(|f| {
                    var_name(f)
                        .and_then(|v| self.vars.get(&v).cloned())
                        .unwrap_or(Val::Unknown)
                })
                .collect();
            let bound = self.bound_by(&fields, &[], &[], &sig, &vals);
            self.model.calls.push(crate::model::HelperCall {
                callee: kname,
                span: at,
                path: None,
                bound,
                reads: Vec::new(),
                iteration: self.iteration,
                launched: true,
                method: false,
                mapping_args: Vec::new(),
                inferred: Vec::new(),
                turbofish: Vec::new(),
                // A finding one placement causes points at the tensor placed (`&k`).
                args: fields
                    .iter()
                    .map(|f| Some(span_of(f.syntax().text_range())))
                    .collect(),
                expr: at,
                run_time_origins: Vec::new(),
                gives_placed: false,
                result: None,
            });
        }
        match sig.ret {
            Some(ty) => Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            },
            None => Val::Unknown,
        }
    }

    /// Fills a variable's unknown slots from a type it is used at (and the chain that made it).
    pub(super) fn refine_var(&mut self, var: &str, want: &TensorTy) {
        let Some(Val::Tensor { ty, .. }) = self.vars.get_mut(var) else {
            return;
        };
        if ty.kind != want.kind {
            return;
        }
        fill(ty, want);
        let ty = ty.clone();
        if let Some(t) = self.model.tensors.iter_mut().rev().find(|t| t.name == var) {
            t.ty = ty.clone();
        }
        if let Some(step) = self
            .model
            .chains
            .iter_mut()
            .rev()
            .find(|c| c.binding.as_deref() == Some(var))
            .and_then(|c| c.steps.last_mut())
            && let Some(out) = step.output.as_mut()
        {
            fill(out, &ty);
        }
    }
}

/// What a call's expected type (`let q: CastTensor<.., Lane16> = requant(acc);`) gives the
/// generics its turbofish leaves out, as rustc infers them: each mapping of the result written
/// as a type parameter (`OutP`) is the expected type's mapping in that slot, where it is
/// written (its fixes edit it there), and a result element type written `D` is the expected
/// element type.
fn inferred_from(
    sig: &FnSig,
    expected: &TensorTy,
    given: &mut Vec<Option<MapVal>>,
    dtypes: &mut HashMap<String, Dtype>,
) {
    let Some(ret) = sig.ret.as_ref().filter(|r| r.kind == expected.kind) else {
        return;
    };
    infer_mappings(sig, ret, expected, given);
    if let (Some(name), Some(d)) = (sig.ret_dtype_param(), expected.dtype) {
        dtypes.entry(name.to_string()).or_insert(d);
    }
}

/// The mapping type parameters a tensor `actual` gives where the signature writes `declared`
/// (`Packet` of `x: VectorWidenTensor<.., Time, Packet, ..>` is the argument's packet), as
/// rustc infers them; those a turbofish gave are kept.
fn infer_mappings(
    sig: &FnSig,
    declared: &TensorTy,
    actual: &TensorTy,
    given: &mut Vec<Option<MapVal>>,
) {
    given.resize(given.len().max(sig.generics.len()), None);
    for (slot, m) in declared.maps.iter().filter(|(_, m)| m.layout.is_none()) {
        let Some(k) = sig.generics.iter().position(|g| g == m.text.trim()) else {
            continue;
        };
        if given[k].is_none()
            && let Some(want) = actual.maps.get(&slot).filter(|w| w.layout.is_some())
        {
            given[k] = Some(want.clone());
        }
    }
}

/// [`infer_mappings`] for each tensor argument of a call: whether it gave any parameter.
/// The element types the arguments' tensors give the helper's type parameters written as
/// their element types (`D` of `x: &DmTensor<D, ..>`), as rustc infers them, where the
/// turbofish did not give them; whether any was added.
fn dtypes_from_args(sig: &FnSig, vals: &[Val], dtypes: &mut HashMap<String, Dtype>) -> bool {
    let mut added = false;
    for (name, v) in sig.dtype_params.iter().zip(vals) {
        if let (Some(name), Val::Tensor { ty, .. }) = (name, v)
            && let Some(d) = ty.dtype
            && !dtypes.contains_key(name)
        {
            dtypes.insert(name.clone(), d);
            added = true;
        }
    }
    added
}

fn inferred_from_args(sig: &FnSig, vals: &[Val], given: &mut Vec<Option<MapVal>>) -> bool {
    let before = given.iter().filter(|g| g.is_some()).count();
    for (declared, v) in sig.params.iter().zip(vals) {
        if let (Some(declared), Val::Tensor { ty, .. }) = (declared, v) {
            infer_mappings(sig, declared, ty, given);
        }
    }
    given.iter().filter(|g| g.is_some()).count() > before
}

/// A struct value built from `vals`, each field that holds a tensor of the type the struct
/// declares for it (`DmTensor::from_addr(a)` in a `TileOut(..)` is the field's tensor type).
pub(super) fn typed_by_fields(
    vals: Vec<(String, Val)>,
    fields: &[(String, Option<TensorTy>)],
) -> Val {
    let typed = vals
        .into_iter()
        .map(|(n, v)| {
            let declared = fields
                .iter()
                .find(|(f, _)| *f == n)
                .and_then(|(_, t)| t.clone());
            let v = match (v, declared) {
                (Val::Tensor { tu, engines, .. }, Some(ty)) => Val::Tensor { ty, tu, engines },
                (Val::Unknown | Val::Lost(_), Some(ty)) => Val::Tensor {
                    ty,
                    tu: None,
                    engines: Vec::new(),
                },
                (v, _) => v,
            };
            (n, v)
        })
        .collect();
    Val::Struct(typed)
}

/// Whether a value holds a DM or TRF tensor: what a helper's trace places, which the caller
/// reads from it ([`crate::model::FnModel::result`]).
fn holds_placed(v: &Val) -> bool {
    match v {
        Val::Tensor { ty, .. } => matches!(ty.kind, Kind::Dm | Kind::Trf),
        Val::Tuple(vs) => vs.iter().any(holds_placed),
        Val::Struct(fs) => fs.iter().any(|(_, v)| holds_placed(v)),
        _ => false,
    }
}

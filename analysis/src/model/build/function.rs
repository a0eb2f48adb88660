//! One function's model: its parameters, its generic and device attributes, its body, and the
//! Sequencer page's simplified buffer interface.

use super::env::{Env, device_attr, dtype_of, map_of, plain, tensor_type};
use super::reading::{arg_of, pat_name, span_of, var_name};
use super::state::{Builder, Construct, MAX_ITERATIONS, Val, many_type, struct_param};
use crate::diagnostic::Span;
use crate::library::Generation;
use crate::mapping::Scope;
use crate::model::methods::Method;
use crate::model::problem::Problem;
use crate::model::types::{Kind, Slot, TensorTy};
use crate::model::value;
use crate::model::{Chain, FnKind, FnModel, Origin, Step, TensorVar};
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs};
use ra_ap_syntax::{AstNode, ast};
use std::collections::HashMap;

/// Builds the model of one function. `scope` holds the module's axes and aliases plus the
/// function's own (and its generic parameters); `bound` holds what a call binds its
/// parameters to (nothing, when the function is checked on its own).
pub fn build_fn(
    f: &ast::Fn,
    env: &Env,
    scope: Scope,
    library: crate::library::Generation,
    bound: &crate::model::Bound,
) -> FnModel {
    // Whole tensor type aliases declared in the body (`type Out = DmTensor<..>;`) are the
    // types they name there.
    let local: Vec<ast::TypeAlias> = f
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
                .collect()
        })
        .unwrap_or_default();
    let with_local;
    let env = if local.is_empty() {
        env
    } else {
        let mut e = env.clone();
        e.scope = scope.clone();
        for a in &local {
            if let (Some(n), Some(ty)) = (ast::HasName::name(a), a.ty())
                && let Some(mut t) = tensor_type(&ty, &e, &scope, &mut Vec::new())
            {
                for m in t.maps.values_mut() {
                    m.span = None;
                }
                e.tensor_aliases.insert(n.text().to_string(), t);
            }
        }
        with_local = e;
        &with_local
    };
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
    let mut b = Builder {
        env,
        scope,
        vars: HashMap::new(),
        ends: HashMap::new(),
        root: None,
        last_ends: Vec::new(),
        consts: env.consts.clone(),
        values: HashMap::new(),
        model: FnModel {
            name,
            span: name_span,
            kind,
            tensors: Vec::new(),
            chains: Vec::new(),
            problems: Vec::new(),
            iterations: Vec::new(),
            library,
            adapters: Vec::new(),
            calls: Vec::new(),
            placements: Vec::new(),
            generic_tensors: Vec::new(),
        },
        ret: None,
        iteration: None,
        iterations_left: MAX_ITERATIONS,
        lost_reported: std::collections::HashSet::new(),
        counters: HashMap::new(),
    };
    if library == Generation::OptStd && matches!(b.model.kind, FnKind::Device { .. }) {
        let refused = crate::model::refusals::refusals(f)
            .into_iter()
            .map(Problem::Refused);
        b.model.problems.extend(refused);
    }
    if library == Generation::OptStd {
        let defects = crate::model::refusals::slot_defects(f)
            .into_iter()
            .map(Problem::Refused);
        b.model.problems.extend(defects);
    }
    b.bind_const_generics(f, &bound.generics);
    if let Some(pl) = f.param_list() {
        for (k, p) in pl.params().enumerate() {
            let Some(pat) = p.pat() else { continue };
            let Some(pname) = pat_name(&pat) else {
                continue;
            };
            match bound.params.get(k).cloned().flatten() {
                Some(v) => b.bind(&pname, v),
                None => {
                    let why = format!(
                        "`{pname}` is a parameter of `{}`: its body is checked on its own without its callers' values, and again at each call that gives it a known one",
                        b.model.name
                    );
                    b.values.insert(pname.clone(), Err(value::Unknown { why }));
                }
            }
            let ty = p
                .ty()
                .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
            // Its generics as the call instantiates them.
            let ty = match (ty, bound.tensors.get(k).cloned().flatten()) {
                (Some(declared), Some(at_call)) => {
                    Some(declared.instantiated_by(&at_call).unwrap_or(declared))
                }
                (Some(declared), None) => {
                    let generic = p.ty().map(|t| generic_in(f, &t)).unwrap_or_default();
                    b.model
                        .generic_tensors
                        .extend(generic.into_iter().map(|(generic, at)| {
                            crate::model::GenericTensor {
                                param: pname.clone(),
                                generic,
                                at,
                            }
                        }));
                    Some(declared)
                }
                (ty, _) => ty,
            };
            // A tuple of tensors (`inputs: (&HbmTensor<..>, &DmTensor<..>)`), field by field.
            if ty.is_none()
                && let Some(ast::Type::TupleType(tuple)) = p.ty()
                && tuple.fields().next().is_some()
            {
                let fields: Vec<Val> = tuple
                    .fields()
                    .map(
                        |f| match tensor_type(&f, b.env, &b.scope, &mut b.model.problems) {
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
                    b.vars.insert(pname, Val::Tuple(fields));
                    continue;
                }
            }
            // A struct of the crate holding tensors (`inputs: Inputs<'_>`), field by field.
            if ty.is_none()
                && let Some(fields) = p.ty().and_then(|t| struct_param(&t, b.env))
            {
                b.vars.insert(pname, fields);
                continue;
            }
            if ty.is_none()
                && let Some(many) = p
                    .ty()
                    .and_then(|t| many_type(&t, b.env, &b.scope, &mut b.model.problems))
            {
                b.vars.insert(pname, Val::many(many));
                continue;
            }
            if let Some(ty) = ty {
                b.model.tensors.push(TensorVar {
                    name: pname.clone(),
                    span: span_of(pat.syntax().text_range()),
                    origin: Origin::Param,
                    ty: ty.clone(),
                    context: None,
                    // Where the caller placed it, when the call says.
                    address: bound.addresses.get(k).copied().flatten(),
                    iteration: None,
                });
                if let Some(Some(pass)) = bound.streams.get(k) {
                    b.continue_callers_pass(&pname, pass);
                }
                b.vars.insert(
                    pname,
                    Val::Tensor {
                        ty,
                        tu: None,
                        engines: Vec::new(),
                    },
                );
            } else if p.ty().is_some_and(|t| !plain(&t)) {
                // A parameter of a type visa-lint cannot type (a generic, a struct): a tensor
                // in it is not followed.
                let what = format!("the parameter `{}`", snippet(p.syntax()));
                b.vars
                    .insert(pname, Val::Lost(Construct::new(p.syntax(), what)));
            }
        }
    }
    b.ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
    if let Some(body) = f.body() {
        let ret = b.ret.clone();
        b.block(&body, ret, None);
        if let Some(after) = &bound.continued {
            b.continue_returned(after);
        }
    }
    b.settle_continuations();
    if env.is_local_type("BufTensor") {
        let chains = buf_tensor_chains(f, &b.scope);
        b.model.chains.extend(chains);
    }
    b.model
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

/// The Sequencer page's simplified interface (manual L1241-L1262): `buf.read()` and
/// `buf.write(stream)` on a file-local `BufTensor<D, Buf>`, recorded as steps `read`
/// (input: a `DmTensor` whose Element is `Buf`; output: a `StreamTensor` with Time/Packet from
/// the turbofish or the local `StreamTensor<'l, D, Time, Packet>` return type) and `write`
/// (input: the stream argument's type; output: the buffer). Used by the SEQ rules (issue 4).
pub(super) fn buf_tensor_chains(f: &ast::Fn, scope: &Scope) -> Vec<Chain> {
    // `BufTensor<D, Buf>` -> (dtype, Buf); `StreamTensor<'l, D, Time, Packet>` -> (dtype, Time, Packet).
    fn local(ty: &ast::Type, want: &str) -> Option<Vec<ast::GenericArg>> {
        match ty {
            ast::Type::RefType(r) => local(&r.ty()?, want),
            ast::Type::PathType(p) => {
                let seg = p.path()?.segment()?;
                if seg.name_ref()?.text() != want {
                    return None;
                }
                Some(
                    seg.generic_arg_list()?
                        .generic_args()
                        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                        .collect(),
                )
            }
            _ => None,
        }
    }
    let buf_ty = |args: &[ast::GenericArg]| {
        let mut t = TensorTy::new(Kind::Dm);
        t.dtype = args.first().and_then(dtype_of);
        if let Some(m) = args.get(1).and_then(|a| map_of(a, scope)) {
            t.maps.insert(Slot::Element, m);
        }
        t
    };
    let stream_ty = |d: Option<&ast::GenericArg>,
                     time: Option<&ast::GenericArg>,
                     packet: Option<&ast::GenericArg>| {
        let mut t = TensorTy::new(Kind::Stream);
        t.dtype = d.and_then(dtype_of);
        for (slot, a) in [(Slot::Time, time), (Slot::Packet, packet)] {
            if let Some(m) = a.and_then(|a| map_of(a, scope)) {
                t.maps.insert(slot, m);
            }
        }
        t
    };
    let mut bufs: HashMap<String, TensorTy> = HashMap::new();
    let mut streams: HashMap<String, TensorTy> = HashMap::new();
    if let Some(pl) = f.param_list() {
        for p in pl.params() {
            let (Some(pat), Some(ty)) = (p.pat(), p.ty()) else {
                continue;
            };
            let Some(name) = pat_name(&pat) else { continue };
            if let Some(args) = local(&ty, "BufTensor") {
                bufs.insert(name, buf_ty(&args));
            } else if let Some(args) = local(&ty, "StreamTensor") {
                streams.insert(name, stream_ty(args.first(), args.get(1), args.get(2)));
            }
        }
    }
    if bufs.is_empty() {
        return Vec::new();
    }
    let ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| local(&t, "StreamTensor"))
        .map(|a| stream_ty(a.first(), a.get(1), a.get(2)));
    let Some(body) = f.body() else {
        return Vec::new();
    };
    let mut chains = Vec::new();
    for m in body
        .syntax()
        .descendants()
        .filter_map(ast::MethodCallExpr::cast)
    {
        let Some(name_ref) = m.name_ref() else {
            continue;
        };
        let method = Method::from_name(name_ref.text());
        let Some(buf) = m
            .receiver()
            .and_then(|r| var_name(&r))
            .and_then(|v| bufs.get(&v))
        else {
            continue;
        };
        let generics: Vec<ast::GenericArg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .collect()
            })
            .unwrap_or_default();
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let (input, output) = match method {
            Method::Read => {
                let out = if generics.len() == 2 {
                    let mut t = stream_ty(None, generics.first(), generics.get(1));
                    t.dtype = buf.dtype;
                    Some(t)
                } else {
                    ret.clone()
                };
                (Some(buf.clone()), out)
            }
            Method::Write => {
                let s = args
                    .first()
                    .and_then(var_name)
                    .and_then(|v| streams.get(&v))
                    .cloned();
                (s, Some(buf.clone()))
            }
            _ => continue,
        };
        let span = span_of(name_ref.syntax().text_range());
        chains.push(Chain {
            span: span_of(m.syntax().text_range()),
            binding: None,
            declared: None,
            receiver: m.receiver().and_then(|r| var_name(&r)),
            written_apart: false,
            iteration: None,
            steps: vec![Step {
                method,
                span,
                engine: None,
                input,
                output,
                keep: Vec::new(),
                context: None,
                address: None,
                awaited: false,
                generics: generics.iter().map(|a| arg_of(a.syntax())).collect(),
                args: args.iter().map(|a| arg_of(a.syntax())).collect(),
            }],
        });
    }
    chains
}

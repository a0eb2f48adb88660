//! Method calls: each engine method of a chain is a [`Step`], its type derived from its input
//! and its turbofish, with the pipeline order, context and DMA rules checked on the way.

use super::env::{dtype_of, map_of, set_slot};
use super::reading::{arg_of, is_tile_view, span_of};
use super::state::{Builder, Construct, Dma, Val, sig_value};
use crate::diagnostic::Span;
use crate::mapping::{Layout, Scope};
use crate::model::consts::{self, path_key};
use crate::model::methods::{Engine, Method, Recv};
use crate::model::problem::{Kernel, NotFollowed, Primitive, Unknown};
use crate::model::types::{Dtype, Kind, MapVal, Slot, TensorTy, Tu};
use crate::model::value;
use crate::model::{Adapter, Arg, FnKind, Step};
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs};
use ra_ap_syntax::{AstNode, ast};

impl Builder<'_> {
    pub(super) fn method_call(
        &mut self,
        m: &ast::MethodCallExpr,
        steps: &mut Vec<Step>,
        awaited: bool,
    ) -> Val {
        let recv = m
            .receiver()
            .map_or(Val::Unknown, |r| self.expr(&r, steps, false));
        let Some(name_ref) = m.name_ref() else {
            return Val::Unknown;
        };
        let name = name_ref.text().to_string();
        let library = self.model.library;
        let method = Method::resolve(&name, library);
        let span = span_of(name_ref.syntax().text_range());
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let val_args: Vec<Arg> = args.iter().map(|a| self.value_arg(a)).collect();
        let gen_args: Vec<Arg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .map(|a| arg_of(a.syntax()))
                    .collect()
            })
            .unwrap_or_default();
        // A tile view written as the argument (`commit_view(out.view_mut().tile::<..>(i))`) is
        // recorded as a chain, as it is when bound by a `let`, so its tile is checked.
        let arg_vals: Vec<Val> = args
            .iter()
            .map(|a| {
                if is_tile_view(a) {
                    self.top(a, None, None)
                } else {
                    self.arg_expr(a)
                }
            })
            .collect();
        // On a value not followed, or an array of tensors, the methods other types have too
        // (`Iterator::collect`, `Option::transpose`, `clone`) are not taken for engine calls.
        let shared = name == "clone" || matches!(method, Method::Collect | Method::Transpose);
        let recv_kind = match &recv {
            Val::Tensor { ty, .. } => Some(ty.kind),
            _ => None,
        };
        if method.is_adapter()
            && let Val::Tensor { ty, tu, engines } = &recv
        {
            let first = m.generic_arg_list().and_then(|g| g.generic_args().next());
            self.model.adapters.push(Adapter {
                method: method.clone(),
                span,
                input: ty.clone(),
                generic: first
                    .as_ref()
                    .map(|g| (arg_of(g.syntax()), map_of(g, &self.scope))),
                args: val_args.clone(),
            });
            return self.adapt(&method, ty, *tu, engines, first, val_args, steps);
        }
        let spec = method
            .transfer_for(&name, library, recv_kind)
            .filter(|_| !(shared && matches!(recv, Val::Lost(_) | Val::Many { .. })));
        let Some(spec) = spec else {
            // A method of the crate's `impl` blocks on a value the model cannot type
            // (`self.apply(ctx, a)`): its signature.
            if !matches!(recv, Val::Tensor { .. } | Val::TuCtx(_) | Val::Many { .. })
                && let Some(sig) = self.env.method(&name).cloned()
            {
                for (k, a) in args.iter().enumerate() {
                    let expected = sig.params.get(k).cloned().flatten();
                    self.top(a, expected, None);
                }
                self.last_ends.clear();
                let what = format!("the result of `{}`", snippet(m.syntax()));
                return sig_value(sig, Construct::new(m.syntax(), what));
            }
            // Arrays of tensors iterate; values not followed stay so.
            match &recv {
                Val::Many { elem, enumerated } => {
                    return match name.as_str() {
                        "iter" | "iter_mut" | "into_iter" | "copied" | "cloned" | "clone" => {
                            Val::Many {
                                elem: elem.clone(),
                                enumerated: *enumerated,
                            }
                        }
                        "enumerate" => Val::Many {
                            elem: elem.clone(),
                            enumerated: true,
                        },
                        "len" | "is_empty" => Val::Unknown,
                        _ => {
                            let what = format!("`.{name}()` of an array of tensors");
                            Val::Lost(Construct::new(m.syntax(), what))
                        }
                    };
                }
                Val::Lost(c) => {
                    let of_self = matches!(m.receiver(), Some(ast::Expr::PathExpr(ref p)) if p.syntax().text() == "self");
                    return if of_self {
                        let what = format!("the result of `{}`", snippet(m.syntax()));
                        Val::Lost(Construct::new(m.syntax(), what))
                    } else {
                        Val::Lost(c.clone())
                    };
                }
                Val::Tensor { .. }
                    if matches!(
                        name.as_str(),
                        "clone" | "to_owned" | "borrow" | "as_ref" | "unwrap" | "expect"
                    ) =>
                {
                    return recv;
                }
                _ => {}
            }
            if matches!(recv, Val::Tensor { .. } | Val::TuCtx(_))
                && !crate::model::methods::is_std_method(&name)
            {
                self.model.problems.push(
                    Unknown {
                        at: span,
                        primitive: Primitive::Method(name.clone()),
                    }
                    .into(),
                );
                steps.push(Step {
                    method,
                    span,
                    engine: None,
                    input: None,
                    output: None,
                    keep: Vec::new(),
                    context: None,
                    address: None,
                    awaited,
                    generics: gen_args.clone(),
                    args: val_args.clone(),
                });
            }
            // A method of a value the model cannot type (`loader.load(ctx)`): what it gives
            // may be a tensor.
            if matches!(recv, Val::Unknown) && !crate::model::methods::is_std_method(&name) {
                let what = format!("the result of `{}`", snippet(m.syntax()));
                return Val::Lost(Construct::new(m.syntax(), what));
            }
            return Val::Unknown;
        };
        let generics: Vec<ast::GenericArg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .collect()
            })
            .unwrap_or_default();
        // A tensor the model did not follow, used here as one (the receiver, or the tensor a
        // pass begins from or aligns with).
        if let Val::Lost(c) = &recv {
            let c = c.clone();
            self.lost_use(&c, span);
            return Val::Unknown;
        }
        if matches!(spec.recv, Recv::TuContext | Recv::FirstArg) || method == Method::Align {
            let lost: Vec<Construct> = arg_vals
                .iter()
                .filter_map(|v| match v {
                    Val::Lost(c) => Some(c.clone()),
                    _ => None,
                })
                .collect();
            for c in &lost {
                self.lost_use(c, span);
            }
            if !lost.is_empty() {
                return Val::Unknown;
            }
        }
        if method.reads_value_args() {
            self.unknown_values(&args, &val_args, &arg_vals);
        }
        let address_expr = spec.address_arg.and_then(|k| args.get(k));
        // An address is an integer value: through names, `if`s on constants and sizes too.
        let address = address_expr.and_then(|a| match self.value_of(a).0 {
            Ok(value::Value::Int(v)) => Some(v),
            _ => None,
        });
        if address.is_none()
            && let Some(a) = address_expr
        {
            self.address_call(a);
        }

        // The input stream and its context.
        let (input, tu, mut engines) = match (spec.recv, &recv) {
            (Recv::TuContext, Val::TuCtx(tu)) => {
                let Some(Val::Tensor { ty: src, .. }) = arg_vals.first() else {
                    if args.is_empty() {
                        // `begin_interleaved().fetch(&a, &b)`: the pseudo-API of the Kernel Examples.
                        self.model.problems.push(
                            Unknown {
                                at: span,
                                primitive: Primitive::WithoutTensors(name.clone()),
                            }
                            .into(),
                        );
                    }
                    return Val::Unknown;
                };
                if method == Method::BeginInterleaved {
                    self.check_interleave(&generics, &args, span);
                }
                let mut ty = TensorTy::new(Kind::Begin);
                ty.dtype = src.dtype;
                for s in [Slot::Chip, Slot::Cluster, Slot::Slice] {
                    if let Some(v) = src.get(s) {
                        ty.maps.insert(s, v.clone());
                    }
                }
                if let Some(v) = src.get(Slot::Element) {
                    ty.maps.insert(Slot::Packet, v.clone());
                }
                let time = if method == Method::BeginInterleaved {
                    generics
                        .first()
                        .and_then(|g| interleave_axis(g, &self.scope))
                } else {
                    Some(MapVal::unplaced("m![1]", Some(Layout::identity())))
                };
                if let Some(t) = time {
                    ty.maps.insert(Slot::Time, t);
                }
                steps.push(Step {
                    method,
                    span,
                    engine: Some(Engine::Begin),
                    input: Some(src.clone()),
                    output: Some(ty.clone()),
                    keep: Vec::new(),
                    context: Some(*tu),
                    address: None,
                    awaited,
                    generics: gen_args.clone(),
                    args: val_args.clone(),
                });
                return Val::Tensor {
                    ty,
                    tu: Some(*tu),
                    engines: vec![Engine::Begin],
                };
            }
            (Recv::Tensor, Val::Tensor { ty, tu, engines }) => (ty.clone(), *tu, engines.clone()),
            (Recv::FirstArg, Val::TuCtx(_) | Val::Dma(_)) => match arg_vals.first() {
                Some(Val::Tensor { ty, .. }) => (ty.clone(), None, Vec::new()),
                _ => return Val::Unknown,
            },
            _ => return Val::Unknown,
        };

        // The pipeline state machine.
        let Some(out_kind) = (spec.output)(input.kind) else {
            self.order_error(&method, spec.engine, &input, span);
            steps.push(Step {
                method,
                span,
                engine: Some(spec.engine),
                input: Some(input),
                output: None,
                keep: Vec::new(),
                context: tu,
                address,
                awaited,
                generics: gen_args.clone(),
                args: val_args.clone(),
            });
            return Val::Unknown;
        };
        if spec.engine != Engine::Memory {
            // The step a sub-context commit cannot follow (KRN-006 points at it).
            // This expression's steps first, then those of the chain it continues (a pass
            // split over `let` bindings is one chain).
            let breaks = |s: &&Step| matches!(s.engine, Some(Engine::Cast | Engine::Transpose));
            let offender = steps
                .iter()
                .rev()
                .find(breaks)
                .or_else(|| {
                    self.root.iter().flatten().find_map(|(i, n)| {
                        let earlier = self.model.chains.get(*i)?.steps.get(..*n)?;
                        earlier.iter().rev().find(breaks)
                    })
                })
                .map(|s| (s.method.clone(), s.span));
            self.context_rules(
                &method,
                spec.engine,
                &input,
                tu,
                &engines,
                &generics,
                span,
                offender,
            );
            if engines.last() != Some(&spec.engine) {
                engines.push(spec.engine);
            }
        } else {
            self.dma_rules(&method, spec.is_async, awaited, &arg_vals, span);
        }

        let mut out = TensorTy::new(out_kind);
        for s in spec.keep {
            if *s == Slot::D {
                out.dtype = input.dtype;
            } else if let Some(v) = input.get(*s) {
                out.maps.insert(*s, v.clone());
            }
        }
        for (slot, g) in spec.generics.iter().zip(&generics) {
            set_slot(&mut out, *slot, g, &self.scope);
        }
        // A DMA into a destination view (`to_dm_view(dma, dst)`) writes the destination's
        // layout.
        let returns_nothing = method.returns_nothing(&name);
        if returns_nothing && let Some(Val::Tensor { ty: dst, .. }) = arg_vals.get(1) {
            for s in [Slot::Chip, Slot::Cluster, Slot::Slice, Slot::Element] {
                if let Some(v) = dst.get(s) {
                    out.maps.insert(s, v.clone());
                }
            }
        }
        match method {
            Method::Contract => out.dtype = input.dtype.and_then(Dtype::widened),
            Method::VectorFxpToFp => out.dtype = Some(Dtype::F32),
            Method::VectorFpToFxp => out.dtype = Some(Dtype::I32),
            Method::Align => {
                if !out.maps.contains_key(&Slot::Row)
                    && let Some(Val::Tensor { ty: trf, .. }) = arg_vals.first()
                    && let Some(r) = trf.get(Slot::Row)
                {
                    out.maps.insert(Slot::Row, r.clone());
                }
            }
            _ => {}
        }
        steps.push(Step {
            method,
            span,
            engine: Some(spec.engine),
            input: Some(input),
            output: Some(out.clone()),
            keep: spec.keep.to_vec(),
            context: tu,
            address,
            awaited,
            generics: gen_args.clone(),
            args: val_args.clone(),
        });
        if returns_nothing {
            return Val::Unknown;
        }
        let tu = if out_kind.is_stream() { tu } else { None };
        Val::Tensor {
            ty: out,
            tu,
            engines,
        }
    }

    /// A stream adapter of furiosa-opt-std (`fetch_cast::<D>()`, `fetch_zero_point_sub::<D>(zp)`,
    /// `commit_trim::<P>()`, `commit_cast::<D>()`): the stream with one property changed, no
    /// step of its own. A fetch adapter is folded into the fetch it adapts, which then reads
    /// as the manual's `fetch::<D, Time, Packet>` (`library-v06.md` §3.3), so the fetch rules
    /// check the conversion.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn adapt(
        &mut self,
        method: &Method,
        ty: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        first: Option<ast::GenericArg>,
        args: Vec<Arg>,
        steps: &mut [Step],
    ) -> Val {
        let mut out = ty.clone();
        // `commit_trim::<P>()` keeps the stream as the Commit Engine receives it: the manual's
        // commit trims implicitly, and its rules (CMT-001/002) read the untrimmed packet.
        if *method != Method::CommitTrim
            && let Some(g) = &first
        {
            set_slot(&mut out, Slot::D, g, &self.scope);
        }
        if matches!(
            method,
            Method::FetchCast | Method::FetchTableLookup | Method::FetchZeroPointSub
        ) && let Some(fetch) = steps.iter_mut().rev().find(|s| s.method.is_fetch())
        {
            if let Some(o) = fetch.output.as_mut() {
                o.dtype = out.dtype;
            }
            if let Some(g) = &first {
                fetch.generics.insert(0, arg_of(g.syntax()));
            }
            match method {
                Method::FetchTableLookup => fetch.method = Method::FetchWithTable,
                Method::FetchZeroPointSub => {
                    fetch.method = Method::FetchWithZeroPoint;
                    fetch.args.extend(args);
                }
                _ => {}
            }
        }
        Val::Tensor {
            ty: out,
            tu,
            engines: engines.to_vec(),
        }
    }

    /// An address computed by a call visa-lint cannot evaluate, with constant arguments (so
    /// it would be a constant if the call were followed): once.
    /// Reports each value argument of an engine call whose value visa-lint cannot know (a
    /// parameter, a `let` of something it does not evaluate, an `if` whose arms differ), once:
    /// the rules that read it skip it.
    pub(super) fn unknown_values(&mut self, exprs: &[ast::Expr], args: &[Arg], vals: &[Val]) {
        for ((e, arg), val) in exprs.iter().zip(args).zip(vals) {
            let Some(Err(unknown)) = &arg.value else {
                continue;
            };
            if !matches!(val, Val::Unknown | Val::Lost(_)) || !self.names_a_value(e) {
                continue;
            }
            self.not_analysed(NotFollowed::Value {
                at: arg.span,
                text: snippet(e.syntax()),
                why: unknown.why.clone(),
            });
        }
    }

    /// Whether `e` stands for a compile-time value (not a tensor, a context or a closure): a
    /// name the function binds to a value, a variant or struct literal, or an `if`/`match`.
    pub(super) fn names_a_value(&self, e: &ast::Expr) -> bool {
        match e {
            ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| self.names_a_value(&x)),
            ast::Expr::PathExpr(p) => p
                .path()
                .and_then(|p| path_key(&p))
                .is_some_and(|k| self.values.contains_key(&k)),
            ast::Expr::RecordExpr(_) | ast::Expr::IfExpr(_) | ast::Expr::MatchExpr(_) => true,
            // `BASE + OFF`, `-at`, `at as u64`: computed from a value.
            ast::Expr::BinExpr(b) => [b.lhs(), b.rhs()]
                .into_iter()
                .flatten()
                .any(|x| self.names_a_value(&x)),
            ast::Expr::PrefixExpr(p) => p.expr().is_some_and(|x| self.names_a_value(&x)),
            ast::Expr::CastExpr(c) => c.expr().is_some_and(|x| self.names_a_value(&x)),
            _ => false,
        }
    }

    pub(super) fn address_call(&mut self, a: &ast::Expr) {
        let calls = std::iter::once(a.syntax().clone())
            .chain(a.syntax().descendants().skip(1))
            .filter_map(ast::CallExpr::cast);
        for c in calls {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                continue;
            };
            let constant_args = c.arg_list().is_some_and(|l| {
                l.args()
                    .all(|x| consts::eval_in(&x, &self.consts, &self.env.const_fns).is_some())
            });
            if !constant_args {
                continue;
            }
            let name = snippet(callee.syntax());
            self.not_analysed(NotFollowed::AddressCall {
                at: span_of(c.syntax().text_range()),
                name,
            });
            return;
        }
    }

    /// A method the receiver's pipeline position does not have.
    pub(super) fn order_error(
        &mut self,
        method: &Method,
        engine: Engine,
        input: &TensorTy,
        span: Span,
    ) {
        let Some(at) = Engine::of_kind(input.kind) else {
            return;
        };
        if engine == Engine::Memory {
            return;
        }
        let needs_collect = matches!(input.kind, Kind::Fetch | Kind::Switch)
            && matches!(
                engine,
                Engine::Contraction | Engine::Vector | Engine::Cast | Engine::Transpose
            )
            || (matches!(input.kind, Kind::Fetch | Kind::Switch)
                && matches!(method, Method::ToTrf | Method::ToVrf));
        let method = method.clone();
        let problem = if needs_collect {
            Kernel::NeedsCollect {
                at: span,
                method,
                engine,
            }
        } else if input.kind == Kind::Begin {
            Kernel::NeedsFetch { at: span, method }
        } else if engine <= at && !(engine == Engine::Contraction && at == Engine::Contraction) {
            Kernel::OutOfOrder {
                at: span,
                method,
                engine,
                after: at,
            }
        } else {
            Kernel::NotAvailable {
                at: span,
                method,
                on: input.kind,
                after: at,
            }
        };
        self.model.problems.push(problem.into());
    }

    /// What the sub context may do.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn context_rules(
        &mut self,
        method: &Method,
        engine: Engine,
        input: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        generics: &[ast::GenericArg],
        span: Span,
        offender: Option<(Method, Span)>,
    ) {
        if tu != Some(Tu::Sub) {
            return;
        }
        match engine {
            Engine::Contraction | Engine::Vector
                if !matches!(
                    input.kind,
                    Kind::AlignedPair | Kind::Contraction | Kind::Vector(_)
                ) =>
            {
                self.model.problems.push(
                    Kernel::SubCompute {
                        at: span,
                        method: method.clone(),
                        engine,
                    }
                    .into(),
                );
            }
            Engine::Commit
                if engines
                    .iter()
                    .any(|e| matches!(e, Engine::Cast | Engine::Transpose)) =>
            {
                self.model
                    .problems
                    .push(Kernel::SubCommitAfterCast { at: span, offender }.into());
            }
            Engine::Fetch => {
                let casting = *method == Method::Fetch
                    && generics
                        .first()
                        .and_then(dtype_of)
                        .zip(input.dtype)
                        .is_some_and(|(d2, d)| d2 != d);
                if *method == Method::FetchWithTable || casting {
                    self.model
                        .problems
                        .push(Kernel::SubFetchAdapter { at: span, casting }.into());
                }
            }
            _ => {}
        }
    }

    /// DMA contexts and `.await`.
    pub(super) fn dma_rules(
        &mut self,
        method: &Method,
        is_async: bool,
        awaited: bool,
        args: &[Val],
        span: Span,
    ) {
        let host_side = matches!(self.model.kind, FnKind::Host | FnKind::Plain);
        let dma = args.iter().find_map(|a| match a {
            Val::Dma(d) => Some(*d),
            _ => None,
        });
        match (method, dma) {
            (Method::ToDm, Some(Dma::Pcie)) => self
                .model
                .problems
                .push(Kernel::DmOverPcie { at: span }.into()),
            (Method::ToHost, Some(Dma::Tensor)) => self
                .model
                .problems
                .push(Kernel::HostOverTensorDma { at: span }.into()),
            _ => {}
        }
        if is_async && dma == Some(Dma::Pcie) && !awaited && host_side {
            self.model.problems.push(
                Kernel::PcieNotAwaited {
                    at: span,
                    method: method.clone(),
                }
                .into(),
            );
        }
        if awaited
            && matches!(self.model.kind, FnKind::Device { .. })
            && (dma == Some(Dma::Tensor) || !is_async)
        {
            self.model.problems.push(
                Kernel::AwaitedInDevice {
                    at: span,
                    method: method.clone(),
                }
                .into(),
            );
        }
    }

    /// Two tensors, and an interleave axis of size 2.
    pub(super) fn check_interleave(
        &mut self,
        generics: &[ast::GenericArg],
        args: &[ast::Expr],
        span: Span,
    ) {
        if args.len() != 2 {
            self.model.problems.push(
                Kernel::InterleaveCount {
                    at: span,
                    count: args.len(),
                }
                .into(),
            );
        }
        if let Some(g) = generics.first()
            && let Some(v) = interleave_axis(g, &self.scope)
            && let Some(l) = &v.layout
            && l.size != 2
        {
            self.model.problems.push(
                Kernel::InterleaveAxis {
                    at: span,
                    axis: v.text,
                    size: l.size,
                }
                .into(),
            );
        }
    }
}

/// The interleave axis `I` of `begin_interleaved::<I, ...>` as the mapping `m![I]`.
pub(super) fn interleave_axis(g: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
    let ast::GenericArg::TypeArg(ta) = g else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    let name = path_key(&p.path()?)?;
    let axis = scope.axes.get(&name)?;
    Some(MapVal::unplaced(
        format!("m![{name}]"),
        Some(Layout::symbol(axis.axis.clone())),
    ))
}

//! Method calls: each engine method of a chain is a [`Step`], its type derived from its input
//! and its turbofish, with the pipeline order, context and DMA rules checked on the way.

use super::env::{alias_val, dtype_in, dtype_of, map_of, set_slot};
use super::reading::{arg_of, is_tile_view, span_of, var_name};
use super::state::{Builder, Construct, Dma, Val, sig_value};
use crate::diagnostic::Span;
use crate::mapping::{Layout, Scope};
use crate::model::consts::{self, path_key};
use crate::model::methods::{Engine, Method, Recv, Transfer};
use crate::model::problem::{Kernel, NotFollowed, Primitive, Unknown};
use crate::model::types::{Dtype, Kind, MapVal, Slot, TensorTy, Tu};
use crate::model::value;
use crate::model::{Adapter, Arg, FnKind, Step};
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs};
use ra_ap_syntax::{AstNode, ast};

impl Builder<'_> {
    /// A method call: an engine method of a stream or a context is a [`Step`] of the chain
    /// (its output type derived from its input and its turbofish, the pipeline's order,
    /// context and DMA rules checked); any other method gives what its receiver's type says.
    pub(super) fn method_call(
        &mut self,
        m: &ast::MethodCallExpr,
        steps: &mut Vec<Step>,
        awaited: bool,
    ) -> Val {
        if let Some(v) = self.map_over_constants(m) {
            return v;
        }
        self.note_changing_call(m);
        let recv = m
            .receiver()
            .map_or(Val::Unknown, |r| self.expr(&r, steps, false));
        // A stream in mid-pass that a tensor type's method of the crate may continue: its pass
        // so far, before the arguments are evaluated.
        let recv_pass = match m.name_ref() {
            Some(n) if self.env.has_tensor_method(n.text().as_ref()) => {
                self.pass_in_flight(&recv, steps)
            }
            _ => None,
        };
        let Some(call) = self.read_method_call(m, awaited) else {
            return Val::Unknown;
        };
        // A method of the crate's `impl` blocks on a value of the crate's type, even one named
        // like an engine method (`PLAN.tile(ctx, ..)`).
        if !matches!(
            recv,
            Val::Tensor { .. } | Val::TuCtx(_) | Val::Many { .. } | Val::Dma(_)
        ) && let Some(sig) = self.env.method(&call.name).cloned()
            && let Some(v) = self.crate_method_call(m, sig, &call.args)
        {
            return v;
        }
        if call.method.is_adapter()
            && let Val::Tensor { ty, tu, engines } = &recv
        {
            return self.adapter_call(m, &call, ty, *tu, engines, steps);
        }
        let recv_kind = match &recv {
            Val::Tensor { ty, .. } => Some(ty.kind),
            _ => None,
        };
        // On a value not followed, or an array of tensors, the methods other types have too
        // (`Iterator::collect`, `Option::transpose`, `clone`) are not taken for engine calls.
        let shared =
            call.name == "clone" || matches!(call.method, Method::Collect | Method::Transpose);
        let spec = call
            .method
            .transfer_for(&call.name, self.model.library, recv_kind)
            .filter(|_| !(shared && matches!(recv, Val::Lost(_) | Val::Many { .. })));
        let Some(spec) = spec else {
            // A method the crate's `impl` blocks give the tensor's type.
            let (chains_before, root_before) = (self.model.chains.len(), self.root.clone());
            if let Some(v) = self.extension_call(m, &call.args, (&recv, recv_pass)) {
                if let (Some([(i, 0)]), Some(r)) = (self.root.as_deref(), m.receiver())
                    && *i >= chains_before
                    && !steps.is_empty()
                {
                    let continuation = vec![(*i, 0)];
                    self.end_chain_at_call(&r, steps, root_before, continuation);
                }
                return v;
            }
            return self.other_method(m, &call, recv, steps);
        };
        if self.uses_lost_tensor(&call, &recv, &spec) {
            return Val::Unknown;
        }
        if call.method.reads_value_args() {
            self.unknown_values(&call.args, &call.val_args, &call.arg_vals);
        }
        let address = self.address_of(&call, &spec);
        // The input stream and its context.
        let (input, tu, engines) = match (spec.recv, &recv) {
            (Recv::TuContext, Val::TuCtx(tu)) => return self.begin_pass(&call, *tu, steps),
            (Recv::Tensor, Val::Tensor { ty, tu, engines }) => (ty.clone(), *tu, engines.clone()),
            (Recv::FirstArg, Val::TuCtx(_) | Val::Dma(_)) => match call.arg_vals.first() {
                Some(Val::Tensor { ty, .. }) => (ty.clone(), None, Vec::new()),
                _ => return Val::Unknown,
            },
            _ => return Val::Unknown,
        };
        self.engine_step(call, &spec, input, tu, engines, address, steps)
    }

    /// The parts of a method call a step records, its arguments evaluated (a tile view
    /// written as the argument, `commit_view(out.view_mut().tile::<..>(i))`, is recorded as a
    /// chain, as it is when bound by a `let`, so its tile is checked).
    fn read_method_call(&mut self, m: &ast::MethodCallExpr, awaited: bool) -> Option<MethodCall> {
        let name_ref = m.name_ref()?;
        let name = name_ref.text().to_string();
        let method = Method::resolve(&name, self.model.library);
        let span = span_of(name_ref.syntax().text_range());
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let val_args: Vec<Arg> = args.iter().map(|a| self.value_arg(a)).collect();
        let generics: Vec<ast::GenericArg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .collect()
            })
            .unwrap_or_default();
        let gen_args = generics.iter().map(|a| self.generic_arg(a)).collect();
        self.unknown_type_form_sizes(&generics);
        self.unknown_const_generic_args(&generics);
        let arg_vals: Vec<Val> = args
            .iter()
            .map(|a| match is_tile_view(a) {
                true => self.top(a, None, None),
                false => self.arg_expr(a),
            })
            .collect();
        let into = match method {
            Method::CommitView => args.first().and_then(|a| self.whole_view_of(a)),
            _ => None,
        };
        Some(MethodCall {
            name,
            method,
            span,
            args,
            val_args,
            generics,
            gen_args,
            arg_vals,
            awaited,
            into,
        })
    }

    /// The tensor `t.view_mut()` (or `tiles[i].view_mut()`, by the element's name) is a view
    /// of the whole of; `None` for a view of part of one (`t.view_mut().tile::<..>(i)`).
    fn whole_view_of(&self, e: &ast::Expr) -> Option<String> {
        let ast::Expr::MethodCallExpr(m) = e else {
            return None;
        };
        if m.name_ref()?.text() != "view_mut" {
            return None;
        }
        match m.receiver()? {
            ast::Expr::IndexExpr(i) => self.element_name(&i),
            r => var_name(&r),
        }
    }

    /// A stream adapter of furiosa-opt-std on a tensor: recorded, then applied ([`Self::adapt`]).
    fn adapter_call(
        &mut self,
        m: &ast::MethodCallExpr,
        call: &MethodCall,
        ty: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        steps: &mut [Step],
    ) -> Val {
        let first = m.generic_arg_list().and_then(|g| g.generic_args().next());
        self.model.adapters.push(Adapter {
            method: call.method.clone(),
            span: call.span,
            input: ty.clone(),
            generic: first
                .as_ref()
                .map(|g| (arg_of(g.syntax()), map_of(g, &self.scope))),
            to: first.as_ref().and_then(|g| dtype_in(g, &self.scope)),
            args: call.val_args.clone(),
        });
        // furiosa-opt-std 0.6 gives `fetch_table_lookup` to the main context only
        // (`engine/fetch_adapter.rs:180-211`); `fetch_cast` is any context's.
        if call.method == Method::FetchTableLookup && tu == Some(Tu::Sub) {
            let at = call.span;
            let problem = Kernel::SubFetchAdapter { at, casting: false };
            self.model.problems.push(problem.into());
        }
        // The Commit Adapter casts on the main context only (the 0.6 book's Commit Adapter
        // page: "Sub-context itself does not support type casting").
        if matches!(call.method, Method::CommitCast | Method::CommitCastRelu) && tu == Some(Tu::Sub)
        {
            let offender = Some((call.method.clone(), call.span));
            let problem = Kernel::SubCommitAfterCast {
                at: call.span,
                offender,
            };
            self.model.problems.push(problem.into());
        }
        // Its commit adapter enters from collect or a later engine only (`CanApplyCommitTrim`,
        // `engine/mod.rs:256-260`): a fetched stream goes through collect first.
        if call.method == Method::CommitTrim && matches!(ty.kind, Kind::Fetch | Kind::Switch) {
            let (at, method, engine) = (call.span, call.method.clone(), Engine::Commit);
            let problem = Kernel::NeedsCollect { at, method, engine };
            self.model.problems.push(problem.into());
        }
        let args = call.val_args.clone();
        self.adapt(&call.method, ty, tu, engines, first, args, steps)
    }

    /// A method that is no engine method of its receiver: a method of the crate's `impl`
    /// blocks, an iterator's or a reference's method, or a method visa-lint does not know.
    fn other_method(
        &mut self,
        m: &ast::MethodCallExpr,
        call: &MethodCall,
        recv: Val,
        steps: &mut Vec<Step>,
    ) -> Val {
        let name = call.name.as_str();
        // A method of the crate's `impl` blocks on a value the model cannot type
        // (`self.apply(ctx, a)`): its signature.
        if !matches!(recv, Val::Tensor { .. } | Val::TuCtx(_) | Val::Many { .. })
            && let Some(sig) = self.env.method(name).cloned()
        {
            for (k, a) in call.args.iter().enumerate() {
                let expected = sig.params.get(k).cloned().flatten();
                self.top(a, expected, None);
            }
            self.last_ends.clear();
            let what = format!("the result of `{}`", snippet(m.syntax()));
            return sig_value(sig, Construct::new(m.syntax(), what));
        }
        if let Some(v) = method_of_value(m, name, &recv) {
            return v;
        }
        let is_std = crate::model::methods::is_std_method(name);
        if matches!(recv, Val::Tensor { .. } | Val::TuCtx(_)) && !is_std {
            let primitive = Primitive::Method(name.to_string());
            let unknown = Unknown {
                at: call.span,
                primitive,
            };
            self.model.problems.push(unknown.into());
            steps.push(call.step(None, None, None, &[], None, None));
        }
        // A method of a value the model cannot type (`loader.load(ctx)`): what it gives
        // may be a tensor.
        if matches!(recv, Val::Unknown) && !is_std {
            let what = format!("the result of `{}`", snippet(m.syntax()));
            return Val::Lost(Construct::new(m.syntax(), what));
        }
        Val::Unknown
    }

    /// Whether the call uses a tensor the model did not follow as one (the receiver, or the
    /// tensor a pass begins from or aligns with): reported once at its construct.
    fn uses_lost_tensor(&mut self, call: &MethodCall, recv: &Val, spec: &Transfer) -> bool {
        if let Val::Lost(c) = recv {
            self.lost_use(c, call.span);
            return true;
        }
        if !(matches!(spec.recv, Recv::TuContext | Recv::FirstArg) || call.method == Method::Align)
        {
            return false;
        }
        let lost: Vec<Construct> = call
            .arg_vals
            .iter()
            .filter_map(|v| match v {
                Val::Lost(c) => Some(c.clone()),
                _ => None,
            })
            .collect();
        for c in &lost {
            self.lost_use(c, call.span);
        }
        !lost.is_empty()
    }

    /// The call's address argument, an integer value: through names, `if`s on constants and
    /// sizes too. One the model cannot evaluate is looked at for the calls that make it.
    fn address_of(&mut self, call: &MethodCall, spec: &Transfer) -> Option<u64> {
        let address_expr = spec.address_arg.and_then(|k| call.args.get(k))?;
        let address = match self.value_of(address_expr).0 {
            Ok(value::Value::Int(v)) => Ok(v),
            Ok(_) => Err(None),
            Err(u) => Err(Some(u)),
        };
        match address {
            Ok(v) => return Some(v),
            // `self.plan.base`, `cfg.tile.at`: a field of a value the function binds and does
            // not know (a parameter, a method's receiver) is an address not checked.
            Err(Some(u)) if self.reads_field_of_value(address_expr) => {
                self.not_analysed(NotFollowed::Value {
                    at: span_of(address_expr.syntax().text_range()),
                    text: snippet(address_expr.syntax()),
                    why: u.why,
                });
            }
            Err(_) => self.address_call(address_expr),
        }
        None
    }

    /// A pass begun on a Tensor Unit context (`ctx.main.begin(a.view())`,
    /// `begin_interleaved::<I, ..>(&a, &b)`): the stream it starts, its Time the interleave
    /// axis or `m![1]`, its Packet the source's Element.
    fn begin_pass(&mut self, call: &MethodCall, tu: Tu, steps: &mut Vec<Step>) -> Val {
        let Some(Val::Tensor { ty: src, .. }) = call.arg_vals.first() else {
            if call.args.is_empty() {
                // `begin_interleaved().fetch(&a, &b)`: the pseudo-API of the Kernel Examples.
                let primitive = Primitive::WithoutTensors(call.name.clone());
                let unknown = Unknown {
                    at: call.span,
                    primitive,
                };
                self.model.problems.push(unknown.into());
            }
            return Val::Unknown;
        };
        let interleaved = call.method == Method::BeginInterleaved;
        if interleaved {
            self.check_interleave(&call.generics, &call.args, call.span);
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
        let time = match interleaved {
            true => (call.generics.first()).and_then(|g| interleave_axis(g, &self.scope)),
            false => Some(MapVal::unplaced("m![1]", Some(Layout::identity()))),
        };
        if let Some(t) = time {
            ty.maps.insert(Slot::Time, t);
        }
        let (input, output) = (Some(src.clone()), Some(ty.clone()));
        steps.push(call.step(Some(Engine::Begin), input, output, &[], Some(tu), None));
        Val::Tensor {
            ty,
            tu: Some(tu),
            engines: vec![Engine::Begin],
        }
    }

    /// An engine method on `input`: the pipeline's state machine decides its output kind,
    /// the Tensor Unit's context rules (or the DMA's) are checked, and its output type is
    /// derived.
    #[allow(clippy::too_many_arguments)]
    fn engine_step(
        &mut self,
        call: MethodCall,
        spec: &Transfer,
        input: TensorTy,
        tu: Option<Tu>,
        mut engines: Vec<Engine>,
        address: Option<u64>,
        steps: &mut Vec<Step>,
    ) -> Val {
        let engine = Some(spec.engine);
        let Some(out_kind) = (spec.output)(input.kind) else {
            self.order_error(&call.method, spec.engine, &input, call.span);
            steps.push(call.step(engine, Some(input), None, &[], tu, address));
            return Val::Unknown;
        };
        if spec.engine != Engine::Memory {
            self.tensor_unit_rules(&call, spec, &input, tu, &engines, steps);
            if engines.last() != Some(&spec.engine) {
                engines.push(spec.engine);
            }
        } else {
            let (method, span, awaited) = (&call.method, call.span, call.awaited);
            self.dma_rules(method, spec.is_async, awaited, &call.arg_vals, span);
        }
        let out = self.step_output(&call, spec, &input, out_kind);
        let returns_nothing = call.method.returns_nothing(&call.name);
        let output = Some(out.clone());
        steps.push(call.step(engine, Some(input), output, spec.keep, tu, address));
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

    /// The context rules of a Tensor Unit engine method ([`Self::context_rules`]), with the
    /// step a sub-context commit cannot follow (KRN-006 points at it): this expression's steps
    /// first, then those of the chain it continues (a pass split over `let` bindings is one
    /// chain).
    fn tensor_unit_rules(
        &mut self,
        call: &MethodCall,
        spec: &Transfer,
        input: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        steps: &[Step],
    ) {
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
        let (method, generics, span) = (&call.method, &call.generics, call.span);
        self.context_rules(
            method,
            spec.engine,
            input,
            tu,
            engines,
            generics,
            span,
            offender,
        );
    }

    /// The type an engine method gives: the slots it keeps from `input`, those its turbofish
    /// fixes, a DMA destination view's layout, and the element type its engine sets.
    fn step_output(
        &self,
        call: &MethodCall,
        spec: &Transfer,
        input: &TensorTy,
        out_kind: Kind,
    ) -> TensorTy {
        let mut out = TensorTy::new(out_kind);
        for s in spec.keep {
            if *s == Slot::D {
                out.dtype = input.dtype;
            } else if let Some(v) = input.get(*s) {
                out.maps.insert(*s, v.clone());
            }
        }
        for (slot, g) in spec.generics.iter().zip(&call.generics) {
            set_slot(&mut out, *slot, g, &self.scope);
        }
        // A DMA into a destination view (`to_dm_view(dma, dst)`) and a commit into one
        // (`commit_view(dst)`) write the destination's layout.
        let dst_arg = match call.method {
            Method::CommitView => 0,
            _ => 1,
        };
        if call.method.returns_nothing(&call.name)
            && let Some(Val::Tensor { ty: dst, .. }) = call.arg_vals.get(dst_arg)
        {
            for s in [Slot::Chip, Slot::Cluster, Slot::Slice, Slot::Element] {
                if let Some(v) = dst.get(s) {
                    out.maps.insert(s, v.clone());
                }
            }
        }
        match call.method {
            Method::Contract => {
                out.dtype = input
                    .dtype
                    .and_then(|d| self.model.library.contraction_output(d));
            }
            Method::VectorFxpToFp => out.dtype = Some(Dtype::F32),
            Method::VectorFpToFxp => out.dtype = Some(Dtype::I32),
            Method::Align => {
                if !out.maps.contains_key(&Slot::Row)
                    && let Some(Val::Tensor { ty: trf, .. }) = call.arg_vals.first()
                    && let Some(r) = trf.get(Slot::Row)
                {
                    out.maps.insert(Slot::Row, r.clone());
                }
            }
            _ => {}
        }
        out
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
            // The element type an adapter converts to (`fetch_cast::<W>()` with `W` a type
            // parameter no call gives here) is not the one it converts from.
            if dtype_in(g, &self.scope).is_none() {
                out.dtype = None;
            }
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

    /// A const argument of an engine call's turbofish that names a value visa-lint cannot
    /// know (`tile::<m![D], W, ..>` with `W` a const generic parameter no call binds here):
    /// the rules that read it (the tile's size) skip it, and say so.
    fn unknown_const_generic_args(&mut self, generics: &[ast::GenericArg]) {
        // A single name (`W`, `{ W }`), read without allocating: most arguments are mappings.
        let single = |p: Option<ast::Path>| {
            let p = p?;
            match p.qualifier() {
                None => p.segment()?.name_ref(),
                Some(_) => None,
            }
        };
        for arg in generics {
            let name = match arg {
                ast::GenericArg::TypeArg(t) => match t.ty() {
                    Some(ast::Type::PathType(p)) => single(p.path()),
                    _ => None,
                },
                ast::GenericArg::ConstArg(c) => match c.expr() {
                    Some(ast::Expr::BlockExpr(b)) => {
                        match b.stmt_list().and_then(|l| l.tail_expr()) {
                            Some(ast::Expr::PathExpr(p)) => single(p.path()),
                            _ => None,
                        }
                    }
                    Some(ast::Expr::PathExpr(p)) => single(p.path()),
                    _ => None,
                },
                _ => None,
            };
            let Some(name) = name else { continue };
            let Some(Err(unknown)) = self.values.get(name.text()) else {
                continue;
            };
            let why = unknown.why.clone();
            self.not_analysed(NotFollowed::Value {
                at: span_of(arg.syntax().text_range()),
                text: name.text().to_string(),
                why,
            });
        }
    }

    /// A mapping written in place as the types `m!` expands to (`Padding<m![H % 8], { PAD }>`)
    /// whose size visa-lint cannot compute: the rules that read the mapping skip it, and say so
    /// (VL-009 at the size, with the reason it is unknown).
    fn unknown_type_form_sizes(&mut self, generics: &[ast::GenericArg]) {
        for arg in generics {
            let ast::GenericArg::TypeArg(t) = arg else {
                continue;
            };
            let Some(ast::Type::PathType(p)) = t.ty() else {
                continue;
            };
            if !crate::syntax::is_type_form(&p)
                || map_of(arg, &self.scope).is_some_and(|m| m.layout.is_some())
            {
                continue;
            }
            for size in p.syntax().descendants().filter_map(ast::ConstArg::cast) {
                let Some(e) = size.expr() else { continue };
                let inner = match &e {
                    ast::Expr::BlockExpr(b) => b.stmt_list().and_then(|l| l.tail_expr()),
                    _ => Some(e.clone()),
                };
                let Some(inner) = inner else { continue };
                let why = match self.value_of(&inner).0 {
                    Ok(value::Value::Int(_)) => continue,
                    Ok(v) => format!("it is `{}`, not an integer visa-lint knows", v.text()),
                    Err(unknown) => unknown.why,
                };
                self.not_analysed(NotFollowed::Value {
                    at: span_of(size.syntax().text_range()),
                    text: snippet(inner.syntax()),
                    why,
                });
            }
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
                .is_some_and(|k| self.values.contains_key(&k) || self.env.unknown_consts_has(&k)),
            // `PLAN.mode()`, `plan.lanes()`: a method of a value the function or the crate
            // binds and the evaluator knows, which it runs (a method of a tensor, `w.view()`,
            // is not one).
            ast::Expr::MethodCallExpr(m) => match m.receiver() {
                Some(ast::Expr::PathExpr(p)) => {
                    p.path().and_then(|p| path_key(&p)).is_some_and(|k| {
                        self.values
                            .get(&k)
                            .cloned()
                            .or_else(|| self.env.value_or_why(&k))
                            .is_some_and(|v| v.is_ok())
                    })
                }
                Some(r) => self.names_a_value(&r),
                None => false,
            },
            ast::Expr::RecordExpr(_)
            | ast::Expr::IfExpr(_)
            | ast::Expr::MatchExpr(_)
            | ast::Expr::IndexExpr(_) => true,
            // `FpBinaryOp::MulF(cfg.alu)`: a variant built from a value (not a function's
            // result, `VeRhs::vrf(max)`).
            ast::Expr::CallExpr(c) => {
                let variant = match c.expr() {
                    Some(ast::Expr::PathExpr(p)) => p
                        .path()
                        .and_then(|p| p.segment()?.name_ref())
                        .is_some_and(|n| n.text().starts_with(|c: char| c.is_ascii_uppercase())),
                    _ => false,
                };
                // `key_dm(idx, header)`: a function the evaluator runs, given a value.
                let runs = match c.expr() {
                    Some(ast::Expr::PathExpr(p)) => p
                        .path()
                        .and_then(|p| path_key(&p))
                        .is_some_and(|k| self.value_fns().contains_key(&k)),
                    _ => false,
                };
                (variant || runs)
                    && c.arg_list()
                        .is_some_and(|l| l.args().any(|x| self.names_a_value(&x)))
            }
            // `BASE + OFF`, `-at`, `at as u64`: computed from a value.
            ast::Expr::BinExpr(b) => [b.lhs(), b.rhs()]
                .into_iter()
                .flatten()
                .any(|x| self.names_a_value(&x)),
            ast::Expr::PrefixExpr(p) => p.expr().is_some_and(|x| self.names_a_value(&x)),
            ast::Expr::CastExpr(c) => c.expr().is_some_and(|x| self.names_a_value(&x)),
            // `MAP[1].base`: a field of an element of an array; `at.q`, `cfg.alu`: a field of
            // a name the function binds as a value, known or not (a local, a parameter, a
            // method's receiver), or of a const visa-lint does not evaluate. A field holding a
            // tensor (`ops.src`) is told apart by what it evaluates to, not here.
            ast::Expr::FieldExpr(f) => match f.expr() {
                Some(ast::Expr::IndexExpr(_) | ast::Expr::FieldExpr(_)) => {
                    f.expr().is_some_and(|x| self.names_a_value(&x))
                }
                Some(ast::Expr::PathExpr(_)) => self.field_of_value(e),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether `e` reads a field of a value the function binds (`self.plan.base`,
    /// `0x40 + cfg.tile.at * 2`).
    fn reads_field_of_value(&self, e: &ast::Expr) -> bool {
        std::iter::once(e.syntax().clone())
            .chain(e.syntax().descendants().skip(1))
            .filter_map(ast::FieldExpr::cast)
            .any(|f| self.field_of_value(&ast::Expr::FieldExpr(f)))
    }

    /// Whether `e` is a field (`self.plan.base`, `cfg.tile.at`) of a name the function binds
    /// as a value, known or not.
    fn field_of_value(&self, e: &ast::Expr) -> bool {
        let mut at = e.clone();
        let mut fields = 0;
        while let ast::Expr::FieldExpr(f) = &at {
            let Some(inner) = f.expr() else {
                return false;
            };
            at = inner;
            fields += 1;
        }
        let ast::Expr::PathExpr(p) = at else {
            return false;
        };
        fields > 0
            && p.path()
                .and_then(|p| path_key(&p))
                .is_some_and(|k| self.values.contains_key(&k) || self.env.unknown_consts_has(&k))
    }

    pub(super) fn address_call(&mut self, a: &ast::Expr) {
        // `self.slot(i)`, `plan.addr(i)`: a method of a value the model knows.
        if let ast::Expr::MethodCallExpr(m) = a
            && m.receiver().is_some_and(|r| self.names_a_value(&r))
            && let Err(u) = self.value_of(a).0
        {
            self.not_analysed(NotFollowed::Value {
                at: span_of(a.syntax().text_range()),
                text: snippet(a.syntax()),
                why: u.why,
            });
            return;
        }
        let calls = std::iter::once(a.syntax().clone())
            .chain(a.syntax().descendants().skip(1))
            .filter_map(ast::CallExpr::cast);
        for c in calls {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                continue;
            };
            let constant_args = c.arg_list().is_some_and(|l| {
                l.args()
                    .all(|x| consts::eval_in(&x, &self.consts, &self.env.value_fns).is_some())
            });
            if !constant_args {
                continue;
            }
            let name = snippet(callee.syntax());
            let why = self.value_of(&ast::Expr::CallExpr(c.clone())).0.err();
            self.not_analysed(NotFollowed::AddressCall {
                at: span_of(c.syntax().text_range()),
                name,
                why: why.map(|u| u.why),
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
    if let Some(axis) = scope.axes.get(&name) {
        return Some(MapVal::unplaced(
            format!("m![{name}]"),
            Some(Layout::symbol(axis.axis.clone())),
        ));
    }
    // A name for an axis (`type Lane = Q;`, `F::Lane` of the type a call gives `F`).
    let name = crate::syntax::without_trait(&name).unwrap_or(name);
    let layout = alias_val(&name, scope, Span::default())?.layout?;
    let axis = layout.as_symbol()?;
    Some(MapVal::unplaced(
        format!("m![{}]", axis.name),
        Some(Layout::symbol(axis.clone())),
    ))
}

impl Builder<'_> {
    /// A turbofish argument as a step records it: as written, with the value of a constant it
    /// names (`tile::<m![D], HALF, ..>` with `HALF` a const or a const generic the call gave).
    fn generic_arg(&self, a: &ast::GenericArg) -> Arg {
        let mut arg = arg_of(a.syntax());
        let literal = arg.text.trim().parse::<u64>().is_ok();
        if !literal
            && let Some(v) =
                consts::const_arg(a, &self.consts, self.value_fns(), Some(&self.scope), 0)
        {
            arg.value = Some(Ok(value::Value::Int(v)));
        }
        arg
    }
}

/// A method call as a step records it: the method, where its name is written, its
/// arguments (as written, as values, as evaluated) and its turbofish.
struct MethodCall {
    name: String,
    method: Method,
    span: Span,
    args: Vec<ast::Expr>,
    val_args: Vec<Arg>,
    generics: Vec<ast::GenericArg>,
    gen_args: Vec<Arg>,
    arg_vals: Vec<Val>,
    awaited: bool,
    /// The tensor a `commit_view` writes whole (see [`Step::into`]).
    into: Option<String>,
}

impl MethodCall {
    /// The step this call makes.
    fn step(
        &self,
        engine: Option<Engine>,
        input: Option<TensorTy>,
        output: Option<TensorTy>,
        keep: &[Slot],
        context: Option<Tu>,
        address: Option<u64>,
    ) -> Step {
        Step {
            method: self.method.clone(),
            span: self.span,
            engine,
            input,
            output,
            keep: keep.to_vec(),
            context,
            address,
            awaited: self.awaited,
            generics: self.gen_args.clone(),
            args: self.val_args.clone(),
            into: self.into.clone(),
            into_view: self.method.returns_nothing(&self.name),
        }
    }
}

/// Whether the closure `m` is given returns its parameter, unwrapped (`|t| t.unwrap()`,
/// `|t| t.expect("..")`) or as it is.
fn unwraps_its_parameter(m: &ast::MethodCallExpr) -> bool {
    let Some(ast::Expr::ClosureExpr(c)) = m.arg_list().and_then(|l| l.args().next()) else {
        return false;
    };
    let param = c
        .param_list()
        .and_then(|l| l.params().next())
        .and_then(|p| p.pat())
        .map(|p| p.syntax().text().to_string());
    let names_param = |e: &ast::Expr| matches!(e, ast::Expr::PathExpr(p) if Some(p.syntax().text().to_string()) == param);
    match c.body() {
        Some(ast::Expr::MethodCallExpr(call)) => {
            let unwrap = call
                .name_ref()
                .is_some_and(|n| n.text() == "unwrap" || n.text() == "expect");
            unwrap && call.receiver().is_some_and(|r| names_param(&r))
        }
        Some(body) => names_param(&body),
        None => false,
    }
}

/// What an iterator's or a reference's method gives on `recv` (`iter`, `enumerate`, `clone`,
/// `unwrap` ..), and what a method of a value not followed gives; `None` for other methods.
fn method_of_value(m: &ast::MethodCallExpr, name: &str, recv: &Val) -> Option<Val> {
    match recv {
        // Arrays of tensors iterate; values not followed stay so.
        Val::Many { elem, enumerated } => Some(match name {
            "iter" | "iter_mut" | "into_iter" | "copied" | "cloned" | "clone" => Val::Many {
                elem: elem.clone(),
                enumerated: *enumerated,
            },
            "enumerate" => Val::Many {
                elem: elem.clone(),
                enumerated: true,
            },
            // `opts.map(|t| t.unwrap())`: the options filled in a loop, as their tensors.
            "map" if unwraps_its_parameter(m) => Val::Many {
                elem: elem.clone(),
                enumerated: *enumerated,
            },
            "len" | "is_empty" => Val::Unknown,
            _ => {
                let what = format!("`.{name}()` of an array of tensors");
                Val::Lost(Construct::new(m.syntax(), what))
            }
        }),
        Val::Lost(c) => {
            let of_self = matches!(m.receiver(), Some(ast::Expr::PathExpr(ref p)) if p.syntax().text() == "self");
            Some(match of_self {
                true => {
                    let what = format!("the result of `{}`", snippet(m.syntax()));
                    Val::Lost(Construct::new(m.syntax(), what))
                }
                false => Val::Lost(c.clone()),
            })
        }
        Val::Tensor { .. }
            if matches!(
                name,
                "clone" | "to_owned" | "borrow" | "as_ref" | "unwrap" | "expect"
            ) =>
        {
            Some(recv.clone())
        }
        _ => None,
    }
}

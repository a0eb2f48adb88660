//! Expressions: a chain's root expression and its expected type, unification with annotations,
//! closures, blocks, arrays and macros.

use super::env::tensor_type;
use super::reading::{root_field, span_of, var_name, wrapped_value};
use super::state::{Builder, Construct, Dma, Val, array_of, kept_through_stream};
use super::statements::Arm;
use crate::diagnostic::Span;
use crate::model::methods::{Engine, Method};
use crate::model::problem::{Kernel, NotFollowed};
use crate::model::types::{Slot, TensorTy, Tu};
use crate::model::{Chain, Step, written};
use crate::syntax::snippet;
use ra_ap_syntax::{AstNode, ast};

impl Builder<'_> {
    /// Evaluates a statement-level expression, recording its chain: a new one, or the chains
    /// of the variable it continues, extended (see [`Builder::ends`]).
    pub(super) fn top(
        &mut self,
        e: &ast::Expr,
        expected: Option<TensorTy>,
        binding: Option<String>,
    ) -> Val {
        self.last_ends.clear();
        match e {
            ast::Expr::BlockExpr(b) if b.unsafe_token().is_none() => {
                return self.block(b, expected, binding);
            }
            ast::Expr::ParenExpr(p) => {
                if let Some(inner) = p.expr() {
                    return self.top(&inner, expected, binding);
                }
            }
            ast::Expr::ForExpr(_) | ast::Expr::WhileExpr(_) | ast::Expr::LoopExpr(_) => {
                return self.loop_expr(e);
            }
            ast::Expr::ReturnExpr(r) => {
                // `return x.to_hbm(..)`: the value takes the function's return type.
                if let Some(v) = r.expr() {
                    let ret = self.ret.clone();
                    self.top(&v, ret, None);
                }
                self.last_ends.clear();
                return Val::Never;
            }
            ast::Expr::BreakExpr(b) => {
                if let Some(v) = b.expr() {
                    self.top(&v, None, None);
                }
                self.last_ends.clear();
                return Val::Unknown;
            }
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. })) =>
            {
                return self.assign(b);
            }
            // `Some(x.to_dm(..))`, `Ok(..)`: the model sees through the wrapper, and the chain
            // inside is the one the binding names (placed where its last step puts it).
            ast::Expr::CallExpr(c) if let Some(inner) = wrapped_value(c) => {
                return self.top(&inner, expected, binding);
            }
            ast::Expr::TupleExpr(t) => {
                let types = self
                    .tuple_types
                    .remove(&span_of(t.syntax().text_range()))
                    .unwrap_or_default();
                let vals = t
                    .fields()
                    .enumerate()
                    .map(|(k, f)| self.top(&f, types.get(k).cloned().flatten(), None))
                    .collect();
                self.last_ends.clear();
                return Val::Tuple(vals);
            }
            ast::Expr::IfExpr(i) => {
                let mut arms = Vec::new();
                let complete = self.if_arms(i, &expected, &binding, &mut arms);
                return self.join(arms, complete);
            }
            ast::Expr::MatchExpr(m) => {
                // A match on tensors (`Some(prev) => ..` of `match &best`) binds them in its
                // arms, each name the tensor where it is placed.
                let scrutinee = m.expr().map(|s| {
                    let v = self.arg_expr(&s);
                    let of = var_name(&s).map(|n| (n, self.placed_at(&s)));
                    (of, v)
                });
                let on_tensors = scrutinee
                    .as_ref()
                    .is_some_and(|(_, v)| v.holds_tensor() || matches!(v, Val::Lost(_)));
                let scrutinee = scrutinee.filter(|_| on_tensors);
                // A scrutinee the compiler knows takes one arm, its pattern bound
                // (`Some(op) => t.vector_fxp(op, ..)` for `cfg.round = Some(AddFxp)`).
                let unknown = match self.taken_arm(m) {
                    Ok(arm) => {
                        let Some(x) = arm.expr() else {
                            return Val::Unknown;
                        };
                        let v = self.in_arm(&arm, scrutinee.as_ref(), |me| {
                            me.top(&x, expected.clone(), binding.clone())
                        });
                        let ends = std::mem::take(&mut self.last_ends);
                        return self.join(vec![(v, ends)], true);
                    }
                    Err(unknown) => unknown,
                };
                if !on_tensors {
                    self.bind_arms_unknown(m, unknown);
                }
                let mut arms = Vec::new();
                for arm in m.match_arm_list().into_iter().flat_map(|l| l.arms()) {
                    if let Some(x) = arm.expr() {
                        let v = self.arm(Arm::Maybe, |me| {
                            me.in_arm(&arm, scrutinee.as_ref(), |me| {
                                me.top(&x, expected.clone(), binding.clone())
                            })
                        });
                        arms.push((v, std::mem::take(&mut self.last_ends)));
                    }
                }
                return self.join(arms, true);
            }
            _ => {}
        }
        self.chain_expr(e, expected, binding)
    }

    /// An expression that makes a chain, or continues the chains of the variable it starts
    /// from: evaluated, typed by `expected` (an annotation, a return type), and recorded.
    fn chain_expr(
        &mut self,
        e: &ast::Expr,
        expected: Option<TensorTy>,
        binding: Option<String>,
    ) -> Val {
        let saved = self.root.take();
        let mut steps = Vec::new();
        if called(e) {
            self.call_expected.clone_from(&expected);
        }
        let mut val = self.expr(e, &mut steps, false);
        self.call_expected = None;
        let origin = std::mem::replace(&mut self.root, saved).unwrap_or_default();
        // The chains this expression continues, each with its steps so far.
        let prefixes = self.live_prefixes(origin);
        // A stream in mid-pass (from a context, or a stream-typed parameter of a helper).
        let mid_pass = matches!(&val, Val::Tensor { ty, .. } if ty.kind.is_stream());
        if steps.is_empty() {
            return self.passed_on(val, expected.as_ref(), prefixes, mid_pass);
        }
        let mut whole = self.continued_by(&prefixes, steps);
        if let (Some(exp), Val::Tensor { ty, .. }) = (&expected, &mut val) {
            for w in &mut whole {
                self.unify(ty, exp, w);
            }
        } else if let (Some(exp), Val::Unknown | Val::Lost(_)) = (&expected, &val) {
            val = Val::Tensor {
                ty: exp.clone(),
                tu: None,
                engines: Vec::new(),
            };
        }
        let ends = self.record_chains(e, whole, &prefixes, &expected, &binding);
        if mid_pass {
            self.last_ends = ends;
        }
        val
    }

    /// The chain ends `origin` that still exist as they were (each chain's index, and its
    /// length when the expression began).
    fn live_prefixes(&self, origin: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
        origin
            .into_iter()
            .filter(|(i, n)| {
                self.model
                    .chains
                    .get(*i)
                    .is_some_and(|c| c.steps.len() >= *n)
            })
            .collect()
    }

    /// Each chain of `prefixes` up to its end, continued by `steps`; `steps` alone when
    /// there is none.
    fn continued_by(&self, prefixes: &[(usize, usize)], steps: Vec<Step>) -> Vec<Vec<Step>> {
        if prefixes.is_empty() {
            return vec![steps];
        }
        prefixes
            .iter()
            .map(|(i, n)| {
                let mut w = self.model.chains[*i].steps[..*n].to_vec();
                w.extend(steps.iter().cloned());
                w
            })
            .collect()
    }

    /// A helper called in the middle of a chain (`..branch().saturate().vector_final()`)
    /// that returns the stream in mid-pass: the steps written before the call are recorded
    /// as a chain of their own that ends at the call, as a `let` binding its receiver would
    /// (the helper holds them as its pass so far), and what follows the call continues the
    /// helper's result (`continuation`, the chain [`Self::continuation_of`] began).
    pub(super) fn end_chain_at_call(
        &mut self,
        receiver: &ast::Expr,
        steps: &mut Vec<Step>,
        before_call: Option<Vec<(usize, usize)>>,
        continuation: Vec<(usize, usize)>,
    ) {
        let prefixes = self.live_prefixes(before_call.unwrap_or_default());
        let whole = self.continued_by(&prefixes, std::mem::take(steps));
        self.record_chains(receiver, whole, &prefixes, &None, &None);
        self.root = Some(continuation);
    }

    /// A value made without a step (`let b = a;`, a block's tail, a call the model does not
    /// follow): typed by `expected`, and a variable's chains go with it.
    fn passed_on(
        &mut self,
        mut val: Val,
        expected: Option<&TensorTy>,
        prefixes: Vec<(usize, usize)>,
        mid_pass: bool,
    ) -> Val {
        if let (Some(exp), Val::Tensor { ty, .. }) = (expected, &mut val) {
            self.unify(ty, exp, &mut []);
        }
        // `let w: Weights = load(..);`: what the model does not follow is the type the
        // annotation (or the return type) gives it, as rustc types it.
        if let (Some(exp), Val::Unknown | Val::Lost(_)) = (expected, &val) {
            val = Val::Tensor {
                ty: exp.clone(),
                tu: None,
                engines: Vec::new(),
            };
        }
        if mid_pass {
            self.last_ends = prefixes;
        }
        val
    }

    /// Records the chains `whole` (each continuing the chain end of the same index in
    /// `prefixes`, or new): the first continuation of an end extends that chain in place,
    /// another is a chain of its own. Returns their ends.
    fn record_chains(
        &mut self,
        e: &ast::Expr,
        whole: Vec<Vec<Step>>,
        prefixes: &[(usize, usize)],
        expected: &Option<TensorTy>,
        binding: &Option<String>,
    ) -> Vec<(usize, usize)> {
        let span = span_of(e.syntax().text_range());
        let mut ends = Vec::new();
        for (k, w) in whole.into_iter().enumerate() {
            let n = w.len();
            match prefixes.get(k) {
                // The first continuation of a chain end extends that chain in place.
                Some(&(i, len)) if self.model.chains[i].steps.len() == len => {
                    let c = &mut self.model.chains[i];
                    c.steps = w;
                    c.span = Span::new(
                        c.span.start.min(span.start) as usize,
                        span.end.max(c.span.end) as usize,
                    );
                    c.binding = binding.clone();
                    c.declared = expected.clone();
                    c.written_apart = true;
                    ends.push((i, n));
                }
                // A second continuation of the same end (another arm): a chain of its own.
                Some(&(i, _)) => {
                    let c = &self.model.chains[i];
                    let chain = Chain {
                        span: Span::new(c.span.start.min(span.start) as usize, span.end as usize),
                        binding: binding.clone(),
                        declared: expected.clone(),
                        receiver: c.receiver.clone(),
                        steps: w,
                        written_apart: true,
                        iteration: self.iteration,
                    };
                    self.model.chains.push(chain);
                    ends.push((self.model.chains.len() - 1, n));
                }
                None => {
                    self.model.chains.push(Chain {
                        span,
                        binding: binding.clone(),
                        declared: expected.clone(),
                        receiver: self.root_tensor(e).or_else(|| root_field(e)),
                        steps: w,
                        written_apart: false,
                        iteration: self.iteration,
                    });
                    ends.push((self.model.chains.len() - 1, n));
                }
            }
        }
        ends
    }

    /// Merges what an annotation says into the chain's result, and flows it backward.
    pub(super) fn unify(&mut self, ty: &mut TensorTy, exp: &TensorTy, steps: &mut [Step]) {
        if ty.kind != exp.kind {
            return; // a different type: rustc reports that
        }
        // A `fetch()` without a written element type takes it from what the chain's result is
        // declared as (rustc infers the cast from the annotation or the return type), when every
        // step after it keeps the element type.
        if let Some(want) = exp.dtype
            && ty.dtype != Some(want)
            && let Some(f) = steps.iter().rposition(|s| s.method == Method::Fetch)
            && written(&steps[f], 0).is_none()
            && steps[f + 1..].iter().all(|s| s.keep.contains(&Slot::D))
        {
            for (k, s) in steps[f..].iter_mut().enumerate() {
                if k > 0
                    && let Some(i) = s.input.as_mut()
                {
                    i.dtype = Some(want);
                }
                if let Some(o) = s.output.as_mut() {
                    o.dtype = Some(want);
                }
            }
            ty.dtype = Some(want);
        }
        if ty.dtype.is_none() {
            ty.dtype = exp.dtype;
        }
        for (slot, want) in &exp.maps {
            match ty.maps.get(slot) {
                None => {
                    ty.maps.insert(*slot, want.clone());
                }
                Some(have) => {
                    let differs =
                        matches!((&have.layout, &want.layout), (Some(a), Some(b)) if a != b);
                    if differs && slot.is_spatial() && kept_through_stream(steps, *slot) {
                        let at = steps.last().map_or(Span::default(), |s| s.span);
                        self.model.problems.push(
                            Kernel::SpatialChange {
                                at,
                                slot: *slot,
                                from: have.text.clone(),
                                to: want.text.clone(),
                                annotation: want.span,
                            }
                            .into(),
                        );
                    }
                }
            }
        }
        // Flow the result back through the steps that keep each slot.
        if let Some(last) = steps.last_mut() {
            last.output = Some(ty.clone());
        }
        for i in (0..steps.len()).rev() {
            let Some(out) = steps[i].output.clone() else {
                break;
            };
            let keep = steps[i].keep.clone();
            let Some(input) = steps[i].input.as_mut() else {
                break;
            };
            let mut changed = false;
            for s in &keep {
                if *s == Slot::D {
                    if input.dtype.is_none() && out.dtype.is_some() {
                        input.dtype = out.dtype;
                        changed = true;
                    }
                } else if let Some(v) = out.maps.get(s)
                    && !input.maps.contains_key(s)
                {
                    input.maps.insert(*s, v.clone());
                    changed = true;
                }
            }
            if !changed || i == 0 {
                continue;
            }
            let input = input.clone();
            if let Some(prev) = steps[i - 1].output.as_mut() {
                for (s, v) in &input.maps {
                    prev.maps.insert_if_absent(*s, || v.clone());
                }
                if prev.dtype.is_none() {
                    prev.dtype = input.dtype;
                }
            }
        }
    }

    /// The value of an expression inside a chain, its engine methods appended to `steps`
    /// (`awaited`: the expression is `.await`ed).
    pub(super) fn expr(&mut self, e: &ast::Expr, steps: &mut Vec<Step>, awaited: bool) -> Val {
        match e {
            ast::Expr::MethodCallExpr(m) => self.method_call(m, steps, awaited),
            ast::Expr::AwaitExpr(a) => match a.expr() {
                Some(inner) => self.expr(&inner, steps, true),
                None => Val::Unknown,
            },
            ast::Expr::ParenExpr(p) => p
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::RefExpr(r) => r
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::TryExpr(t) => t
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::BlockExpr(b) => self.block_value(b, steps, awaited),
            ast::Expr::PathExpr(p) => self.path_value(p, steps),
            ast::Expr::FieldExpr(f) => self.field_value(f),
            ast::Expr::CallExpr(c) => self.call(c, awaited),
            ast::Expr::ClosureExpr(c) => self.closure(c),
            ast::Expr::MacroExpr(m) => self.macro_expr(m),
            ast::Expr::IndexExpr(i) => self.index_value(i),
            ast::Expr::ArrayExpr(a) => {
                let vals: Vec<Val> = a.exprs().map(|x| self.top(&x, None, None)).collect();
                self.last_ends.clear();
                array_of(vals)
            }
            ast::Expr::TupleExpr(_)
            | ast::Expr::ReturnExpr(_)
            | ast::Expr::BreakExpr(_)
            | ast::Expr::ForExpr(_)
            | ast::Expr::WhileExpr(_)
            | ast::Expr::LoopExpr(_) => self.top(e, None, None),
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. })) =>
            {
                self.assign(b)
            }
            ast::Expr::IfExpr(_) | ast::Expr::MatchExpr(_) => {
                // Used as a value inside an expression (`(if c { a } else { b }).view()`): the
                // arms are evaluated as at statement level, and the chain continues from them.
                let v = self.top(e, None, None);
                let ends = std::mem::take(&mut self.last_ends);
                if steps.is_empty() && !ends.is_empty() {
                    self.root = Some(ends);
                }
                v
            }
            ast::Expr::RecordExpr(r) => self.record_value(r),
            ast::Expr::PrefixExpr(p) => {
                // `*t` of a reference to a tensor is the tensor.
                let v = p.expr().map_or(Val::Unknown, |x| self.arg_expr(&x));
                match p.op_kind() {
                    Some(ast::UnaryOp::Deref) => v,
                    _ => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        }
    }

    /// `unsafe { ... }` and plain blocks used as values inside a chain: their statements, then
    /// their tail.
    fn block_value(&mut self, b: &ast::BlockExpr, steps: &mut Vec<Step>, awaited: bool) -> Val {
        let Some(list) = b.stmt_list() else {
            return Val::Unknown;
        };
        for s in list.statements() {
            match s {
                ast::Stmt::LetStmt(l) => self.let_stmt(&l),
                ast::Stmt::ExprStmt(x) => {
                    if let Some(x) = x.expr() {
                        self.top(&x, None, None);
                    }
                }
                ast::Stmt::Item(_) => {}
            }
        }
        list.tail_expr()
            .map_or(Val::Unknown, |t| self.expr(&t, steps, awaited))
    }

    /// A variable: its value, and, at the start of a chain, the chain ends it continues.
    fn path_value(&mut self, p: &ast::PathExpr, steps: &[Step]) -> Val {
        let Some(path) = p.path() else {
            return Val::Unknown;
        };
        if path.qualifier().is_some() {
            return Val::Unknown;
        }
        if path
            .segment()
            .is_some_and(|s| s.kind() == Some(ast::PathSegmentKind::SelfKw))
        {
            // A library tensor type's method: its receiver is a tensor (see
            // `Builder::tensor_self`).
            if let Some(v @ Val::Tensor { .. }) = self.vars.get("self") {
                if steps.is_empty()
                    && let Some(ends) = self.ends.get("self")
                {
                    self.root = Some(ends.clone());
                }
                return v.clone();
            }
            // A method's receiver: what its fields and methods give is not followed.
            return Val::Lost(Construct::new(p.syntax(), "`self`"));
        }
        let name = path
            .segment()
            .and_then(|s| s.name_ref())
            .map(|n| n.text().to_string());
        let Some(n) = name else {
            return Val::Unknown;
        };
        if steps.is_empty()
            && let Some(ends) = self.ends.get(&n)
        {
            self.root = Some(ends.clone());
        }
        self.vars.get(&n).cloned().unwrap_or(Val::Unknown)
    }

    /// A field: a context's Tensor Units and DMAs (`ctx.main`, `ctx.tdma`), a tuple's or a
    /// struct's field; other fields are not followed.
    fn field_value(&mut self, f: &ast::FieldExpr) -> Val {
        let field = f
            .name_ref()
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        // `taps.main` of a struct of the kernel's own is its field, not a Tensor Unit.
        let own_field = f.expr().as_ref().and_then(var_name).is_some_and(|n| {
            matches!(self.vars.get(&n), Some(Val::Struct(fs)) if fs.iter().any(|(k, _)| *k == field))
        });
        match field.as_str() {
            _ if own_field => {}
            "main" => return Val::TuCtx(Tu::Main),
            "sub" => return Val::TuCtx(Tu::Sub),
            "pdma" => return Val::Dma(Dma::Pcie),
            "tdma" => return Val::Dma(Dma::Tensor),
            _ => {}
        }
        let recv = f.expr().map_or(Val::Unknown, |r| self.arg_expr(&r));
        match recv {
            Val::Tuple(vs) => field
                .parse::<usize>()
                .ok()
                .and_then(|i| vs.get(i).cloned())
                .unwrap_or(Val::Unknown),
            Val::Struct(fs) => fs
                .into_iter()
                .find(|(n, _)| *n == field)
                .map_or(Val::Unknown, |(_, v)| self.field_tensor(f, v)),
            _ => {
                let what = format!("the field `{}`", snippet(f.syntax()));
                Val::Lost(Construct::new(f.syntax(), what))
            }
        }
    }

    /// A tensor read from a struct's field whose type the struct declares (`outs.y` of a
    /// helper's `ExpertOutputs`, `out.1` of a `TileOut` parameter): its mappings are written
    /// in the struct, so they are named at the field's first read here, as a tensor alias's
    /// are at its use (no fix may replace the read's text), and the field is one of the
    /// function's tensors where the size rules see its type.
    fn field_tensor(&mut self, f: &ast::FieldExpr, v: Val) -> Val {
        let Val::Tensor { ty, tu, engines } = v else {
            return v;
        };
        if ty.maps.values().any(|m| m.span.is_some()) {
            return Val::Tensor { ty, tu, engines };
        }
        let span = span_of(f.syntax().text_range());
        let ty = named_at(ty, span);
        let name = snippet(f.syntax());
        if !self.model.tensors.iter().any(|t| t.name == name) {
            self.model.tensors.push(crate::model::TensorVar {
                name,
                span,
                origin: crate::model::Origin::Let,
                ty: ty.clone(),
                context: tu,
                address: None,
                from_addr: false,
                address_low: None,
                iteration: self.iteration,
                trf_loaded: None,
                placed_by_call: None,
            });
        }
        Val::Tensor { ty, tu, engines }
    }

    /// An element of an array of tensors; other indexing is not followed.
    fn index_value(&mut self, i: &ast::IndexExpr) -> Val {
        if let Some(name) = self.element_name(i) {
            return self.vars.get(&name).cloned().unwrap_or(Val::Unknown);
        }
        let base = i.base().map_or(Val::Unknown, |b| self.arg_expr(&b));
        if let Some(ix) = i.index() {
            self.arg_expr(&ix);
        }
        match base {
            Val::Many { elem, .. } => *elem,
            _ => {
                let what = format!("the index `{}`", snippet(i.syntax()));
                Val::Lost(Construct::new(i.syntax(), what))
            }
        }
    }

    /// The tensor a chain or an argument starts from (`x` of `&x`, `x.view()`), an element of
    /// a local array of tensors by its name (`tiles[1]` of `tiles[1].view()`).
    pub(super) fn root_tensor(&self, e: &ast::Expr) -> Option<String> {
        match e {
            ast::Expr::MethodCallExpr(m) => self.root_tensor(&m.receiver()?),
            ast::Expr::AwaitExpr(a) => self.root_tensor(&a.expr()?),
            ast::Expr::TryExpr(t) => self.root_tensor(&t.expr()?),
            ast::Expr::ParenExpr(p) => self.root_tensor(&p.expr()?),
            ast::Expr::RefExpr(r) => self.root_tensor(&r.expr()?),
            ast::Expr::IndexExpr(i) => self.element_name(i),
            _ => var_name(e),
        }
    }

    /// The name `tiles[k]` an element of a local array of tensors is read by, when the index
    /// is known (see [`Builder::tensor_arrays`]).
    pub(super) fn element_name(&self, i: &ast::IndexExpr) -> Option<String> {
        let array = var_name(&i.base()?)?;
        let names = self.tensor_arrays.get(&array)?;
        let k = self.const_int(&i.index()?)?;
        names.get(usize::try_from(k).ok()?).cloned()
    }

    /// A struct literal: its fields' values, by name; a field of a struct of tensors the crate
    /// declares types what it is given as the field's type (`top: row.to_dm(dma, at)` infers
    /// the DM tensor's mappings from it, as rustc does).
    fn record_value(&mut self, r: &ast::RecordExpr) -> Val {
        let declared = r
            .path()
            .and_then(|p| super::env::struct_key(&p))
            .and_then(|k| self.env.struct_fields(&k));
        let mut fields = Vec::new();
        for f in r
            .record_expr_field_list()
            .into_iter()
            .flat_map(|l| l.fields())
        {
            let Some(x) = f.expr() else { continue };
            let name = f
                .field_name()
                .map(|n| n.to_string())
                .or_else(|| var_name(&x));
            let expected = declared.and_then(|d| {
                let n = name.as_deref()?;
                let ty = d.iter().find(|(f, _)| f == n)?.1.clone()?;
                Some(named_at(ty, span_of(f.syntax().text_range())))
            });
            let v = self.top(&x, expected, None);
            if let Some(n) = name {
                fields.push((n, v));
            }
        }
        self.last_ends.clear();
        match declared {
            Some(d) => super::calls::typed_by_fields(fields, d),
            None => Val::Struct(fields),
        }
    }

    /// An engine chain written inside a macro's arguments (read as expressions, as
    /// `assert!`, `dbg!` and `vec!` take them): a pass or a device DMA transfer from
    /// `ctx.main`/`ctx.sub` or a tensor variable. Its first engine method's name.
    pub(super) fn engine_chain_in(&self, tt: &ast::TokenTree) -> Option<Method> {
        let text = crate::syntax::node_text(tt.syntax());
        let inner = text.get(1..text.len().saturating_sub(1))?;
        let wrapped = format!("fn __visa_lint() {{ ({inner}); }}");
        let file =
            ra_ap_syntax::SourceFile::parse(&wrapped, ra_ap_syntax::Edition::Edition2024).tree();
        for m in file
            .syntax()
            .descendants()
            .filter_map(ast::MethodCallExpr::cast)
        {
            let Some(method) = m.name_ref().map(|n| Method::from_name(n.text())) else {
                continue;
            };
            let device = method
                .transfer()
                .is_some_and(|s| s.engine != Engine::Memory)
                || method.is_dm_hbm_dma();
            if !device {
                continue;
            }
            // The spine's root: `ctx.main`, `ctx.sub`, or a tensor variable.
            let mut root = m.receiver();
            while let Some(r) = root.clone() {
                root = match r {
                    ast::Expr::MethodCallExpr(x) => x.receiver(),
                    ast::Expr::AwaitExpr(x) => x.expr(),
                    ast::Expr::TryExpr(x) => x.expr(),
                    ast::Expr::ParenExpr(x) => x.expr(),
                    ast::Expr::RefExpr(x) => x.expr(),
                    _ => break,
                };
            }
            let from_context = matches!(&root, Some(ast::Expr::FieldExpr(f)) if f.name_ref().is_some_and(|n| matches!(n.text().to_string().as_str(), "main" | "sub")));
            let from_tensor = root
                .as_ref()
                .and_then(var_name)
                .is_some_and(|v| matches!(self.vars.get(&v), Some(Val::Tensor { .. })));
            if from_context || from_tensor {
                return Some(method);
            }
        }
        None
    }

    /// The names among a macro's argument tokens that hold the kernel's context or tensors, in
    /// order, once each.
    fn device_values_in(&self, tokens: &[ra_ap_syntax::SyntaxToken]) -> Vec<String> {
        let mut given: Vec<String> = Vec::new();
        for t in tokens
            .iter()
            .filter(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT)
        {
            let name = t.text();
            let device =
                self.contexts.contains(name) || self.vars.get(name).is_some_and(Val::holds_tensor);
            if device && !given.iter().any(|g| g == name) {
                given.push(name.to_string());
            }
        }
        given
    }

    /// A closure: evaluated where it is written (its chains are checked there), with its
    /// parameters typed by their annotations; an unannotated parameter is not followed. The
    /// closure's value is what its body gives, which every call returns (a closure has one
    /// type).
    pub(super) fn closure(&mut self, c: &ast::ClosureExpr) -> Val {
        let saved = (
            self.vars.clone(),
            self.ends.clone(),
            self.consts.clone(),
            self.values.clone(),
        );
        for p in c.param_list().into_iter().flat_map(|l| l.params()) {
            let Some(pat) = p.pat() else { continue };
            let annotated = p
                .ty()
                .and_then(|t| tensor_type(&t, self.env, &self.scope, &mut self.model.problems));
            let v = match annotated {
                Some(ty) => Val::Tensor {
                    ty,
                    tu: None,
                    engines: Vec::new(),
                },
                None => {
                    let what = format!(
                        "a tensor passed into a closure through `{}`",
                        snippet(pat.syntax())
                    );
                    Val::Lost(Construct::new(pat.syntax(), what))
                }
            };
            self.bind_pat(&pat, v);
        }
        let body = c.body().map_or(Val::Unknown, |b| self.top(&b, None, None));
        (self.vars, self.ends, self.consts, self.values) = saved;
        self.last_ends.clear();
        Val::Closure(Box::new(body))
    }

    /// A macro call used as a value (`m!`, `axes!` and `i!` are types and declarations, read
    /// elsewhere): `vec![a, b]` of tensors is an array of them; an engine chain written
    /// inside any other macro is not checked, which is said at once; the value is not
    /// followed.
    pub(super) fn macro_expr(&mut self, m: &ast::MacroExpr) -> Val {
        let Some(call) = m.macro_call() else {
            return Val::Unknown;
        };
        let name = call
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| s.name_ref())
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        if matches!(name.as_str(), "m" | "i" | "axes") {
            return Val::Unknown;
        }
        if matches!(
            name.as_str(),
            "todo" | "unimplemented" | "panic" | "unreachable"
        ) {
            return Val::Never;
        }
        let end = call
            .excl_token()
            .map_or(call.syntax().text_range().end(), |t| t.text_range().end());
        let at = Span::new(
            u32::from(call.syntax().text_range().start()) as usize,
            u32::from(end) as usize,
        );
        let tokens: Vec<ra_ap_syntax::SyntaxToken> = call
            .token_tree()
            .map(|t| {
                t.syntax()
                    .descendants_with_tokens()
                    .filter_map(|e| e.into_token())
                    .filter(|t| !t.kind().is_trivia())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(method) = call.token_tree().and_then(|t| self.engine_chain_in(&t)) {
            self.not_analysed(NotFollowed::InMacro {
                at,
                name: name.to_string(),
                method,
            });
        } else if !STD_MACROS.contains(&name.as_str()) {
            let given = self.device_values_in(&tokens);
            if !given.is_empty() {
                self.not_analysed(NotFollowed::MacroGiven {
                    at,
                    name: name.to_string(),
                    given,
                });
            }
        }
        if name == "vec" {
            // `vec![a, b]` of tensor variables.
            let vals: Vec<Val> = tokens
                .iter()
                .filter(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT)
                .map(|t| self.vars.get(t.text()).cloned().unwrap_or(Val::Unknown))
                .collect();
            if let v @ Val::Many { .. } = array_of(vals) {
                return v;
            }
        }
        let what = format!("the value of `{name}!`");
        Val::Lost(Construct { span: at, what })
    }
}

/// The standard library's macros: none drives an engine, whatever it is given.
const STD_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "print",
    "println",
    "eprint",
    "eprintln",
    "format",
    "format_args",
    "write",
    "writeln",
    "dbg",
    "vec",
    "matches",
    "concat",
    "stringify",
    "cfg",
    "env",
    "option_env",
    "line",
    "column",
    "file",
    "module_path",
    "include",
    "include_str",
    "include_bytes",
    "compile_error",
];

/// `f(x)`, `f(x)?`, `f(x).await`: a call whose result is the expression's value.
fn called(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::CallExpr(_) => true,
        ast::Expr::TryExpr(t) => t.expr().is_some_and(|i| called(&i)),
        ast::Expr::AwaitExpr(a) => a.expr().is_some_and(|i| called(&i)),
        ast::Expr::ParenExpr(p) => p.expr().is_some_and(|i| called(&i)),
        _ => false,
    }
}

/// A tensor type written elsewhere (a struct's field) as named at `span`: its mappings point
/// there, and, as a tensor alias's, no fix may replace the text at `span` with one of them.
pub(super) fn named_at(mut ty: TensorTy, span: Span) -> TensorTy {
    for m in ty.maps.values_mut() {
        if m.span.is_none() {
            m.span = Some(span);
            m.in_tensor_alias = true;
        }
    }
    ty
}

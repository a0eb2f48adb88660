//! Blocks and statements: `let` bindings and their patterns, assignments, conditions, and
//! the values a binding holds at compile time.

use super::env::tensor_type;
use super::loops::pattern_names;
use super::reading::{
    arg_of, assigned_after, assigned_in_straight_code, assigned_root, is_from_addr, pat_name,
    span_of, var_name,
};
use super::state::{Builder, ClosureRuns, Construct, Run, Val, many_type};
use crate::diagnostic::Span;
use crate::model::consts;
use crate::model::methods::Engine;
use crate::model::problem::NotFollowed;
use crate::model::types::{TensorTy, Tu};
use crate::model::value;
use crate::model::{Arg, Origin, TensorVar};
use crate::syntax::snippet;
use ra_ap_syntax::{AstNode, ast};

/// The scrutinee of a `match` on tensors: the variable it names, with where its tensor is
/// placed, and its value.
pub(super) type Scrutinee = (Option<(String, Option<u64>)>, Val);

impl Builder<'_> {
    /// Evaluates a block; its tail takes `expected` and `binding` (a function body's tail takes
    /// the return type).
    pub(super) fn block(
        &mut self,
        block: &ast::BlockExpr,
        expected: Option<TensorTy>,
        binding: Option<String>,
    ) -> Val {
        let Some(list) = block.stmt_list() else {
            self.last_ends.clear();
            return Val::Unknown;
        };
        let outer_consts = self.consts.clone();
        let outer_values = self.values.clone();
        let assigned_before = self.assigned.len();
        self.local_consts(&list);
        let mut diverges = false;
        for stmt in list.statements() {
            diverges = false;
            match stmt {
                ast::Stmt::LetStmt(l) => self.let_stmt(&l),
                ast::Stmt::ExprStmt(e) => {
                    if let Some(e) = e.expr() {
                        if self.continues_here(&e) {
                            self.skipping = true;
                        }
                        diverges = matches!(self.top(&e, None, None), Val::Never);
                    }
                }
                ast::Stmt::Item(_) => {}
            }
            self.apply_changing_calls();
            if self.skipping {
                break;
            }
        }
        self.last_ends.clear();
        let val = match list.tail_expr() {
            Some(_) if self.skipping => Val::Never,
            Some(tail) => {
                let v = self.top(&tail, expected, binding);
                self.apply_changing_calls();
                v
            }
            // `{ ..; return x; }`
            None if diverges => Val::Never,
            None => Val::Unknown,
        };
        self.leave_block(&list, (outer_consts, outer_values), assigned_before);
        val
    }

    /// The values after a block: what it declares goes out of scope (an outer variable it
    /// shadows is back), and what it assigned to the variables around it stays.
    fn leave_block(
        &mut self,
        list: &ast::StmtList,
        (outer_consts, outer_values): (
            std::collections::HashMap<String, u64>,
            std::collections::HashMap<String, value::Eval>,
        ),
        assigned_before: usize,
    ) {
        let declared: std::collections::HashSet<String> = list
            .statements()
            .flat_map(|s| match s {
                ast::Stmt::LetStmt(l) => l.pat().map(|p| pattern_names(&p)).unwrap_or_default(),
                ast::Stmt::Item(ast::Item::Const(c)) => ast::HasName::name(&c)
                    .map(|n| vec![n.text().to_string()])
                    .unwrap_or_default(),
                _ => Vec::new(),
            })
            .collect();
        let here: std::collections::HashSet<&String> =
            self.assigned[assigned_before..].iter().collect();
        let assigned: Vec<(String, value::Eval)> = here
            .into_iter()
            .filter(|k| !declared.contains(*k) && outer_values.contains_key(*k))
            .filter_map(|k| Some((k.clone(), self.values.get(k)?.clone())))
            .collect();
        let ints: Vec<(String, Option<u64>)> = assigned
            .iter()
            .map(|(k, _)| (k.clone(), self.consts.get(k).copied()))
            .collect();
        self.consts = outer_consts;
        self.values = outer_values;
        for (k, v) in assigned {
            self.values.insert(k, v);
        }
        for (k, v) in ints {
            match v {
                Some(v) => self.consts.insert(k, v),
                None => self.consts.remove(&k),
            };
        }
    }

    /// Whether `e`, in an iteration of a loop the model unrolls, is `if cond { continue; }` with
    /// `cond` known true there: the trace skips the rest of that iteration.
    fn continues_here(&self, e: &ast::Expr) -> bool {
        let ast::Expr::IfExpr(i) = e else {
            return false;
        };
        if self.iteration.is_none() || i.else_branch().is_some() {
            return false;
        }
        let jumps = i
            .then_branch()
            .and_then(|b| b.stmt_list())
            .is_some_and(|l| {
                let mut stmts = l.statements();
                let only = match (stmts.next(), stmts.next(), l.tail_expr()) {
                    (Some(ast::Stmt::ExprStmt(s)), None, None) => s.expr(),
                    (None, None, Some(t)) => Some(t),
                    _ => None,
                };
                matches!(only, Some(ast::Expr::ContinueExpr(_)))
            });
        jumps
            && i.condition()
                .is_some_and(|c| matches!(self.value_of(&c).0, Ok(value::Value::Bool(true))))
    }

    /// The `const` items a block declares (`const GROUPS: usize = 2;` in a kernel's body):
    /// constants in the whole block, as Rust scopes an item.
    pub(super) fn local_consts(&mut self, list: &ast::StmtList) {
        for stmt in list.statements() {
            let ast::Stmt::Item(ast::Item::Const(c)) = stmt else {
                continue;
            };
            let (Some(name), Some(body)) = (ast::HasName::name(&c), c.body()) else {
                continue;
            };
            let name = name.text().to_string();
            let value = self.value_of(&body).0;
            if let Ok(value::Value::Int(k)) = value {
                self.consts.insert(name.clone(), k);
            }
            self.values.insert(name, value);
        }
    }

    /// The arms of an `if`/`match` used as a value: a tensor when every arm gives one of the
    /// same kind in the same context (what the arms disagree on is unknown), continuing every
    /// arm's chain; anything else is unknown.
    pub(super) fn join(&mut self, arms: Vec<(Val, Vec<(usize, usize)>)>, complete: bool) -> Val {
        self.last_ends.clear();
        if !complete || arms.is_empty() {
            return Val::Unknown;
        }
        let mut joined: Option<(TensorTy, Option<Tu>, Vec<Engine>)> = None;
        let mut ends = Vec::new();
        // An arm that returns or panics gives no value to join.
        let arms: Vec<_> = arms
            .into_iter()
            .filter(|(v, _)| !matches!(v, Val::Never))
            .collect();
        if arms.is_empty() {
            return Val::Never;
        }
        for (v, e) in arms {
            let Val::Tensor { ty, tu, engines } = v else {
                return Val::Unknown;
            };
            ends.extend(e);
            match joined.as_mut() {
                None => joined = Some((ty, tu, engines)),
                Some((jt, jtu, jen)) => {
                    if jt.kind != ty.kind || *jtu != tu {
                        return Val::Unknown;
                    }
                    if jt.dtype != ty.dtype {
                        jt.dtype = None;
                    }
                    jt.maps.retain(|s, m| {
                        ty.maps
                            .get(s)
                            .is_some_and(|o| o.layout.is_some() && o.layout == m.layout)
                    });
                    if *jen != engines {
                        jen.retain(|e| engines.contains(e));
                    }
                }
            }
        }
        let Some((ty, tu, engines)) = joined else {
            return Val::Unknown;
        };
        if ty.kind.is_stream() {
            self.last_ends = ends;
        }
        Val::Tensor { ty, tu, engines }
    }

    /// An `if` expression's arms, `else if` included; `complete` when it has a final `else`.
    pub(super) fn if_arms(
        &mut self,
        i: &ast::IfExpr,
        expected: &Option<TensorTy>,
        binding: &Option<String>,
        arms: &mut Vec<(Val, Vec<(usize, usize)>)>,
    ) -> bool {
        // Whether the trace takes the branch, where the compiler knows (before the
        // condition's pattern binds its names).
        let decided = i.condition().map_or(Some(true), |c| self.decided(&c));
        // A `let` pattern the value is known not to match: the trace never takes the branch.
        let taken = i.condition().is_none_or(|c| self.condition(&c));
        if let Some(b) = i.then_branch().filter(|_| taken) {
            let v = self.arm(Arm::of(decided), |me| {
                me.block(&b, expected.clone(), binding.clone())
            });
            arms.push((v, std::mem::take(&mut self.last_ends)));
        }
        let other = Arm::of(decided.map(|d| !d));
        match i.else_branch() {
            Some(ast::ElseBranch::Block(b)) => {
                let v = self.arm(other, |me| me.block(&b, expected.clone(), binding.clone()));
                arms.push((v, std::mem::take(&mut self.last_ends)));
                true
            }
            Some(ast::ElseBranch::IfExpr(e)) => {
                self.arm(other, |me| me.if_arms(&e, expected, binding, arms))
            }
            None => false,
        }
    }

    /// Whether the trace takes a branch under the condition `c`, where the compiler knows:
    /// a `let` pattern decided on a known value, a known `bool`, and `&&` of those.
    pub(super) fn decided(&self, c: &ast::Expr) -> Option<bool> {
        match c {
            ast::Expr::LetExpr(l) => {
                let (p, e) = (l.pat()?, l.expr()?);
                let v = self.value_of(&e).0.ok()?;
                decidable(&p).then(|| may_match(&p, &v))
            }
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::LogicOp(ast::LogicOp::And))) =>
            {
                let l = b.lhs().and_then(|l| self.decided(&l));
                let r = b.rhs().and_then(|r| self.decided(&r));
                match (l, r) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                }
            }
            other => match self.value_of(other).0 {
                Ok(value::Value::Bool(b)) => Some(b),
                _ => None,
            },
        }
    }

    /// Evaluates an arm of an `if` or a `match` as the trace runs it (`how`): taken, its
    /// assignments hold after it; maybe taken, they leave their variables unknown; not
    /// taken, they are undone.
    pub(super) fn arm<R>(&mut self, how: Arm, run: impl FnOnce(&mut Self) -> R) -> R {
        match how {
            Arm::Taken => run(self),
            Arm::Maybe => {
                self.undecided += 1;
                let r = run(self);
                self.undecided -= 1;
                r
            }
            Arm::NotTaken => {
                let saved = (self.consts.clone(), self.values.clone());
                let r = run(self);
                (self.consts, self.values) = saved;
                r
            }
        }
    }

    /// The arm of a `match` the trace takes: the first whose pattern matches the known
    /// scrutinee, every arm before it known not to, with what its pattern binds bound. Only
    /// variant patterns whose fields are names (`Some(op)`, `None`, `Mode::Full`), tuples of
    /// such and `_` are decided here. Else why no arm is taken: the scrutinee's value is not
    /// known (with the reason), or an arm before the one taken is not decided (`None`).
    pub(super) fn taken_arm(
        &mut self,
        m: &ast::MatchExpr,
    ) -> Result<ast::MatchArm, Option<value::Unknown>> {
        let scrutinee = m.expr().ok_or(None)?;
        // Partly known is enough where the patterns only read the known parts: `(R::MASK,
        // bias)` with `bias` a `Some` of a tensor.
        let v = self.partial_value_of(&scrutinee).0.map_err(Some)?;
        let taken = m.match_arm_list().and_then(|l| {
            for arm in l.arms() {
                if arm.guard().is_some() {
                    return None;
                }
                let pat = arm.pat()?;
                if matches(&pat, &v)? {
                    return Some((arm, pat));
                }
            }
            None
        });
        match taken {
            Some((arm, pat)) => {
                self.bind_value_pat(&pat, Ok(v));
                Ok(arm)
            }
            None => Err(v.whole().err()),
        }
    }

    /// Runs an arm of a `match` on tensors (`scrutinee`: the variable it names with where
    /// its tensor is placed, and its value) with the names its pattern binds to them bound,
    /// as Rust scopes them: to the arm alone.
    pub(super) fn in_arm<R>(
        &mut self,
        arm: &ast::MatchArm,
        scrutinee: Option<&Scrutinee>,
        run: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let (Some(pat), Some((of, val))) = (arm.pat(), scrutinee) else {
            return run(self);
        };
        let names = pattern_names(&pat);
        let outer: Vec<Option<Val>> = names.iter().map(|n| self.vars.get(n).cloned()).collect();
        self.bind_arm_tensors(&pat, val.clone(), of.as_ref());
        let r = run(self);
        for (n, v) in names.into_iter().zip(outer) {
            match v {
                Some(v) => self.vars.insert(n, v),
                None => self.vars.remove(&n),
            };
        }
        r
    }

    /// Binds the names of an arm's pattern to the tensors of the scrutinee `val`: `p` of
    /// `Some(p)` or `Ok(p)` (the model sees through them) is the tensor of the variable `of`
    /// itself, an alias placed where it is; a tuple part by part; a variant's name (`None`)
    /// binds nothing.
    fn bind_arm_tensors(&mut self, pat: &ast::Pat, val: Val, of: Option<&(String, Option<u64>)>) {
        match (pat, val) {
            (ast::Pat::IdentPat(i), v @ Val::Tensor { .. }) if i.pat().is_none() => {
                let Some(n) = ast::HasName::name(i).map(|n| n.text().to_string()) else {
                    return;
                };
                if n.starts_with(|c: char| c.is_ascii_uppercase()) {
                    return;
                }
                let at = span_of(i.syntax().text_range());
                self.set_var(n.clone(), v, at);
                let Some((var, placed)) = of else { return };
                if let Some(t) = self.model.tensors.last_mut().filter(|t| t.name == n) {
                    t.address = *placed;
                }
                self.model.aliases.push(crate::model::Alias {
                    name: n,
                    of: var.clone(),
                    at,
                    iteration: self.iteration,
                });
            }
            (ast::Pat::RefPat(r), v) => {
                if let Some(p) = r.pat() {
                    self.bind_arm_tensors(&p, v, of);
                }
            }
            (ast::Pat::ParenPat(p), v) => {
                if let Some(p) = p.pat() {
                    self.bind_arm_tensors(&p, v, of);
                }
            }
            (ast::Pat::TupleStructPat(t), v) if t.fields().count() == 1 => {
                let wrapper = t
                    .path()
                    .and_then(|p| p.segment())
                    .and_then(|s| s.name_ref())
                    .is_some_and(|n| matches!(n.text(), "Some" | "Ok"));
                if let (true, Some(f)) = (wrapper, t.fields().next()) {
                    self.bind_arm_tensors(&f, v, of);
                }
            }
            (ast::Pat::TuplePat(t), Val::Tuple(vs)) if t.fields().count() == vs.len() => {
                for (f, v) in t.fields().zip(vs) {
                    self.bind_arm_tensors(&f, v, None);
                }
            }
            _ => {}
        }
    }

    /// A `match` whose taken arm is not known: what its patterns bind is not known either,
    /// with the reason `taken_arm` gave (a rule reading `op` of `Some((op, f)) =>
    /// t.vector_fp_binary(op, f)` says it is not checked, VL-009). Names that start with a
    /// capital letter are variants.
    pub(super) fn bind_arms_unknown(
        &mut self,
        m: &ast::MatchExpr,
        unknown: Option<value::Unknown>,
    ) {
        let Some(scrutinee) = m.expr() else { return };
        let what = snippet(scrutinee.syntax());
        let why = match unknown {
            Some(u) => format!("it is bound by a pattern of `match {what}`: {}", u.why),
            None => format!(
                "it is bound by a pattern of `match {what}`, whose taken arm visa-lint cannot decide"
            ),
        };
        let pats = m.match_arm_list().into_iter().flat_map(|l| l.arms());
        let names: Vec<String> = pats
            .filter_map(|arm| arm.pat())
            .flat_map(|p| {
                p.syntax()
                    .descendants()
                    .filter_map(ast::IdentPat::cast)
                    .collect::<Vec<_>>()
            })
            .filter_map(|i| ast::HasName::name(&i).map(|n| n.text().to_string()))
            .filter(|n| !n.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        for n in names {
            self.consts.remove(&n);
            self.values.insert(n, Err(value::Unknown::new(why.clone())));
        }
    }

    /// The compile-time value of `e` (see [`value::eval`]), and whether it was reached through
    /// a name.
    pub(super) fn value_of(&self, e: &ast::Expr) -> (value::Eval, bool) {
        let (v, named) = self.partial_value_of(e);
        (v.and_then(value::Value::whole), named)
    }

    /// The value of `e` as a `let` binds it: a struct keeps the fields the evaluator knows
    /// beside those it does not (see [`value::eval_partial`]).
    pub(super) fn partial_value_of(&self, e: &ast::Expr) -> (value::Eval, bool) {
        self.with_names(self.value_fns(), |names| value::eval_partial(e, names))
    }

    /// The functions the evaluator runs at a call: the crate's, and the function's closures.
    pub(super) fn value_fns(
        &self,
    ) -> &std::collections::HashMap<String, crate::model::consts::ConstFn> {
        self.with_closures.as_ref().unwrap_or(&self.env.value_fns)
    }

    /// Runs `f` with the names in scope here (the function's values over the environment's),
    /// and `fns` the functions the evaluator runs at a call.
    fn with_names<R>(
        &self,
        fns: &std::collections::HashMap<String, crate::model::consts::ConstFn>,
        f: impl FnOnce(&value::Names<'_>) -> R,
    ) -> R {
        let lookup = |key: &str| {
            self.values
                .get(key)
                .cloned()
                .or_else(|| self.env.value_or_why(key))
        };
        f(&value::Names {
            value: &lookup,
            ints: &self.consts,
            fns,
            mapping: &self.scope,
        })
    }

    /// `v` with what the `let` annotation `ty` (if any) says of its type's generic arguments.
    fn annotated(&self, v: value::Value, ty: Option<ast::Type>) -> value::Value {
        let Some(ty) = ty else {
            return v;
        };
        let lookup = |key: &str| self.values.get(key).cloned();
        let names = value::Names {
            value: &lookup,
            ints: &self.consts,
            fns: &self.env.value_fns,
            mapping: &self.scope,
        };
        value::annotated(v, &ty, &names)
    }

    /// A value argument of an engine call: as written, with the value it names (or why that
    /// value is unknown).
    pub(super) fn value_arg(&self, e: &ast::Expr) -> Arg {
        let mut arg = arg_of(e.syntax());
        let (v, named) = self.value_of(e);
        if named || v.is_err() {
            arg.value = Some(v);
        }
        arg
    }

    /// Binds `name` to a compile-time value (a parameter a call gives a known value, a loop's
    /// index): an integer is a constant too.
    pub(super) fn bind(&mut self, name: &str, v: value::Value) {
        if let value::Value::Int(k) = v {
            self.consts.insert(name.to_string(), k);
        }
        self.values.insert(name.to_string(), Ok(v));
    }

    /// The address a `let` whose initializer is a `from_addr(..)` call places its tensor at
    /// (the placement that call recorded).
    pub(super) fn placed_by(&self, init: &ast::Expr) -> Option<u64> {
        if !is_from_addr(init) {
            // `let t = scratch(3)`, a helper that returns a tensor it places.
            return match self.placed_by_helper(init)? {
                value::Value::Int(a) => Some(a),
                _ => None,
            };
        }
        let at = span_of(init.syntax().text_range());
        let p = self.model.placements.last()?;
        (at.start <= p.arg.span.start && p.arg.span.end <= at.end).then_some(p.address)
    }

    /// Where a call of a helper that returns tensors it places (`stats_buffers()`, whose tail
    /// is `(A::from_addr(SUM), B::from_addr(SUM + BYTES))`) places them: the address, or a
    /// tuple of them (`()` for an element it does not place), computed with the call's
    /// arguments. `None` for any other expression, or addresses visa-lint cannot compute.
    fn placed_by_helper(&self, init: &ast::Expr) -> Option<value::Value> {
        let ast::Expr::CallExpr(c) = init else {
            return None;
        };
        let Some(ast::Expr::PathExpr(p)) = c.expr() else {
            return None;
        };
        let key = crate::model::consts::callee_key(&p.path()?)?;
        let placing = self.placing_fn(&key)?;
        // The call runs the function that computes the addresses; its arguments are
        // evaluated as anywhere else.
        let mut fns = self.value_fns().clone();
        fns.insert(key, placing.clone());
        self.with_names(&fns, |names| value::eval(init, names).0.ok())
    }

    /// The function that computes where the helper `key` places the tensors it returns, with
    /// `Self` its type (`Bf16Pool::page`, its own or the default of the one trait of the crate
    /// that gives `page` one: `Self::BASE` is `Bf16Pool::BASE`).
    fn placing_fn(&self, key: &str) -> Option<crate::model::consts::ConstFn> {
        let (ty, fname) = key.rsplit_once("::").unwrap_or(("", key));
        let own = self.env.placing_fns.get(key);
        // Most calls are of no such function: the traits are looked at only for a type's.
        let default = || {
            if ty.is_empty() || !self.env.is_local_type(ty) {
                return None;
            }
            match self.env.traits_defaulting(fname).as_slice() {
                [t] => self.env.placing_fns.get(&format!("{t}::{fname}")),
                _ => None,
            }
        };
        let f = own.or_else(default)?.clone();
        Some(match ty.is_empty() {
            true => f,
            false => f.of_impl(ty, Vec::new()),
        })
    }

    /// The tensors a pattern binds from a helper's result take the addresses the helper
    /// places them at (`let (sums, sumsq) = stats_buffers();`).
    fn place_returned(&mut self, pat: &ast::Pat, init: &ast::Expr) {
        let Some(placed) = self.placed_by_helper(init) else {
            return;
        };
        self.place_pat(pat, placed);
    }

    fn place_pat(&mut self, pat: &ast::Pat, placed: value::Value) {
        match (pat, placed) {
            (ast::Pat::IdentPat(i), value::Value::Int(a)) => {
                let Some(n) = ast::HasName::name(i) else {
                    return;
                };
                let at = span_of(pat.syntax().text_range());
                if let Some(t) = self
                    .model
                    .tensors
                    .iter_mut()
                    .rev()
                    .find(|t| t.name == n.text() && t.span == at)
                {
                    t.address = Some(a);
                    t.from_addr = true;
                }
            }
            (ast::Pat::TuplePat(t), value::Value::Tuple(vs))
                if t.fields().count() == vs.len()
                    && !t.fields().any(|f| matches!(f, ast::Pat::RestPat(_))) =>
            {
                for (f, v) in t.fields().zip(vs) {
                    self.place_pat(&f, v);
                }
            }
            _ => {}
        }
    }

    /// The address the tensor an argument names (`&a`, `a`) was placed at, when known.
    pub(super) fn placed_at(&self, arg: &ast::Expr) -> Option<u64> {
        self.tensor_named_by(arg)?.address
    }

    /// The low bits of the address the tensor `arg` names was placed at, where they are all
    /// that is known of it.
    pub(super) fn placed_low_at(&self, arg: &ast::Expr) -> Option<crate::model::value::LowBits> {
        self.tensor_named_by(arg)?.address_low
    }

    /// The tensor of the function the variable `arg` names, as last bound.
    fn tensor_named_by(&self, arg: &ast::Expr) -> Option<&TensorVar> {
        let name = var_name(arg)?;
        let Some(Val::Tensor { .. }) = self.vars.get(&name) else {
            return None;
        };
        self.model.tensors.iter().rev().find(|t| t.name == name)
    }

    /// Evaluates an expression that is not the start of the chain being built (an argument):
    /// it neither starts nor continues that chain.
    pub(super) fn arg_expr(&mut self, e: &ast::Expr) -> Val {
        let saved = self.root.take();
        let v = self.expr(e, &mut Vec::new(), false);
        self.root = saved;
        v
    }

    pub(super) fn let_stmt(&mut self, l: &ast::LetStmt) {
        let annotation = l.ty();
        let expected = annotation
            .as_ref()
            .and_then(|t| tensor_type(t, self.env, &self.scope, &mut self.model.problems));
        let name = l.pat().as_ref().and_then(pat_name);
        if let Some(n) = &name {
            let declared = annotation.as_ref().and_then(|t| {
                let inner = super::env::unwrapped(t);
                tensor_type(&inner, self.env, &self.scope, &mut Vec::new())
            });
            match declared {
                Some(ty) => self.declared.insert(n.clone(), ty),
                None => self.declared.remove(n),
            };
            self.bind_let_value(l, n);
            self.type_let(n, l);
            self.remember_tensor_array(l, n);
        }
        if let (Some(ast::Type::TupleType(t)), Some(init)) = (&annotation, l.initializer()) {
            self.type_tuple(&init, t);
        }
        let val = match (l.initializer(), &name) {
            (Some(init), Some(n)) if let Some(a) = array_of_calls(&init) => {
                self.array_elements(n, &a)
            }
            (Some(init), _) => self.top(&init, expected.clone(), name.clone()),
            (None, _) => match &expected {
                Some(t) => Val::Tensor {
                    ty: t.clone(),
                    tu: None,
                    engines: Vec::new(),
                },
                None => Val::Unknown,
            },
        };
        let ends = std::mem::take(&mut self.last_ends);
        let Some(name) = name else {
            // `let (a, b) = ..`, `let Pair { a, b } = ..`, `let Some(t) = .. else { .. }`.
            if let Some(pat) = l.pat() {
                let val = self.typed_by_tuple_annotation(val, annotation.as_ref());
                if !l
                    .initializer()
                    .is_some_and(|init| self.bind_each_run(&pat, &init))
                {
                    self.bind_pat(&pat, val);
                }
                if let Some(init) = l.initializer() {
                    self.place_returned(&pat, &init);
                    self.take_call_result(&pat, &init);
                    let v = self.value_of(&init).0;
                    let v = v.or_else(|u| self.typed_unknown(&init, u));
                    self.bind_value_pat(&pat, v);
                }
            }
            return;
        };
        let val = match (val, annotation.as_ref()) {
            (Val::Unknown | Val::Lost(_), Some(t)) => {
                match many_type(t, self.env, &self.scope, &mut self.model.problems) {
                    Some(ty) => Val::many(ty),
                    None => Val::Unknown,
                }
            }
            (v, _) => v,
        };
        if ends.is_empty() {
            self.ends.remove(&name);
        } else {
            self.ends.insert(name.clone(), ends);
        }
        if let Val::Tensor { ty, tu, .. } = &val {
            self.record_let_tensor(l, &name, ty, *tu);
            if let (Some(pat), Some(init)) = (l.pat(), l.initializer()) {
                self.take_call_result(&pat, &init);
            }
        }
        if let (Val::Many { .. }, Some(init)) = (&val, l.initializer()) {
            let at = l.pat().map_or(span_of(l.syntax().text_range()), |p| {
                span_of(p.syntax().text_range())
            });
            self.name_runs(&name, at, &init);
        }
        let fields = matches!(val, Val::Struct(_));
        self.vars.insert(name.clone(), val);
        if let (true, Some(init)) = (fields, l.initializer()) {
            self.take_field_results(&name, &init);
        }
    }

    /// A call of a `&mut self` method of the crate on a variable the model follows
    /// (`arena.place(bytes)` of a `let mut arena = Arena::new(BASE)`): the variable's value
    /// after the call, which the statement's end gives it ([`Builder::apply_changing_calls`]).
    /// Unknown, with the reason, in an arm the trace may not take, or when the statement
    /// names the variable again (visa-lint does not order the two).
    pub(super) fn note_changing_call(&mut self, m: &ast::MethodCallExpr) {
        if !self.mutating {
            return;
        }
        let Some(name) = m.receiver().as_ref().and_then(var_name) else {
            return;
        };
        let Some(receiver) = self.values.get(&name) else {
            return;
        };
        if !value::mutates(receiver, m, self.value_fns()) {
            return;
        }
        let statement = m.syntax().ancestors().find(|a| {
            a.parent()
                .is_some_and(|p| ast::StmtList::can_cast(p.kind()))
        });
        let mentions = statement.iter().flat_map(|s| s.descendants_with_tokens());
        let mentions = mentions
            .filter_map(|t| t.into_token())
            .filter(|t| t.text() == name.as_str())
            .count();
        let method = m
            .name_ref()
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        let after = if !self.followed.contains(&name) {
            Err(value::Unknown::assigned(&name))
        } else if self.undecided > 0 {
            Err(value::Unknown::new(format!(
                "`{name}` is changed by `.{method}(..)` in an arm of an `if` or a `match` \
                 visa-lint cannot decide"
            )))
        } else if mentions > 1 {
            Err(value::Unknown::new(format!(
                "`{name}` is changed by `.{method}(..)` and named again in the same statement, \
                 which visa-lint does not order"
            )))
        } else {
            let after = self.with_names(self.value_fns(), |names| value::self_after(m, names));
            match after {
                Some(v) => v,
                None => return,
            }
        };
        self.changed_by_calls.push((name, after));
    }

    /// The values the calls of `&mut self` methods of the statement just traced gave their
    /// variables (see [`Builder::note_changing_call`]).
    fn apply_changing_calls(&mut self) {
        for (name, v) in std::mem::take(&mut self.changed_by_calls) {
            match &v {
                Ok(value::Value::Int(k)) => self.consts.insert(name.clone(), *k),
                _ => self.consts.remove(&name),
            };
            self.values.insert(name.clone(), v);
            self.assigned.push(name);
        }
    }

    /// `let srcs = [mean, var];` (or `&[..]`), never assigned again: the array of names `n`
    /// holds (see [`Builder::tensor_arrays`]); any other `let` of `n` forgets it. An array of
    /// what calls give is remembered by [`Builder::array_elements`].
    fn remember_tensor_array(&mut self, l: &ast::LetStmt, n: &str) {
        let mut init = l.initializer();
        while let Some(ast::Expr::RefExpr(r)) = &init {
            init = r.expr();
        }
        let immutable = matches!(l.pat(), Some(ast::Pat::IdentPat(i)) if i.mut_token().is_none());
        let names: Option<Vec<String>> = match init {
            Some(ast::Expr::ArrayExpr(a)) if immutable => a.exprs().map(|x| var_name(&x)).collect(),
            _ => None,
        };
        match names {
            Some(names) => {
                let at = span_of(l.syntax().text_range());
                self.model
                    .tensor_arrays
                    .push((n.to_string(), names.clone(), at));
                self.tensor_arrays.insert(n.to_string(), names)
            }
            None => self.tensor_arrays.remove(n),
        };
    }

    /// `let tiles = [load(ctx, 0), load(ctx, 1)];`: each element is evaluated as a `let` of
    /// its own, the tensor `tiles[k]` (placed where its call places it, read where
    /// `tiles[k]` is read), as the compiler's trace holds each. The array's value.
    fn array_elements(&mut self, n: &str, a: &ast::ArrayExpr) -> Val {
        let mut vals = Vec::new();
        let mut names = Vec::new();
        for (k, x) in a.exprs().enumerate() {
            let name = format!("{n}[{k}]");
            let val = self.top(&x, None, Some(name.clone()));
            self.last_ends.clear();
            if let Val::Tensor { ty, tu, .. } = &val {
                let span = span_of(x.syntax().text_range());
                self.record_bound_tensor(&name, span, Some(&x), ty, *tu);
                self.take_call_result_as(&name, span, &x);
            }
            self.ends.remove(&name);
            self.vars.insert(name.clone(), val.clone());
            vals.push(val);
            names.push(name);
        }
        self.last_ends.clear();
        self.tensor_arrays.insert(n.to_string(), names);
        super::state::array_of(vals)
    }

    /// `let tiles: [Tile; 4] = array::from_fn(|t| unsafe { Tile::from_addr(slot(t)) });`: each
    /// element is a tensor of its own, `tiles[k]` (bound at `at`), placed where its run of the
    /// closure placed it and read where `tiles[k]` is read, as the trace holds each.
    fn name_runs(&mut self, n: &str, at: Span, init: &ast::Expr) {
        let Some(built) = super::results::under_wrappers(init) else {
            return;
        };
        let Some(ClosureRuns { runs, .. }) = self
            .closure_runs
            .get(&span_of(built.syntax().text_range()))
            .cloned()
        else {
            return;
        };
        if !runs.iter().all(|r| matches!(r.val, Val::Tensor { .. })) {
            return;
        }
        let mut names = Vec::new();
        for (k, run) in runs.into_iter().enumerate() {
            let name = format!("{n}[{k}]");
            if let Val::Tensor { ty, tu, .. } = &run.val {
                self.model.tensors.push(TensorVar {
                    name: name.clone(),
                    span: at,
                    origin: Origin::Let,
                    ty: ty.clone(),
                    context: *tu,
                    address: run.placed,
                    from_addr: run.placed.is_some(),
                    address_low: None,
                    iteration: self.iteration,
                    trf_loaded: None,
                    placed_by_call: None,
                });
            }
            self.vars.insert(name.clone(), run.val);
            names.push(name);
        }
        self.tensor_arrays.insert(n.to_string(), names);
    }

    /// The compile-time value `let` binds to `n` (a `let mut` never assigned again is one
    /// too); an integer one is a constant too. A variable assigned after its `let` outside
    /// any loop or closure is followed through its assignments (see [`Builder::assign`]); one
    /// assigned in a loop is not: its value is unknown, and says why, and its first value is
    /// kept for the `while` loops that count with it.
    fn bind_let_value(&mut self, l: &ast::LetStmt, n: &str) {
        let (immutable, mutable) = match l.pat() {
            Some(ast::Pat::IdentPat(i)) if i.ref_token().is_none() => {
                (i.mut_token().is_none(), i.mut_token().is_some())
            }
            _ => (false, false),
        };
        let fns = Some(self.value_fns()).filter(|_| self.mutating);
        let reassigned = mutable && assigned_after(l, n, fns);
        // Assignments the trace runs once each are followed; any other makes it unknown.
        let followed = reassigned && assigned_in_straight_code(l, n, fns);
        if followed {
            self.followed.insert(n.to_string());
        } else {
            self.followed.remove(n);
        }
        if !self.counters.is_empty() {
            self.counters.remove(n);
        }
        match l.initializer().and_then(|init| closure_fn(&init)) {
            Some(f) if immutable => {
                let env = self.env;
                let fns = self
                    .with_closures
                    .get_or_insert_with(|| env.value_fns.clone());
                fns.insert(n.to_string(), f);
            }
            // A `let` that shadows a closure: the name is the crate's again, if anything.
            _ => {
                if let Some(fns) = &mut self.with_closures {
                    match self.env.value_fns.get(n) {
                        Some(f) => fns.insert(n.to_string(), f.clone()),
                        None => fns.remove(n),
                    };
                }
            }
        }
        if reassigned
            && let Some(first) = l.initializer().and_then(|init| {
                consts::eval_sized(&init, &self.consts, &self.env.value_fns, &self.scope)
            })
        {
            self.counters.insert(n.to_string(), first);
        }
        let value = l
            .initializer()
            .filter(|_| immutable || mutable)
            .map(|init| match reassigned && !followed {
                false => self
                    .partial_value_of(&init)
                    .0
                    .map(|v| self.annotated(v, l.ty())),
                true => Err(value::Unknown::assigned(n)),
            });
        match &value {
            Some(Ok(value::Value::Int(k))) => {
                self.consts.insert(n.to_string(), *k);
            }
            _ => {
                self.consts.remove(n);
            }
        }
        match value {
            Some(v) => {
                self.values.insert(n.to_string(), v);
            }
            None => {
                self.values.remove(n);
            }
        }
    }

    /// A tuple destructured by a `let` whose annotation types it: the fields the model does
    /// not follow take the annotation's tensor types.
    /// Gives the elements of the tuple expression `e` (seen through blocks) the tensor types
    /// of the tuple type `t` (see `Builder::tuple_types`).
    pub(super) fn type_tuple(&mut self, e: &ast::Expr, t: &ast::TupleType) {
        let mut e = e.clone();
        while let ast::Expr::BlockExpr(b) = &e {
            let Some(tail) = b.stmt_list().and_then(|l| l.tail_expr()) else {
                return;
            };
            e = tail;
        }
        if !matches!(e, ast::Expr::TupleExpr(_)) {
            return;
        }
        let types = t
            .fields()
            .map(|f| tensor_type(&f, self.env, &self.scope, &mut Vec::new()))
            .collect();
        self.tuple_types
            .insert(span_of(e.syntax().text_range()), types);
    }

    fn typed_by_tuple_annotation(&mut self, val: Val, annotation: Option<&ast::Type>) -> Val {
        let (mut vs, t) = match (val, annotation) {
            (Val::Tuple(vs), Some(ast::Type::TupleType(t))) => (vs, t),
            (v, _) => return v,
        };
        for (v, f) in vs.iter_mut().zip(t.fields()) {
            if matches!(v, Val::Unknown)
                && let Some(ty) = tensor_type(&f, self.env, &self.scope, &mut self.model.problems)
            {
                *v = Val::Tensor {
                    ty,
                    tu: None,
                    engines: Vec::new(),
                };
            }
        }
        Val::Tuple(vs)
    }

    /// A tensor a `let` binds: a tensor of the function, at the address its chain's last step
    /// or its placement gives.
    fn record_let_tensor(&mut self, l: &ast::LetStmt, name: &str, ty: &TensorTy, tu: Option<Tu>) {
        let span = l.pat().map_or(span_of(l.syntax().text_range()), |p| {
            span_of(p.syntax().text_range())
        });
        self.record_bound_tensor(name, span, l.initializer().as_ref(), ty, tu);
    }

    /// A tensor bound to `name` at `span` with the value of `init`: a tensor of the function,
    /// at the address its chain's last step or its placement gives.
    fn record_bound_tensor(
        &mut self,
        name: &str,
        span: Span,
        init: Option<&ast::Expr>,
        ty: &TensorTy,
        tu: Option<Tu>,
    ) {
        let last = self
            .model
            .chains
            .last()
            .filter(|c| c.binding.as_deref() == Some(name))
            .and_then(|c| c.steps.last());
        let written = last.and_then(|s| s.address);
        let placed = written.is_none().then(|| self.placed_by(init?)).flatten();
        // Placed by a helper (`let page = page_of(300);`): a placement at the call, checked as
        // one written here (its capacity, its alignment).
        if let (Some(address), Some(init)) = (placed, init)
            && !is_from_addr(init)
        {
            let arg = self.value_arg(init);
            self.model.placements.push(crate::model::Placement {
                arg,
                address,
                ty: ty.clone(),
                iteration: self.iteration,
            });
        }
        self.model.tensors.push(TensorVar {
            name: name.to_string(),
            span,
            origin: Origin::Let,
            ty: ty.clone(),
            context: tu,
            address: written.or(placed),
            from_addr: placed.is_some() || init.is_some_and(is_from_addr),
            address_low: last.and_then(crate::model::Step::address_low_bits),
            iteration: self.iteration,
            trf_loaded: None,
            placed_by_call: None,
        });
    }

    /// Binds a variable to a value outside a `let` of a plain name (a pattern's part, a loop
    /// variable, a closure parameter, an assignment).
    pub(super) fn set_var(&mut self, name: String, val: Val, span: Span) {
        self.consts.remove(&name);
        self.values.remove(&name);
        self.ends.remove(&name);
        if let Val::Tensor { ty, tu, .. } = &val {
            self.model.tensors.push(TensorVar {
                name: name.clone(),
                span,
                origin: Origin::Let,
                ty: ty.clone(),
                context: *tu,
                address: None,
                from_addr: false,
                address_low: None,
                iteration: self.iteration,
                trf_loaded: None,
                placed_by_call: None,
            });
        }
        self.vars.insert(name, val);
    }

    /// `let [r, z] = GATES.map(|g| gate(ctx, .., g));`: each name takes what its own run of
    /// the closure gave, placed where that run's call placed it, as the trace holds each
    /// element. Whether `pat` is such a pattern of as many names as runs.
    fn bind_each_run(&mut self, pat: &ast::Pat, init: &ast::Expr) -> bool {
        let ast::Pat::SlicePat(sp) = pat else {
            return false;
        };
        let Some(built) = super::results::under_wrappers(init) else {
            return false;
        };
        let Some(ClosureRuns { body, runs }) = self
            .closure_runs
            .get(&span_of(built.syntax().text_range()))
            .cloned()
        else {
            return false;
        };
        let pats: Vec<ast::Pat> = sp.pats().collect();
        let rest = pats.iter().any(|p| matches!(p, ast::Pat::RestPat(_)));
        if rest || pats.len() != runs.len() {
            return false;
        }
        for (p, Run { val, iteration, .. }) in pats.iter().zip(runs) {
            self.bind_pat(p, val);
            if let Some(name) = pat_name(p) {
                let outer = std::mem::replace(&mut self.iteration, iteration);
                self.take_call_result_as(&name, span_of(p.syntax().text_range()), &body);
                self.iteration = outer;
            }
        }
        true
    }

    /// Binds a pattern to a value: tuples and struct literals part by part, `Some(t)`/`Ok(t)`
    /// to the value itself (the model sees through `Option`/`Result`); a part it cannot
    /// follow is [`Val::Lost`] at the pattern.
    pub(super) fn bind_pat(&mut self, pat: &ast::Pat, val: Val) {
        let at = span_of(pat.syntax().text_range());
        match pat {
            ast::Pat::IdentPat(i) => {
                if let Some(n) = ast::HasName::name(i) {
                    self.set_var(n.text().to_string(), val, at);
                }
            }
            ast::Pat::RefPat(r) => {
                if let Some(p) = r.pat() {
                    self.bind_pat(&p, val);
                }
            }
            ast::Pat::ParenPat(p) => {
                if let Some(p) = p.pat() {
                    self.bind_pat(&p, val);
                }
            }
            ast::Pat::TuplePat(t) => {
                let fields: Vec<ast::Pat> = t.fields().collect();
                let rest = fields.iter().any(|f| matches!(f, ast::Pat::RestPat(_)));
                match val {
                    Val::Tuple(vs) if vs.len() == fields.len() && !rest => {
                        for (f, v) in fields.iter().zip(vs) {
                            self.bind_pat(f, v);
                        }
                    }
                    Val::Unknown => self.bind_all(pat, Val::Unknown),
                    Val::Lost(c) => self.bind_all(pat, Val::Lost(c)),
                    _ => {
                        let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                        self.bind_all(pat, Val::Lost(Construct::new(pat.syntax(), what)));
                    }
                }
            }
            ast::Pat::RecordPat(r) => {
                let Val::Struct(fields) = val else {
                    let lost = match val {
                        Val::Unknown => Val::Unknown,
                        Val::Lost(c) => Val::Lost(c),
                        _ => {
                            let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                            Val::Lost(Construct::new(pat.syntax(), what))
                        }
                    };
                    self.bind_all(pat, lost);
                    return;
                };
                for f in r
                    .record_pat_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                {
                    let Some(p) = f.pat() else { continue };
                    let name = f
                        .field_name()
                        .map(|n| n.to_string())
                        .or_else(|| pat_name(&p));
                    let v = name
                        .and_then(|n| fields.iter().find(|(k, _)| *k == n))
                        .map_or(Val::Unknown, |(_, v)| v.clone());
                    self.bind_pat(&p, v);
                }
            }
            ast::Pat::TupleStructPat(t) => {
                let fields: Vec<ast::Pat> = t.fields().collect();
                match fields.as_slice() {
                    [one] => self.bind_pat(one, val),
                    _ => self.bind_all(pat, Val::Unknown),
                }
            }
            ast::Pat::SlicePat(sp) => {
                let elem = match val {
                    Val::Many { elem, .. } => *elem,
                    Val::Lost(c) => Val::Lost(c),
                    Val::Unknown => Val::Unknown,
                    _ => {
                        let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                        Val::Lost(Construct::new(pat.syntax(), what))
                    }
                };
                for p in sp.pats() {
                    if !matches!(p, ast::Pat::RestPat(_)) {
                        self.bind_pat(&p, elem.clone());
                    }
                }
            }
            _ => self.bind_all(pat, Val::Unknown),
        }
    }

    /// The value of a call visa-lint does not evaluate (`load_params(ctx, ..)`, unknown for
    /// `u`), when its function returns structs of the crate: each a value of its struct whose
    /// fields are not known (`Beta(_)` of `-> (Gamma<S>, Beta<S>)`), so that a method reading
    /// none of them is evaluated (`beta.fp_op()`), as rustc's trace runs it.
    fn typed_unknown(&self, init: &ast::Expr, u: value::Unknown) -> value::Eval {
        let ast::Expr::CallExpr(c) = init else {
            return Err(u);
        };
        let sig = match c.expr() {
            Some(ast::Expr::PathExpr(p)) => p
                .path()
                .and_then(|p| crate::model::consts::callee_key(&p))
                .and_then(|k| self.env.fn_sig(&k)),
            _ => None,
        };
        let Some(sig) = sig.filter(|s| s.ret_structs.iter().any(Option::is_some)) else {
            return Err(u);
        };
        let typed = |name: &Option<String>| match name {
            Some(path) => value::Value::Variant {
                path: path.clone(),
                fields: value::Fields::Positional(vec![value::Value::Unknown(u.clone())]),
            },
            None => value::Value::Unknown(u.clone()),
        };
        match sig.ret_structs.as_slice() {
            [one] if sig.rets.is_empty() => Ok(typed(one)),
            many => Ok(value::Value::Tuple(many.iter().map(typed).collect())),
        }
    }

    /// Binds the compile-time values a pattern's names take from `v`: a tuple part by part
    /// (`let (k_addr, v_addr) = addrs(..)`, `for (i, addr) in ADDRS.iter().enumerate()`), a
    /// struct or a one-field variant by its fields; a name whose part is unknown is unknown
    /// with the reason, so that a rule reading it says it is not checked.
    pub(super) fn bind_value_pat(&mut self, pat: &ast::Pat, v: value::Eval) {
        let unknown = |pat: &ast::Pat| {
            value::Unknown::new(format!(
                "the destructuring `{}` is not one visa-lint follows",
                snippet(pat.syntax())
            ))
        };
        match (pat, v) {
            (ast::Pat::IdentPat(i), v) => {
                let Some(n) = ast::HasName::name(i).map(|n| n.text().to_string()) else {
                    return;
                };
                // A struct with fields not known keeps its type and the fields it knows, as
                // a `let` of a plain name does: its methods that read none of the others are
                // evaluated.
                if let Ok(v @ value::Value::Variant { .. }) = &v
                    && v.first_unknown().is_some()
                {
                    self.consts.remove(&n);
                    self.values.insert(n, Ok(v.clone()));
                    return;
                }
                match v.and_then(value::Value::whole) {
                    Ok(v) => self.bind(&n, v),
                    Err(u) => {
                        self.consts.remove(&n);
                        self.values.insert(n, Err(u));
                    }
                }
            }
            (ast::Pat::RefPat(r), v) => {
                if let Some(p) = r.pat() {
                    self.bind_value_pat(&p, v);
                }
            }
            (ast::Pat::ParenPat(p), v) => {
                if let Some(p) = p.pat() {
                    self.bind_value_pat(&p, v);
                }
            }
            (ast::Pat::WildcardPat(_), _) => {}
            (ast::Pat::TuplePat(t), Ok(value::Value::Tuple(vs)))
                if t.fields().count() == vs.len()
                    && !t.fields().any(|f| matches!(f, ast::Pat::RestPat(_))) =>
            {
                for (f, v) in t.fields().zip(vs) {
                    self.bind_value_pat(&f, Ok(v));
                }
            }
            // `let [l1, l2] = &LEVELS;`, `let [first, .., last] = TILES;`.
            (ast::Pat::SlicePat(sp), Ok(value::Value::Array(vs)))
                if let Some(parts) = slice_parts(sp, vs.len()) =>
            {
                for (p, k) in parts {
                    if let Some(v) = vs.get(k) {
                        self.bind_value_pat(&p, Ok(v.clone()));
                    }
                }
            }
            (
                ast::Pat::TupleStructPat(t),
                Ok(value::Value::Variant {
                    fields: value::Fields::Positional(vs),
                    ..
                }),
            ) if t.fields().count() == vs.len() => {
                for (f, v) in t.fields().zip(vs) {
                    self.bind_value_pat(&f, Ok(v));
                }
            }
            (
                ast::Pat::RecordPat(r),
                Ok(value::Value::Variant {
                    fields: value::Fields::Named(fs),
                    ..
                }),
            ) => {
                for f in r
                    .record_pat_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                {
                    let Some(p) = f.pat() else { continue };
                    let name = f
                        .field_name()
                        .map(|n| n.to_string())
                        .or_else(|| pat_name(&p));
                    let v = name
                        .and_then(|n| fs.iter().find(|(k, _)| *k == n))
                        .map(|(_, v)| v.clone())
                        .ok_or_else(|| unknown(&p));
                    self.bind_value_pat(&p, v);
                }
            }
            (pat, v) => {
                let u = v.err().unwrap_or_else(|| unknown(pat));
                for i in pat.syntax().descendants().filter_map(ast::IdentPat::cast) {
                    if let Some(n) = ast::HasName::name(&i) {
                        let n = n.text().to_string();
                        self.consts.remove(&n);
                        self.values.insert(n, Err(u.clone()));
                    }
                }
            }
        }
    }

    /// Binds every name a pattern introduces to one value.
    pub(super) fn bind_all(&mut self, pat: &ast::Pat, val: Val) {
        for i in pat.syntax().descendants().filter_map(ast::IdentPat::cast) {
            if let Some(n) = ast::HasName::name(&i) {
                let at = span_of(i.syntax().text_range());
                self.set_var(n.text().to_string(), val.clone(), at);
            }
        }
    }

    /// Reports a value the model did not follow where it is used as a tensor: once per
    /// construct.
    pub(super) fn lost_use(&mut self, c: &Construct, at: Span) {
        if !self.lost_reported.insert(c.span) {
            return;
        }
        self.model.problems.push(
            NotFollowed::Lost {
                at: c.span,
                what: c.what.clone(),
                used: at,
            }
            .into(),
        );
    }

    /// A construct reported as soon as it is met (an engine chain inside a macro, an address
    /// computed by a call): once.
    pub(super) fn not_analysed(&mut self, p: NotFollowed) {
        if self.lost_reported.insert(p.at()) {
            self.model.problems.push(p.into());
        }
    }

    /// An `if`/`while` condition: `let` patterns bind what they match, tensors and
    /// compile-time values (`if let Some(spill) = slot.spill`). `false` when a `let` pattern
    /// is known not to match (`slot.spill` is `None`): the branch is not taken.
    pub(super) fn condition(&mut self, c: &ast::Expr) -> bool {
        match c {
            ast::Expr::LetExpr(l) => {
                let v = l.expr().map_or(Val::Unknown, |e| self.arg_expr(&e));
                let (Some(p), Some(e)) = (l.pat(), l.expr()) else {
                    return true;
                };
                // The scrutinee's value is read before the pattern binds its names, which may
                // shadow it (`if let Some(step) = step`).
                let value = self.value_of(&e).0;
                // `if let Some(prev) = &best`: `prev` is `best`'s tensor, where it is placed.
                match var_name(&e).filter(|_| matches!(v, Val::Tensor { .. })) {
                    Some(of) => {
                        let placed = self.placed_at(&e);
                        self.bind_arm_tensors(&p, v, Some(&(of, placed)));
                    }
                    None => self.bind_pat(&p, v),
                }
                match value {
                    Ok(v) if !may_match(&p, &v) => false,
                    v => {
                        self.bind_value_pat(&p, v);
                        true
                    }
                }
            }
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::LogicOp(ast::LogicOp::And))) =>
            {
                let l = b.lhs().is_none_or(|l| self.condition(&l));
                let r = b.rhs().is_none_or(|r| self.condition(&r));
                l && r
            }
            other => {
                self.arg_expr(other);
                true
            }
        }
    }

    /// `x = e`: the variable takes the new value (its chain, if it is a stream in mid-pass);
    /// `x += e` and assignments to fields or indices only evaluate the right-hand side. A
    /// variable with a compile-time value takes its new one where the model follows it
    /// ([`Builder::assigned_value`]), and is unknown from here on where it does not.
    pub(super) fn assign(&mut self, b: &ast::BinExpr) -> Val {
        let plain = matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { op: None }));
        let target = b.lhs().as_ref().and_then(var_name);
        if let Some(t) = &target
            && !self.counters.is_empty()
        {
            self.counters.remove(t);
        }
        let root = b.lhs().as_ref().and_then(assigned_root);
        let value = root
            .filter(|t| self.values.contains_key(t))
            .map(|t| (self.assigned_value(b, &t), t));
        let Some(rhs) = b.rhs() else {
            return Val::Unknown;
        };
        match target {
            Some(name) if plain => {
                let expected = match self.vars.get(&name) {
                    Some(Val::Tensor { ty, .. }) => Some(ty.clone()),
                    _ => self.declared.get(&name).cloned(),
                };
                let val = self.top(&rhs, expected, Some(name.clone()));
                let ends = std::mem::take(&mut self.last_ends);
                let at = b.lhs().map_or(span_of(b.syntax().text_range()), |l| {
                    span_of(l.syntax().text_range())
                });
                self.set_var(name.clone(), val, at);
                self.place_assigned(&name, at, &rhs);
                if !ends.is_empty() {
                    self.ends.insert(name, ends);
                }
            }
            Some(name) => {
                self.consts.remove(&name);
                self.arg_expr(&rhs);
            }
            None => {
                self.top(&rhs, None, None);
            }
        }
        if let Some((v, name)) = value {
            self.assigned.push(name.clone());
            match &v {
                Ok(value::Value::Int(k)) => self.consts.insert(name.clone(), *k),
                _ => self.consts.remove(&name),
            };
            self.values.insert(name, v);
        }
        self.last_ends.clear();
        Val::Unknown
    }

    /// The tensor `x = e` binds (recorded at `at`, an [`Origin::Assign`]) is placed where `e`'s chain puts it
    /// (`best = Some(keys.commit(best_addr(t)))`), or where the helper `e` calls places it.
    fn place_assigned(&mut self, name: &str, at: Span, rhs: &ast::Expr) {
        let within = span_of(rhs.syntax().text_range());
        let written = self
            .model
            .chains
            .last()
            .filter(|c| c.binding.as_deref() == Some(name))
            .filter(|c| within.start <= c.span.start && c.span.end <= within.end)
            .and_then(|c| c.steps.last())
            .and_then(|s| s.address);
        let placed = written.is_none().then(|| self.placed_by(rhs)).flatten();
        let moved = self.moved(rhs);
        if let Some(t) = self
            .model
            .tensors
            .last_mut()
            .filter(|t| t.name == name && t.span == at)
        {
            t.origin = Origin::Assign;
            t.address = written.or(placed);
            t.from_addr = placed.is_some() || is_from_addr(rhs);
            // A moved tensor stays where it is: the new name holds it, and places nothing.
            if let Some(m) = moved.as_ref() {
                t.address = m.address;
                t.from_addr = m.from_addr;
            }
        }
        if moved.is_some() {
            return;
        }
        // A helper's result (`best = Some(dist.fold_keys(.., plan.best_addr(t)))`) is where
        // its trace with the call's values writes it.
        if written.is_none() && placed.is_none() {
            self.take_call_result_as(name, at, rhs);
        }
    }

    /// The tensor variable a plain move names (`cur = next`), as the model placed it, with
    /// the move recorded as a read of it (see [`crate::model::FnModel::moves`]).
    fn moved(&mut self, rhs: &ast::Expr) -> Option<TensorVar> {
        let from = var_name(rhs)?;
        if !matches!(self.vars.get(&from), Some(Val::Tensor { .. })) {
            return None;
        }
        let held = self
            .model
            .tensors
            .iter()
            .rev()
            .find(|t| t.name == from)?
            .clone();
        self.model.moves.push(crate::model::Move {
            from,
            at: span_of(rhs.syntax().text_range()),
            iteration: self.iteration,
        });
        Some(held)
    }

    /// The value the assignment `b` gives the variable `name`: `x = e` the value of `e`, `x op=
    /// e` the old value with `e`, as the trace computes them. Unknown, and why, for a variable
    /// the model does not follow, an arm the trace may not take, or a part of a variable
    /// written (`x.base = ..`).
    fn assigned_value(&self, b: &ast::BinExpr, name: &str) -> value::Eval {
        if !self.followed.contains(name) {
            return Err(value::Unknown::assigned(name));
        }
        if self.undecided > 0 {
            return Err(value::Unknown::new(format!(
                "`{name}` is assigned in an arm of an `if` or a `match` visa-lint cannot decide"
            )));
        }
        let rhs = b.rhs().ok_or_else(|| value::Unknown::assigned(name))?;
        let whole = b.lhs().as_ref().and_then(var_name).as_deref() == Some(name);
        if !whole {
            return Err(value::Unknown::new(format!(
                "a part of `{name}` is assigned, and visa-lint does not follow a value's parts \
                 through assignments"
            )));
        }
        // As a `let` binds it: `bias = Some(vrf)` is a `Some`, whatever the tensor is.
        let new = self.partial_value_of(&rhs).0?;
        match b.op_kind() {
            Some(ast::BinaryOp::Assignment { op: None }) => Ok(new),
            Some(ast::BinaryOp::Assignment { op: Some(op) }) => {
                match (self.values.get(name), &new) {
                    (Some(Ok(value::Value::Int(old))), value::Value::Int(r)) => {
                        consts::arith(op, *old, *r)
                            .map(value::Value::Int)
                            .ok_or_else(|| {
                                value::Unknown::new(format!("`{}` overflows", snippet(b.syntax())))
                            })
                    }
                    (Some(Err(u)), _) => Err(u.clone()),
                    _ => Err(value::Unknown::assigned(name)),
                }
            }
            _ => Err(value::Unknown::assigned(name)),
        }
    }
}

/// A closure of plain parameters (`|k: usize| BASE + k * STRIDE`), as a function the
/// evaluator runs at each call of the variable bound to it.
fn closure_fn(e: &ast::Expr) -> Option<crate::model::consts::ConstFn> {
    let ast::Expr::ClosureExpr(c) = e else {
        return None;
    };
    let params = c
        .param_list()?
        .params()
        .map(|p| match p.pat()? {
            ast::Pat::IdentPat(i) => Some(ast::HasName::name(&i)?.text().to_string()),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    let body = crate::syntax::node_text(c.body()?.syntax());
    Some(crate::model::consts::ConstFn {
        lengths: vec![None; params.len()],
        params,
        body,
        ..Default::default()
    })
}

/// How the trace runs an arm of an `if` or a `match` (see [`Builder::arm`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Arm {
    Taken,
    Maybe,
    NotTaken,
}

impl Arm {
    /// The arm a condition the compiler decides (`Some`) or not (`None`) gives.
    pub(super) fn of(decided: Option<bool>) -> Arm {
        match decided {
            Some(true) => Arm::Taken,
            Some(false) => Arm::NotTaken,
            None => Arm::Maybe,
        }
    }
}

/// Whether the pattern `pat` matches the value `v` (parts of it may be unknown), where that is
/// decided: a tuple pattern element by element, each part as [`may_match`] decides it; `None`
/// when a part the pattern reads is unknown or the pattern is not one decided here.
fn matches(pat: &ast::Pat, v: &value::Value) -> Option<bool> {
    let each = |fields: ast::AstChildren<ast::Pat>, vs: &[value::Value]| {
        let fields: Vec<ast::Pat> = fields.collect();
        let rest = fields.iter().any(|f| matches!(f, ast::Pat::RestPat(_)));
        (fields.len() == vs.len() && !rest).then(|| all_match(&fields, vs))
    };
    match (pat, v) {
        (ast::Pat::TuplePat(t), value::Value::Tuple(vs)) if let Some(m) = each(t.fields(), vs) => m,
        // `Some((op, factor))`: the variant of its name, each field matching its pattern.
        (ast::Pat::TupleStructPat(t), value::Value::Variant { path, fields })
            if !names_a_constant(path) && !decidable(pat) =>
        {
            match (may_match(pat, v), fields) {
                (false, _) => Some(false),
                (true, value::Fields::Positional(vs)) => each(t.fields(), vs).flatten(),
                (true, _) => None,
            }
        }
        // `None` (or a unit variant brought into scope) parses as a name: a variant's name
        // starts with a capital letter, a binding's does not.
        (ast::Pat::IdentPat(i), v) if i.pat().is_none() => {
            let name = ast::HasName::name(i)?;
            if !name.text().starts_with(|c: char| c.is_ascii_uppercase()) {
                return Some(true);
            }
            match v {
                value::Value::Variant { path, .. } if !names_a_constant(path) => {
                    Some(path.rsplit("::").next() == Some(name.text()))
                }
                _ => None,
            }
        }
        (ast::Pat::WildcardPat(_), _) => Some(true),
        (_, value::Value::Unknown(_)) => None,
        // A path the evaluator could not resolve (`R::MASK` of a generic `R`) is no variant.
        (_, value::Value::Variant { path, .. }) if names_a_constant(path) => None,
        (p, v) => decidable(p).then(|| may_match(p, v)),
    }
}

/// Whether every pattern matches the value in its place (`None` when one is not decided and
/// none is known not to).
fn all_match(pats: &[ast::Pat], vs: &[value::Value]) -> Option<bool> {
    let mut all = Some(true);
    for (p, v) in pats.iter().zip(vs) {
        match matches(p, v) {
            Some(false) => return Some(false),
            Some(true) => {}
            None => all = None,
        }
    }
    all
}

/// Whether a path's last segment is a constant's name (`MASK`, `R::MAX_ROWS`), which Rust
/// writes in upper case, unlike a variant's.
fn names_a_constant(path: &str) -> bool {
    let last = path.rsplit("::").next().unwrap_or(path);
    last.len() > 1
        && last.chars().any(|c| c.is_ascii_uppercase())
        && last
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether [`may_match`] decides a pattern exactly: `_`, or a variant whose fields are names
/// or `_` (`Some(op)`, `None`, `Mode::Full`, `Cfg { a, .. }`).
fn decidable(pat: &ast::Pat) -> bool {
    let plain = |p: ast::Pat| match p {
        ast::Pat::IdentPat(i) => i.pat().is_none(),
        ast::Pat::WildcardPat(_) | ast::Pat::RestPat(_) => true,
        _ => false,
    };
    match pat {
        ast::Pat::WildcardPat(_) | ast::Pat::PathPat(_) => true,
        ast::Pat::TupleStructPat(t) => t.fields().all(plain),
        ast::Pat::RecordPat(r) => r
            .record_pat_field_list()
            .is_some_and(|l| l.fields().all(|f| f.pat().is_none_or(plain))),
        _ => false,
    }
}

/// Whether a pattern may match a known value: a variant pattern (`Some(x)`, `None`,
/// `Plan::Full`) only the variant of its name; anything else may.
fn may_match(pat: &ast::Pat, v: &value::Value) -> bool {
    let named = match pat {
        ast::Pat::TupleStructPat(t) => t.path(),
        ast::Pat::PathPat(p) => p.path(),
        ast::Pat::RecordPat(r) => r.path(),
        _ => return true,
    };
    let (Some(name), value::Value::Variant { path, .. }) =
        (named.and_then(|p| p.segment()?.name_ref()), v)
    else {
        return true;
    };
    path.rsplit("::")
        .next()
        .is_some_and(|last| name.text() == last)
}

/// The array literal `init` is (behind `&`), when an element is a call (`[load(ctx, 0),
/// load(ctx, 1)]`): its elements are tensors of their own (see [`Builder::array_elements`]).
fn array_of_calls(init: &ast::Expr) -> Option<ast::ArrayExpr> {
    let mut e = init.clone();
    while let ast::Expr::RefExpr(r) = &e {
        e = r.expr()?;
    }
    let ast::Expr::ArrayExpr(a) = e else {
        return None;
    };
    let call = |x: &ast::Expr| matches!(x, ast::Expr::CallExpr(_) | ast::Expr::MethodCallExpr(_));
    a.exprs().any(|x| call(&x)).then_some(a)
}

/// The patterns of a slice pattern over an array of `len` elements, each with the index of
/// the element it binds (a `..` in the middle skips what it stands for); `None` when the
/// pattern cannot match that many.
fn slice_parts(sp: &ast::SlicePat, len: usize) -> Option<Vec<(ast::Pat, usize)>> {
    let pats: Vec<ast::Pat> = sp.pats().collect();
    let rest = pats.iter().position(|p| matches!(p, ast::Pat::RestPat(_)));
    match rest {
        None => (pats.len() == len).then(|| pats.into_iter().zip(0..).collect()),
        Some(r) => {
            let after = pats.len() - r - 1;
            if r + after > len {
                return None;
            }
            let head = pats[..r].iter().cloned().zip(0..);
            let tail = pats[r + 1..].iter().cloned().zip(len - after..);
            Some(head.chain(tail).collect())
        }
    }
}

//! Loops: a loop over compile-time bounds is unrolled (its index bound in each iteration) within
//! the function's budget, else summarised by its first and last iterations.

use super::reading::{
    assigns, callee_key, has_engine_call, last_step, span_of, uses_name, var_name,
};
use super::state::{Builder, ClosureRuns, MAX_ITERATIONS, Run, Val};
use crate::diagnostic::Span;
use crate::model::Iteration;
use crate::model::consts;
use crate::model::problem::NotFollowed;
use crate::model::value;
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs, HasLoopBody, RangeItem};
use ra_ap_syntax::{AstNode, ast};
use std::collections::HashMap;

impl Builder<'_> {
    /// A loop: its pattern bound to the elements of what it iterates (a tensor of an array
    /// or slice of them), its body evaluated once (Rust gives a variable one type, so what
    /// flows around the back edge has the type it had before the loop).
    pub(super) fn loop_expr(&mut self, e: &ast::Expr) -> Val {
        match e {
            ast::Expr::ForExpr(f) if self.iterate(f) => {}
            ast::Expr::ForExpr(f) => {
                let it = f.iterable().map_or(Val::Unknown, |i| self.arg_expr(&i));
                let elem = match it {
                    Val::Many { elem, enumerated } => {
                        if enumerated {
                            Val::Tuple(vec![Val::Unknown, *elem])
                        } else {
                            *elem
                        }
                    }
                    Val::Lost(c) => Val::Lost(c),
                    _ => Val::Unknown,
                };
                if let Some(p) = f.pat() {
                    // What a loop over something not followed binds may be a value too.
                    let tensor = elem.holds_tensor();
                    self.bind_pat(&p, elem);
                    if !tensor {
                        let why = self.unknown_elements(&p, f.iterable());
                        self.bind_value_pat(&p, Err(value::Unknown::new(why)));
                    }
                }
                if let Some(b) = f.loop_body() {
                    self.block(&b, None, None);
                    // A `continue` ends this loop's body, not the loops around it.
                    self.skipping = false;
                }
            }
            ast::Expr::WhileExpr(w) if self.counted_while(w) => {}
            ast::Expr::WhileExpr(w) => {
                if let Some(c) = w.condition() {
                    self.condition(&c);
                }
                if let Some(b) = w.loop_body() {
                    self.block(&b, None, None);
                    // A `continue` ends this loop's body, not the loops around it.
                    self.skipping = false;
                }
            }
            ast::Expr::LoopExpr(l) if self.counted_loop(l) => {}
            ast::Expr::LoopExpr(l) => {
                if let Some(b) = l.loop_body() {
                    self.block(&b, None, None);
                    // A `continue` ends this loop's body, not the loops around it.
                    self.skipping = false;
                }
            }
            _ => {}
        }
        self.last_ends.clear();
        Val::Unknown
    }

    /// Why the elements a loop binds to `pat` are unknown: its range's bound is (`0..n`, with
    /// `n` a parameter), or what it iterates is not a constant.
    fn unknown_elements(&self, pat: &ast::Pat, iterable: Option<ast::Expr>) -> String {
        let bound = |r: &ast::RangeExpr| {
            [r.start(), r.end()]
                .into_iter()
                .flatten()
                .find_map(|b| self.value_of(&b).0.err())
        };
        let range = iterable.as_ref().and_then(|i| match i {
            ast::Expr::RangeExpr(r) => Some(r.clone()),
            _ => i.syntax().descendants().find_map(ast::RangeExpr::cast),
        });
        let text = iterable
            .as_ref()
            .map(|i| snippet(i.syntax()))
            .unwrap_or_default();
        match range.as_ref().and_then(bound) {
            Some(u) => format!(
                "`{}` is bound by the loop over `{text}`, whose bound is not known: {}",
                snippet(pat.syntax()),
                u.why
            ),
            None => format!(
                "`{}` is bound by the loop over `{text}`, whose elements visa-lint does not know at compile time",
                snippet(pat.syntax())
            ),
        }
    }

    /// `for i in 0..N { .. }`, `for (i, addr) in BASES.iter().enumerate() { .. }`, `for addr in
    /// BASES`: a loop over what the compiler knows (a range with constant bounds, a constant
    /// array, through `iter`, `enumerate`, `rev`, `step_by`, `zip` ..) whose body uses what its
    /// pattern binds: the body is evaluated once per element with the pattern bound, as the
    /// compiler's trace unrolls it, each iteration's chains named by it. Past the function's
    /// budget only the first and last iterations are evaluated, and the loop is reported as
    /// not checked in between (VL-009). `false` when the loop is not of this form.
    pub(super) fn iterate(&mut self, f: &ast::ForExpr) -> bool {
        let (Some(pat), Some(iterable), Some(body)) = (f.pat(), f.iterable(), f.loop_body()) else {
            return false;
        };
        let names = pattern_names(&pat);
        let stepped = self.accumulators(&body);
        if !names
            .iter()
            .chain(stepped.iter().map(|(v, ..)| v))
            .any(|n| self.worth_unrolling(&body, n))
        {
            return false;
        }
        let at = span_of(pat.syntax().text_range());
        if let Some(elems) = self.constant_sequence(&iterable) {
            self.unroll(&pat, elems, LoopBody::Block(&body), at, Vec::new());
            return true;
        }
        // Tensors zipped with what the compiler knows (`[gamma, beta].into_iter().zip(DM)`).
        let Some(TensorSeq {
            items,
            finite: true,
        }) = self.tensor_sequence(&iterable)
        else {
            return false;
        };
        if !items.iter().any(|i| i.tensors.holds_tensor()) {
            return false;
        }
        let (values, tensors) = items
            .into_iter()
            .map(|i| (i.value, (i.tensors, i.names)))
            .unzip();
        self.unroll(&pat, values, LoopBody::Block(&body), at, tensors);
        true
    }

    /// What a loop over tensors and known values iterates, element by element: an array of
    /// tensors written by name (`[gamma, beta]`), a constant sequence, or an array whose
    /// elements are not known (`staged.iter_mut()`, endless: the other side of a `zip` ends
    /// it), through `iter`, `iter_mut`, `into_iter`, `enumerate` and `zip`. Each element is
    /// its value (a tensor's is unknown) and its tensors.
    fn tensor_sequence(&mut self, e: &ast::Expr) -> Option<TensorSeq> {
        if let Some(vs) = self.constant_sequence(e) {
            let items = vs
                .into_iter()
                .map(|v| Item::value(v, Val::Unknown))
                .collect();
            return Some(TensorSeq {
                items,
                finite: true,
            });
        }
        let a_tensor = || value::Value::Unknown(value::Unknown::new("it is a tensor"));
        match e {
            ast::Expr::ParenExpr(p) => self.tensor_sequence(&p.expr()?),
            ast::Expr::RefExpr(r) => self.tensor_sequence(&r.expr()?),
            ast::Expr::ArrayExpr(a) => {
                let names = a.exprs().all(|x| matches!(x, ast::Expr::PathExpr(_)));
                if !names {
                    return None;
                }
                let items: Vec<Item> = a
                    .exprs()
                    .map(|x| Item::named(a_tensor(), self.arg_expr(&x), var_name(&x)))
                    .collect();
                Some(TensorSeq {
                    items,
                    finite: true,
                })
            }
            // A local array of tensors: its elements.
            ast::Expr::PathExpr(p)
                if let Some(names) = self.tensor_arrays.get(&p.syntax().text().to_string()) =>
            {
                let items = names
                    .iter()
                    .map(|n| {
                        let t = self.vars.get(n).cloned().unwrap_or(Val::Unknown);
                        Item::named(a_tensor(), t, Some(n.clone()))
                    })
                    .collect();
                Some(TensorSeq {
                    items,
                    finite: true,
                })
            }
            // A local array whose elements are not known: as many as the other side of a zip.
            ast::Expr::PathExpr(_) => Some(TensorSeq {
                items: Vec::new(),
                finite: false,
            }),
            ast::Expr::MethodCallExpr(m) => {
                let inner = self.tensor_sequence(&m.receiver()?)?;
                let name = m.name_ref()?.text().to_string();
                match name.as_str() {
                    "iter" | "iter_mut" | "into_iter" | "copied" | "cloned" => Some(inner),
                    "enumerate" if inner.finite => Some(TensorSeq {
                        items: (inner.items.into_iter().enumerate())
                            .map(|(k, i)| {
                                let at = value::Value::Int(k as u64);
                                Item {
                                    value: value::Value::Tuple(vec![at, i.value]),
                                    tensors: Val::Tuple(vec![Val::Unknown, i.tensors]),
                                    names: i.names,
                                }
                            })
                            .collect(),
                        finite: true,
                    }),
                    "zip" => {
                        let other = self.tensor_sequence(&m.arg_list()?.args().next()?)?;
                        inner.zip(other)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The `let mut` variables a loop body steps by a constant as its last statement, and
    /// nowhere else (`addr += STRIDE`), with their first value and step: in iteration `k` the
    /// variable is `first + k * step`, as the compiler's trace computes it.
    fn accumulators(&self, body: &ast::BlockExpr) -> Vec<(String, u64, u64)> {
        if jumps(body) {
            return Vec::new();
        }
        let mut out: Vec<(String, u64, u64)> = self
            .counters
            .iter()
            .filter_map(|(var, &first)| {
                let step = last_step(body, var).and_then(|e| self.const_int(&e))?;
                (assignments(body, var) == 1).then(|| (var.clone(), first, step))
            })
            .collect();
        out.sort();
        out
    }

    /// Only a body whose engine calls (or helper calls) may see the index is worth unrolling.
    pub(super) fn worth_unrolling(&self, body: &ast::BlockExpr, var: &str) -> bool {
        uses_name(body.syntax(), var)
            && (has_engine_call(body.syntax()) || self.calls_a_helper(body.syntax()))
    }

    /// `while i < N { ..; i += s; }` with `i` a `let mut` counter that only the body's last
    /// statement steps, and `N` and `s` constants: the `for i in (first..N).step_by(s)` it is,
    /// unrolled the same way (`<=` and `!=` bounds too). `false` when the loop is not of
    /// this form.
    pub(super) fn counted_while(&mut self, w: &ast::WhileExpr) -> bool {
        let (Some(ast::Expr::BinExpr(cond)), Some(body)) = (w.condition(), w.loop_body()) else {
            return false;
        };
        let Some(var) = cond.lhs().as_ref().and_then(var_name) else {
            return false;
        };
        let Some(&first) = self.counters.get(&var) else {
            return false;
        };
        let Some(bound) = cond.rhs().as_ref().and_then(|e| self.const_int(e)) else {
            return false;
        };
        let end = match cond.op_kind() {
            Some(ast::BinaryOp::CmpOp(ast::CmpOp::Ord {
                ordering: ast::Ordering::Less,
                strict: true,
            }))
            | Some(ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: true })) => bound,
            Some(ast::BinaryOp::CmpOp(ast::CmpOp::Ord {
                ordering: ast::Ordering::Less,
                strict: false,
            })) => match bound.checked_add(1) {
                Some(e) => e,
                None => return false,
            },
            _ => return false,
        };
        let Some(step) = last_step(&body, &var).and_then(|e| self.const_int(&e)) else {
            return false;
        };
        // The counter moves only at the end of the body, by the step.
        let steps = assignments(&body, &var);
        let Ok(step) = usize::try_from(step) else {
            return false;
        };
        if jumps(&body) || steps != 1 || step == 0 || end.saturating_sub(first) > 1 << 16 {
            return false;
        }
        let range: Vec<value::Value> = (first..end).step_by(step).map(value::Value::Int).collect();
        if (cond.op_kind() == Some(ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: true })))
            && end.checked_sub(first).is_none_or(|n| n % step as u64 != 0)
        {
            // `i != N` that steps past N never ends.
            return false;
        }
        if !self.worth_unrolling(&body, &var) {
            return false;
        }
        let Some(pat) = crate::syntax::pat_of_text(&var) else {
            return false;
        };
        self.unroll(
            &pat,
            range,
            LoopBody::Block(&body),
            span_of(cond.syntax().text_range()),
            Vec::new(),
        );
        true
    }

    /// `loop { ..; i += s; if i == N { break; } }` (or `i >= N`) with `i` a `let mut` counter
    /// that only that step moves and `N` and `s` constants: the body runs with `i` = first,
    /// first + s, .. up to the value whose step reaches `N`, unrolled as
    /// [`Builder::counted_while`] unrolls its loop. `false` when the loop is not of this form.
    pub(super) fn counted_loop(&mut self, l: &ast::LoopExpr) -> bool {
        let Some(body) = l.loop_body() else {
            return false;
        };
        let Some(list) = body.stmt_list() else {
            return false;
        };
        let mut tail: Vec<Option<ast::Expr>> = list
            .statements()
            .map(|s| match s {
                ast::Stmt::ExprStmt(e) => e.expr(),
                _ => None,
            })
            .chain(list.tail_expr().map(Some))
            .collect();
        let (Some(Some(ast::Expr::IfExpr(exit))), Some(Some(ast::Expr::BinExpr(step)))) =
            (tail.pop(), tail.pop())
        else {
            return false;
        };
        let Some((var, bound, reached)) = self.loop_exit(&exit) else {
            return false;
        };
        let add = Some(ast::BinaryOp::Assignment {
            op: Some(ast::ArithOp::Add),
        });
        let stepped =
            step.op_kind() == add && step.lhs().as_ref().and_then(var_name) == Some(var.clone());
        let (Some(&first), Some(by)) = (
            self.counters.get(&var),
            step.rhs().as_ref().and_then(|e| self.const_int(e)),
        ) else {
            return false;
        };
        let breaks = body
            .syntax()
            .descendants()
            .filter(|n| n.kind() == ra_ap_syntax::SyntaxKind::BREAK_EXPR)
            .count();
        let continues = body
            .syntax()
            .descendants()
            .any(|n| n.kind() == ra_ap_syntax::SyntaxKind::CONTINUE_EXPR);
        if !stepped || by == 0 || breaks != 1 || continues || assignments(&body, &var) != 1 {
            return false;
        }
        // `i == N` ends only on a step that lands on N; `i >= N` on the first that reaches it.
        let end = match reached {
            true if bound > first && (bound - first).is_multiple_of(by) => bound,
            true => return false,
            false => bound.max(first + 1),
        };
        if end - first > 1 << 16 || !self.worth_unrolling(&body, &var) {
            return false;
        }
        let Ok(by) = usize::try_from(by) else {
            return false;
        };
        let range: Vec<value::Value> = (first..end).step_by(by).map(value::Value::Int).collect();
        let Some(pat) = crate::syntax::pat_of_text(&var) else {
            return false;
        };
        self.unroll(
            &pat,
            range,
            LoopBody::Block(&body),
            span_of(exit.syntax().text_range()),
            Vec::new(),
        );
        true
    }

    /// The exit of a counted `loop`: `if i == N { break; }` (`true`: the counter must land on
    /// N) or `if i >= N { break; }`, with its counter and constant bound.
    fn loop_exit(&self, exit: &ast::IfExpr) -> Option<(String, u64, bool)> {
        if exit.else_branch().is_some() {
            return None;
        }
        let then = exit.then_branch()?.stmt_list()?;
        let only_break = match (then.statements().count(), then.tail_expr()) {
            (0, Some(ast::Expr::BreakExpr(b))) => b.expr().is_none() && b.lifetime().is_none(),
            (1, None) => matches!(
                then.statements().next(),
                Some(ast::Stmt::ExprStmt(e)) if matches!(e.expr(), Some(ast::Expr::BreakExpr(b)) if b.expr().is_none() && b.lifetime().is_none())
            ),
            _ => false,
        };
        let ast::Expr::BinExpr(cond) = exit.condition()? else {
            return None;
        };
        let var = cond.lhs().as_ref().and_then(var_name)?;
        let bound = cond.rhs().as_ref().and_then(|e| self.const_int(e))?;
        let reached = match cond.op_kind()? {
            ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: false }) => true,
            ast::BinaryOp::CmpOp(ast::CmpOp::Ord {
                ordering: ast::Ordering::Greater,
                strict: false,
            }) => false,
            _ => return None,
        };
        only_break.then_some((var, bound, reached))
    }

    /// Evaluates `body` once per element of `elems` with `pat` bound to it, each iteration's
    /// chains named by what it binds (`i = 7`); past the function's budget only the first
    /// and last.
    pub(super) fn unroll(
        &mut self,
        pat: &ast::Pat,
        elems: Vec<value::Value>,
        body: LoopBody<'_>,
        at: Span,
        tensors: Vec<(Val, Vec<Option<String>>)>,
    ) -> Vec<Run> {
        let n = elems.len();
        let elems: Vec<value::Value> = if n as u64 <= u64::from(self.iterations_left) {
            elems
        } else {
            self.not_analysed(NotFollowed::Iterations {
                at,
                var: snippet(pat.syntax()),
                count: n as u64,
                budget: MAX_ITERATIONS,
            });
            let last = elems.last().cloned();
            elems.into_iter().take(1).chain(last).collect()
        };
        // The tensors of the iterations kept (the first and last, past the budget).
        let tensors: Vec<(Val, Vec<Option<String>>)> = match tensors.len() == n && elems.len() < n {
            true => tensors
                .first()
                .into_iter()
                .chain(tensors.last())
                .cloned()
                .collect(),
            false => tensors,
        };
        let names = pattern_names(pat);
        let stepped = match body {
            LoopBody::Block(b) => self.accumulators(b),
            LoopBody::Closure(_) => Vec::new(),
        };
        let mut results = Vec::new();
        let count = n;
        let outer = self.iteration;
        let outer_it = outer.and_then(|k| self.model.iterations.get(k as usize).cloned());
        let unrolled = elems.len();
        let mut previous = None;
        for (n, v) in elems.into_iter().enumerate() {
            self.iterations_left = self.iterations_left.saturating_sub(1);
            // What the iterations after this one need of the budget is kept for them: a loop
            // nested in this one is summarised before this loop loses an iteration.
            let later = u32::try_from(unrolled - n - 1).unwrap_or(u32::MAX);
            let kept = later.min(self.iterations_left);
            self.iterations_left -= kept;
            let saved = (self.consts.clone(), self.values.clone());
            self.bind_all(pat, Val::Unknown);
            self.bind_value_pat(pat, Ok(v));
            for name in &names {
                self.vars.remove(name);
            }
            // The iteration's index among all of them (the last, past the budget).
            let k = if n + 1 == unrolled { count - 1 } else { n };
            for (var, first, step) in &stepped {
                let at = (k as u64)
                    .checked_mul(*step)
                    .and_then(|d| first.checked_add(d));
                match at {
                    Some(a) => self.bind(var, value::Value::Int(a)),
                    None => {
                        let why = format!("`{var}` overflows in iteration {k} of its loop");
                        self.values
                            .insert(var.clone(), Err(value::Unknown::new(why)));
                    }
                }
            }
            let here = self.iteration_label(&names);
            let label = match &outer_it {
                Some(o) => format!("{}, {here}", o.label),
                None => here,
            };
            let first = n == 0 && outer_it.as_ref().is_none_or(|o| o.first);
            // Past the budget the last iteration does not follow the first.
            self.model.iterations.push(Iteration {
                label,
                first,
                previous: previous.filter(|_| k == n),
            });
            self.iteration = u32::try_from(self.model.iterations.len() - 1).ok();
            previous = self.iteration;
            if let Some((t, held)) = tensors.get(n) {
                self.bind_tensor_parts(pat, t.clone(), held);
            }
            match body {
                LoopBody::Block(b) => {
                    self.block(b, None, None);
                }
                LoopBody::Closure(e) => {
                    let val = self.top(e, None, None);
                    let placed = val.holds_tensor().then(|| self.placed_by(e)).flatten();
                    results.push(Run {
                        val,
                        iteration: self.iteration,
                        placed,
                    });
                }
            }
            self.skipping = false;
            self.iterations_left += kept;
            (self.consts, self.values) = saved;
        }
        self.iteration = outer;
        self.last_ends.clear();
        results
    }

    /// `TAPS.map(|cfg| weighted_tap(ctx, .., &cfg, ..))`: a closure that calls a helper or an
    /// engine, mapped over an array the compiler knows, run once per element with its
    /// parameter bound, as the trace runs it: an array of what it gives. `None` for any other
    /// call, or past the function's iteration budget.
    pub(super) fn map_over_constants(&mut self, m: &ast::MethodCallExpr) -> Option<Val> {
        if m.name_ref()?.text() != "map" {
            return None;
        }
        let (pat, body) = closure_of_one(&m.arg_list()?)?;
        if !self.calls_a_helper(body.syntax()) {
            return None;
        }
        let elems = self.constant_sequence(&m.receiver()?)?;
        if elems.is_empty() || elems.len() as u64 > u64::from(self.iterations_left) {
            return None;
        }
        let built = span_of(m.syntax().text_range());
        Some(self.closure_per_element(&pat, &body, elems, built))
    }

    /// Runs the closure `|pat| body` once per element of `elems`, as the trace runs it: an
    /// array of the tensor it gives (unknown when it gives none). The runs are kept by the
    /// expression `built` that builds the array, for a pattern that binds its elements.
    fn closure_per_element(
        &mut self,
        pat: &ast::Pat,
        body: &ast::Expr,
        elems: Vec<value::Value>,
        built: Span,
    ) -> Val {
        let at = span_of(pat.syntax().text_range());
        let runs = self.unroll(pat, elems, LoopBody::Closure(body), at, Vec::new());
        let first = runs
            .iter()
            .map(|r| &r.val)
            .find(|v| v.holds_tensor())
            .cloned();
        let body = body.clone();
        self.closure_runs.insert(built, ClosureRuns { body, runs });
        match first {
            Some(t) => Val::Many {
                elem: Box::new(t),
                enumerated: false,
            },
            None => Val::Unknown,
        }
    }

    /// `core::array::from_fn(|q| ..)` building an array whose length the compiler knows (the
    /// turbofish's `N`, the `let`'s `[T; N]`, or the function's return type when it is the
    /// tail): the closure run once per index with its parameter bound, as the trace runs it,
    /// each iteration named by it (`q = 1`). `None` for any other call, or past the function's
    /// iteration budget.
    pub(super) fn array_by_from_fn(&mut self, c: &ast::CallExpr) -> Option<Val> {
        let ast::Expr::PathExpr(p) = c.expr()? else {
            return None;
        };
        let path = p.path()?;
        let segment = path.segment()?;
        let in_array = path
            .qualifier()
            .is_none_or(|q| q.segment().is_some_and(|s| s.to_string() == "array"));
        if segment.name_ref()?.text() != "from_fn" || !in_array {
            return None;
        }
        let (pat, body) = closure_of_one(&c.arg_list()?)?;
        let n = self.array_len(c, &segment)?;
        if n == 0 || n > u64::from(self.iterations_left) {
            return None;
        }
        let indices = (0..n).map(value::Value::Int).collect();
        let built = span_of(c.syntax().text_range());
        Some(self.closure_per_element(&pat, &body, indices, built))
    }

    /// The length of the array `from_fn` call `c` builds: its turbofish's second argument,
    /// else the array type it is bound or returned as.
    fn array_len(&self, c: &ast::CallExpr, segment: &ast::PathSegment) -> Option<u64> {
        let written = segment
            .generic_arg_list()
            .and_then(|l| l.generic_args().nth(1))
            .and_then(|a| match a {
                ast::GenericArg::ConstArg(k) => k.expr(),
                _ => None,
            });
        if let Some(e) = written {
            return self.const_int(&e);
        }
        let parent = c.syntax().parent()?;
        let ty = if let Some(l) = ast::LetStmt::cast(parent.clone()) {
            l.ty()
        } else {
            // The tail of the function's body.
            let body = ast::StmtList::cast(parent)?.syntax().parent()?;
            let f = ast::Fn::cast(ast::BlockExpr::cast(body)?.syntax().parent()?)?;
            f.ret_type()?.ty()
        };
        let ast::Type::ArrayType(a) = ty? else {
            return None;
        };
        self.const_int(&a.const_arg()?.expr()?)
    }

    /// Binds the names of `pat` that `val` gives a tensor (`src` of `(slot, (src, dst))`),
    /// leaving the others to the values bound with them. `names` are the names of the
    /// tensors `val` holds, in order: a name bound to one is recorded as its alias (`tile` of
    /// `for tile in tiles.iter()` names `tiles[k]`).
    fn bind_tensor_parts(&mut self, pat: &ast::Pat, val: Val, names: &[Option<String>]) {
        match (pat, val) {
            (ast::Pat::IdentPat(i), v @ Val::Tensor { .. }) => {
                if let Some(n) = ast::HasName::name(i) {
                    let at = span_of(i.syntax().text_range());
                    self.set_var(n.text().to_string(), v, at);
                    // `tile` of `for tile in tiles.iter()` names the tensor `tiles[k]`.
                    if let Some(Some(of)) = names.first() {
                        self.model.aliases.push(crate::model::Alias {
                            name: n.text().to_string(),
                            of: of.clone(),
                            at,
                            iteration: self.iteration,
                        });
                    }
                }
            }
            (ast::Pat::RefPat(r), v) => {
                if let Some(p) = r.pat() {
                    self.bind_tensor_parts(&p, v, names);
                }
            }
            (ast::Pat::ParenPat(p), v) => {
                if let Some(p) = p.pat() {
                    self.bind_tensor_parts(&p, v, names);
                }
            }
            (ast::Pat::TuplePat(t), Val::Tuple(vs)) if t.fields().count() == vs.len() => {
                let mut rest = names;
                for (f, v) in t.fields().zip(vs) {
                    let (mine, after) = rest.split_at(tensor_leaves(&v).min(rest.len()));
                    rest = after;
                    self.bind_tensor_parts(&f, v, mine);
                }
            }
            _ => {}
        }
    }

    /// How a diagnostic names an iteration: each name the loop's pattern binds with its value
    /// (`i = 7`, `i = 2, addr = 0x7a000`).
    fn iteration_label(&self, names: &[String]) -> String {
        // `_i` of `for (_i, at) in ..` is not read: `at` names the iteration.
        let read: Vec<&String> = names.iter().filter(|n| !n.starts_with('_')).collect();
        let names: Vec<&String> = match read.is_empty() {
            true => names.iter().collect(),
            false => read,
        };
        let shown: Vec<String> = names
            .into_iter()
            .filter_map(|n| {
                let v = self.values.get(n)?.as_ref().ok()?;
                Some(match v {
                    value::Value::Int(k) if *k >= 0x1000 => format!("{n} = {k:#x}"),
                    v => format!("{n} = {}", v.brief()),
                })
            })
            .collect();
        shown.join(", ")
    }

    /// Whether `node` calls one of the crate's helper functions or methods (which may take the
    /// index).
    pub(super) fn calls_a_helper(&self, node: &ra_ap_syntax::SyntaxNode) -> bool {
        let function = node.descendants().filter_map(ast::CallExpr::cast).any(|c| {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                return false;
            };
            callee
                .path()
                .and_then(|p| callee_key(&p))
                .is_some_and(|k| self.env.fn_sig(&k).is_some())
        });
        // A method of the crate's `impl` blocks (`K_LOADER.load_k_tile(ctx, i)`).
        function
            || node
                .descendants()
                .filter_map(ast::MethodCallExpr::cast)
                .filter_map(|m| m.name_ref())
                .any(|n| self.env.method(n.text()).is_some())
    }

    /// The elements a loop's iterable gives when the compiler knows them: a range with
    /// constant bounds (`0..N`, `1..=4`, `(BASE..).step_by(S).take(N)`), a constant array
    /// (`BASES`, `&BASES`), through the adaptors that keep them known (`iter`, `into_iter`,
    /// `copied`, `cloned`, `enumerate`, `rev`, `step_by`, `skip`, `take`, `zip`, `cycle`,
    /// `chain`, `windows`, `chunks`, and `map` and `filter` with a closure); at most 2^16 of
    /// them.
    pub(super) fn constant_sequence(&self, e: &ast::Expr) -> Option<Vec<value::Value>> {
        self.sequence(e)?.items()
    }

    fn sequence(&self, e: &ast::Expr) -> Option<Seq> {
        use value::Value;
        // Through `if`s on constants too (`step_by(if WIDE { 2 } else { 1 })`).
        let int = |e: &ast::Expr| match self.value_of(e).0 {
            Ok(Value::Int(v)) => Some(v),
            _ => None,
        };
        match e {
            ast::Expr::ParenExpr(p) => self.sequence(&p.expr()?),
            ast::Expr::RefExpr(r) => self.sequence(&r.expr()?),
            ast::Expr::RangeExpr(r) => {
                let start = int(&r.start()?)?;
                let len = match (r.end(), r.op_kind()?) {
                    (None, _) => None,
                    (Some(end), op) => {
                        let end = int(&end)?;
                        let end = match op {
                            ast::RangeOp::Inclusive => end.checked_add(1)?,
                            ast::RangeOp::Exclusive => end,
                        };
                        Some(end.saturating_sub(start))
                    }
                };
                Some(Seq::Ints {
                    start,
                    step: 1,
                    len,
                })
            }
            // An adaptor of a sequence, else a value the evaluator knows (`plan.tiles()` of a
            // method that returns `0..TILES`).
            ast::Expr::MethodCallExpr(m) if let Some(seq) = self.adapted(m) => Some(seq),
            _ => match self.value_of(e).0 {
                Ok(Value::Array(vs)) => Some(Seq::Items(vs)),
                _ => None,
            },
        }
    }

    /// The sequence an iterator adaptor (`.step_by(2)`, `.zip(..)`, `.map(|i| ..)`) makes of
    /// its receiver's.
    fn adapted(&self, m: &ast::MethodCallExpr) -> Option<Seq> {
        use value::Value;
        let int = |e: &ast::Expr| match self.value_of(e).0 {
            Ok(Value::Int(v)) => Some(v),
            _ => None,
        };
        let inner = self.sequence(&m.receiver()?)?;
        let arg = m.arg_list().and_then(|l| l.args().next());
        let name = m.name_ref()?.text().to_string();
        match name.as_str() {
            "iter" | "into_iter" | "copied" | "cloned" | "by_ref" => Some(inner),
            "step_by" => inner.step_by(int(&arg?)?),
            "skip" => inner.skip(int(&arg?)?),
            "take" => inner.take(int(&arg?)?),
            "rev" => Some(Seq::Items(inner.items()?.into_iter().rev().collect())),
            "cycle" => Some(Seq::Cycle(inner.items()?)),
            "map" => Some(Seq::Items(self.mapped(&arg?, inner.items()?)?)),
            "filter" => {
                let items = inner.items()?;
                let keep = self.mapped(&arg?, items.clone())?;
                let kept = items.into_iter().zip(keep).map(|(v, k)| match k {
                    Value::Bool(true) => Some(Some(v)),
                    Value::Bool(false) => Some(None),
                    _ => None,
                });
                Some(Seq::Items(
                    kept.collect::<Option<Vec<_>>>()?
                        .into_iter()
                        .flatten()
                        .collect(),
                ))
            }
            "chain" => {
                let mut items = inner.items()?;
                items.extend(self.sequence(&arg?)?.items()?);
                Some(Seq::Items(items))
            }
            "windows" | "chunks" => {
                let k = usize::try_from(int(&arg?)?).ok().filter(|k| *k > 0)?;
                let items = inner.items()?;
                let parts: Vec<Value> = match name.as_str() {
                    "windows" => items.windows(k).map(|w| Value::Array(w.to_vec())).collect(),
                    _ => items.chunks(k).map(|c| Value::Array(c.to_vec())).collect(),
                };
                Some(Seq::Items(parts))
            }
            "enumerate" => Some(Seq::Items(
                inner
                    .items()?
                    .into_iter()
                    .enumerate()
                    .map(|(k, v)| Value::Tuple(vec![Value::Int(k as u64), v]))
                    .collect(),
            )),
            "zip" => {
                let other = self.sequence(&arg?)?;
                // One side may be endless: the other ends the zip.
                let (a, b) = match (inner.len(), other.len()) {
                    (Some(n), _) => (inner.items()?, other.take(n)?.items()?),
                    (None, Some(n)) => (inner.take(n)?.items()?, other.items()?),
                    (None, None) => return None,
                };
                Some(Seq::Items(
                    a.into_iter()
                        .zip(b)
                        .map(|(a, b)| Value::Tuple(vec![a, b]))
                        .collect(),
                ))
            }
            _ => None,
        }
    }

    /// The integer `e` is where the compiler knows it (a loop's bound or step).
    pub(super) fn const_int(&self, e: &ast::Expr) -> Option<u64> {
        consts::eval_sized(e, &self.consts, &self.env.value_fns, &self.scope)
    }

    /// `items` through the closure `f` of `.map(f)` (`|i| (i, FIRST_FREE + i)`) or `.filter(f)`,
    /// run on each as the compiler runs it; `None` when `f` is not a closure of one parameter
    /// or some result is not known.
    fn mapped(&self, f: &ast::Expr, items: Vec<value::Value>) -> Option<Vec<value::Value>> {
        let ast::Expr::ClosureExpr(c) = f else {
            return None;
        };
        let mut params = c.param_list()?.params();
        let pat = params.next()?.pat()?;
        if params.next().is_some() {
            return None;
        }
        let body = c.body()?;
        let mut ints = self.consts.clone();
        items
            .into_iter()
            .map(|item| {
                let mut bound = HashMap::new();
                bind_names(&pat, item, &mut bound)?;
                for (n, v) in &bound {
                    match v {
                        value::Value::Int(i) => ints.insert(n.clone(), *i),
                        _ => ints.remove(n),
                    };
                }
                let lookup = |key: &str| {
                    bound
                        .get(key)
                        .cloned()
                        .map(Ok)
                        .or_else(|| self.values.get(key).cloned())
                        .or_else(|| self.env.value_or_why(key))
                };
                let names = value::Names {
                    value: &lookup,
                    ints: &ints,
                    fns: self.value_fns(),
                    mapping: &self.scope,
                };
                value::eval(&body, &names).0.ok()
            })
            .collect()
    }
}

/// Binds the names of a closure parameter's pattern (`i`, `(src, dst)`, `&(a, b)`, `_`) to
/// the parts of `v`; `None` when the pattern does not fit it.
fn bind_names(
    pat: &ast::Pat,
    v: value::Value,
    out: &mut HashMap<String, value::Value>,
) -> Option<()> {
    match (pat, v) {
        (ast::Pat::IdentPat(i), v) => {
            out.insert(ast::HasName::name(i)?.text().to_string(), v);
        }
        (ast::Pat::WildcardPat(_), _) => {}
        (ast::Pat::RefPat(r), v) => bind_names(&r.pat()?, v, out)?,
        (ast::Pat::ParenPat(p), v) => bind_names(&p.pat()?, v, out)?,
        (ast::Pat::TuplePat(t), value::Value::Tuple(vs)) if t.fields().count() == vs.len() => {
            for (f, v) in t.fields().zip(vs) {
                bind_names(&f, v, out)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// What a loop iterates, as the compiler knows it: integers from `start` by `step` (`len` of
/// them, or endless: `BASE..`), the elements of an array, or those repeated without end
/// (`.cycle()`).
enum Seq {
    Ints {
        start: u64,
        step: u64,
        len: Option<u64>,
    },
    Items(Vec<value::Value>),
    Cycle(Vec<value::Value>),
}

/// The most elements a loop is iterated over.
const MAX_ELEMENTS: u64 = 1 << 16;

impl Seq {
    fn len(&self) -> Option<u64> {
        match self {
            Seq::Ints { len, .. } => *len,
            Seq::Items(vs) => Some(vs.len() as u64),
            Seq::Cycle(vs) if vs.is_empty() => Some(0),
            Seq::Cycle(_) => None,
        }
    }

    fn step_by(self, by: u64) -> Option<Seq> {
        if by == 0 {
            return None;
        }
        Some(match self {
            Seq::Ints { start, step, len } => Seq::Ints {
                start,
                step: step.checked_mul(by)?,
                len: len.map(|n| n.div_ceil(by)),
            },
            Seq::Items(vs) => {
                Seq::Items(vs.into_iter().step_by(usize::try_from(by).ok()?).collect())
            }
            Seq::Cycle(_) => return None,
        })
    }

    fn skip(self, n: u64) -> Option<Seq> {
        Some(match self {
            Seq::Ints { start, step, len } => Seq::Ints {
                start: start.checked_add(step.checked_mul(n)?)?,
                step,
                len: len.map(|l| l.saturating_sub(n)),
            },
            Seq::Items(vs) => Seq::Items(vs.into_iter().skip(usize::try_from(n).ok()?).collect()),
            Seq::Cycle(mut vs) => {
                let len = vs.len();
                if len > 0 {
                    vs.rotate_left(usize::try_from(n % len as u64).ok()?);
                }
                Seq::Cycle(vs)
            }
        })
    }

    fn take(self, n: u64) -> Option<Seq> {
        Some(match self {
            Seq::Ints { start, step, len } => Seq::Ints {
                start,
                step,
                len: Some(len.map_or(n, |l| l.min(n))),
            },
            Seq::Items(vs) => Seq::Items(vs.into_iter().take(usize::try_from(n).ok()?).collect()),
            Seq::Cycle(vs) => {
                let n = usize::try_from(n.min(MAX_ELEMENTS + 1)).ok()?;
                Seq::Items(vs.into_iter().cycle().take(n).collect())
            }
        })
    }

    /// Its elements, when it ends within [`MAX_ELEMENTS`] and none overflows.
    fn items(self) -> Option<Vec<value::Value>> {
        match self {
            Seq::Ints { start, step, len } => {
                let len = len.filter(|n| *n <= MAX_ELEMENTS)?;
                (0..len)
                    .map(|k| Some(value::Value::Int(start.checked_add(step.checked_mul(k)?)?)))
                    .collect()
            }
            Seq::Items(vs) => (vs.len() as u64 <= MAX_ELEMENTS).then_some(vs),
            Seq::Cycle(_) => None,
        }
    }
}

/// Whether `body` holds a `break` or `continue`, which would end or repeat an iteration the
/// unrolling runs whole.
fn jumps(body: &ast::BlockExpr) -> bool {
    body.syntax().descendants().any(|n| {
        matches!(
            n.kind(),
            ra_ap_syntax::SyntaxKind::BREAK_EXPR | ra_ap_syntax::SyntaxKind::CONTINUE_EXPR
        )
    })
}

/// How many times `body` assigns to `var`.
fn assignments(body: &ast::BlockExpr, var: &str) -> usize {
    body.syntax()
        .descendants()
        .filter(|n| assigns(n, var))
        .count()
}

/// The names a pattern binds, in order (`i`, `(i, addr)`, `&(k, v)`).
pub(super) fn pattern_names(pat: &ast::Pat) -> Vec<String> {
    std::iter::once(pat.syntax().clone())
        .chain(pat.syntax().descendants().skip(1))
        .filter_map(ast::IdentPat::cast)
        .filter_map(|i| ast::HasName::name(&i).map(|n| n.text().to_string()))
        .collect()
}

/// A loop's elements over tensors and known values ([`Builder::tensor_sequence`]): each one's
/// value and its tensors; not `finite` when only the other side of a `zip` says how many.
struct TensorSeq {
    items: Vec<Item>,
    finite: bool,
}

/// One element of a [`TensorSeq`]: its value, its tensors, and the names of the tensors it
/// holds, in the order [`tensor_leaves`] counts them (`tiles[2]` of `tiles.iter()`, `gamma`
/// of `[gamma, beta]`; `None` for one without a name).
struct Item {
    value: value::Value,
    tensors: Val,
    names: Vec<Option<String>>,
}

impl Item {
    fn value(value: value::Value, tensors: Val) -> Item {
        let names = vec![None; tensor_leaves(&tensors)];
        Item {
            value,
            tensors,
            names,
        }
    }

    fn named(value: value::Value, tensors: Val, name: Option<String>) -> Item {
        match tensor_leaves(&tensors) {
            1 => Item {
                value,
                tensors,
                names: vec![name],
            },
            _ => Item::value(value, tensors),
        }
    }
}

/// How many tensors a value holds, in a tuple's parts.
fn tensor_leaves(v: &Val) -> usize {
    match v {
        Val::Tensor { .. } => 1,
        Val::Tuple(vs) => vs.iter().map(tensor_leaves).sum(),
        _ => 0,
    }
}

impl TensorSeq {
    /// `a.zip(b)`: pairs, as many as the shorter side (an endless side's elements unknown).
    fn zip(self, other: TensorSeq) -> Option<TensorSeq> {
        let len = match (self.finite, other.finite) {
            (true, true) => self.items.len().min(other.items.len()),
            (true, false) => self.items.len(),
            (false, true) => other.items.len(),
            (false, false) => return None,
        };
        let unknown = || {
            let why = value::Unknown::new("its elements are not known");
            Item::value(value::Value::Unknown(why), Val::Unknown)
        };
        let side = |s: TensorSeq| {
            let mut items = s.items;
            items.resize_with(len, unknown);
            items
        };
        let items = side(self)
            .into_iter()
            .zip(side(other))
            .map(|(a, b)| Item {
                value: value::Value::Tuple(vec![a.value, b.value]),
                tensors: Val::Tuple(vec![a.tensors, b.tensors]),
                names: a.names.into_iter().chain(b.names).collect(),
            })
            .collect();
        Some(TensorSeq {
            items,
            finite: true,
        })
    }
}

/// What an unrolled loop runs per element: a loop's body, or a mapped closure's (whose values
/// are kept).
#[derive(Clone, Copy)]
pub(super) enum LoopBody<'a> {
    Block(&'a ast::BlockExpr),
    Closure(&'a ast::Expr),
}

/// The pattern and body of a closure of one parameter given as the first argument
/// (`.map(|cfg| ..)`, `from_fn(|q| ..)`).
fn closure_of_one(args: &ast::ArgList) -> Option<(ast::Pat, ast::Expr)> {
    let ast::Expr::ClosureExpr(c) = args.args().next()? else {
        return None;
    };
    let params: Vec<ast::Param> = c.param_list()?.params().collect();
    let [param] = params.as_slice() else {
        return None;
    };
    Some((param.pat()?, c.body()?))
}

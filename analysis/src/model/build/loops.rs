//! Loops: a loop over compile-time bounds is unrolled (its index bound in each iteration) within
//! the function's budget, else summarised by its first and last iterations.

use super::reading::{
    assigns, callee_key, has_engine_call, last_step, span_of, uses_name, var_name,
};
use super::state::{Builder, MAX_ITERATIONS, Val};
use crate::diagnostic::Span;
use crate::model::Iteration;
use crate::model::consts;
use crate::model::problem::NotFollowed;
use crate::model::value;
use ra_ap_syntax::ast::{HasArgList, HasLoopBody, RangeItem};
use ra_ap_syntax::{AstNode, ast};

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
                    self.bind_pat(&p, elem);
                }
                if let Some(b) = f.loop_body() {
                    self.block(&b, None, None);
                }
            }
            ast::Expr::WhileExpr(w) if self.counted_while(w) => {}
            ast::Expr::WhileExpr(w) => {
                if let Some(c) = w.condition() {
                    self.condition(&c);
                }
                if let Some(b) = w.loop_body() {
                    self.block(&b, None, None);
                }
            }
            ast::Expr::LoopExpr(l) => {
                if let Some(b) = l.loop_body() {
                    self.block(&b, None, None);
                }
            }
            _ => {}
        }
        self.last_ends.clear();
        Val::Unknown
    }

    /// `for i in a..b { .. }` (also `a..=b` and `(a..b).step_by(s)`) with constant bounds and an
    /// index the body uses: the body is evaluated once per iteration with `i` bound, as the
    /// compiler's trace unrolls it, each iteration's chains named by it. Past the function's
    /// budget only the first and last iterations are evaluated, and the loop is reported as
    /// not checked in between (VL-009). `false` when the loop is not of this form.
    pub(super) fn iterate(&mut self, f: &ast::ForExpr) -> bool {
        let (Some(ast::Pat::IdentPat(p)), Some(iterable), Some(body)) =
            (f.pat(), f.iterable(), f.loop_body())
        else {
            return false;
        };
        let Some(var) = ast::HasName::name(&p).map(|n| n.text().to_string()) else {
            return false;
        };
        let Some(range) = self.constant_range(&iterable) else {
            return false;
        };
        if !self.worth_unrolling(&body, &var) {
            return false;
        }
        self.unroll(&var, range, &body, span_of(p.syntax().text_range()));
        true
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
        let int =
            |e: &ast::Expr| consts::eval_sized(e, &self.consts, &self.env.value_fns, &self.scope);
        let Some(bound) = cond.rhs().as_ref().and_then(int) else {
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
        let Some(step) = last_step(&body, &var).and_then(|e| int(&e)) else {
            return false;
        };
        // The counter moves only at the end of the body, by the step.
        let steps = body
            .syntax()
            .descendants()
            .filter(|n| assigns(n, &var))
            .count();
        let Ok(step) = usize::try_from(step) else {
            return false;
        };
        // A `break` or `continue` would end or repeat an iteration the unrolling runs whole.
        let jumps = body.syntax().descendants().any(|n| {
            matches!(
                n.kind(),
                ra_ap_syntax::SyntaxKind::BREAK_EXPR | ra_ap_syntax::SyntaxKind::CONTINUE_EXPR
            )
        });
        if jumps || steps != 1 || step == 0 || end.saturating_sub(first) > 1 << 16 {
            return false;
        }
        let range: Vec<u64> = (first..end).step_by(step).collect();
        if (cond.op_kind() == Some(ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: true })))
            && range.last().and_then(|l| l.checked_add(step as u64)) != Some(end)
        {
            // `i != N` that steps past N never ends.
            return false;
        }
        if !self.worth_unrolling(&body, &var) {
            return false;
        }
        self.unroll(&var, range, &body, span_of(cond.syntax().text_range()));
        true
    }

    /// Evaluates `body` once per index in `range` with `var` bound to it, each iteration's
    /// chains named by it; past the function's budget only the first and last.
    pub(super) fn unroll(&mut self, var: &str, range: Vec<u64>, body: &ast::BlockExpr, at: Span) {
        let var = var.to_string();
        let n = range.len();
        let indices: Vec<u64> = if n as u64 <= u64::from(self.iterations_left) {
            range.clone()
        } else {
            let first_last = [range.first().copied(), range.last().copied()];
            let kept: Vec<u64> = first_last.into_iter().flatten().collect();
            self.not_analysed(NotFollowed::Iterations {
                at,
                var: var.clone(),
                count: n as u64,
                budget: MAX_ITERATIONS,
            });
            kept
        };
        let outer = self.iteration;
        let outer_it = outer.and_then(|k| self.model.iterations.get(k as usize).cloned());
        for (n, k) in indices.into_iter().enumerate() {
            self.iterations_left = self.iterations_left.saturating_sub(1);
            let label = match &outer_it {
                Some(o) => format!("{}, {var} = {k}", o.label),
                None => format!("{var} = {k}"),
            };
            let first = n == 0 && outer_it.as_ref().is_none_or(|o| o.first);
            self.model.iterations.push(Iteration { label, first });
            self.iteration = u32::try_from(self.model.iterations.len() - 1).ok();
            let saved = (self.consts.clone(), self.values.clone());
            self.bind(&var, value::Value::Int(k));
            self.vars.remove(&var);
            self.block(body, None, None);
            (self.consts, self.values) = saved;
        }
        self.iteration = outer;
        self.last_ends.clear();
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

    /// The indices of a constant range (`0..N`, `1..=4`, `(0..N).step_by(2)`), when there are
    /// at most 2^16 of them.
    pub(super) fn constant_range(&self, e: &ast::Expr) -> Option<Vec<u64>> {
        let int =
            |e: &ast::Expr| consts::eval_sized(e, &self.consts, &self.env.value_fns, &self.scope);
        match e {
            ast::Expr::ParenExpr(p) => self.constant_range(&p.expr()?),
            ast::Expr::RangeExpr(r) => {
                let start = int(&r.start()?)?;
                let end = int(&r.end()?)?;
                let end = match r.op_kind()? {
                    ast::RangeOp::Inclusive => end.checked_add(1)?,
                    ast::RangeOp::Exclusive => end,
                };
                if end.saturating_sub(start) > 1 << 16 {
                    return None;
                }
                Some((start..end).collect())
            }
            ast::Expr::MethodCallExpr(m) if m.name_ref().is_some_and(|n| n.text() == "step_by") => {
                let inner = self.constant_range(&m.receiver()?)?;
                let step = int(&m.arg_list()?.args().next()?)?;
                let step = usize::try_from(step).ok().filter(|s| *s > 0)?;
                Some(inner.into_iter().step_by(step).collect())
            }
            _ => None,
        }
    }
}

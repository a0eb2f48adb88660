//! Blocks with statements, as the compiler runs a `const fn` at compile time: `let`
//! bindings (mutable ones too), assignments (`x += 1`, `chunk <<= 1`), `if` statements,
//! `while` loops and `for` loops over constant ranges, `return`, and macro statements
//! (`assert!`, which give no value), within a budget of
//! statements run ([`MAX_STEPS`], shared by every block one evaluation runs, recursive calls
//! included); past it the value is unknown, with that reason.

use super::{Eval, Names, Unknown, Value, eval_with, missing, not_evaluated};
use crate::model::consts;
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, ArithOp, BinaryOp, HasLoopBody, HasName, RangeItem};
use std::collections::HashMap;

/// How many statements (and loop tests) one block runs at most.
pub const MAX_STEPS: u32 = 20_000;

thread_local! {
    /// The steps the current evaluation ([`super::eval`]) has run, in all its blocks.
    static STEPS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// A new evaluation starts with the whole budget.
pub(super) fn reset_budget() {
    STEPS.with(|s| s.set(0));
}

/// Counts one step; `Err` once the evaluation has run [`MAX_STEPS`].
fn step() -> Result<(), Unknown> {
    let n = STEPS.with(|s| {
        let n = s.get().saturating_add(1);
        s.set(n);
        n
    });
    if n > MAX_STEPS {
        return Err(Unknown::new(format!(
            "its loops run more than {MAX_STEPS} steps, past what visa-lint evaluates"
        )));
    }
    Ok(())
}

/// What running statements ends with: on to the next, or a `return`.
enum Flow {
    Next,
    Return(Value),
}

/// The block's local variables.
struct Frame {
    locals: HashMap<String, Value>,
    /// Whether a function in scope takes `&mut self` (see [`changed_by_calls`]).
    mutating: bool,
}

impl Frame {
    /// Whether `name` is a local the body may assign: one of its `let`s, or a parameter the
    /// call passed by value (`mut self` of a builder's `const fn bias(mut self, ..) -> Self`),
    /// which the body then owns: its value is copied into the frame.
    fn adopt(&mut self, name: &str, names: &Names<'_>) -> bool {
        if self.locals.contains_key(name) {
            return true;
        }
        match (names.value)(name) {
            Some(Ok(v)) if is_parameter_name(name) => {
                self.locals.insert(name.to_string(), v);
                true
            }
            _ => false,
        }
    }
}

/// `self` or a lowercase name: a parameter, never a `const` or `static` item.
fn is_parameter_name(name: &str) -> bool {
    name == "self" || name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
}

/// `{ stmts; tail }`, run as the compiler does.
pub(super) fn run_block(list: &ast::StmtList, names: &Names<'_>, depth: u32) -> Eval {
    let mut frame = Frame {
        locals: HashMap::new(),
        mutating: super::any_mut_self(names.fns),
    };
    match stmts(list, names, &mut frame, depth)? {
        Flow::Return(v) => Ok(v),
        Flow::Next => {
            let tail = list.tail_expr().ok_or_else(missing)?;
            let changed = changed_by_calls(tail.syntax(), names, &mut frame, depth);
            let v = value(&tail, names, &mut frame, depth);
            frame.locals.extend(changed);
            v
        }
    }
}

/// `e` with the frame's locals in scope.
fn value(e: &ast::Expr, names: &Names<'_>, frame: &mut Frame, depth: u32) -> Eval {
    step()?;
    if let ast::Expr::BlockExpr(b) = e
        && let Some(list) = b.stmt_list()
        && list.statements().next().is_some()
    {
        return match stmts(&list, names, frame, depth + 1)? {
            Flow::Return(v) => Ok(v),
            Flow::Next => value(&list.tail_expr().ok_or_else(missing)?, names, frame, depth),
        };
    }
    let mut named = false;
    framed(names, frame, |locals, ints| {
        eval_with(e, names, (locals, ints), &mut named, depth + 1)
    })
}

/// Runs `f` with the frame's locals, and the integers in scope with the frame's.
fn framed<R>(
    names: &Names<'_>,
    frame: &Frame,
    f: impl FnOnce(&HashMap<String, Value>, &HashMap<String, u64>) -> R,
) -> R {
    let mut ints = names.ints.clone();
    for (k, v) in &frame.locals {
        match v {
            Value::Int(i) => ints.insert(k.clone(), *i),
            _ => ints.remove(k),
        };
    }
    f(&frame.locals, &ints)
}

/// The variables of the frame that the calls of `&mut self` methods in `node` (a statement,
/// a block's tail) change (`a.place(4)` of a `let mut a = Arena::new(BASE)`), each with the
/// value it holds after the call, computed before `node` runs: its other expressions read
/// the value before. A variable `node` names again beside such a call is unknown after it,
/// as is one two calls change: visa-lint does not order them.
fn changed_by_calls(
    node: &ra_ap_syntax::SyntaxNode,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Vec<(String, Value)> {
    if !frame.mutating {
        return Vec::new();
    }
    let calls: Vec<(String, ast::MethodCallExpr)> = node
        .descendants()
        .filter_map(ast::MethodCallExpr::cast)
        .filter_map(|m| Some((receiver_name(&m)?, m)))
        .filter(|(n, m)| {
            let receiver = match frame.locals.get(n) {
                Some(v) => Ok(v.clone()),
                None => (names.value)(n).unwrap_or_else(|| Err(missing())),
            };
            super::mutates(&receiver, m, names.fns) && frame.adopt(n, names)
        })
        .collect();
    let mut changed = Vec::new();
    for (name, m) in &calls {
        let method = m
            .name_ref()
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        // A call in a block or a closure inside `node` runs in a branch that may not be taken,
        // or in a frame of its own: where it leaves the variable is not followed.
        let nested = m
            .syntax()
            .ancestors()
            .skip(1)
            .take_while(|a| a != node)
            .any(|a| ast::BlockExpr::can_cast(a.kind()) || ast::ClosureExpr::can_cast(a.kind()));
        if nested {
            changed.push((
                name.clone(),
                Value::Unknown(Unknown::new(format!(
                    "`{name}` is changed by `.{method}(..)` inside a block or a branch, which \
                     visa-lint does not follow"
                ))),
            ));
            continue;
        }
        let mentions = node
            .descendants_with_tokens()
            .filter_map(|t| t.into_token())
            .filter(|t| t.text() == name.as_str())
            .count();
        let v = if mentions > 1 {
            Value::Unknown(Unknown::new(format!(
                "`{name}` is changed by `.{method}(..)` and named again in the same statement, \
                 which visa-lint does not order"
            )))
        } else {
            let after = framed(names, frame, |locals, ints| {
                super::with_locals(names, (locals, ints), |inner| {
                    super::self_after_at(m, inner, depth + 1)
                })
            });
            match after {
                Some(v) => super::part(v),
                None => continue,
            }
        };
        changed.push((name.clone(), v));
    }
    changed
}

/// The variable a method is called on (`arena` of `arena.place(4)`, `self` of
/// `self.bump(n)`).
fn receiver_name(m: &ast::MethodCallExpr) -> Option<String> {
    let ast::Expr::PathExpr(p) = m.receiver()? else {
        return None;
    };
    let path = p.path()?;
    if path.qualifier().is_some() {
        return None;
    }
    Some(path.segment()?.syntax().text().to_string())
}

fn stmts(
    list: &ast::StmtList,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<Flow, Unknown> {
    for s in list.statements() {
        let changed = changed_by_calls(s.syntax(), names, frame, depth);
        let flow = match s {
            ast::Stmt::LetStmt(l) => {
                let pat = l.pat().ok_or_else(missing)?;
                let init = l.initializer().ok_or_else(missing)?;
                // A local the evaluator cannot know is unknown where it is read, not here:
                // a struct built from known and unknown locals keeps its known fields.
                let v = super::part(value(&init, names, frame, depth));
                bind_locals(&pat, v, frame)?;
                Flow::Next
            }
            ast::Stmt::ExprStmt(e) => {
                statement(&e.expr().ok_or_else(missing)?, names, frame, depth)?
            }
            ast::Stmt::Item(_) => Flow::Next,
        };
        frame.locals.extend(changed);
        if let Flow::Return(_) = flow {
            return Ok(flow);
        }
    }
    Ok(Flow::Next)
}

/// Binds the names of a `let` pattern (`at`, `(at, rest)`, `_`) to the parts of `v`.
fn bind_locals(pat: &ast::Pat, v: Value, frame: &mut Frame) -> Result<(), Unknown> {
    match (pat, v) {
        (ast::Pat::IdentPat(p), v) => {
            let name = p.name().ok_or_else(missing)?.text().to_string();
            frame.locals.insert(name, v);
        }
        (ast::Pat::WildcardPat(_), _) => {}
        (ast::Pat::ParenPat(p), v) => bind_locals(&p.pat().ok_or_else(missing)?, v, frame)?,
        (ast::Pat::TuplePat(t), Value::Tuple(vs)) if t.fields().count() == vs.len() => {
            for (f, v) in t.fields().zip(vs) {
                bind_locals(&f, v, frame)?;
            }
        }
        // Each name of a pattern over a value not known is not known, for its reason.
        (ast::Pat::TuplePat(t), Value::Unknown(u)) => {
            for f in t.fields() {
                bind_locals(&f, Value::Unknown(u.clone()), frame)?;
            }
        }
        _ => {
            return Err(Unknown::new(
                "a `let` that binds a pattern other than names and tuples is not evaluated",
            ));
        }
    }
    Ok(())
}

/// A block run for its effects (a branch, a loop's body): its statements, then its tail
/// expression as one more (`{ if hit { return slot; } }` ends with the inner `if`).
fn branch(
    list: &ast::StmtList,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<Flow, Unknown> {
    if let Flow::Return(v) = stmts(list, names, frame, depth)? {
        return Ok(Flow::Return(v));
    }
    match list.tail_expr() {
        Some(tail) => statement(&tail, names, frame, depth),
        None => Ok(Flow::Next),
    }
}

/// One expression statement: an assignment, a loop, an `if`, a `return`, or a block.
fn statement(
    e: &ast::Expr,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<Flow, Unknown> {
    match e {
        ast::Expr::BinExpr(b) if matches!(b.op_kind(), Some(BinaryOp::Assignment { .. })) => {
            assign(b, names, frame, depth)?;
            Ok(Flow::Next)
        }
        ast::Expr::ReturnExpr(r) => {
            let v = value(&r.expr().ok_or_else(missing)?, names, frame, depth)?;
            Ok(Flow::Return(v))
        }
        ast::Expr::WhileExpr(w) => {
            let body = w
                .loop_body()
                .and_then(|b| b.stmt_list())
                .ok_or_else(missing)?;
            loop {
                let cond = w.condition().ok_or_else(missing)?;
                match value(&cond, names, frame, depth)? {
                    Value::Bool(true) => {}
                    Value::Bool(false) => return Ok(Flow::Next),
                    _ => return Err(not_evaluated(&cond)),
                }
                if let Flow::Return(v) = branch(&body, names, frame, depth + 1)? {
                    return Ok(Flow::Return(v));
                }
            }
        }
        ast::Expr::ForExpr(f) => for_loop(f, names, frame, depth),
        // `assert!(..)`, `debug_assert!(..)`, `println!(..)`: no value flows out of them (a
        // failing assertion stops the program, so no value reaches a kernel either).
        ast::Expr::MacroExpr(_) => Ok(Flow::Next),
        ast::Expr::IfExpr(i) => {
            let cond = i.condition().ok_or_else(missing)?;
            // `if let Some(slot) = TABLE[i].slot { .. }`: the pattern's names are locals of
            // the branch taken.
            if let ast::Expr::LetExpr(l) = &cond {
                let scrutinee = l.expr().ok_or_else(missing)?;
                let pat = l.pat().ok_or_else(missing)?;
                let v = value(&scrutinee, names, frame, depth)?;
                let chosen = match super::destructure(&pat, &v, names) {
                    Some(Some(bound)) => {
                        frame.locals.extend(bound);
                        i.then_branch()
                    }
                    Some(None) => match i.else_branch() {
                        Some(ast::ElseBranch::Block(b)) => Some(b),
                        Some(ast::ElseBranch::IfExpr(inner)) => {
                            return statement(&ast::Expr::IfExpr(inner), names, frame, depth + 1);
                        }
                        None => None,
                    },
                    None => return Err(not_evaluated(&cond)),
                };
                return match chosen.and_then(|b| b.stmt_list()) {
                    Some(list) => branch(&list, names, frame, depth + 1),
                    None => Ok(Flow::Next),
                };
            }
            let chosen = match value(&cond, names, frame, depth)? {
                Value::Bool(true) => i.then_branch(),
                Value::Bool(false) => match i.else_branch() {
                    Some(ast::ElseBranch::Block(b)) => Some(b),
                    Some(ast::ElseBranch::IfExpr(inner)) => {
                        return statement(&ast::Expr::IfExpr(inner), names, frame, depth + 1);
                    }
                    None => None,
                },
                _ => return Err(not_evaluated(&cond)),
            };
            match chosen.and_then(|b| b.stmt_list()) {
                Some(list) => branch(&list, names, frame, depth + 1),
                None => Ok(Flow::Next),
            }
        }
        ast::Expr::BlockExpr(b) => {
            branch(&b.stmt_list().ok_or_else(missing)?, names, frame, depth + 1)
        }
        other => {
            value(other, names, frame, depth)?;
            Ok(Flow::Next)
        }
    }
}

/// `x = e`, `x += e`, `x <<= e`, ... of a local integer.
fn assign(
    b: &ast::BinExpr,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<(), Unknown> {
    let Some(BinaryOp::Assignment { op }) = b.op_kind() else {
        return Err(missing());
    };
    if let Some(place) = b.lhs().filter(|l| !matches!(l, ast::Expr::PathExpr(_))) {
        return assign_into(b, &place, op, names, frame, depth);
    }
    let target = match b.lhs() {
        Some(ast::Expr::PathExpr(p)) => p.path().and_then(|p| consts::path_key(&p)),
        _ => None,
    }
    .filter(|t| frame.adopt(t, names))
    .ok_or_else(|| Unknown::new("it assigns to something other than a local variable"))?;
    let rhs = value(&b.rhs().ok_or_else(missing)?, names, frame, depth)?;
    let new = match (op, frame.locals.get(&target), &rhs) {
        (None, _, _) => rhs,
        (Some(op), Some(Value::Int(old)), Value::Int(r)) => consts::arith(op, *old, *r)
            .map(Value::Int)
            .ok_or_else(|| Unknown::new(format!("`{}` overflows", b.syntax())))?,
        _ => return Err(not_evaluated(&ast::Expr::BinExpr(b.clone()))),
    };
    frame.locals.insert(target, new);
    Ok(())
}

/// `out[i] = e` or `acc.base = e` (`op` for `+=` and the like): a part of a local array,
/// tuple or struct, however deep (`out[i].base += 4`).
fn assign_into(
    b: &ast::BinExpr,
    place: &ast::Expr,
    op: Option<ArithOp>,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<(), Unknown> {
    let rhs = value(&b.rhs().ok_or_else(missing)?, names, frame, depth)?;
    // The path from the local to the part: an index or a field name each step.
    let mut steps = Vec::new();
    let mut at = place.clone();
    let root = loop {
        match at {
            ast::Expr::IndexExpr(i) => {
                let k = match value(&i.index().ok_or_else(missing)?, names, frame, depth)? {
                    Value::Int(k) => k,
                    _ => return Err(not_evaluated(place)),
                };
                steps.push(Part::Index(k));
                at = i.base().ok_or_else(missing)?;
            }
            ast::Expr::FieldExpr(f) => {
                let name = f.name_ref().ok_or_else(missing)?.text().to_string();
                steps.push(Part::Field(name));
                at = f.expr().ok_or_else(missing)?;
            }
            ast::Expr::PathExpr(p) => {
                break p.path().and_then(|p| consts::path_key(&p));
            }
            _ => return Err(not_evaluated(place)),
        }
    }
    .filter(|t| frame.adopt(t, names))
    .ok_or_else(|| Unknown::new("it assigns to something other than a local variable"))?;
    steps.reverse();
    let Some(local) = frame.locals.get_mut(&root) else {
        return Err(missing());
    };
    let mut slot = local;
    for step in &steps {
        slot = part_mut(slot, step).ok_or_else(|| not_evaluated(place))?;
    }
    *slot =
        match (op, &*slot, &rhs) {
            (None, _, _) => rhs,
            (Some(op), Value::Int(old), Value::Int(r)) => consts::arith(op, *old, *r)
                .map(Value::Int)
                .ok_or_else(|| Unknown::new(format!("`{}` overflows", b.syntax())))?,
            _ => return Err(not_evaluated(&ast::Expr::BinExpr(b.clone()))),
        };
    Ok(())
}

/// A step from a value to one of its parts.
enum Part {
    Index(u64),
    Field(String),
}

/// The part `step` of `v`, to assign to.
fn part_mut<'v>(v: &'v mut Value, step: &Part) -> Option<&'v mut Value> {
    match (v, step) {
        (Value::Array(items) | Value::Tuple(items), Part::Index(k)) => {
            items.get_mut(usize::try_from(*k).ok()?)
        }
        (Value::Tuple(items), Part::Field(name)) => items.get_mut(name.parse::<usize>().ok()?),
        (
            Value::Variant {
                fields: super::Fields::Named(fs),
                ..
            },
            Part::Field(name),
        ) => fs.iter_mut().find(|(n, _)| n == name).map(|(_, v)| v),
        (
            Value::Variant {
                fields: super::Fields::Positional(vs),
                ..
            },
            Part::Field(name),
        ) => vs.get_mut(name.parse::<usize>().ok()?),
        _ => None,
    }
}

/// `for i in a..b { .. }` (and `a..=b`) over constant bounds.
fn for_loop(
    f: &ast::ForExpr,
    names: &Names<'_>,
    frame: &mut Frame,
    depth: u32,
) -> Result<Flow, Unknown> {
    let var = match f.pat() {
        Some(ast::Pat::IdentPat(p)) => p.name().map(|n| n.text().to_string()),
        Some(ast::Pat::WildcardPat(_)) => Some("_".to_string()),
        _ => None,
    }
    .ok_or_else(|| Unknown::new("a `for` over a pattern is not evaluated"))?;
    let Some(ast::Expr::RangeExpr(r)) = f.iterable() else {
        return Err(Unknown::new(
            "a `for` over something other than a range is not evaluated",
        ));
    };
    let bound = |e: Option<ast::Expr>, frame: &mut Frame| match e {
        Some(e) => match value(&e, names, frame, depth)? {
            Value::Int(n) => Ok(n),
            _ => Err(not_evaluated(&e)),
        },
        None => Err(missing()),
    };
    let start = bound(r.start(), frame)?;
    let mut end = bound(r.end(), frame)?;
    if matches!(r.op_kind(), Some(ast::RangeOp::Inclusive)) {
        end = end.saturating_add(1);
    }
    let body = f
        .loop_body()
        .and_then(|b| b.stmt_list())
        .ok_or_else(missing)?;
    for i in start..end {
        frame.locals.insert(var.clone(), Value::Int(i));
        if let Flow::Return(v) = branch(&body, names, frame, depth + 1)? {
            return Ok(Flow::Return(v));
        }
        step()?;
    }
    Ok(Flow::Next)
}

#[cfg(test)]
mod tests {
    /// A local bump allocator in a function the evaluator runs: each call of its `&mut self`
    /// method sees the allocator as the call before left it. Two bytes placed before the
    /// 8-byte read put it at 0x2004, unaligned; eight put it at 0x2008.
    #[test]
    fn a_mut_self_method_changes_its_local() {
        let kernel = |first: u32| {
            format!(
                "use furiosa_visa_std::prelude::*;\naxes![A = 8, B = 512];\n\
                 struct Arena {{ next: u64 }}\n\
                 impl Arena {{ fn place(&mut self, n: u64) -> u64 {{ let at = self.next; \
                 self.next += n.next_multiple_of(4); at }} }}\n\
                 fn second() -> u64 {{ let mut a = Arena {{ next: 0x2000 }}; a.place({first}); \
                 a.place(8) }}\n\
                 #[device(chip = 1)]\n\
                 fn k(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![A, B]>) {{\n\
                 let dm = hbm.to_dm::<m![1 # 2], m![A # 256], m![B]>(&mut ctx.tdma, second());\n\
                 }}\n"
            )
        };
        let codes = |text: &str| {
            crate::check_text(text)
                .iter()
                .map(|d| d.code().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(&kernel(2)), ["ALN-002"]);
        assert_eq!(codes(&kernel(8)), Vec::<String>::new());
        // A call in a branch is not followed into its variable: never a guess.
        let branched = kernel(2).replace("a.place(2);", "if false { a.place(2); }");
        assert_eq!(codes(&branched), ["VL-009"]);
    }

    /// A `const fn` that loops and calls itself shares one budget across its calls: the
    /// address it computes is "not checked" (VL-009, with the reason), found quickly, never a
    /// hang or a crash.
    #[test]
    fn recursion_and_loops_share_one_budget() {
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 8, B = 512];\n\
                    const fn spin(n: usize) -> usize {\n\
                    let mut i = 0;\n\
                    while i < 100000 { i += 1; }\n\
                    if n == 0 { i } else { spin(n - 1) }\n\
                    }\n\
                    #[device(chip = 1)]\n\
                    fn k(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![A, B]>) {\n\
                    let dm = hbm.to_dm::<m![1 # 2], m![A # 256], m![B]>(&mut ctx.tdma, spin(60));\n\
                    }\n";
        let found = crate::check_text(text);
        let note = found
            .iter()
            .find(|d| d.code() == "VL-009")
            .unwrap_or_else(|| panic!("a note: {found:#?}"));
        assert!(note.message.contains("steps"), "{}", note.message);
        assert!(found.iter().all(|d| d.code() != "ALN-002"), "{found:#?}");
    }
}

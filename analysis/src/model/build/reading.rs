//! What the builder reads off the syntax alone: spans, names, the root of a chain, whether a
//! body assigns or calls something.

use crate::diagnostic::Span;
use crate::library::Generation;
use crate::model::Arg;
use crate::model::consts::path_key;
use crate::model::methods::{Engine, Method};
use ra_ap_syntax::ast::HasGenericArgs;
use ra_ap_syntax::{AstNode, TextRange, ast};

pub(super) fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
}

pub(super) fn arg_of(node: &ra_ap_syntax::SyntaxNode) -> Arg {
    Arg::written(crate::syntax::node_text(node), span_of(node.text_range()))
}

/// The function a call's path names, by its key: a helper named with a turbofish
/// (`stage_past::<1>`, `helpers::tile::<4>`) is the helper of that name.
pub(super) fn callee_key(path: &ast::Path) -> Option<String> {
    if let Some(key) = path_key(path) {
        return Some(key);
    }
    let last = path.segment()?;
    last.generic_arg_list()?;
    let name = last.name_ref()?.text().to_string();
    match path.qualifier() {
        Some(q) => Some(format!("{}::{name}", path_key(&q)?)),
        None => Some(name),
    }
}

/// Whether an argument is an engine chain (a pass, or a DMA transfer), which is recorded as a
/// chain even when the function it is passed to is unknown.
pub(super) fn passes_a_chain(e: &ast::Expr) -> bool {
    let mut cur = Some(e.clone());
    while let Some(x) = cur {
        cur = match x {
            ast::Expr::MethodCallExpr(m) => {
                let method = m.name_ref().map(|n| Method::from_name(n.text()));
                let transfer = method.as_ref().and_then(Method::transfer);
                // A device engine, or a DMA transfer (`to_dm`, `to_hbm`, `to_host`).
                let dma = matches!(method, Some(Method::ToDm | Method::ToHbm | Method::ToHost));
                if transfer.is_some_and(|s| s.engine != Engine::Memory) || dma {
                    return true;
                }
                m.receiver()
            }
            ast::Expr::AwaitExpr(a) => a.expr(),
            ast::Expr::TryExpr(t) => t.expr(),
            ast::Expr::RefExpr(r) => r.expr(),
            ast::Expr::ParenExpr(p) => p.expr(),
            _ => None,
        };
    }
    false
}

/// Whether an argument is a tile view (`out.view_mut().tile::<..>(i)`, possibly behind `&` or
/// parentheses).
pub(super) fn is_tile_view(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::MethodCallExpr(m) => m
            .name_ref()
            .is_some_and(|n| Method::from_name(n.text()) == Method::Tile),
        ast::Expr::RefExpr(r) => r.expr().is_some_and(|x| is_tile_view(&x)),
        ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| is_tile_view(&x)),
        _ => false,
    }
}

/// `p.a` of a chain or an argument that starts from a variable's field (`p.a.to_hbm(..)`,
/// `&taps.main`), as the tensor named after the field is called.
pub(super) fn root_field(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::MethodCallExpr(m) => root_field(&m.receiver()?),
        ast::Expr::RefExpr(r) => root_field(&r.expr()?),
        ast::Expr::AwaitExpr(a) => root_field(&a.expr()?),
        ast::Expr::TryExpr(t) => root_field(&t.expr()?),
        ast::Expr::ParenExpr(p) => root_field(&p.expr()?),
        ast::Expr::FieldExpr(f) => Some(format!(
            "{}.{}",
            var_name(&f.expr()?)?,
            f.name_ref()?.text()
        )),
        _ => None,
    }
}

/// Whether an initializer is a `from_addr(..)` call, in an `unsafe` block or parentheses.
pub(super) fn is_from_addr(e: &ast::Expr) -> bool {
    crate::syntax::from_addr_call(e).is_some()
}

/// Whether the variable `name` a `let` binds is assigned (`name = ..`, `name += ..`) or
/// borrowed mutably (`&mut name`) later in the block it lives in.
pub(super) fn assigned_after(l: &ast::LetStmt, name: &str, fns: Option<&Fns>) -> bool {
    l.syntax()
        .siblings(ra_ap_syntax::Direction::Next)
        .skip(1)
        .flat_map(|s| s.descendants())
        .any(|n| changes(&n, name, fns))
}

/// Whether the trace runs each assignment to the variable `name` that `l` binds at most once
/// per run of the `let`: none is in a loop or a closure written after the `let`, and nothing
/// borrows the variable mutably. The model then follows the variable through them.
pub(super) fn assigned_in_straight_code(l: &ast::LetStmt, name: &str, fns: Option<&Fns>) -> bool {
    let Some(scope) = l.syntax().parent() else {
        return false;
    };
    let after = l.syntax().siblings(ra_ap_syntax::Direction::Next).skip(1);
    straight(after.flat_map(|s| s.descendants()), &scope, name, fns)
}

/// How a function's body assigns its parameter `name` (`mut at: usize`): `None` when it does
/// not, `Some(true)` when each assignment runs once per call ([`assigned_in_straight_code`]),
/// `Some(false)` otherwise.
pub(super) fn param_assignments(f: &ast::Fn, name: &str, fns: Option<&Fns>) -> Option<bool> {
    let body = f.body()?;
    body.syntax()
        .descendants()
        .any(|n| changes(&n, name, fns))
        .then(|| straight(body.syntax().descendants(), body.syntax(), name, fns))
}

/// Whether every assignment to `name` among `nodes` is a plain one (no `&mut name`) outside
/// any loop or closure below `scope`.
fn straight(
    nodes: impl Iterator<Item = ra_ap_syntax::SyntaxNode>,
    scope: &ra_ap_syntax::SyntaxNode,
    name: &str,
    fns: Option<&Fns>,
) -> bool {
    let repeats = |n: &ra_ap_syntax::SyntaxNode| {
        n.ancestors().take_while(|a| a != scope).any(|a| {
            ast::ForExpr::can_cast(a.kind())
                || ast::WhileExpr::can_cast(a.kind())
                || ast::LoopExpr::can_cast(a.kind())
                || ast::ClosureExpr::can_cast(a.kind())
        })
    };
    let mut assignments = nodes.filter(|n| changes(n, name, fns));
    assignments.all(|n| {
        (ast::BinExpr::can_cast(n.kind()) || ast::MethodCallExpr::can_cast(n.kind()))
            && !repeats(&n)
    })
}

/// The functions the evaluator runs, by key.
type Fns = std::collections::HashMap<String, crate::model::consts::ConstFn>;

/// Whether `n` changes the variable `name`: assigns it ([`assigns`]), or calls a method of
/// the crate on it that takes `&mut self` (`arena.place(bytes)`; `fns` is `None` when no
/// function does).
fn changes(n: &ra_ap_syntax::SyntaxNode, name: &str, fns: Option<&Fns>) -> bool {
    assigns(n, name)
        || fns.is_some_and(|fns| {
            ast::MethodCallExpr::cast(n.clone()).is_some_and(|m| {
                m.receiver().as_ref().and_then(var_name).as_deref() == Some(name)
                    && crate::model::value::mutates_receiver(&m, fns)
            })
        })
}

/// The variable an assignment's left-hand side writes: `x` of `x`, `x.base`, `x[2].at`.
pub(super) fn assigned_root(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::FieldExpr(f) => assigned_root(&f.expr()?),
        ast::Expr::IndexExpr(i) => assigned_root(&i.base()?),
        ast::Expr::ParenExpr(p) => assigned_root(&p.expr()?),
        other => var_name(other),
    }
}

/// `name = ..`, `name op= ..` (of the variable or a part of it, `name.base = ..`) or
/// `&mut name`.
pub(super) fn assigns(n: &ra_ap_syntax::SyntaxNode, name: &str) -> bool {
    if let Some(b) = ast::BinExpr::cast(n.clone())
        && matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. }))
    {
        return b.lhs().and_then(|l| assigned_root(&l)).as_deref() == Some(name);
    }
    if let Some(r) = ast::RefExpr::cast(n.clone())
        && r.mut_token().is_some()
    {
        return r.expr().and_then(|e| var_name(&e)).as_deref() == Some(name);
    }
    false
}

/// The step of `var += step` when it is the last statement of `body`.
pub(super) fn last_step(body: &ast::BlockExpr, var: &str) -> Option<ast::Expr> {
    let list = body.stmt_list()?;
    let last = match list.tail_expr() {
        Some(t) => t,
        None => match list.statements().last()? {
            ast::Stmt::ExprStmt(e) => e.expr()?,
            _ => return None,
        },
    };
    let ast::Expr::BinExpr(b) = last else {
        return None;
    };
    let add = Some(ast::BinaryOp::Assignment {
        op: Some(ast::ArithOp::Add),
    });
    (b.op_kind() == add && b.lhs().as_ref().and_then(var_name).as_deref() == Some(var))
        .then(|| b.rhs())
        .flatten()
}

/// `&x`, `x`: the variable an argument names.
pub(super) fn var_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::RefExpr(r) => var_name(&r.expr()?),
        ast::Expr::PathExpr(p) => {
            let path = p.path()?;
            path.qualifier().is_none().then_some(())?;
            Some(path.segment()?.name_ref()?.text().to_string())
        }
        _ => None,
    }
}

pub(super) fn pat_name(p: &ast::Pat) -> Option<String> {
    match p {
        ast::Pat::IdentPat(i) => Some(ast::HasName::name(i)?.text().to_string()),
        _ => None,
    }
}

/// Whether an engine method (`to_dm`, `commit`, `switch`, ..) is called anywhere under `node`.
pub(super) fn has_engine_call(node: &ra_ap_syntax::SyntaxNode) -> bool {
    node.descendants()
        .filter_map(ast::MethodCallExpr::cast)
        .filter_map(|m| m.name_ref())
        .any(|n| {
            [Generation::VisaStd, Generation::OptStd]
                .into_iter()
                .any(|g| {
                    Method::resolve(n.text(), g)
                        .transfer_for(n.text(), g, None)
                        .is_some()
                })
        })
}

/// Whether `name` is written as an identifier anywhere under `node`.
pub(super) fn uses_name(node: &ra_ap_syntax::SyntaxNode, name: &str) -> bool {
    node.descendants_with_tokens()
        .filter_map(|t| t.into_token())
        .any(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT && t.text() == name)
}

/// The Rust constant expressions escaped in the `m![..]` mappings under `node` that the
/// mapping grammar does not read itself (`m![Z # { RouteTable::padded_row() }]`): each with
/// the name the grammar gives it ([`crate::mapping::parse::escape_key`]), for the caller to
/// evaluate where it is written.
pub fn escaped_exprs(node: &ra_ap_syntax::SyntaxNode) -> Vec<(String, ast::Expr)> {
    use ra_ap_syntax::{SyntaxKind, T};
    let mut out = Vec::new();
    let mappings = node
        .descendants()
        .filter_map(ast::MacroCall::cast)
        .filter(|m| m.path().is_some_and(|p| p.syntax().text() == "m"));
    for m in mappings {
        let Some(tt) = m.token_tree() else { continue };
        for brace in tt.syntax().descendants().filter(|n| {
            n.kind() == SyntaxKind::TOKEN_TREE
                && n.first_token().is_some_and(|t| t.kind() == T!['{'])
        }) {
            escaped(&brace.text().to_string(), &mut out);
        }
    }
    // The same in a mapping written as types: `Padding<Identity, { BALANCE.clusters }>`.
    for arg in node.descendants().filter_map(ast::ConstArg::cast) {
        if let Some(ast::Expr::BlockExpr(b)) = arg.expr() {
            escaped(&b.syntax().text().to_string(), &mut out);
        }
    }
    out
}

/// The expression inside the braces of `text` (`{ SPEC.width }`), under its escape's name,
/// when the mapping grammar does not read it itself.
fn escaped(text: &str, out: &mut Vec<(String, ast::Expr)>) {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or("");
    if !escapes_rust(inner) {
        return;
    }
    let parsed = ra_ap_syntax::SourceFile::parse(
        &format!("const _: usize = {inner};"),
        ra_ap_syntax::Edition::Edition2024,
    )
    .tree();
    if let Some(e) = parsed
        .syntax()
        .descendants()
        .find_map(ast::Const::cast)
        .and_then(|c| c.body())
    {
        out.push((crate::mapping::parse::escape_key(inner), e));
    }
}

/// Whether mapping text may escape a Rust expression the mapping grammar does not read itself
/// (a call, a field, an index, a cast `Fmt::Packed as usize`); names, sizes and arithmetic are
/// the grammar's own.
pub fn escapes_rust(text: &str) -> bool {
    text.contains(['(', '.', '[', '<', '>', '&', '|', '^'])
        || text.split_whitespace().any(|word| word == "as")
}

/// The one argument of `Some(x)` or `Ok(x)`, which hold `x` as it is.
pub(super) fn wrapped_value(c: &ast::CallExpr) -> Option<ast::Expr> {
    let ast::Expr::PathExpr(callee) = c.expr()? else {
        return None;
    };
    let path = callee.path()?;
    let name = path.segment()?.name_ref()?;
    if path.qualifier().is_some() || !matches!(name.text(), "Some" | "Ok") {
        return None;
    }
    let mut args = ast::HasArgList::arg_list(c)?.args();
    let one = args.next()?;
    args.next().is_none().then_some(one)
}

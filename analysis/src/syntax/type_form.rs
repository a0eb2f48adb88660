//! A mapping written as the types `m!` expands to, read as the expression it spells.
//!
//! The manual gives each mapping form its type (L632-L886): `m![A]` is `Symbol<A>`,
//! `m![A, B]` is `Pair<m![A], m![B]>`, `m![1]` is `Identity`, `m![D # 64]` is
//! `Padding<m![D], 64>`, `m![D = 2]` is `Resize<m![D], 2>`, `m![B / 64]` is `Stride<m![B], 64>`
//! and `m![B % 64]` is `Modulo<m![B], 64>`. furiosa-opt-std adds `Broadcast<N>` and the
//! padding kind, `Padding<L, N, { PaddingKind::Zero }>` (`docs/src/mapping-tensors/
//! mapping-expressions.md:222-223` at ebb846a). Kernels write these forms where a size is a
//! constant the manual's `m!` cannot take (`Padding<Identity, { BALANCE.clusters }>`).
//!
//! Each piece keeps its place in the file, so a finding on the mapping points into the type.

use super::{last_path_name, span_of};
use crate::diagnostic::Span;
use crate::mapping::ast::{Expr, Name, Op, PadKind, SizeExpr};
use crate::mapping::{parse, shift_expr, shift_size};
use ra_ap_syntax::{AstNode, ast as ra};

/// How deep type forms nest before the reader gives up (`Pair<A, Pair<B, ...>>`).
const MAX_DEPTH: u32 = 64;

/// The expression a type form spells, or why it cannot be read (a clause: "its size `N` is
/// not a constant").
pub fn expr_of(ty: &ra::Type) -> Result<Expr, String> {
    expr(ty, 0)
}

fn expr(ty: &ra::Type, depth: u32) -> Result<Expr, String> {
    if depth > MAX_DEPTH {
        return Err("it nests too deeply".into());
    }
    let span = span_of(ty.syntax().text_range());
    match ty {
        ra::Type::MacroType(mt) => macro_body(mt),
        ra::Type::ParenType(p) => expr(&p.ty().ok_or("it holds an empty `( )`")?, depth + 1),
        ra::Type::PathType(p) => {
            let path = p.path().ok_or("it holds a type with no path")?;
            let seg = path.segment().ok_or("it holds a type with no path")?;
            let form = seg.name_ref().map(|n| n.text().to_string());
            let args: Vec<ra::GenericArg> = ra::HasGenericArgs::generic_arg_list(&seg)
                .map(|l| l.generic_args().collect())
                .unwrap_or_default();
            match (form.as_deref(), args.as_slice()) {
                (Some("Identity"), []) => Ok(Expr::Identity(span)),
                (Some("Symbol"), [axis, ..]) => symbol(axis, span),
                (Some("Broadcast"), [n]) => match size(n)?.literal() {
                    Some(1) => Ok(Expr::Identity(span)),
                    Some(n) => Ok(Expr::Broadcast(n, span)),
                    None => Err("its `Broadcast` size is not a literal".into()),
                },
                (Some("Pair"), [l, r]) => {
                    let mut terms = vec![inner(l, depth)?];
                    match inner(r, depth)? {
                        Expr::Pair(rest, _) => terms.extend(rest),
                        r => terms.push(r),
                    }
                    Ok(Expr::Pair(terms, span))
                }
                (Some("Padding"), [l, n, rest @ ..]) if rest.len() <= 1 => {
                    let kind = match rest.first() {
                        None => PadKind::Top,
                        Some(k) => pad_kind(k)?,
                    };
                    let marked = !rest.is_empty();
                    operator(l, Op::Pad { kind, marked }, n, span, depth)
                }
                (Some("Resize"), [l, n]) => operator(l, Op::Resize, n, span, depth),
                (Some("Stride"), [l, n]) => operator(l, Op::Stride, n, span, depth),
                (Some("Modulo"), [l, n]) => operator(l, Op::Modulo, n, span, depth),
                // Another alias, by its path: `{ layouts::Slice }`.
                (_, []) => {
                    let key =
                        super::path_key(&path).ok_or("it names a path visa-lint cannot follow")?;
                    Ok(Expr::Escape(Name { text: key, span }, span))
                }
                _ => Err(format!(
                    "`{}` is not a mapping form",
                    super::node_text(p.syntax())
                )),
            }
        }
        _ => Err(format!(
            "`{}` is not a mapping form",
            super::node_text(ty.syntax())
        )),
    }
}

/// A form's mapping argument (`L` of `Padding<L, N>`), grouped when it is a pair, as `m!`
/// writes `[A, B] # 64`.
fn inner(arg: &ra::GenericArg, depth: u32) -> Result<Expr, String> {
    let ra::GenericArg::TypeArg(t) = arg else {
        return Err(format!(
            "`{}` is not a mapping",
            super::node_text(arg.syntax())
        ));
    };
    expr(&t.ty().ok_or("a type is missing")?, depth + 1)
}

fn operator(
    l: &ra::GenericArg,
    op: Op,
    n: &ra::GenericArg,
    span: Span,
    depth: u32,
) -> Result<Expr, String> {
    let inner = match inner(l, depth)? {
        e @ Expr::Pair(..) => {
            let s = e.span();
            Expr::Group(Box::new(e), s)
        }
        e => e,
    };
    let arg = size(n)?;
    Ok(Expr::Op {
        inner: Box::new(inner),
        op,
        // The form's name stands where `m!` writes the operator.
        op_span: Span::new(span.start as usize, span.start as usize),
        arg,
        span,
    })
}

/// `Symbol<A>` (and the manual's `Symbol<Ident::A, 8>`): the axis the path ends with, placed
/// where the whole `Symbol<..>` is written (`span`), which a padding fix wraps.
fn symbol(axis: &ra::GenericArg, span: Span) -> Result<Expr, String> {
    let ra::GenericArg::TypeArg(t) = axis else {
        return Err("its `Symbol` argument is not an axis".into());
    };
    let ty = t.ty().ok_or("its `Symbol` has no axis")?;
    let text = last_path_name(&ty).ok_or("its `Symbol` argument is not an axis")?;
    Ok(Expr::Symbol(Name { text, span }))
}

/// A form's size: `64`, `{ BALANCE.clusters }`, or a constant by name (`SEQ_FIELDS`,
/// `config::LANES`), read with `m!`'s size grammar where it stands in the file.
fn size(arg: &ra::GenericArg) -> Result<SizeExpr, String> {
    let text = super::node_text(arg.syntax());
    let at = span_of(arg.syntax().text_range());
    // `1 # ARG` is the smallest mapping whose operand is the size, four bytes before it.
    let e = parse::parse_mapping(&format!("1 # {text}"))
        .map_err(|_| format!("its size `{}` is not a constant", text.trim()))?;
    let Expr::Op { mut arg, .. } = e else {
        return Err(format!("its size `{}` is not a constant", text.trim()));
    };
    shift_size(&mut arg, at.start.saturating_sub(4));
    Ok(arg)
}

/// The kind of `Padding<L, N, { PaddingKind::Zero }>`.
fn pad_kind(arg: &ra::GenericArg) -> Result<PadKind, String> {
    let text = super::node_text(arg.syntax());
    let kind = text
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim();
    match kind.rsplit("::").next() {
        Some("Top") => Ok(PadKind::Top),
        Some("Zero") => Ok(PadKind::Zero),
        Some("Bottom") => Ok(PadKind::Bottom),
        _ => Err(format!("its padding kind `{kind}` is not a `PaddingKind`")),
    }
}

/// The body of an `m![...]` inside a form (`Padding<m![D], 64>`), at its place in the file.
fn macro_body(mt: &ra::MacroType) -> Result<Expr, String> {
    let call = mt.macro_call().ok_or("it holds a macro with no call")?;
    let name = call
        .path()
        .and_then(|p| p.segment())
        .and_then(|s| s.name_ref())
        .map(|n| n.text().to_string());
    if name.as_deref() != Some("m") {
        return Err("it holds a macro other than `m!`".into());
    }
    let tt = call.token_tree().ok_or("it holds an `m!` with no body")?;
    let text = super::node_text(tt.syntax());
    let start = span_of(tt.syntax().text_range()).start + 1;
    let body = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
    let mut e =
        parse::parse_mapping(body).map_err(|_| "its `m![..]` does not parse".to_string())?;
    shift_expr(&mut e, start);
    Ok(e)
}

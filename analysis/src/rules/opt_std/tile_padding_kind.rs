//! OPT-007: a tile view states the padding kind of the cells outside the tile: `#{!}` for a
//! mutable tile (a write destination), plain `#` for a read one.

use super::super::context::FnContext;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::{Expr, Op as MapOp, PadKind};
use crate::mapping::{lower, parse, shift_expr};
use crate::model::{Arg, Chain, FnModel, Kind, Method, Slot, Step};
use crate::rule::{Generations, Rule, Status};

pub const OPT_007: Rule = Rule {
    code: "OPT-007",
    name: "tile-padding-kind",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `view_mut().tile()` marks its out-of-tile cells `#{!}`, a read `view().tile()` `#` (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 writes the padding kind into a mapping's type, and a tile view \
           states the kind of the cells outside the tile: a mutable tile \
           (`view_mut().tile::<I, LEN, E2>(start)`, a write destination) must mark them \
           inaccessible, `#{!}` (Bottom), and a read tile (`view().tile()`) plain `#` (`#{*}`, \
           Top). Its `tile` passes that kind to the tile check, which refuses a view whose \
           padding differs (`config_tile(.., PaddingKind::Bottom)` in \
           `furiosa-opt-std/src/tensor/memory.rs:738-760` and `:1275-1297`, `PaddingKind::Top` \
           for the read tiles at `:554-575` and `:1106-1130`; `TileError::UnexpectedView` in \
           `furiosa-opt-lower-types/src/tile.rs:50-62` at ebb846a). The padding checked is the \
           one around the tile dimension's resize (`B = 2 # 8`), or a size-1 tile's `1 # N` \
           where N is the tile dimension's size; other padding the view carries over from its \
           tensor keeps the tensor's kind. The fix rewrites the operator. The manual's library \
           has one padding kind; the rule applies to furiosa-opt-std crates, to tile mappings \
           written as `m![...]` or named by an alias without parameters (reported at the tile, \
           fixed there by the alias's mapping with the kind rewritten, or in the alias's \
           definition) and to HBM tiles whose `view()` or \
           `view_mut()` the function shows (an `HbmTensorViewMut` parameter's is not).",
    bad: "output.view_mut().tile::<m![B], 2, m![B = 2 # 8]>(0)",
    good: "output.view_mut().tile::<m![B], 2, m![B = 2 #{!} 8]>(0)",
    manual: "",
    generations: Generations::OptStdOnly(
        "the manual's library has one padding kind; furiosa-opt-std 0.6 passes Bottom for a \
         mutable tile and Top for a read one to its tile check \
         (`furiosa-opt-std/src/tensor/memory.rs:554-575,738-760`)",
    ),
};

/// Whether the view a `tile` (step `i` of `chain`) reads from is mutable: a DM view says so in
/// its type; an HBM view only through the `view()` / `view_mut()` that made it, before the
/// tile in its chain or ending the chain that bound the variable the chain starts from.
fn tile_is_mutable(model: &FnModel, chain: &Chain, i: usize) -> Option<bool> {
    let step = chain.steps.get(i)?;
    match step.input.as_ref()?.kind {
        Kind::DmViewMut => Some(true),
        Kind::DmView => Some(false),
        Kind::HbmView => {
            let before = match i.checked_sub(1) {
                Some(j) => chain.steps.get(j)?,
                None => {
                    let name = chain.receiver.as_deref()?;
                    model
                        .chains
                        .iter()
                        .rev()
                        .find(|c| {
                            c.binding.as_deref() == Some(name) && c.span.end <= chain.span.start
                        })?
                        .steps
                        .last()?
                }
            };
            match before.method {
                Method::ViewMut => Some(true),
                Method::View => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// OPT-007: the kind of the padding around a tile's resized dimension, against the view's
/// mutability.
pub(super) fn check(cx: &FnContext<'_>, chain: &Chain, i: usize, out: &mut Vec<Diagnostic>) {
    let Some(step) = chain.steps.get(i) else {
        return;
    };
    let [dim, size, tile] = step.generics.as_slice() else {
        return;
    };
    let Some(mutable) = tile_is_mutable(cx.model, chain, i) else {
        return;
    };
    let Some(AroundTile {
        kind,
        op_span,
        alias: in_alias,
    }) = padding_around_tile(cx, step, dim, size, tile)
    else {
        return;
    };
    let want = if mutable {
        PadKind::Bottom
    } else {
        PadKind::Top
    };
    if kind == want {
        return;
    }
    let (view, why) = if mutable {
        (
            "`view_mut().tile()`",
            "a write destination: its cells outside the tile are inaccessible",
        )
    } else {
        (
            "`view().tile()`",
            "a read view: its cells outside the tile are plain padding",
        )
    };
    let message = format!(
        "{view} is {why}, so furiosa-opt-std needs them written `{}`, not `{}`",
        want.operator(),
        kind.operator()
    );
    // A tile mapping named by an alias (`BatchOut`): reported where the tile uses it, and fixed
    // there by the alias's mapping with the kind rewritten, which changes no other use (the
    // engine adds the edit of the alias's definition as a second fix).
    if let Some((alias, mut body)) = in_alias {
        let at = format!("{message} (in the alias `{alias}`)");
        let d = Diagnostic::new(&OPT_007, tile.span, at);
        out.push(if body.set_pad_kind(op_span, want) {
            d.with_edit(
                format!("write `{alias}`'s mapping here with `{}`", want.operator()),
                true,
                tile.span,
                format!("m![{body}]"),
            )
        } else {
            d
        });
        return;
    }
    // The same mapping written again in the chain's declared type must change with it.
    let declared_apart = i + 1 == chain.steps.len() && chain.declared.is_some();
    out.push(Diagnostic::new(&OPT_007, op_span, message).with_edit(
        format!("write the padding `{}`", want.operator()),
        !declared_apart && !tile.in_tensor_alias,
        op_span,
        want.operator().to_string(),
    ));
}

/// The padding around a tile's resized dimension: its kind, its operator, and the alias
/// that writes it (its name and mapping) when the tile mapping names one.
struct AroundTile {
    kind: PadKind,
    op_span: Span,
    alias: Option<(String, Expr)>,
}

/// The kind and operator span of the padding around the tile's resized dimension in the
/// tile mapping `tile` of `tile::<dim, size, tile>`: the first padding of a `dim`'s resize, or
/// a size-1 tile's `1 # N` where N is the size of `dim` (and the tensor's Element has no such
/// padding of its own), with the alias's name when `tile` names one; `None` when a mapping is
/// not read or no padding is around the tile.
fn padding_around_tile(
    cx: &FnContext<'_>,
    step: &Step,
    dim: &Arg,
    size: &Arg,
    tile: &Arg,
) -> Option<AroundTile> {
    let dim_l = mapping_body(&dim.text)
        .and_then(|(_, b)| parse::parse_mapping(b).ok())
        .and_then(|e| lower(&e, cx.scope, &mut Vec::new()))?;
    let len = size.text.trim().replace('_', "").parse::<u64>().ok()?;
    let (expr, alias) = match mapping_body(&tile.text) {
        Some((off, body)) => {
            let mut expr = parse::parse_mapping(body).ok()?;
            let base = u32::try_from(off)
                .ok()
                .map_or(tile.span.start, |o| tile.span.start.saturating_add(o));
            shift_expr(&mut expr, base);
            (expr, None)
        }
        // `tile::<m![B], 1, BatchOut>`: the alias's body (one without parameters).
        None => {
            let name = tile.text.trim();
            // Through renames; one with parameters is not read.
            let alias = cx.scope.alias_through_renames(name)?;
            if !alias.generics.is_empty() {
                return None;
            }
            let body = alias.body.clone()?;
            (body.clone(), Some((name.to_string(), body)))
        }
    };
    // A `1 # N` the tensor's own Element already has is not told apart from the tile's.
    let carried = step
        .input
        .as_ref()
        .and_then(|t| t.get(Slot::Element))
        .and_then(|m| mapping_body(&m.text))
        .and_then(|(_, b)| parse::parse_mapping(b).ok())
        .is_some_and(|e| {
            let mut pads = Vec::new();
            paddings(&e, &mut pads);
            pads.iter().any(|p| is_identity(p.inner))
        });
    let mut pads = Vec::new();
    paddings(&expr, &mut pads);
    let around_tile = |p: &Padding<'_>| match strip_group(p.inner) {
        Expr::Op {
            inner,
            op: MapOp::Resize,
            ..
        } => lower(inner, cx.scope, &mut Vec::new()).is_some_and(|l| l == dim_l),
        e => len == 1 && !carried && is_identity(e) && p.to == Some(dim_l.size),
    };
    pads.iter().find(|p| around_tile(p)).map(|p| AroundTile {
        kind: p.kind,
        op_span: p.op_span,
        alias: alias.clone(),
    })
}

/// The `m![...]` body of a written mapping and its offset in the text.
fn mapping_body(text: &str) -> Option<(usize, &str)> {
    let open = text.find("m![")? + 3;
    let close = text.rfind(']')?;
    (close >= open).then(|| (open, &text[open..close]))
}

/// One `inner # to` of an expression.
struct Padding<'e> {
    inner: &'e Expr,
    kind: PadKind,
    to: Option<u64>,
    op_span: Span,
}

/// Every padding operator of an expression, outermost first.
fn paddings<'e>(e: &'e Expr, acc: &mut Vec<Padding<'e>>) {
    match e {
        Expr::Op {
            inner,
            op,
            op_span,
            arg,
            ..
        } => {
            if let MapOp::Pad { kind, .. } = op {
                acc.push(Padding {
                    inner,
                    kind: *kind,
                    to: arg.literal(),
                    op_span: *op_span,
                });
            }
            paddings(inner, acc);
        }
        Expr::Group(x, _) => paddings(x, acc),
        Expr::Pair(xs, _) => xs.iter().for_each(|x| paddings(x, acc)),
        Expr::LinComb(xs, _) => xs.iter().for_each(|(x, _)| paddings(x, acc)),
        Expr::Identity(_) | Expr::Broadcast(..) | Expr::Symbol(_) | Expr::Escape(..) => {}
    }
}

fn strip_group(e: &Expr) -> &Expr {
    match e {
        Expr::Group(inner, _) => strip_group(inner),
        Expr::Pair(terms, _) if terms.len() == 1 => strip_group(&terms[0]),
        _ => e,
    }
}

fn is_identity(e: &Expr) -> bool {
    matches!(strip_group(e), Expr::Identity(_) | Expr::Broadcast(1, _))
}

//! MAP-009: a tile view `.tile::<Dim, SIZE, TileMapping>(start)` resizes one dimension to the
//! tile size inside the original footprint, so the size fits the dimension, a constant start
//! leaves room for a whole tile, and the tile mapping resizes the dimension to the tile size.

use super::macro_body::body;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::Layout;
use crate::mapping::ast::{Expr, Op as MapOp};
use crate::mapping::{lower, parse};
use crate::model::{Arg, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const MAP_009: Rule = Rule {
    code: "MAP-009",
    name: "tile-view-consistency",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`.tile::<Dim, SIZE, TileMapping>(start)` must resize `Dim` to `SIZE` and stay in bounds",
    docs: "A tile view resizes one dimension to the tile size inside the original footprint \
           (`B / 32 = 2 # 16`, L963): the tile size must be 1..=`Dim::SIZE`, a constant start \
           must leave room for a whole tile (`start + SIZE <= Dim::SIZE`; tiles may overlap, \
           L966-L969), and the tile mapping must contain `Dim = SIZE`. A tile of size 1 may \
           drop the dimension (`B / 32 = 1` is `m![1]`, L971). The footprint after `#` is not \
           compared with `Dim::SIZE`: the manual's own L823 writes `B = 2 # 4` with B = 512.",
    bad: "axes![A = 8, B = 64];\nview.tile::<m![B / 8], 2, m![A, B / 8 = 3 # 8, B % 8]>(0)\nview.tile::<m![B / 8], 2, m![A, B / 8 = 2 # 8, B % 8]>(7)",
    good: "axes![A = 8, B = 64];\nview.tile::<m![B / 8], 2, m![A, B / 8 = 2 # 8, B % 8]>(6)",
    manual: "L813-L832, L956-L971",
    generations: Generations::Both,
};

/// What the checks of one `.tile` call read: its dimension and size as written, the dimension's
/// body inside `m![...]`, the tile size `n` and the dimension's size `ds`.
struct Tile<'a> {
    dim: &'a Arg,
    dim_body: &'a str,
    size: &'a Arg,
    n: u64,
    ds: u64,
}

/// MAP-009: `.tile::<Dim, SIZE, TileMapping>(start)` (L813-L832, L956-L971).
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let [dim, size, tile] = step.generics.as_slice() else {
        return;
    };
    // The dimension as written, or the mapping its alias stands for (`TileIdx`).
    let written = crate::model::written_mapping(cx.scope, dim).unwrap_or_else(|| dim.text.clone());
    let Some((_, dim_body)) = body(&written) else {
        return;
    };
    let Ok(dim_e) = parse::parse_mapping(dim_body) else {
        return;
    };
    let Some(dim_l) = lower(&dim_e, cx.scope, &mut Vec::new()) else {
        return;
    };
    // A dimension already tiled and padded back (`B = 264 # 528`, a nested tile) is tiled
    // again by resizing what was resized: `B = 132 # 528`, the same positions.
    let retiled =
        resized_then_padded(&dim_e).and_then(|core| lower(core, cx.scope, &mut Vec::new()));
    let Some(n) = lit(&size.value_text()) else {
        return;
    };
    let ds = dim_l.size;
    let t = Tile {
        dim,
        dim_body,
        size,
        n,
        ds,
    };
    if !size_and_start(step, &t, out) {
        return;
    }
    let is_dim = |l: &Layout| *l == dim_l || retiled.as_ref() == Some(l);
    resize_term(cx, &t, tile, &is_dim, out);
}

/// The tile size is between 1 and the dimension's size (`false` when it is not, which silences
/// the rest), and a constant start leaves room for a whole tile.
fn size_and_start(step: &Step, t: &Tile<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (n, ds) = (t.n, t.ds);
    if n == 0 || n > ds {
        out.push(Diagnostic::new(
            &MAP_009,
            t.size.span,
            format!(
                "the tile size {n} must be between 1 and the tile dimension's size: `{}` has {ds} positions",
                t.dim.text
            ),
        ));
        return false;
    }
    if let Some(a) = step.args.first()
        && let Some(start) = lit(&a.value_text())
        && start.checked_add(n).is_none_or(|end| end > ds)
    {
        out.push(Diagnostic::new(
            &MAP_009,
            a.span,
            format!(
                "a tile of {n} starting at {start} covers {start}..{}, past the end of `{}` ({ds} positions); the last tile starts at {}",
                start.saturating_add(n),
                t.dim.text,
                ds - n
            ),
        ));
    }
    true
}

/// The tile mapping resizes the tile dimension (`is_dim`) to the tile size: a resize to
/// another size is fixed to `n`, a missing one is reported on the whole mapping.
fn resize_term(
    cx: &FnContext<'_>,
    t: &Tile<'_>,
    tile: &Arg,
    is_dim: &dyn Fn(&Layout) -> bool,
    out: &mut Vec<Diagnostic>,
) {
    let (n, ds) = (t.n, t.ds);
    let Some((off, tile_body)) = body(&tile.text) else {
        return;
    };
    let Ok(expr) = parse::parse_mapping(tile_body) else {
        return;
    };
    let mut rs = Vec::new();
    resizes(&expr, &mut rs);
    let base = tile.span.start.saturating_add(off as u32);
    let found = rs
        .iter()
        .find(|(inner, _, _)| lower(inner, cx.scope, &mut Vec::new()).is_some_and(|l| is_dim(&l)));
    match found {
        Some((_, Some(m), sp)) if *m != n => {
            let sp = shift(*sp, base);
            out.push(
                Diagnostic::new(
                    &MAP_009,
                    sp,
                    format!(
                        "the tile mapping resizes `{}` to {m}, but the tile size is {n}: the view would {} the tile",
                        t.dim_body.trim(),
                        if *m > n { "read past" } else { "drop part of" }
                    ),
                )
                .with_related(t.size.span, "the tile size")
                .with_edit(format!("resize to the tile size {n}"), true, sp, n.to_string()),
            );
        }
        Some(_) => {}
        // `m![{ Keys } # 1024]` with `type Keys = m![Tk = 256];`: the resize is the alias's.
        None if let Some(m) = alias_resize(&expr, cx.scope, is_dim) =>
        {
            if let Some(m) = m.filter(|m| *m != n) {
                out.push(
                    Diagnostic::new(
                        &MAP_009,
                        tile.span,
                        format!(
                            "the tile mapping resizes `{}` to {m} (in a mapping alias it names), but the tile size is {n}: the view would {} the tile",
                            t.dim_body.trim(),
                            if m > n { "read past" } else { "drop part of" }
                        ),
                    )
                    .with_related(t.size.span, "the tile size"),
                );
            }
        }
        // `B / 32 = 1` simplifies to `m![1]` (L971); a whole-dimension tile needs no resize.
        None if n == 1 || n == ds => {}
        None => out.push(
            Diagnostic::new(
                &MAP_009,
                tile.span,
                format!(
                    "the tile mapping must resize the tile dimension `{}` to the tile size, as `{} = {n} # {ds}`; it has no such term",
                    t.dim_body.trim(),
                    t.dim_body.trim()
                ),
            )
            .with_related(t.dim.span, "the tile dimension"),
        ),
    }
}

fn lit(text: &str) -> Option<u64> {
    text.trim().replace('_', "").parse().ok()
}

fn shift(s: Span, by: u32) -> Span {
    Span {
        start: s.start.saturating_add(by),
        end: s.end.saturating_add(by),
    }
}

/// The resize operators `X = n` of an expression (with the operand and the literal `n`).
fn resizes<'e>(e: &'e Expr, acc: &mut Vec<(&'e Expr, Option<u64>, Span)>) {
    match e {
        Expr::Op { inner, op, arg, .. } => {
            if *op == MapOp::Resize {
                let n = arg.literal();
                acc.push((inner, n, arg.span()));
            }
            resizes(inner, acc);
        }
        Expr::Group(x, _) => resizes(x, acc),
        Expr::Pair(xs, _) => xs.iter().for_each(|x| resizes(x, acc)),
        Expr::LinComb(xs, _) => xs.iter().for_each(|(x, _)| resizes(x, acc)),
        Expr::Identity(_) | Expr::Broadcast(..) | Expr::Symbol(_) | Expr::Escape(..) => {}
    }
}

/// The size a mapping alias `e` names resizes the tile dimension (`is_dim`) to, where one does
/// (`None` inside: a resize without a literal size).
fn alias_resize(
    e: &Expr,
    scope: &crate::mapping::Scope,
    is_dim: &dyn Fn(&Layout) -> bool,
) -> Option<Option<u64>> {
    let mut in_aliases = Vec::new();
    resizes_in_aliases(e, scope, 4, &mut in_aliases);
    in_aliases.into_iter().find_map(|(inner, m)| {
        lower(&inner, scope, &mut Vec::new())
            .is_some_and(|l| is_dim(&l))
            .then_some(m)
    })
}

/// The resizes of the mapping aliases `e` names (`{ Keys }` with `type Keys = m![Tk = 256];`),
/// `depth` aliases deep at most: each resized expression and its size.
fn resizes_in_aliases(
    e: &Expr,
    scope: &crate::mapping::Scope,
    depth: usize,
    acc: &mut Vec<(Expr, Option<u64>)>,
) {
    match e {
        Expr::Escape(name, _) if depth > 0 => {
            let Some(body) = scope.aliases.get(&name.text).and_then(|a| a.body.as_ref()) else {
                return;
            };
            let mut rs = Vec::new();
            resizes(body, &mut rs);
            acc.extend(rs.into_iter().map(|(inner, n, _)| (inner.clone(), n)));
            resizes_in_aliases(body, scope, depth - 1, acc);
        }
        Expr::Op { inner, .. } => resizes_in_aliases(inner, scope, depth, acc),
        Expr::Group(x, _) => resizes_in_aliases(x, scope, depth, acc),
        Expr::Pair(xs, _) => xs
            .iter()
            .for_each(|x| resizes_in_aliases(x, scope, depth, acc)),
        Expr::LinComb(xs, _) => xs
            .iter()
            .for_each(|(x, _)| resizes_in_aliases(x, scope, depth, acc)),
        _ => {}
    }
}

/// `core` of a dimension written `core = m # p` (an earlier tile padded back to its length).
fn resized_then_padded(e: &Expr) -> Option<&Expr> {
    let Expr::Op {
        inner,
        op: MapOp::Pad { .. },
        ..
    } = strip_group(e)
    else {
        return None;
    };
    match strip_group(inner) {
        Expr::Op {
            inner: core,
            op: MapOp::Resize,
            ..
        } => Some(core),
        _ => None,
    }
}

fn strip_group(e: &Expr) -> &Expr {
    match e {
        Expr::Group(inner, _) => strip_group(inner),
        Expr::Pair(terms, _) if terms.len() == 1 => strip_group(&terms[0]),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::tile;

    #[test]
    fn manual_tiles_are_consistent() {
        // L823-L824 and L963 (B / 32 = 2 # 16, starts 0..15).
        let ax = "A = 8, B = 512";
        assert!(tile(ax, "tile::<m![B], 2, m![A, B = 2 # 4]>(2)").is_empty());
        assert!(
            tile(
                ax,
                "tile::<m![B / 32], 2, m![A, B / 32 = 2 # 16, B % 32]>(14)"
            )
            .is_empty()
        );
        assert!(tile(ax, "tile::<m![B / 32], 1, m![A, B % 32 # 512]>(15)").is_empty());
        assert!(
            tile(
                ax,
                "tile::<m![B / 32], 2, m![A, B / 32 = 2 # 16, B % 32]>(i)"
            )
            .is_empty()
        );
    }

    #[test]
    fn inconsistent_tiles() {
        let ax = "A = 8, B = 512";
        let bad = ["MAP-009".to_string()];
        assert_eq!(
            tile(
                ax,
                "tile::<m![B / 32], 2, m![A, B / 32 = 2 # 16, B % 32]>(15)"
            ),
            bad
        );
        assert_eq!(
            tile(
                ax,
                "tile::<m![B / 32], 2, m![A, B / 32 = 3 # 16, B % 32]>(0)"
            ),
            bad
        );
        assert_eq!(tile(ax, "tile::<m![B / 32], 17, m![A, B]>(0)"), bad);
        assert_eq!(tile(ax, "tile::<m![B / 32], 0, m![A, B]>(0)"), bad);
        assert_eq!(tile(ax, "tile::<m![B / 32], 2, m![A, B]>(0)"), bad);
        // Huge constants do not overflow.
        assert_eq!(
            tile(
                ax,
                "tile::<m![B], 2, m![A, B = 2 # 512]>(18446744073709551615)"
            ),
            bad
        );
    }
}

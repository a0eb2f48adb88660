//! MAP: well-formedness of mapping expressions (constraints.md §3). MAP-001..008 are found
//! while a mapping is lowered to its normal form (`crate::mapping::lower`), which records an
//! [`Invalid`] problem; [`diagnostic`] reports it. MAP-009 (tile views), MAP-010 (storage
//! coverage) and MAP-011 (DMA factorization) read the function's model.

use std::collections::BTreeMap;

use super::context::FnContext;
use crate::derive::DeriveError;
use crate::derive::dma::Media;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::ast::{Expr, Name, Op as MapOp};
use crate::mapping::layout::Dim;
use crate::mapping::problem::Invalid;
use crate::mapping::{lower, parse};
use crate::model::{Kind, Method, Slot, Step, TensorTy};
use crate::rule::{Generations, Rule, Status};

pub const MAP_001: Rule = Rule {
    code: "MAP-001",
    name: "stride-must-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E / n` needs `n` to divide `E::SIZE`",
    docs: "Stride keeps every n-th buffer position of its operand, so the operand's size must be a \
           multiple of n; the library asserts \"Stride size must divide the original size\" at const \
           evaluation. Pad the operand first: `E # k / n` with k the next multiple of n.",
    bad: "axes![A = 63]; type E = m![A / 8];",
    good: "axes![A = 63]; type E = m![A # 64 / 8];",
    manual: "L873, L5588",
    generations: Generations::Both,
};

pub const MAP_002: Rule = Rule {
    code: "MAP-002",
    name: "modulo-must-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E % n` needs `n` to divide `E::SIZE`",
    docs: "Modulo keeps the first n positions of its operand as the inner block of a split; the \
           library asserts \"Modulo size must divide the original size\". Pad the operand first: \
           `E # k % n` with k the next multiple of n.",
    bad: "axes![A = 15]; type E = m![A % 4];",
    good: "axes![A = 15]; type E = m![A # 16 % 4];",
    manual: "L891, L1027",
    generations: Generations::Both,
};

pub const MAP_003: Rule = Rule {
    code: "MAP-003",
    name: "padding-must-not-shrink",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E # n` pads *to* n positions, so `n >= E::SIZE`",
    docs: "Padding creates a buffer of n positions whose tail maps to no tensor element. A pad \
           smaller than its operand is not a padding: some Fetch/Commit pages of the manual write \
           `# n` as \"add n\", but the formal definition (and `E # E::SIZE` being the identity) is \
           pad-to-size (constraints.md §22 A-6). If you meant to add n positions, write \
           `# (size + n)`; if you meant to keep fewer, use resize `= n`.",
    bad: "axes![C = 2]; type E = m![C # 6];",
    good: "axes![C = 2]; type E = m![C # 8];",
    manual: "L741-L778, L1027, L7656",
    generations: Generations::Both,
};

pub const MAP_004: Rule = Rule {
    code: "MAP-004",
    name: "resize-must-shrink",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`E = n` truncates, so `n <= E::SIZE`",
    docs: "Resize keeps the first n positions of its operand and discards the rest; it only \
           shrinks. A larger n would read past the operand: use padding `# n` to grow a dimension.",
    bad: "axes![D = 3]; type E = m![D = 5];",
    good: "axes![D = 3]; type E = m![D = 2];",
    manual: "L780, L810, L831",
    generations: Generations::Both,
};

pub const MAP_005: Rule = Rule {
    code: "MAP-005",
    name: "undeclared-axis",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every symbol in `m![...]` must be declared with its size in `axes![...]`",
    docs: "A symbol takes its size from the `axes!` declaration; an undeclared symbol has no size \
           and no `AxisName` type. Declare it (`axes![X = 16]`) or fix the spelling. Declaring the \
           same axis twice with different sizes is reported here too.",
    bad: "axes![A = 8]; type E = m![A, X];",
    good: "axes![A = 8, X = 16]; type E = m![A, X];",
    manual: "L588, L625, L5360",
    generations: Generations::Both,
};

pub const MAP_006: Rule = Rule {
    code: "MAP-006",
    name: "unknown-mapping-alias",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`{ T }` must name a mapping type alias (`type T = m![...]`), without cycles",
    docs: "An escape splices a named mapping into another. The name must resolve to a \
           `type T = m![...];` alias in scope, and aliases must not refer to themselves through \
           escapes. Generic parameters (`{ Time }` inside a generic function) are accepted and \
           left unknown.",
    bad: "type E = m![{ L }, B];",
    good: "type L = m![A]; type E = m![{ L }, B];",
    manual: "L972-L984",
    generations: Generations::Both,
};

pub const MAP_007: Rule = Rule {
    code: "MAP-007",
    name: "mapping-equivalence",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Mappings are compared by meaning (same SIZE and map), not by spelling",
    docs: "Two mappings are equivalent when they have the same size and send every buffer position \
           to the same tensor index. visa-lint compares the canonical normal forms it computes from \
           the manual's laws (identity of pairs, stride/modulo decomposition, pair projection, \
           associativity, idempotent operations, modulo by 1). This is infrastructure for every \
           other rule; it reports nothing by itself.",
    bad: "",
    good: "type E = m![B / 64, B % 64]; // same as m![B]",
    manual: "L1017-L1028, L578",
    generations: Generations::Both,
};

pub const MAP_008: Rule = Rule {
    code: "MAP-008",
    name: "skew-and-linear-combination",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A skewed axis needs an explicit logical size (`B' = 4`); linear combinations follow the size formula",
    docs: "A skewed axis `B' = B - A` has no size of its own: the manual writes `m![A, B' = 4]` to \
           give it one, and coordinates wrap modulo the base axis. A linear combination \
           `$(e1: n1, ..., ed: nd)` has size `1 + sum((size(ek) - 1) * nk)` and may send one buffer \
           position to several tensor indices (sliding windows).",
    bad: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B'];",
    good: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B' = 4];",
    manual: "L986-L1016",
    generations: Generations::Both,
};

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

pub const MAP_010: Rule = Rule {
    code: "MAP-010",
    name: "storage-coverage",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A storage mapping must place every element of the logical tensor",
    docs: "Chip x Cluster x Slice x Element together must give every element of the tensor one \
           position (L149). visa-lint accounts the factors of each axis over all of a type's \
           mappings and reports three cases. (1) Error: the DM destination of `to_dm` must hold \
           whole every axis its source holds whole (`A / 8` in Slice without `A % 8` anywhere \
           drops 7 of every 8 rows). This is what `furiosa_visa_std` asserts on every transfer: \
           the destination mapping must divide by the source's, or it panics with \
           \"[TensorViewMut::write_transpose] failed to divide mapping expressions for \
           transpose\". (2) Warning: an HBM tensor type that holds only part of an axis it \
           mentions (`m![R / 4, B]` with R = 8 keeps rows 0 and 4). The library does not check \
           this, a partial axis is a sub-sampled tensor, and the vendor's tested examples use \
           it on purpose; the warning names the risk that the other elements are silently not \
           there. (3) Warning: a DMA whose destination iterates a factor the source holds only \
           in part (`A / 8` of a source with `A % 8`). The library's transfers allow this as a \
           broadcast (the destination repeats what the source has), so it runs; the warning \
           names the risk that the destination's extra positions are copies, not data. Axes \
           present only in the destination are broadcasts too (replicated, stride 0, L1557): \
           the manual uses them deliberately (GEMM L497 keeps `J / 32` in `a`'s Slice), so they \
           are accepted and not reported. The fetch/commit and `BufTensor` cases of an \
           insufficient source are SEQ-006's.",
    bad: "axes![A = 2048, B = 16];\nlet dm: DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![B]> = a.to_dm(&mut ctx.tdma, 0); // a: m![A, B]",
    good: "let dm: DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8, B]> = a.to_dm(&mut ctx.tdma, 0);",
    manual: "L149, L1155-L1159, L1557",
    generations: Generations::Both,
};

pub const MAP_011: Rule = Rule {
    code: "MAP-011",
    name: "factorization-compatibility",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Source and destination must split each axis at points forming a divisibility chain",
    docs: "To move data between two mappings the compiler decomposes each axis into a common \
           refinement (inner, intersection, outer, L1682); split points such as {1, 5, 15} and \
           {1, 3, 15} for one axis have none. visa-lint checks this for the DMA transfers \
           (`to_dm`, `to_hbm` from DM) with the stream the compiler infers from the destination; \
           the same failure at a fetch, commit or `BufTensor` read/write is SEQ-007's. Split the \
           axis by the same factors on both sides.",
    bad: "axes![A = 15, B = 64]; // a: HbmTensor<i8, m![1], m![A % 5, A / 5, B]>\nlet dm: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A % 3, A / 3, B]> = a.to_dm(&mut ctx.tdma, 0);",
    good: "let dm: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A % 5, A / 5, B]> = a.to_dm(&mut ctx.tdma, 0);",
    manual: "L1660-L1683",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    MAP_001, MAP_002, MAP_003, MAP_004, MAP_005, MAP_006, MAP_007, MAP_008, MAP_009, MAP_010,
    MAP_011,
];

/// The diagnostic of a mapping that breaks the notation's rules (MAP-001..006, MAP-008), as
/// lowering found it.
pub fn diagnostic(p: &Invalid) -> Diagnostic {
    match p {
        Invalid::ZeroSizeAxis { name, at } => Diagnostic::new(
            &MAP_005,
            *at,
            format!("axis `{name}` is declared with size 0; an axis needs at least one index"),
        ),
        Invalid::AxisRedeclared {
            name,
            at,
            size,
            was,
            first,
        } => Diagnostic::new(
            &MAP_005,
            *at,
            format!("axis `{name}` is declared again with size {size} (it was {was})"),
        )
        .with_related(*first, "first declared here"),
        Invalid::Undeclared {
            name,
            alias,
            generic,
        } => undeclared(name, *alias, *generic),
        Invalid::UnsizedSkew { name, size } => Diagnostic::new(
            &MAP_008,
            name.span,
            format!(
                "skewed axis `{0}` needs an explicit logical size, e.g. `{0} = {size}`",
                name.text
            ),
        ),
        Invalid::DivideByZero { op, at } => {
            let (rule, what) = divide_rule(*op);
            Diagnostic::new(rule, *at, format!("{what} by 0 is undefined"))
        }
        Invalid::NotDivisible {
            op,
            at,
            op_span,
            operand,
            operand_end,
            size,
            n,
        } => not_divisible(*op, *at, *op_span, operand, *operand_end, *size, *n),
        Invalid::ShortPad {
            at,
            arg,
            op_span,
            operand,
            size,
            n,
        } => short_pad(*at, *arg, *op_span, operand, *size, *n),
        Invalid::ZeroResize { at } => {
            Diagnostic::new(&MAP_004, *at, "resize to 0 leaves no positions")
        }
        Invalid::GrowingResize {
            at,
            op_span,
            operand,
            size,
            n,
        } => Diagnostic::new(
            &MAP_004,
            *at,
            format!(
                "resize `= {n}` can only shrink, but `{operand}` has size {size}; use padding `# {n}` to grow it"
            ),
        )
        .with_edit(format!("pad to {n}: `# {n}`"), true, *op_span, "#"),
        Invalid::UnknownAlias { at, name, axis } => {
            let msg = if *axis {
                format!("unknown mapping alias `{name}`; `{name}` is an axis: write it without braces")
            } else {
                format!(
                    "unknown mapping alias `{name}`; define it with `type {name} = m![...];`"
                )
            };
            Diagnostic::new(&MAP_006, *at, msg)
        }
        Invalid::SizeOfOwnAlias { name } => Diagnostic::new(
            &MAP_006,
            name.span,
            format!("`{}::SIZE` refers to the alias being defined", name.text),
        ),
        Invalid::SizeOfUnknown { name } => Diagnostic::new(
            &MAP_005,
            name.span,
            format!(
                "`{0}::SIZE`: `{0}` is neither a declared axis nor a mapping alias",
                name.text
            ),
        ),
        Invalid::AliasCycle { at, cycle } => alias_cycle(*at, cycle),
    }
}

/// MAP-005 on an undeclared axis; a name that is a mapping (an alias or a generic parameter)
/// is to be escaped, and an alias's escape is the fix.
fn undeclared(name: &Name, alias: bool, generic: bool) -> Diagnostic {
    let n = &name.text;
    let msg = if alias || generic {
        format!("undeclared axis `{n}`; `{n}` is a mapping: escape it as `{{ {n} }}`")
    } else {
        format!("undeclared axis `{n}`: declare it with its size in `axes![...]`")
    };
    let d = Diagnostic::new(&MAP_005, name.span, msg);
    if alias {
        return d.with_edit(
            format!("escape the alias: `{{ {n} }}`"),
            true,
            name.span,
            format!("{{ {n} }}"),
        );
    }
    d
}

/// MAP-001/002 on a stride or modulo that does not divide its operand's size, with the
/// padding that makes it divide.
fn not_divisible(
    op: MapOp,
    at: Span,
    op_span: Span,
    operand: &str,
    operand_end: u32,
    size: u64,
    n: u64,
) -> Diagnostic {
    let (rule, what) = divide_rule(op);
    let sym = op.symbol();
    let d = Diagnostic::new(
        rule,
        at,
        format!(
            "{what} size must divide the original size: `{operand}` has size {size}, which {n} does not divide"
        ),
    )
    .with_related(op_span, format!("`{sym} {n}`"));
    match size.div_ceil(n).checked_mul(n) {
        Some(k) => d.with_edit(
            format!("pad to {k} first: `# {k} {sym} {n}`"),
            true,
            Span {
                start: operand_end,
                end: operand_end,
            },
            format!(" # {k}"),
        ),
        None => d,
    }
}

/// MAP-003 on `# n` with `n` no larger than what it pads: padding adds, or a resize keeps.
fn short_pad(at: Span, arg: Span, op_span: Span, operand: &str, size: u64, n: u64) -> Diagnostic {
    let mut d = Diagnostic::new(
        &MAP_003,
        at,
        format!(
            "`# {n}` pads *to* {n} positions, but `{operand}` already has {size}; did you mean `# {}` (add {n}), or resize `= {n}`?",
            size.saturating_add(n)
        ),
    );
    if let Some(total) = size.checked_add(n) {
        d = d.with_edit(
            format!("add {n} padding positions: `# {total}`"),
            false,
            arg,
            total.to_string(),
        );
    }
    if n > 0 {
        d = d.with_edit(
            format!("keep the first {n} positions: `= {n}`"),
            false,
            op_span,
            "=",
        );
    }
    d
}

/// MAP-006 on aliases defined in a cycle, each of them named.
fn alias_cycle(at: Span, cycle: &[Name]) -> Diagnostic {
    let names: Vec<&str> = cycle
        .iter()
        .chain(cycle.first())
        .map(|n| n.text.as_str())
        .collect();
    let d = Diagnostic::new(
        &MAP_006,
        at,
        format!("mapping alias cycle: {}", names.join(" -> ")),
    );
    cycle.iter().skip(1).fold(d, |d, n| {
        d.with_related(n.span, format!("`{}` is part of the cycle", n.text))
    })
}

/// The rule of a stride (MAP-001) or a modulo (MAP-002), and its name in messages.
fn divide_rule(op: MapOp) -> (&'static Rule, &'static str) {
    if op == MapOp::Stride {
        (&MAP_001, "Stride")
    } else {
        (&MAP_002, "Modulo")
    }
}

/// The MAP rules that need a function's model (views, storage coverage, moves between
/// layouts); MAP-001..008 are found while mappings are lowered ([`diagnostic`]).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if step.method == Method::Tile {
                check_tile(cx, step, out);
            }
        }
    }
    check_coverage(cx, out);
    check_moves(cx, out);
}

/// The body of `m![...]` and its offset in `text`.
fn body(text: &str) -> Option<(usize, &str)> {
    let open = text.find("m![")? + 3;
    let close = text.rfind(']')?;
    (close >= open).then(|| (open, &text[open..close]))
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

/// MAP-009: `.tile::<Dim, SIZE, TileMapping>(start)` (L813-L832, L956-L971).
fn check_tile(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let [dim, size, tile] = step.generics.as_slice() else {
        return;
    };
    let Some((_, dim_body)) = body(&dim.text) else {
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
    let Some(n) = lit(&size.text) else { return };
    let ds = dim_l.size;
    if n == 0 || n > ds {
        out.push(Diagnostic::new(
            &MAP_009,
            size.span,
            format!(
                "the tile size {n} must be between 1 and the tile dimension's size: `{}` has {ds} positions",
                dim.text
            ),
        ));
        return;
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
                dim.text,
                ds - n
            ),
        ));
    }
    let Some((off, tile_body)) = body(&tile.text) else {
        return;
    };
    let Ok(expr) = parse::parse_mapping(tile_body) else {
        return;
    };
    let mut rs = Vec::new();
    resizes(&expr, &mut rs);
    let base = tile.span.start.saturating_add(off as u32);
    let found = rs.iter().find(|(inner, _, _)| {
        lower(inner, cx.scope, &mut Vec::new())
            .is_some_and(|l| l == dim_l || retiled.as_ref() == Some(&l))
    });
    match found {
        Some((_, Some(m), sp)) if *m != n => {
            let sp = shift(*sp, base);
            out.push(
                Diagnostic::new(
                    &MAP_009,
                    sp,
                    format!(
                        "the tile mapping resizes `{}` to {m}, but the tile size is {n}: the view would {} the tile",
                        dim_body.trim(),
                        if *m > n { "read past" } else { "drop part of" }
                    ),
                )
                .with_related(size.span, "the tile size")
                .with_edit(format!("resize to the tile size {n}"), true, sp, n.to_string()),
            );
        }
        Some(_) => {}
        // `B / 32 = 1` simplifies to `m![1]` (L971); a whole-dimension tile needs no resize.
        None if n == 1 || n == ds => {}
        None => out.push(
            Diagnostic::new(
                &MAP_009,
                tile.span,
                format!(
                    "the tile mapping must resize the tile dimension `{}` to the tile size, as `{} = {n} # {ds}`; it has no such term",
                    dim_body.trim(),
                    dim_body.trim()
                ),
            )
            .with_related(dim.span, "the tile dimension"),
        ),
    }
}

/// The slots that place a stored tensor's elements.
const PLACES: [Slot; 5] = [
    Slot::Chip,
    Slot::Cluster,
    Slot::Slice,
    Slot::Row,
    Slot::Element,
];

fn digit_text(axis: &str, lo: u64, hi: u64, size: u64) -> String {
    match (lo, hi >= size) {
        (1, true) => axis.to_string(),
        (1, false) => format!("{axis} % {hi}"),
        (_, true) => format!("{axis} / {lo}"),
        _ => format!("{axis} / {lo} % {}", hi / lo.max(1)),
    }
}

/// Which part of each axis a type places: axis -> (size, [(coef, valid)], first slot).
type Placed = BTreeMap<String, (u64, Vec<(u64, u64)>, Option<Slot>)>;

/// The digits of every axis `ty`'s placing mappings hold; `None` when a mapping is unknown or
/// irregular.
fn placed(ty: &TensorTy) -> Option<Placed> {
    let mut per = Placed::new();
    for s in PLACES {
        if !ty.kind.params().contains(&s) {
            continue;
        }
        let l = ty.get(s)?.layout.as_deref()?;
        for d in &l.dims {
            match d {
                Dim::Opaque(_) => return None,
                Dim::Factor(f) => {
                    let Some(a) = &f.axis else { continue };
                    if a.skew.is_some() {
                        return None;
                    }
                    let e = per
                        .entry(a.name.to_string())
                        .or_insert((a.size, Vec::new(), Some(s)));
                    e.1.push((f.coef, f.valid));
                }
            }
        }
    }
    Some(per)
}

/// The first digit range `[lo, hi)` of an axis of `size` that no factor places.
fn gap(size: u64, fs: &[(u64, u64)]) -> Option<(u64, u64)> {
    let mut fs = fs.to_vec();
    fs.sort_unstable();
    let mut cur = 1u64;
    for &(coef, valid) in &fs {
        if cur >= size {
            return None;
        }
        if coef > cur {
            return Some((cur, coef));
        }
        let end = coef.saturating_mul(valid);
        if end > cur {
            cur = end;
        }
    }
    (cur < size).then_some((cur, size))
}

/// The axes `ty` places completely.
fn whole_axes(ty: &TensorTy) -> Option<Vec<(String, u64)>> {
    Some(
        placed(ty)?
            .into_iter()
            .filter(|(_, (size, fs, _))| gap(*size, fs).is_none())
            .map(|(a, (size, _, _))| (a, size))
            .collect(),
    )
}

/// MAP-010: every element of the logical tensor `logical` (axes and sizes) has a position in
/// `ty`; reports the first unplaced digit range of each axis.
#[allow(clippy::too_many_arguments)]
fn coverage(
    ty: &TensorTy,
    logical: &[(String, u64)],
    fallback: Span,
    call: Option<&Step>,
    who: &str,
    severity: Severity,
    out: &mut Vec<Diagnostic>,
) {
    let Some(per) = placed(ty) else { return };
    for (axis, size) in logical {
        let (range, slot) = match per.get(axis) {
            Some((size, fs, slot)) => (gap(*size, fs), *slot),
            None => (Some((1, *size)), None),
        };
        let Some((lo, hi)) = range else { continue };
        // Where the axis is placed in part; the fix below adds the rest to the Element.
        let holder = slot.and_then(|s| ty.get(s)).and_then(|mv| mv.span);
        let element = ty.get(Slot::Element).filter(|e| e.span.is_some());
        let missing = digit_text(axis, lo, hi, *size);
        let why = if severity == Severity::Error {
            "so those elements have no position"
        } else {
            "so the tensor is sub-sampled: the library accepts it, but only the placed elements \
             exist"
        };
        let msg = format!(
            "{who} places {} of `{axis}` ({axis} = {size}): no mapping of its Chip, Cluster, \
             Slice or Element holds `{missing}`, {why}; add `{missing}` (for example to the \
             Element) if every element is meant",
            if slot.is_some() { "only part" } else { "none" }
        );
        // The Element the fix extends is the primary span (ARCHITECTURE.md, "Where a diagnostic
        // points"); the mapping that holds the rest of the axis is related.
        let fixable = element.is_some_and(|e| body(&e.text).is_some());
        let at = if fixable {
            element.and_then(|e| e.span)
        } else {
            holder.or_else(|| element.and_then(|e| e.span))
        };
        let mut d = match call {
            Some(step) => super::context::at_arg(&MAP_010, step, at, msg),
            None => Diagnostic::new(&MAP_010, at.unwrap_or(fallback), msg),
        }
        .with_severity(severity);
        if let Some(h) = holder
            && Some(h) != at
        {
            d = d.with_related(h, format!("`{axis}` is placed here only in part"));
        }
        if fixable
            && let Some(e) = element
            && let Some(sp) = e.span
            && let Some((_, b)) = body(&e.text)
        {
            let b = b.trim();
            let text = if b == "1" || b.is_empty() {
                format!("m![{missing}]")
            } else {
                format!("m![{missing}, {b}]")
            };
            d = d.with_edit(format!("place `{missing}` in the Element"), false, sp, text);
        }
        out.push(d);
    }
}

/// MAP-010 for the model: HBM tensors hold their whole tensor (every axis they mention; a
/// warning, the library accepts sub-sampled tensors), and a DMA destination in DM holds every
/// axis its source holds whole (an error: the library's transfer asserts it). Axes only in the
/// destination are broadcasts (stride 0, L1557) and are accepted.
fn check_coverage(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for t in &cx.model.tensors {
        if t.ty.kind != Kind::Hbm {
            continue;
        }
        let Some(per) = placed(&t.ty) else { continue };
        let logical: Vec<(String, u64)> =
            per.iter().map(|(a, (s, _, _))| (a.clone(), *s)).collect();
        coverage(
            &t.ty,
            &logical,
            t.span,
            None,
            &format!("`{}`", t.name),
            Severity::Warning,
            out,
        );
    }
    for chain in &cx.model.chains {
        for step in &chain.steps {
            if !step.method.is_dm_hbm_dma() {
                continue;
            }
            let (Some(i), Some(o)) = (&step.input, &step.output) else {
                continue;
            };
            if !matches!(i.kind, Kind::Hbm | Kind::HbmView | Kind::Dm | Kind::DmView)
                || o.kind != Kind::Dm
            {
                continue;
            }
            let Some(logical) = whole_axes(i) else {
                continue;
            };
            coverage(
                o,
                &logical,
                step.span,
                Some(step),
                &format!("the `{}` destination", step.method),
                Severity::Error,
                out,
            );
        }
    }
}

/// MAP-010 (moves) and MAP-011 for DMA transfers (`to_dm`, `to_hbm`): the fetch/commit and
/// `BufTensor` read/write cases are SEQ-006/SEQ-007's.
fn check_moves(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.dma_ops {
        let what = match (op.src_media, op.dst_media) {
            (Media::Hbm, Media::Dm) => "HBM-to-DM",
            (Media::Dm, Media::Hbm) => "DM-to-HBM",
            (Media::Dm, Media::Dm) => "DM-to-DM",
            (Media::Hbm, Media::Hbm) => "HBM-to-HBM",
        };
        match &op.pair {
            Err(DeriveError::Incompatible {
                axis,
                buf_split,
                stream_split,
            }) => {
                let (a, b) = (
                    (*buf_split).min(*stream_split),
                    (*buf_split).max(*stream_split),
                );
                out.push(Diagnostic::new(
                    &MAP_011,
                    op.span,
                    format!(
                        "this {what} transfer cannot be factorized: `{axis}` is split at {buf_split} on one side and at {stream_split} on the other, and {a} does not divide {b}; split `{axis}` by the same factors in both types"
                    ),
                ));
            }
            Err(DeriveError::Insufficient {
                axis, needed, have, ..
            }) => out.push(
                Diagnostic::new(
                    &MAP_010,
                    op.span,
                    format!(
                        "this {what} transfer's destination iterates `{needed}`, but the source holds only `{have}` of `{axis}`: the library copies it as a broadcast, so the destination's extra positions repeat the source's elements instead of holding new ones"
                    ),
                )
                .with_severity(Severity::Warning),
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(src: &str) -> Vec<String> {
        crate::db::analyse_text(src)
            .diagnostics()
            .iter()
            .map(|d| d.code().to_string())
            .filter(|c| c.starts_with("MAP"))
            .collect()
    }

    fn tile(axes: &str, call: &str) -> Vec<String> {
        codes(&format!(
            "use furiosa_visa_std::prelude::*;\naxes![{axes}];\n\
             fn t(x: &HbmTensor<bf16, m![1], m![A, B]>) {{\n let v = x.view();\n let t = v.{call};\n}}\n"
        ))
    }

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

    #[test]
    fn gaps() {
        assert_eq!(gap(2048, &[(8, 256)]), Some((1, 8)));
        assert_eq!(gap(2048, &[(8, 256), (1, 8)]), None);
        assert_eq!(gap(15, &[(1, 4), (4, 4)]), None);
        assert_eq!(gap(512, &[(1, 32)]), Some((32, 512)));
        assert_eq!(gap(u64::MAX, &[(1, u64::MAX)]), None);
        assert_eq!(digit_text("A", 8, 64, 512), "A / 8 % 8");
    }

    fn dma(hbm: &str, dm: &str) -> Vec<String> {
        codes(&format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 15, B = 64, C = 2048];\n\
             #[device(chip = 1)]\nfn k(ctx: &mut Context, a: &HbmTensor<i8, m![1], {hbm}>) {{\n\
             let d: DmTensor<i8, m![1], m![1 # 2], {dm}> = a.to_dm(&mut ctx.tdma, 0);\n}}\n"
        ))
    }

    #[test]
    fn dma_coverage_and_factorization() {
        assert!(dma("m![C, B]", "m![C / 8 # 256], m![C % 8, B]").is_empty());
        assert_eq!(dma("m![C, B]", "m![C / 8 # 256], m![B]"), ["MAP-010"]);
        assert_eq!(dma("m![C, B]", "m![C / 8 # 256], m![C % 8]"), ["MAP-010"]);
        // Broadcast: `A` only in the destination is accepted.
        assert!(dma("m![B]", "m![A # 256], m![B]").is_empty());
        // An HBM tensor holding part of an axis is reported on its own type.
        assert_eq!(
            dma("m![C % 8, B]", "m![1 # 256], m![C % 8, B]"),
            ["MAP-010"]
        );
        assert_eq!(
            dma("m![A % 5, A / 5, B]", "m![1 # 256], m![A % 3, A / 3, B]"),
            ["MAP-011"]
        );
        assert!(dma("m![A % 5, A / 5, B]", "m![1 # 256], m![A % 5, A / 5, B]").is_empty());
    }

    #[test]
    fn a_broadcast_neither_places_nor_subsamples_an_axis() {
        // furiosa-opt-std's `m![N]` (bias_partition_broadcast.rs at ebb846a): live positions
        // without a coordinate, so coverage reads only the axes around it.
        assert!(dma("m![C, 2, B]", "m![C / 8 # 256], m![C % 8, B]").is_empty());
        assert!(dma("m![C, B]", "m![C / 8, 2 # 256], m![C % 8, B]").is_empty());
        // A partial axis is still reported, broadcast or not.
        assert_eq!(
            dma("m![2, C % 8, B]", "m![1 # 256], m![C % 8, B]"),
            dma("m![C % 8, B]", "m![1 # 256], m![C % 8, B]")
        );
    }
}

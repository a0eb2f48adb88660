//! Lowering: a parsed mapping plus the axes and aliases in scope -> its normal form
//! ([`Layout`]), with the [`Problem`]s found on the way.
//!
//! A mapping that cannot be evaluated (an error, a generic escape such as `{ Time }`, an
//! unsupported notation) lowers to `None`; rules that need its value then stay silent.

use super::ast::*;
use super::layout::{Axis, Layout, Skew};
use super::problem::{Invalid, Problem, Unevaluated};
use crate::diagnostic::Span;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A declared axis with the span of its declaration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisEntry {
    pub axis: Axis,
    pub decl: Span,
}

/// The names a mapping can refer to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    pub axes: HashMap<String, AxisEntry>,
    /// `type X = m![...]`: the alias body, spans already in file coordinates.
    pub aliases: HashMap<String, Alias>,
    /// Generic type parameters (`Time: M`), which may be escaped but have no known value.
    pub generics: HashSet<String>,
    /// The generic mapping parameters a call binds (`Sl` is `m![N / 2]` at this call): in
    /// `aliases` for what they stand for, but written at the call, not by a `type`.
    pub bound: HashSet<String>,
    /// Integer constants in scope (`const WIN: usize = 4;`, a const parameter a call binds):
    /// an escaped size that names one (`m![B = { WIN }]`) is its value.
    pub consts: HashMap<String, u64>,
    /// Element-type parameters a call binds (`D2` is `bf16` at `seal::<f32, bf16, ..>`): a
    /// tensor or stream written with one (`cast::<D2, Pkt>()`) has that element type.
    pub dtypes: HashMap<String, crate::dtype::Dtype>,
    /// Glob imports that could not be read (`use other::*`): an undeclared name may come from
    /// one of them, so it is unknown rather than an error.
    pub unresolved: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    pub name: Name,
    /// `None` when the body did not parse (that was reported at the alias).
    pub body: Option<Expr>,
    /// Its type and const parameters (`type LaneBus<Ln> = m![{ Ln } # 8];`): a use gives
    /// them (`LaneBus<Lanes>`), and the body is read with them bound.
    pub generics: Vec<String>,
}

impl Scope {
    /// The alias `name` is, through the names it is imported under (`use self::RowTile as
    /// Rows;` is `type Rows = m![{ RowTile }]`): the first alias that is not such a rename.
    pub fn alias_through_renames(&self, name: &str) -> Option<&Alias> {
        let mut alias = self.aliases.get(name)?;
        for _ in 0..8 {
            match &alias.body {
                Some(Expr::Escape(target, _)) if alias.generics.is_empty() => {
                    alias = self.aliases.get(&target.text)?;
                }
                _ => break,
            }
        }
        Some(alias)
    }

    /// Binds a qualified path (`layouts::Slice`, `super::A`) to the axis or alias `name` is,
    /// so that `{ layouts::Slice }` and `layouts::A::SIZE` find it as the plain name would.
    pub fn bind_path(&mut self, path: &str, name: &str) {
        if let Some(a) = self.axes.get(name).cloned() {
            self.axes.insert(path.to_string(), a);
        }
        if let Some(a) = self.aliases.get(name).cloned() {
            self.aliases.insert(path.to_string(), a);
        }
    }

    /// Adds the declarations of one `axes![...]`, reporting bad sizes, conflicting
    /// redeclarations and sizes beyond 64 bits.
    pub fn declare_axes(&mut self, decls: &[AxisDecl], diags: &mut Vec<Problem>) {
        for d in decls {
            let axis = match &d.def {
                AxisDef::Size(size) => {
                    let Some(n) = eval_size(size, self, &mut Vec::new(), diags) else {
                        continue;
                    };
                    if n == 0 {
                        diags.push(
                            Invalid::ZeroSizeAxis {
                                name: d.name.text.clone(),
                                at: size.span(),
                            }
                            .into(),
                        );
                        continue;
                    }
                    Axis::new(&d.name.text, n)
                }
                AxisDef::Skew { base, minus } => {
                    let mut ok = true;
                    for n in [base, minus] {
                        if !self.axes.contains_key(&n.text) {
                            diags.push(undeclared(n, self));
                            ok = false;
                        }
                    }
                    if !ok {
                        continue;
                    }
                    let base_size = self.axes[&base.text].axis.size;
                    Axis {
                        name: d.name.text.as_str().into(),
                        size: base_size,
                        skew: Some(Arc::new(Skew {
                            base: base.text.as_str().into(),
                            base_size,
                            minus: minus.text.as_str().into(),
                        })),
                    }
                }
            };
            if let Some(prev) = self.axes.get_mut(&d.name.text) {
                // The module's own declaration, met again in its environment (which carries
                // no positions): it keeps this one's.
                if prev.axis.size == axis.size && prev.decl == Span::default() {
                    prev.decl = d.span;
                    continue;
                }
                if prev.axis.size != axis.size {
                    diags.push(
                        Invalid::AxisRedeclared {
                            name: d.name.text.clone(),
                            at: d.span,
                            size: axis.size,
                            was: prev.axis.size,
                            first: prev.decl,
                        }
                        .into(),
                    );
                }
                continue;
            }
            self.axes
                .insert(d.name.text.clone(), AxisEntry { axis, decl: d.span });
        }
    }
}

impl Scope {
    /// Lowers each top-level term of a written mapping (`m![A / 8, B]`) on its own, with its
    /// text; `None` when a term does not parse or lower (its problems are reported where the
    /// mapping is written).
    pub fn lowered_terms(&self, text: &str) -> Option<Vec<(String, Layout)>> {
        super::edit::top_terms(text)
            .into_iter()
            .map(|(_, t)| {
                let e = super::parse::parse_mapping(t).ok()?;
                let l = lower(&e, self, &mut Vec::new())?;
                Some((t.to_string(), l))
            })
            .collect()
    }
}

/// Lowers a mapping, reporting its problems into `diags`.
pub fn lower(expr: &Expr, scope: &Scope, diags: &mut Vec<Problem>) -> Option<Layout> {
    let l = Lowerer {
        scope,
        aliases: RefCell::new(HashMap::new()),
        stack: RefCell::new(Vec::new()),
        too_deep: Cell::new(false),
    };
    l.expr(expr, diags, false)
}

struct Lowerer<'a> {
    scope: &'a Scope,
    /// Values of aliases already lowered (their own problems are reported at the alias).
    aliases: RefCell<HashMap<String, Option<Layout>>>,
    /// Aliases being lowered, for cycle detection.
    stack: RefCell<Vec<String>>,
    /// An escape went past [`MAX_ALIAS_NESTING`] (reported at the outermost escape).
    too_deep: Cell<bool>,
}

/// How many aliases deep an escape may reach (`{ T1 }` where `T1 = m![{ T0 }]`, …): lowering
/// follows escapes recursively.
pub const MAX_ALIAS_NESTING: usize = 64;

/// How deeply a lowered layout's opaque digits may nest (windows of strides of linear
/// combinations…): every walk over a layout recurses once per level, and aliases can stack
/// levels that no single mapping body shows.
pub const MAX_LAYOUT_NESTING: u32 = 64;

fn undeclared(name: &Name, scope: &Scope) -> Problem {
    let alias = scope.aliases.contains_key(&name.text);
    if let Some(from) = scope.unresolved.first()
        && !alias
    {
        return Unevaluated::NotRead {
            name: name.clone(),
            from: from.clone(),
            others: scope.unresolved.len() - 1,
        }
        .into();
    }
    Invalid::Undeclared {
        name: name.clone(),
        alias,
        generic: scope.generics.contains(&name.text),
    }
    .into()
}

impl Lowerer<'_> {
    /// Keeps `l` when its nesting is within [`MAX_LAYOUT_NESTING`]; otherwise reports it at
    /// `span`.
    fn within_nesting(&self, l: &Layout, span: Span, diags: &mut Vec<Problem>) -> bool {
        if l.nesting_exceeds(MAX_LAYOUT_NESTING) {
            diags.push(
                Unevaluated::LayoutTooDeep {
                    at: span,
                    limit: MAX_LAYOUT_NESTING,
                }
                .into(),
            );
            return false;
        }
        true
    }

    fn expr(&self, e: &Expr, diags: &mut Vec<Problem>, sized_skew: bool) -> Option<Layout> {
        let v = self.expr_unbounded(e, diags, sized_skew)?;
        // Only operators and linear combinations add a level.
        if matches!(e, Expr::Op { .. } | Expr::LinComb(..))
            && !self.within_nesting(&v, e.span(), diags)
        {
            return None;
        }
        Some(v)
    }

    fn expr_unbounded(
        &self,
        e: &Expr,
        diags: &mut Vec<Problem>,
        sized_skew: bool,
    ) -> Option<Layout> {
        match e {
            Expr::Identity(_) => Some(Layout::identity()),
            Expr::Broadcast(n, _) => Some(Layout::broadcast(*n)),
            Expr::Symbol(name) => {
                let Some(entry) = self.scope.axes.get(&name.text) else {
                    diags.push(undeclared(name, self.scope));
                    return None;
                };
                if entry.axis.skew.is_some() && !sized_skew {
                    diags.push(
                        Invalid::UnsizedSkew {
                            name: name.clone(),
                            size: entry.axis.size,
                        }
                        .into(),
                    );
                }
                Some(Layout::symbol(entry.axis.clone()))
            }
            Expr::Escape(name, span) => self.escape(name, *span, diags),
            Expr::Group(inner, _) => self.expr(inner, diags, false),
            Expr::Pair(terms, _) => {
                let mut acc = Layout::identity();
                let mut ok = true;
                let mut first_span: Option<Span> = None;
                for t in terms {
                    let v = self.expr(t, diags, false);
                    let span = first_span.map_or(t.span(), |s| s.cover(t.span()));
                    first_span = Some(span);
                    match (ok, v) {
                        (true, Some(v)) => match acc.pair(&v) {
                            Ok(p) => acc = p,
                            Err(_) => {
                                diags.push(
                                    Unevaluated::PairOverflow {
                                        at: span,
                                        left: acc.size,
                                        right: v.size,
                                    }
                                    .into(),
                                );
                                ok = false;
                            }
                        },
                        _ => ok = false,
                    }
                }
                ok.then_some(acc)
            }
            Expr::Op {
                inner,
                op,
                op_span,
                arg,
                span,
            } => {
                let skew_operand = *op == Op::Resize && matches!(**inner, Expr::Symbol(_));
                let v = self.expr(inner, diags, skew_operand);
                let n = eval_size(arg, self.scope, &mut self.stack.borrow().clone(), diags)?;
                let v = v?;
                self.op(&v, inner, *op, *op_span, n, arg, *span, diags)
            }
            Expr::LinComb(terms, span) => {
                let mut lowered = Vec::with_capacity(terms.len());
                let mut ok = true;
                for (t, n) in terms {
                    let v = self.expr(t, diags, false);
                    let n = eval_size(n, self.scope, &mut Vec::new(), diags);
                    match (v, n) {
                        (Some(v), Some(n)) => lowered.push((v, n)),
                        _ => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                match Layout::lin_comb(lowered) {
                    Ok(l) => Some(l),
                    Err(_) => {
                        diags.push(Unevaluated::LinCombOverflow { at: *span }.into());
                        None
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        v: &Layout,
        inner: &Expr,
        op: Op,
        op_span: Span,
        n: u64,
        arg: &SizeExpr,
        span: Span,
        diags: &mut Vec<Problem>,
    ) -> Option<Layout> {
        let size = v.size;
        match op {
            Op::Stride | Op::Modulo => {
                if n == 0 {
                    diags.push(Invalid::DivideByZero { op, at: arg.span() }.into());
                    return None;
                }
                if !size.is_multiple_of(n) {
                    diags.push(
                        Invalid::NotDivisible {
                            op,
                            at: span,
                            op_span,
                            operand: what_of(inner),
                            operand_end: inner.span().end,
                            size,
                            n,
                        }
                        .into(),
                    );
                    return None;
                }
                Some(if op == Op::Stride {
                    v.stride(n)
                } else {
                    v.window(n)
                })
            }
            Op::Pad { kind, .. } => {
                if n < size {
                    diags.push(
                        Invalid::ShortPad {
                            at: span,
                            arg: arg.span(),
                            op_span,
                            operand: what_of(inner),
                            size,
                            n,
                        }
                        .into(),
                    );
                    if n == 0 {
                        return None;
                    }
                }
                // `Padding::map` is `L::map(i)` for every i < n, so a short pad truncates.
                Some(v.pad(n, kind))
            }
            Op::Resize => {
                if n == 0 {
                    diags.push(Invalid::ZeroResize { at: arg.span() }.into());
                    return None;
                }
                if n > size {
                    diags.push(
                        Invalid::GrowingResize {
                            at: span,
                            op_span,
                            operand: what_of(inner),
                            size,
                            n,
                        }
                        .into(),
                    );
                }
                Some(v.window(n))
            }
        }
    }

    fn escape(&self, name: &Name, span: Span, diags: &mut Vec<Problem>) -> Option<Layout> {
        if let Some(alias) = self.scope.aliases.get(&name.text) {
            if let Some(v) = self.aliases.borrow().get(&name.text) {
                return v.clone();
            }
            if self.stack.borrow().contains(&name.text) {
                // A cycle: reported once per file by `alias_cycles`.
                return None;
            }
            if self.stack.borrow().len() >= MAX_ALIAS_NESTING {
                // Reported by the outermost escape, whose diagnostics are kept.
                self.too_deep.set(true);
                return None;
            }
            self.stack.borrow_mut().push(name.text.clone());
            // The alias body's own problems are reported where the alias is defined.
            let v = alias
                .body
                .as_ref()
                .and_then(|b| self.expr(b, &mut Vec::new(), false));
            self.stack.borrow_mut().pop();
            if self.stack.borrow().is_empty() && self.too_deep.replace(false) {
                diags.push(
                    Unevaluated::AliasesTooDeep {
                        at: span,
                        name: name.text.clone(),
                        limit: MAX_ALIAS_NESTING,
                    }
                    .into(),
                );
            }
            let v = v.filter(|l| self.within_nesting(l, span, diags));
            self.aliases
                .borrow_mut()
                .insert(name.text.clone(), v.clone());
            return v;
        }
        if self.scope.generics.contains(&name.text) || is_generic_item(self.scope, &name.text) {
            return None;
        }
        diags.push(
            Invalid::UnknownAlias {
                at: span,
                name: name.text.clone(),
                axis: self.scope.axes.contains_key(&name.text),
            }
            .into(),
        );
        None
    }
}

/// An associated mapping of a type parameter or of `Self` (`{ R::Time }` with `R: RowVector`,
/// `{ Self::Row }` in a trait's default): like the parameter, it has no value until a call
/// gives the type (the function is checked again there, with the type's mapping bound).
fn is_generic_item(scope: &Scope, name: &str) -> bool {
    name.split_once("::")
        .is_some_and(|(owner, _)| owner == "Self" || scope.generics.contains(owner))
}

/// A short description of an operand, as messages name it.
fn what_of(e: &Expr) -> String {
    match e {
        Expr::Symbol(n) => n.text.clone(),
        Expr::Escape(n, _) => format!("{{ {} }}", n.text),
        Expr::Identity(_) => "1".into(),
        Expr::Broadcast(n, _) => n.to_string(),
        _ => "the operand".into(),
    }
}

/// Evaluates a size argument (`8`, `B::SIZE`, `(B::SIZE * 2)`, `{ B::SIZE / 8 }`). A named
/// constant of an escaped size (`{ N }`) is its value when the scope knows it
/// ([`Scope::consts`]); otherwise a generic parameter is not evaluated, silently, as a generic
/// escape is, and anything else is reported as [`Unevaluated::NamedConst`].
pub fn eval_size(
    e: &SizeExpr,
    scope: &Scope,
    stack: &mut Vec<String>,
    diags: &mut Vec<Problem>,
) -> Option<u64> {
    match e {
        SizeExpr::Lit(v, _) => Some(*v),
        SizeExpr::SizeOf(name, _) => {
            if let Some(a) = scope.axes.get(&name.text) {
                return Some(a.axis.size);
            }
            if let Some(alias) = scope.aliases.get(&name.text) {
                if stack.contains(&name.text) {
                    diags.push(Invalid::SizeOfOwnAlias { name: name.clone() }.into());
                    return None;
                }
                if stack.len() >= MAX_ALIAS_NESTING {
                    diags.push(
                        Unevaluated::SizeOfTooDeep {
                            name: name.clone(),
                            limit: MAX_ALIAS_NESTING,
                        }
                        .into(),
                    );
                    return None;
                }
                let body = alias.body.as_ref()?;
                stack.push(name.text.clone());
                let l = Lowerer {
                    scope,
                    aliases: RefCell::new(HashMap::new()),
                    stack: RefCell::new(stack.clone()),
                    too_deep: Cell::new(false),
                };
                let v = l.expr(body, &mut Vec::new(), false);
                stack.pop();
                return v.map(|v| v.size);
            }
            if scope.generics.contains(&name.text) {
                return None;
            }
            diags.push(Invalid::SizeOfUnknown { name: name.clone() }.into());
            None
        }
        SizeExpr::Bin(l, op, r, span) => {
            let a = eval_size(l, scope, stack, diags)?;
            let b = eval_size(r, scope, stack, diags)?;
            let v = match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
            };
            if v.is_none() {
                diags.push(Unevaluated::SizeArithmetic { at: *span, op: *op }.into());
            }
            v
        }
        SizeExpr::Escaped(inner, _) => eval_size(inner, scope, stack, diags),
        SizeExpr::Const(name) => {
            if let Some(v) = scope.consts.get(&name.text) {
                return Some(*v);
            }
            if !scope.generics.contains(&name.text) {
                diags.push(Unevaluated::NamedConst { name: name.clone() }.into());
            }
            None
        }
    }
}

/// Reports each cycle among mapping aliases once, at the escape in the body of the cycle's
/// first alias (in the order given) that starts it. An escape of an alias of the environment
/// (`outer`, e.g. `use self::Loop2 as Other;`, written `type Other = m![{ Loop2 }]`) is followed
/// through to the given aliases it reaches.
pub fn alias_cycles(aliases: &[Alias], outer: &HashMap<String, Alias>) -> Vec<Problem> {
    fn escapes(e: &Expr, out: &mut Vec<(String, Span)>) {
        match e {
            Expr::Escape(n, s) => out.push((n.text.clone(), *s)),
            Expr::Group(inner, _) | Expr::Op { inner, .. } => escapes(inner, out),
            Expr::Pair(terms, _) => terms.iter().for_each(|t| escapes(t, out)),
            Expr::LinComb(terms, _) => terms.iter().for_each(|(t, _)| escapes(t, out)),
            Expr::Identity(_) | Expr::Broadcast(..) | Expr::Symbol(_) => {}
        }
    }
    let order: HashMap<&str, usize> = aliases
        .iter()
        .enumerate()
        .map(|(k, a)| (a.name.text.as_str(), k))
        .collect();
    // The given aliases an escape of `name` reaches: itself, or through aliases of the
    // environment (each entered once).
    let reach = |name: &str| -> Vec<usize> {
        let mut found = Vec::new();
        let mut todo = vec![name.to_string()];
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(n) = todo.pop() {
            if !seen.insert(n.clone()) || seen.len() > 4 * MAX_ALIAS_NESTING {
                continue;
            }
            if let Some(&k) = order.get(n.as_str()) {
                found.push(k);
            } else if let Some(body) = outer.get(&n).and_then(|a| a.body.as_ref()) {
                let mut inner = Vec::new();
                escapes(body, &mut inner);
                todo.extend(inner.into_iter().map(|(m, _)| m));
            }
        }
        found
    };
    let edges: Vec<Vec<(usize, Span)>> = aliases
        .iter()
        .map(|a| {
            let mut out = Vec::new();
            if let Some(b) = &a.body {
                escapes(b, &mut out);
            }
            out.into_iter()
                .flat_map(|(n, s)| reach(&n).into_iter().map(move |k| (k, s)))
                .collect()
        })
        .collect();
    let mut reported: HashSet<Vec<usize>> = HashSet::new();
    let mut diags = Vec::new();
    for start in 0..aliases.len() {
        // Depth-first search for paths from `start` back to it through later aliases only, so
        // each cycle is found from its first member. Frames: (alias, next edge to try).
        // An alias already entered from this start is not entered again: every alias is
        // visited once per start, so parallel escapes (`m![{ B }, { B }]` down a chain) cannot
        // make the search exponential. A cycle through `start` is still found if one exists.
        let mut frames: Vec<(usize, usize)> = vec![(start, 0)];
        let mut entered = vec![false; aliases.len()];
        entered[start] = true;
        let mut first_span: Option<Span> = None;
        while let Some(&(node, next)) = frames.last() {
            let Some(&(to, span)) = edges[node].get(next) else {
                frames.pop();
                continue;
            };
            if let Some(top) = frames.last_mut() {
                top.1 += 1;
            }
            if frames.len() == 1 {
                first_span = Some(span);
            }
            let on_path = frames.iter().any(|f| f.0 == to);
            if to == start {
                let mut members: Vec<usize> = frames.iter().map(|f| f.0).collect();
                members.sort_unstable();
                if reported.insert(members) {
                    diags.push(
                        Invalid::AliasCycle {
                            at: first_span.unwrap_or(span),
                            cycle: frames.iter().map(|f| aliases[f.0].name.clone()).collect(),
                        }
                        .into(),
                    );
                }
            } else if to > start && !on_path && !entered[to] {
                entered[to] = true;
                frames.push((to, 0));
            }
        }
    }
    diags
}

/// The layout of a mapping written as `m![...]` (a fix's new text, a term of one), or `None`
/// when it does not parse or lower in `scope`.
pub fn layout_of(text: &str, scope: &Scope) -> Option<Layout> {
    let text = text.trim();
    let body = text.strip_prefix("m![").and_then(|t| t.strip_suffix(']'))?;
    let expr = super::parse::parse_mapping(body).ok()?;
    lower(&expr, scope, &mut Vec::new())
}

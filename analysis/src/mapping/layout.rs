//! The symbolic semantics of mappings: a canonical normal form over *factor lists*.
//!
//! A buffer of `size` positions is read as a mixed-radix number whose digits are the [`Dim`]s,
//! outermost first. A [`Factor`] digit `d` is valid when `d < valid` (the tail is padding) and
//! then adds `d * coef` to its axis' coordinate. Everything is computed on these lists: no
//! operation ever enumerates buffer positions, so axes of size 2^40 cost what axes of size 2^4
//! cost.
//!
//! Operations that cannot be expressed digit by digit (a stride that cuts across two axes, a
//! pad of a pair to a size that is not a multiple of its inner part, linear combinations) are
//! kept exactly as [`Opaque`] dims: `map` stays exact for them, and equality of normal forms is
//! then sufficient but not necessary for equivalence.
//!
//! Padding positions carry their [`PadKind`] (`#`, `#{!}`, `#{0}`): it is part of the normal
//! form, so two mappings that differ only in the kind of their padding are different layouts
//! (as `Padding<L, N, KIND>` are different types for the vendor,
//! `furiosa-mapping-types/src/dsl.rs:206` at ebb846a). A broadcast (`m![2]`) is a factor with
//! no axis whose positions are all valid: live, holding the empty index.

pub use super::ast::PadKind;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::sync::Arc;

/// A declared axis. Two axes are the same axis when their names are equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Axis {
    pub name: Arc<str>,
    pub size: u64,
    /// `B' = B - A`: coordinates of this axis are `B - A`, wrapping modulo `B::SIZE`.
    pub skew: Option<Arc<Skew>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Skew {
    pub base: Arc<str>,
    pub base_size: u64,
    pub minus: Arc<str>,
}

impl Axis {
    pub fn new(name: &str, size: u64) -> Axis {
        Axis {
            name: name.into(),
            size,
            skew: None,
        }
    }
}

/// One digit of the buffer position.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Factor(Factor),
    Opaque(Arc<Opaque>),
}

/// A digit of `extent` values; values `>= valid` are padding of kind `pad`; a valid value `d`
/// adds `d * coef` to `axis`. A factor with `valid == 1` contributes nothing and has no axis
/// (canonical form). A factor with no axis and `valid > 1` is a broadcast: its valid values
/// all hold the empty index. `pad` is [`PadKind::Top`] when no value is padding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Factor {
    pub extent: u64,
    pub valid: u64,
    pub axis: Option<Axis>,
    pub coef: u64,
    pub pad: PadKind,
}

impl Factor {
    /// True when the digit's valid values hold no axis coordinate but there are several: a
    /// broadcast (`m![2]`), live and coordinate-free.
    pub fn is_broadcast(&self) -> bool {
        self.axis.is_none() && self.valid > 1
    }
}

/// A digit whose meaning is a whole sub-mapping.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Opaque {
    pub extent: u64,
    pub kind: OpaqueKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpaqueKind {
    /// Digit `d` is valid when `d < inner.size` and then means `inner(d)`: padding (`extent >
    /// inner.size`, the positions past `inner.size` of the given kind) or truncation (`extent <
    /// inner.size`, the kind [`PadKind::Top`]) of a whole sub-mapping.
    Window(Layout, PadKind),
    /// Digit `d` means `inner(d * stride)`.
    Strided(Layout, u64),
    /// `$(e1: n1, ...)`: digit `d` means every `e1(s1) ∪ ... ` with `sum(sk * nk) == d`.
    LinComb(Vec<(Layout, u64)>),
}

/// A mapping's normal form: its size and its digits, outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub size: u64,
    pub dims: Vec<Dim>,
}

/// A tensor index: axis name -> coordinate; zero coordinates are omitted, as `i![]` does.
pub type Index = BTreeMap<Arc<str>, u128>;

/// Checked arithmetic failed: a size beyond 2^64 - 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// How many tensor indices `map_all` reports for one position of a linear combination at most.
pub const MAX_PREIMAGES: usize = 256;

/// How many candidate coefficients one `map_all` call tries, over all the linear combinations
/// it solves. The search steps only through coefficients that keep the rest solvable (a gcd
/// test), so a candidate is almost always a solution and the budget is reached only by
/// combinations whose terms are mostly padding. Past it the indices found so far are returned.
pub const MAX_SEARCH_STEPS: u64 = 1 << 20;

impl Dim {
    pub fn extent(&self) -> u64 {
        match self {
            Dim::Factor(f) => f.extent,
            Dim::Opaque(o) => o.extent,
        }
    }

    /// This digit alone as an `m![...]` body (`A / 8 % 4`), for messages.
    pub fn to_expr(&self) -> String {
        Layout::from_dims(vec![self.clone()]).map_or_else(|_| "?".into(), |l| l.to_expr())
    }
}

impl Layout {
    /// `m![1]`
    pub fn identity() -> Layout {
        Layout {
            size: 1,
            dims: Vec::new(),
        }
    }

    /// `m![N]`: N positions that all hold the empty index (`Broadcast<N>`,
    /// `furiosa-mapping-types/src/dsl.rs:35-58` at ebb846a); `m![1]` is the identity.
    pub fn broadcast(n: u64) -> Layout {
        Layout::from_dims(vec![Dim::Factor(Factor {
            extent: n,
            valid: n,
            axis: None,
            coef: 0,
            pad: PadKind::Top,
        })])
        .unwrap_or_else(|_| Layout::identity())
    }

    /// `m![A]` for an axis of size >= 1.
    pub fn symbol(axis: Axis) -> Layout {
        let size = axis.size;
        Layout::from_dims(vec![Dim::Factor(Factor {
            extent: size,
            valid: size,
            axis: Some(axis),
            coef: 1,
            pad: PadKind::Top,
        })])
        .unwrap_or_else(|_| Layout::identity())
    }

    /// The axis when the layout is `m![A]` of a whole axis, nothing more.
    pub fn as_symbol(&self) -> Option<&Axis> {
        match self.dims.as_slice() {
            [Dim::Factor(f)] if f.coef == 1 && f.extent == f.valid => {
                f.axis.as_ref().filter(|a| a.size == f.extent)
            }
            _ => None,
        }
    }

    /// Builds a canonical layout from digits; fails if the size overflows.
    pub fn from_dims(dims: Vec<Dim>) -> Result<Layout, Overflow> {
        let mut size: u64 = 1;
        for d in &dims {
            size = size.checked_mul(d.extent()).ok_or(Overflow)?;
        }
        Ok(Layout {
            size,
            dims: canonical(dims),
        })
    }

    /// `m![outer, inner]`: `outer` is the major dimension.
    pub fn pair(&self, inner: &Layout) -> Result<Layout, Overflow> {
        let mut dims = self.dims.clone();
        dims.extend(inner.dims.iter().cloned());
        Layout::from_dims(dims)
    }

    /// Keeps positions `0..n` of a buffer of `n` positions: top padding when `n > size`
    /// (`# n`), truncation when `n < size` (`= n`, and `% n` when `n` divides the size).
    pub fn window(&self, n: u64) -> Layout {
        self.pad(n, PadKind::Top)
    }

    /// [`Layout::window`] whose new positions, when `n > size`, are padding of `kind`
    /// (`# n`, `#{!} n`, `#{0} n`).
    pub fn pad(&self, n: u64, kind: PadKind) -> Layout {
        if n == self.size {
            return self.clone();
        }
        let Some(first) = self.dims.first() else {
            // The identity padded to n: one valid position followed by padding.
            return Layout {
                size: n,
                dims: canonical(vec![Dim::Factor(Factor {
                    extent: n,
                    valid: 1,
                    axis: None,
                    coef: 0,
                    pad: kind,
                })]),
            };
        };
        let inner = self.size / first.extent();
        if n.is_multiple_of(inner) {
            let mut dims = Vec::with_capacity(self.dims.len());
            dims.push(window_dim(first, n / inner, kind));
            dims.extend(self.dims[1..].iter().cloned());
            return Layout {
                size: n,
                dims: canonical(dims),
            };
        }
        if n < inner {
            // Only positions with the first digit 0 remain.
            let rest = Layout {
                size: inner,
                dims: self.dims[1..].to_vec(),
            };
            return rest.pad(n, kind);
        }
        let kind = if n > self.size { kind } else { PadKind::Top };
        Layout {
            size: n,
            dims: vec![opaque(n, OpaqueKind::Window(self.clone(), kind))],
        }
    }

    /// `/ s` for `s` dividing the size: position `i` means old position `i * s`.
    pub fn stride(&self, s: u64) -> Layout {
        debug_assert!(s > 0 && self.size.is_multiple_of(s));
        let size = self.size / s;
        let mut dims = self.dims.clone();
        let mut s = s;
        while s > 1 {
            let Some(last) = dims.last() else { break };
            let e = last.extent();
            if s.is_multiple_of(e) {
                dims.pop();
                s /= e;
            } else if e % s == 0 {
                let d = stride_dim(last, s);
                dims.pop();
                dims.push(d);
                s = 1;
            } else {
                let prefix = Layout {
                    size: dims.iter().map(Dim::extent).product(),
                    dims,
                };
                dims = vec![opaque(prefix.size / s, OpaqueKind::Strided(prefix, s))];
                s = 1;
            }
        }
        Layout {
            size,
            dims: canonical(dims),
        }
    }

    /// `$(e1: n1, ..., ed: nd)`; its size is `1 + sum((size(ek) - 1) * nk)`.
    pub fn lin_comb(terms: Vec<(Layout, u64)>) -> Result<Layout, Overflow> {
        let mut size: u64 = 1;
        for (l, n) in &terms {
            size = (l.size - 1)
                .checked_mul(*n)
                .and_then(|v| v.checked_add(size))
                .ok_or(Overflow)?;
        }
        Ok(Layout {
            size,
            dims: canonical(vec![opaque(size, OpaqueKind::LinComb(terms))]),
        })
    }

    /// The buffer position holding `index` (an axis it does not name at 0): the inverse of
    /// [`Layout::map`], for a layout of factors only (`None` with an opaque digit, and when
    /// the layout does not hold the index: an axis it drops or a coordinate past its valid
    /// digits). Each factor's digit is the coordinate's `(c / coef) % valid`, and the digits
    /// of an axis must add back up to its coordinate.
    pub fn position_of(&self, index: &Index) -> Option<u64> {
        let mut held: BTreeMap<Arc<str>, u128> = BTreeMap::new();
        let mut position: u128 = 0;
        let mut place: u128 = 1;
        for dim in self.dims.iter().rev() {
            let Dim::Factor(f) = dim else { return None };
            if let Some(axis) = &f.axis {
                let c = index.get(&axis.name).copied().unwrap_or(0);
                let digit = (c / u128::from(f.coef)) % u128::from(f.valid);
                *held.entry(axis.name.clone()).or_insert(0) += digit * u128::from(f.coef);
                position += digit * place;
            }
            place = place.checked_mul(u128::from(f.extent))?;
        }
        let all_held = index
            .iter()
            .all(|(axis, &c)| held.get(axis).copied().unwrap_or(0) == c);
        all_held.then(|| u64::try_from(position).ok()).flatten()
    }

    /// The tensor index at buffer position `i`, or `None` for padding (and past the end).
    /// For a linear combination, which may hold several indices at one position, the first.
    pub fn map(&self, i: u64) -> Option<Index> {
        self.map_all(i).into_iter().next()
    }

    /// Every tensor index held at buffer position `i` (none for padding; one, except inside
    /// linear combinations; at most [`MAX_PREIMAGES`]).
    pub fn map_all(&self, i: u64) -> Vec<Index> {
        let mut budget = MAX_SEARCH_STEPS;
        self.map_all_within(i, &mut budget)
    }

    /// [`Layout::map_all`] drawing its search steps from `budget`.
    fn map_all_within(&self, i: u64, budget: &mut u64) -> Vec<Index> {
        if i >= self.size {
            return Vec::new();
        }
        let mut acc: Vec<Index> = vec![Index::new()];
        let mut rest = i;
        for dim in self.dims.iter().rev() {
            let e = dim.extent();
            let d = rest % e;
            rest /= e;
            match dim {
                Dim::Factor(f) => {
                    if d >= f.valid {
                        return Vec::new();
                    }
                    if let (Some(axis), true) = (&f.axis, d > 0) {
                        let add = u128::from(d) * u128::from(f.coef);
                        for idx in &mut acc {
                            *idx.entry(axis.name.clone()).or_insert(0) += add;
                        }
                    }
                }
                Dim::Opaque(o) => {
                    let parts = o.map_all(d, budget);
                    if parts.is_empty() {
                        return Vec::new();
                    }
                    let mut next = Vec::new();
                    'outer: for a in &acc {
                        for p in &parts {
                            let mut m = a.clone();
                            for (k, v) in p {
                                *m.entry(k.clone()).or_insert(0) += v;
                            }
                            next.push(m);
                            if next.len() >= MAX_PREIMAGES {
                                break 'outer;
                            }
                        }
                    }
                    acc = next;
                }
            }
        }
        let skews = self.skews();
        for idx in &mut acc {
            resolve_skews(idx, &skews);
            idx.retain(|_, v| *v != 0);
        }
        dedup(acc)
    }

    /// The skewed axes used anywhere in this layout.
    fn skews(&self) -> Vec<(Arc<str>, Arc<Skew>)> {
        let mut out = Vec::new();
        for d in &self.dims {
            if let Dim::Factor(Factor { axis: Some(a), .. }) = d
                && let Some(s) = &a.skew
            {
                out.push((a.name.clone(), s.clone()));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// True when opaque digits nest more than `limit` levels inside each other. It looks at
    /// most `limit + 1` levels down, so it is safe on any layout.
    pub fn nesting_exceeds(&self, limit: u32) -> bool {
        self.dims.iter().any(|d| match d {
            Dim::Factor(_) => false,
            Dim::Opaque(o) => {
                limit == 0
                    || match &o.kind {
                        OpaqueKind::Window(l, _) | OpaqueKind::Strided(l, _) => {
                            l.nesting_exceeds(limit - 1)
                        }
                        OpaqueKind::LinComb(terms) => {
                            terms.iter().any(|(l, _)| l.nesting_exceeds(limit - 1))
                        }
                    }
            }
        })
    }

    /// The kind of padding position `i` is, or `None` when it holds an index (or is past the
    /// end). Where an outer digit and an inner one are both padding, the outer digit's kind
    /// wins, as the vendor's `Cell::combine` keeps the major operand's
    /// (`furiosa-mapping-types/src/lib.rs:714-731` at ebb846a).
    pub fn pad_kind_at(&self, i: u64) -> Option<PadKind> {
        if i >= self.size {
            return None;
        }
        let mut digits = Vec::with_capacity(self.dims.len());
        let mut rest = i;
        for dim in self.dims.iter().rev() {
            digits.push(rest % dim.extent());
            rest /= dim.extent();
        }
        for (dim, d) in self.dims.iter().zip(digits.into_iter().rev()) {
            let kind = match dim {
                Dim::Factor(f) => (d >= f.valid).then_some(f.pad),
                Dim::Opaque(o) => o.pad_kind_at(d),
            };
            if kind.is_some() {
                return kind;
            }
        }
        None
    }

    /// The kinds of padding of this layout's digits (and of the layouts inside its opaque
    /// digits). It never misses a kind some position has; it may list one that a stride or a
    /// truncation of an inner layout cuts off.
    pub fn padding_kinds(&self) -> BTreeSet<PadKind> {
        let mut out = BTreeSet::new();
        self.collect_padding_kinds(&mut out);
        out
    }

    fn collect_padding_kinds(&self, out: &mut BTreeSet<PadKind>) {
        for d in &self.dims {
            match d {
                Dim::Factor(f) if f.valid < f.extent => {
                    out.insert(f.pad);
                }
                Dim::Factor(_) => {}
                Dim::Opaque(o) => match &o.kind {
                    OpaqueKind::Window(l, k) => {
                        if o.extent > l.size {
                            out.insert(*k);
                        }
                        l.collect_padding_kinds(out);
                    }
                    OpaqueKind::Strided(l, _) => l.collect_padding_kinds(out),
                    OpaqueKind::LinComb(terms) => {
                        out.insert(PadKind::Top);
                        terms.iter().for_each(|(l, _)| l.collect_padding_kinds(out));
                    }
                },
            }
        }
    }

    /// The axes the plain factors read, with their sizes.
    pub fn axes(&self) -> BTreeSet<Axis> {
        self.dims
            .iter()
            .filter_map(|d| match d {
                Dim::Factor(f) => f.axis.clone(),
                Dim::Opaque(_) => None,
            })
            .collect()
    }

    /// The axes the plain factors read.
    pub fn axis_names(&self) -> BTreeSet<Arc<str>> {
        self.dims
            .iter()
            .filter_map(|d| match d {
                Dim::Factor(f) => f.axis.as_ref().map(|a| a.name.clone()),
                Dim::Opaque(_) => None,
            })
            .collect()
    }

    /// True when every dim is a plain factor (the mapping is a product of axis factors).
    pub fn is_regular(&self) -> bool {
        self.dims.iter().all(|d| matches!(d, Dim::Factor(_)))
    }

    /// Renders the normal form as an `m![...]` body that lowers back to this same layout.
    pub fn to_expr(&self) -> String {
        let mut out = String::new();
        self.write_expr(&mut out);
        out
    }

    fn write_expr(&self, out: &mut String) {
        if self.dims.is_empty() {
            out.push('1');
            return;
        }
        for (k, d) in self.dims.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            match d {
                Dim::Factor(f) => write_factor(f, out),
                Dim::Opaque(o) => o.write_expr(out),
            }
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_expr())
    }
}

impl Opaque {
    fn map_all(&self, d: u64, budget: &mut u64) -> Vec<Index> {
        match &self.kind {
            OpaqueKind::Window(inner, _) => inner.map_all_within(d, budget),
            OpaqueKind::Strided(inner, s) => match d.checked_mul(*s) {
                Some(j) => inner.map_all_within(j, budget),
                None => Vec::new(),
            },
            OpaqueKind::LinComb(terms) => {
                let mut out = Vec::new();
                let mut chosen = Vec::with_capacity(terms.len());
                // gcds[k]: the gcd of the coefficients of terms k.. (0 past the last).
                let mut gcds = vec![0; terms.len() + 1];
                for k in (0..terms.len()).rev() {
                    gcds[k] = gcd(gcds[k + 1], terms[k].1.max(1));
                }
                let mut search = Search {
                    chosen: &mut chosen,
                    out: &mut out,
                    budget,
                };
                search.solve(terms, &gcds, d);
                dedup(out)
            }
        }
    }

    /// The kind of padding digit `d` is (`None`: it holds an index).
    fn pad_kind_at(&self, d: u64) -> Option<PadKind> {
        match &self.kind {
            OpaqueKind::Window(inner, k) if d >= inner.size => Some(*k),
            OpaqueKind::Window(inner, _) => inner.pad_kind_at(d),
            OpaqueKind::Strided(inner, s) => inner.pad_kind_at(d.checked_mul(*s)?),
            OpaqueKind::LinComb(_) => {
                let mut budget = MAX_SEARCH_STEPS;
                self.map_all(d, &mut budget)
                    .is_empty()
                    .then_some(PadKind::Top)
            }
        }
    }

    fn write_expr(&self, out: &mut String) {
        match &self.kind {
            OpaqueKind::Window(inner, kind) => {
                out.push('[');
                inner.write_expr(out);
                let op = if self.extent > inner.size {
                    kind.operator()
                } else {
                    "="
                };
                let _ = write!(out, "] {op} {}", self.extent);
            }
            OpaqueKind::Strided(inner, s) => {
                out.push('[');
                inner.write_expr(out);
                let _ = write!(out, "] / {s}");
            }
            OpaqueKind::LinComb(terms) => {
                out.push_str("$(");
                for (k, (l, n)) in terms.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    if l.dims.len() > 1 {
                        out.push('[');
                        l.write_expr(out);
                        out.push(']');
                    } else {
                        l.write_expr(out);
                    }
                    let _ = write!(out, ": {n}");
                }
                out.push(')');
            }
        }
    }
}

/// The state of one search for the solutions of a linear combination.
struct Search<'a> {
    chosen: &'a mut Vec<Index>,
    out: &'a mut Vec<Index>,
    budget: &'a mut u64,
}

impl Search<'_> {
    /// Solves `sum(s_k * n_k) == d` with `0 <= s_k < size(e_k)`, collecting `∪ e_k(s_k)`. It
    /// visits candidate coefficients, never buffer positions, and only those that leave the
    /// rest solvable: `d - s * n` must be a multiple of the gcd of the remaining coefficients
    /// (`gcds[1]`) and at most what the remaining terms can add. With two terms left every
    /// candidate is a solution, so positions with no preimage cost nothing.
    fn solve(&mut self, terms: &[(Layout, u64)], gcds: &[u64], d: u64) {
        if self.out.len() >= MAX_PREIMAGES || *self.budget == 0 {
            return;
        }
        let Some(((layout, n), rest)) = terms.split_first() else {
            if d == 0 {
                let mut m = Index::new();
                for c in self.chosen.iter() {
                    for (k, v) in c {
                        *m.entry(k.clone()).or_insert(0) += v;
                    }
                }
                m.retain(|_, v| *v != 0);
                self.out.push(m);
            }
            return;
        };
        let g = gcds[0];
        if g == 0 || !d.is_multiple_of(g) {
            return;
        }
        // The largest value the remaining terms can still add.
        let rest_max: u128 = rest
            .iter()
            .map(|(l, n)| u128::from(l.size - 1) * u128::from((*n).max(1)))
            .sum();
        let n = (*n).max(1);
        let hi = (d / n).min(layout.size - 1);
        // The smallest s with d - s * n <= rest_max.
        let lo = u128::from(d)
            .saturating_sub(rest_max)
            .div_ceil(u128::from(n));
        let Ok(lo) = u64::try_from(lo) else { return };
        if lo > hi {
            return;
        }
        // The s with s * n ≡ d (mod g_rest): one residue class modulo `step`.
        let g_rest = gcds[1];
        let (first, step) = if g_rest == 0 {
            // The last term: s * n == d exactly.
            if !d.is_multiple_of(n) {
                return;
            }
            (d / n, 1)
        } else {
            let h = gcd(n, g_rest);
            let m = g_rest / h;
            // d is a multiple of gcd(n, g_rest) = g, so of h.
            let r = mod_mul((d / h) % m, mod_inverse((n / h) % m, m), m);
            // The largest s <= hi in the class.
            let back = (hi % m + m - r) % m;
            match hi.checked_sub(back) {
                Some(s) => (s, m),
                None => return,
            }
        };
        let mut s = first;
        while s >= lo && s <= hi {
            if *self.budget == 0 || self.out.len() >= MAX_PREIMAGES {
                return;
            }
            *self.budget -= 1;
            let remaining = d - s * n;
            for idx in layout.map_all_within(s, self.budget) {
                self.chosen.push(idx);
                self.solve(rest, &gcds[1..], remaining);
                self.chosen.pop();
            }
            match s.checked_sub(step) {
                Some(next) => s = next,
                None => break,
            }
        }
    }
}

/// The greatest common divisor of `a` and `b` (`a` when `b` is 0).
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `a * b mod m` without overflow.
fn mod_mul(a: u64, b: u64, m: u64) -> u64 {
    u64::try_from(u128::from(a) * u128::from(b) % u128::from(m.max(1))).unwrap_or(0)
}

/// The inverse of `a` modulo `m` (`a` and `m` coprime; 0 when `m` is 1).
fn mod_inverse(a: u64, m: u64) -> u64 {
    if m <= 1 {
        return 0;
    }
    // Extended Euclid over i128.
    let (mut r0, mut r1) = (i128::from(m), i128::from(a));
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    u64::try_from(t0.rem_euclid(i128::from(m))).unwrap_or(0)
}

fn dedup(mut v: Vec<Index>) -> Vec<Index> {
    if v.len() > 1 {
        v.sort();
        v.dedup();
    }
    v
}

fn resolve_skews(idx: &mut Index, skews: &[(Arc<str>, Arc<Skew>)]) {
    for (name, skew) in skews {
        // A zero coordinate is omitted from the index but still shifts by `A`.
        let b_prime = idx.remove(name).unwrap_or(0);
        let a = idx.get(&skew.minus).copied().unwrap_or(0);
        let m = u128::from(skew.base_size.max(1));
        *idx.entry(skew.base.clone()).or_insert(0) += (b_prime + a) % m;
    }
}

fn opaque(extent: u64, kind: OpaqueKind) -> Dim {
    Dim::Opaque(Arc::new(Opaque { extent, kind }))
}

/// The first `n` values of one digit (padding of `kind` where `n` exceeds its extent).
fn window_dim(d: &Dim, n: u64, kind: PadKind) -> Dim {
    let wrap = || {
        let l = Layout {
            size: d.extent(),
            dims: vec![d.clone()],
        };
        opaque(n, OpaqueKind::Window(l, kind))
    };
    match d {
        Dim::Factor(f) => {
            let grows = n > f.extent;
            if grows && f.valid < f.extent && f.pad != kind {
                // Two kinds of padding in one digit: no factor says that.
                return wrap();
            }
            Dim::Factor(Factor {
                extent: n,
                valid: f.valid.min(n),
                axis: f.axis.clone(),
                coef: f.coef,
                pad: if grows { kind } else { f.pad },
            })
        }
        Dim::Opaque(o) if o.extent == n => d.clone(),
        Dim::Opaque(o) => match &o.kind {
            // Narrowing a window: positions past the inner size stay its padding.
            OpaqueKind::Window(inner, k) if n < o.extent => collapse(inner.pad(n, *k), n),
            // Widening one that pads with the same kind. (Widening a truncating window, or
            // one that pads with another kind, falls to the wrap below.)
            OpaqueKind::Window(inner, k) if o.extent >= inner.size && *k == kind => {
                collapse(inner.pad(n, kind), n)
            }
            _ => wrap(),
        },
    }
}

/// Every `s`-th value of one digit, `s` dividing its extent.
fn stride_dim(d: &Dim, s: u64) -> Dim {
    match d {
        Dim::Factor(f) => Dim::Factor(Factor {
            extent: f.extent / s,
            valid: f.valid.div_ceil(s),
            axis: f.axis.clone(),
            coef: f.coef.saturating_mul(s),
            pad: f.pad,
        }),
        Dim::Opaque(o) => match &o.kind {
            OpaqueKind::Window(inner, k) if inner.size % s == 0 => {
                let l = inner.stride(s).pad(o.extent / s, *k);
                collapse(l, o.extent / s)
            }
            // A stride of a stride is one stride of the inner layout, which may simplify.
            OpaqueKind::Strided(inner, t) => match t.checked_mul(s) {
                Some(ts) if inner.size.is_multiple_of(ts) => {
                    collapse(inner.stride(ts), o.extent / s)
                }
                _ => strided_of(d, o.extent, s),
            },
            _ => strided_of(d, o.extent, s),
        },
    }
}

fn strided_of(d: &Dim, extent: u64, s: u64) -> Dim {
    let l = Layout {
        size: extent,
        dims: vec![d.clone()],
    };
    opaque(extent / s, OpaqueKind::Strided(l, s))
}

/// A layout of `n` positions as a single digit.
fn collapse(l: Layout, n: u64) -> Dim {
    if l.dims.len() == 1 {
        return l
            .dims
            .into_iter()
            .next()
            .unwrap_or_else(|| unreachable_dim(n));
    }
    if l.dims.is_empty() {
        // A single valid position (n == 1); callers drop extent-1 digits.
        return unreachable_dim(n);
    }
    opaque(n, OpaqueKind::Window(l, PadKind::Top))
}

fn unreachable_dim(n: u64) -> Dim {
    Dim::Factor(Factor {
        extent: n,
        valid: 1,
        axis: None,
        coef: 0,
        pad: PadKind::Top,
    })
}

/// The canonical form of a digit list: no extent-1 digits, contribution-free digits carry no
/// axis, digits without padding carry the top kind, adjacent digits merged wherever one digit
/// means the same.
fn canonical(dims: Vec<Dim>) -> Vec<Dim> {
    let mut out: Vec<Dim> = Vec::with_capacity(dims.len());
    for d in dims {
        let d = match d {
            Dim::Factor(f) if f.extent == 1 => continue,
            Dim::Factor(mut f) => {
                if f.valid <= 1 {
                    f.valid = 1;
                    f.axis = None;
                    f.coef = 0;
                }
                if f.valid >= f.extent {
                    f.pad = PadKind::Top;
                }
                Dim::Factor(f)
            }
            Dim::Opaque(o) if o.extent == 1 => continue,
            Dim::Opaque(o) => match &o.kind {
                // A window exactly as large as what it holds is just what it holds.
                OpaqueKind::Window(inner, _) if inner.size == o.extent => {
                    for inner_d in inner.dims.iter().cloned() {
                        push_merged(&mut out, inner_d);
                    }
                    continue;
                }
                _ => Dim::Opaque(o),
            },
        };
        push_merged(&mut out, d);
    }
    out
}

fn push_merged(out: &mut Vec<Dim>, d: Dim) {
    let mut d = d;
    while let Some(prev) = out.last() {
        match merge(prev, &d) {
            Some(m) => {
                out.pop();
                d = m;
            }
            None => break,
        }
    }
    out.push(d);
}

/// Merges two adjacent digits (outer, inner) into one when that means the same.
fn merge(outer: &Dim, inner: &Dim) -> Option<Dim> {
    let (Dim::Factor(o), Dim::Factor(i)) = (outer, inner) else {
        return None;
    };
    let extent = o.extent.checked_mul(i.extent)?;
    if o.valid == 1 {
        // The outer digit must be 0: the pair is the inner digit padded to the product, when
        // its own padding (if any) is of the outer digit's kind.
        if i.valid < i.extent && i.pad != o.pad {
            return None;
        }
        return Some(Dim::Factor(Factor {
            extent,
            valid: i.valid,
            axis: i.axis.clone(),
            coef: i.coef,
            pad: o.pad,
        }));
    }
    if o.is_broadcast() && i.is_broadcast() && i.valid == i.extent {
        // `2, 3` is `6`: every valid position holds the empty index.
        return Some(Dim::Factor(Factor {
            extent,
            valid: o.valid.checked_mul(i.extent)?,
            axis: None,
            coef: 0,
            pad: o.pad,
        }));
    }
    if i.valid == i.extent
        && o.axis.is_some()
        && o.axis == i.axis
        && Some(o.coef) == i.coef.checked_mul(i.extent)
    {
        let valid = o.valid.checked_mul(i.extent)?;
        // Keep digits apart when together they reach past the axis (`A # 8 / 4, A = 4` with
        // A = 5 reaches A = 7): one factor could not be written back as an expression.
        let axis_size = i.axis.as_ref().map_or(u64::MAX, |a| a.size);
        if (valid - 1).checked_mul(i.coef)? >= axis_size.max(1) {
            return None;
        }
        return Some(Dim::Factor(Factor {
            extent,
            valid,
            axis: i.axis.clone(),
            coef: i.coef,
            pad: o.pad,
        }));
    }
    None
}

fn write_factor(f: &Factor, out: &mut String) {
    let pad = f.pad.operator();
    let Some(axis) = &f.axis else {
        // Padding after one valid position (`1 # 8`), or a broadcast (`2`, `2 #{!} 8`).
        let _ = write!(out, "{}", f.valid.max(1));
        if f.extent > f.valid {
            let _ = write!(out, " {pad} {}", f.extent);
        }
        return;
    };
    let name = &axis.name;
    let n = axis.size;
    // `A / c` needs c | n; otherwise pad the axis first.
    let (mut s, mut m) = if f.coef == 1 {
        (name.to_string(), n)
    } else if n % f.coef == 0 {
        (format!("{name} / {}", f.coef), n / f.coef)
    } else {
        let m = n.div_ceil(f.coef);
        (
            format!("{name} # {} / {}", m.saturating_mul(f.coef), f.coef),
            m,
        )
    };
    if f.valid < m {
        let op = if m % f.valid == 0 { '%' } else { '=' };
        let _ = write!(s, " {op} {}", f.valid);
        m = f.valid;
    }
    if axis.skew.is_some() && f.coef == 1 && f.valid == n {
        // A skewed axis always carries its logical size (MAP-008).
        let _ = write!(s, " = {n}");
    }
    if f.extent > m {
        let _ = write!(s, " {pad} {}", f.extent);
    }
    out.push_str(&s);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, size: u64) -> Layout {
        Layout::symbol(Axis::new(name, size))
    }

    fn idx(pairs: &[(&str, u128)]) -> Option<Index> {
        Some(pairs.iter().map(|(k, v)| (Arc::from(*k), *v)).collect())
    }

    #[test]
    fn stride_modulo_split_is_the_axis() {
        let b = sym("B", 512);
        let split = b.stride(64).pair(&b.window(64)).unwrap();
        assert_eq!(split, b);
        assert_eq!(split.to_expr(), "B");
    }

    #[test]
    fn nested_stride_normal_form() {
        let b = sym("B", 512);
        let e = b
            .stride(64)
            .pair(&b.window(32))
            .unwrap()
            .pair(&b.stride(32).window(2))
            .unwrap();
        assert_eq!(e.to_expr(), "B / 64, B % 32, B / 32 % 2");
        assert_eq!(e.map(67), idx(&[("B", 97)]));
    }

    #[test]
    fn position_of_inverts_map() {
        // `m![S, B, K]` row-major: S's stride is B * K; a transposed split of A as well.
        let l = crate::mapping::testing::lay("S = 8, B = 4, K = 32", "S, B, K");
        assert_eq!(l.position_of(&idx(&[("S", 3)]).unwrap()), Some(3 * 4 * 32));
        let t = crate::mapping::testing::lay("A = 16, K = 3", "A % 4, K # 4, A / 4");
        for i in 0..t.size {
            if let Some(ix) = t.map(i) {
                assert_eq!(t.position_of(&ix), Some(i), "position {i}");
            }
        }
        // An axis the layout drops, and a coordinate past its digits, are not held.
        assert_eq!(l.position_of(&idx(&[("Q", 1)]).unwrap()), None);
        assert_eq!(l.position_of(&idx(&[("S", 8)]).unwrap()), None);
    }

    #[test]
    fn padding_then_stride() {
        // axes![R = 20]; R # 32 / 8 -> 4 positions, the last one padding (20 = 2 * 8 + 4).
        let r = sym("R", 20).window(32).stride(8);
        assert_eq!(r.size, 4);
        assert_eq!(r.map(2), idx(&[("R", 16)]));
        assert_eq!(r.map(3), None);
        assert_eq!(r.to_expr(), "R # 24 / 8 # 4");
    }

    #[test]
    fn identity_padding_merges_into_the_next_digit() {
        let a = sym("A", 8);
        let l = Layout::identity().window(2).pair(&a).unwrap();
        assert_eq!(l, a.window(16));
    }

    #[test]
    fn huge_axes_stay_symbolic() {
        let big = sym("A", 1 << 40);
        let l = big.stride(1 << 20).pair(&big.window(1 << 20)).unwrap();
        assert_eq!(l, big);
        assert_eq!(l.map((1 << 40) - 1), idx(&[("A", (1 << 40) - 1)]));
    }

    fn eval(axes: &str, mapping: &str) -> Layout {
        crate::mapping::testing::lay(axes, mapping)
    }

    #[test]
    fn a_broadcast_multiplies_the_size_and_places_no_axis() {
        // bias_partition_broadcast.rs:1-21 at ebb846a: Slice `m![Feat, 2]` is 128 × 2 slices.
        let l = eval("Feat = 128", "Feat, 2");
        assert_eq!(l.size, 256);
        assert_eq!(l.axis_names().len(), 1);
        assert_eq!(l.map(0), idx(&[]));
        assert_eq!(l.map(1), idx(&[]));
        assert_eq!(l.map(3), idx(&[("Feat", 1)]));
        assert_eq!(l.to_expr(), "Feat, 2");
        assert_eq!(eval("", "2, 3"), eval("", "6"));
        assert_eq!(eval("", "1"), Layout::identity());
    }

    #[test]
    fn a_broadcast_is_live_and_coordinate_free() {
        let l = eval("", "4");
        assert!(l.is_regular());
        assert!(l.axis_names().is_empty());
        assert!(matches!(&l.dims[..], [Dim::Factor(f)] if f.is_broadcast() && f.valid == f.extent));
        for i in 0..4 {
            assert_eq!(l.map_all(i), vec![Index::new()], "position {i} holds i![]");
            assert_eq!(l.pad_kind_at(i), None);
        }
        assert!(l.padding_kinds().is_empty());
        // A padded broadcast: live positions first, then padding.
        let p = eval("", "3 #{!} 8");
        assert_eq!(p.map(2), idx(&[]));
        assert_eq!(p.pad_kind_at(3), Some(PadKind::Bottom));
        assert_eq!(p.to_expr(), "3 #{!} 8");
    }

    #[test]
    fn bottom_padding_is_kept_and_printed() {
        // tile.rs:15 at ebb846a: `m![1 #{!} 32, A]`.
        let l = eval("A = 8", "1 #{!} 32, A");
        assert_eq!(l.size, 32 * 8);
        assert_eq!(l.map(7), idx(&[("A", 7)]));
        assert_eq!(l.map(8), None);
        assert_eq!(l.pad_kind_at(8), Some(PadKind::Bottom));
        assert_eq!(l.pad_kind_at(7), None);
        assert_eq!(l.padding_kinds(), BTreeSet::from([PadKind::Bottom]));
        assert_eq!(l.to_expr(), "A #{!} 256");
        assert_eq!(eval("A = 8", &l.to_expr()), l);
        assert_eq!(eval("A = 5", "A #{0} 8").to_expr(), "A #{0} 8");
        assert_eq!(eval("A = 5", "A #{*} 8").to_expr(), "A # 8");
    }

    #[test]
    fn layouts_differing_only_in_padding_kind_differ() {
        let top = eval("A = 5", "A # 8");
        let bottom = eval("A = 5", "A #{!} 8");
        let zero = eval("A = 5", "A #{0} 8");
        assert_ne!(top, bottom);
        assert_ne!(bottom, zero);
        assert_eq!(top, eval("A = 5", "A #{*} 8"));
        // Without padding positions the kind says nothing.
        assert_eq!(eval("A = 8", "A #{!} 8"), eval("A = 8", "A"));
    }

    #[test]
    fn two_padding_kinds_in_one_digit_stay_apart() {
        // `[A # 8] #{!} 16`: positions 5..8 are top padding, 8..16 bottom.
        let l = eval("A = 5", "[A # 8] #{!} 16");
        assert_eq!(l.pad_kind_at(4), None);
        assert_eq!(l.pad_kind_at(6), Some(PadKind::Top));
        assert_eq!(l.pad_kind_at(12), Some(PadKind::Bottom));
        assert_eq!(
            l.padding_kinds(),
            BTreeSet::from([PadKind::Bottom, PadKind::Top])
        );
        assert_eq!(eval("A = 5", &l.to_expr()), l);
        // The outer digit's kind wins where both are padding (Cell::combine).
        let p = eval("A = 5", "1 #{!} 2, A #{0} 8");
        assert_eq!(p.pad_kind_at(6), Some(PadKind::Zero));
        assert_eq!(p.pad_kind_at(9), Some(PadKind::Bottom));
        assert_eq!(eval("A = 5", &p.to_expr()), p);
    }

    #[test]
    fn an_escaped_size_is_evaluated() {
        // stotrf_table_lookup.rs:62 at ebb846a: `# { Out::SIZE / 8 }`.
        assert_eq!(
            eval("A = 5, B = 64", "A # { B::SIZE / 8 }"),
            eval("A = 5", "A # 8")
        );
        assert_eq!(eval("A = 64", "A / {8}, A % { 8 }"), eval("A = 64", "A"));
        let e = crate::mapping::evaluate("A = 64", "A / { N }");
        assert_eq!(e.layout, None);
        assert!(matches!(
            &e.problems[..],
            [crate::mapping::Problem::Unevaluated(
                crate::mapping::problem::Unevaluated::NamedConst { name }
            )] if name.text == "N"
        ));
    }

    #[test]
    fn irregular_stride_is_exact() {
        // [A = 3, B = 4] / 6: positions 0 and 6 of the pair.
        let l = sym("A", 3).pair(&sym("B", 4)).unwrap().stride(6);
        assert!(!l.is_regular());
        assert_eq!(l.map(1), idx(&[("A", 1), ("B", 2)]));
    }
}

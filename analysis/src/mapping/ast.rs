//! Syntax of the three mapping macros, as the manual uses them (api.md §1).

use crate::diagnostic::Span;

/// An identifier with its span. Primed names (`B'`) keep their prime in `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// The argument of a postfix operator: `8`, `B::SIZE`, or `(B::SIZE * 2)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeExpr {
    Lit(u64, Span),
    /// `X::SIZE` where `X` is an axis or a mapping alias.
    SizeOf(Name, Span),
    Bin(Box<SizeExpr>, BinOp, Box<SizeExpr>, Span),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl SizeExpr {
    pub fn span(&self) -> Span {
        match self {
            SizeExpr::Lit(_, s) | SizeExpr::SizeOf(_, s) | SizeExpr::Bin(_, _, _, s) => *s,
        }
    }
}

/// A postfix operator, applied left to right (`R # 32 / 8` pads, then strides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `/ n`: keep every n-th position (outer block index).
    Stride,
    /// `% n`: the first n positions (inner position within a block); n must divide the size.
    Modulo,
    /// `# n`: pad to n positions.
    Pad,
    /// `= n`: resize (truncate) to n positions.
    Resize,
}

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Stride => "/",
            Op::Modulo => "%",
            Op::Pad => "#",
            Op::Resize => "=",
        }
    }
}

/// A mapping expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `1`
    Identity(Span),
    /// `A`, `T0`, `B'`
    Symbol(Name),
    /// `{ Alias }`; the span covers the braces.
    Escape(Name, Span),
    /// `[ ... ]` or `( ... )` (the vendor's grammar groups with both); the span covers the
    /// delimiters.
    Group(Box<Expr>, Span),
    /// `e1, e2, ...` (two or more terms, outermost first).
    Pair(Vec<Expr>, Span),
    /// `inner op arg`; `op_span` is the operator token.
    Op {
        inner: Box<Expr>,
        op: Op,
        op_span: Span,
        arg: SizeExpr,
        span: Span,
    },
    /// `$(e1: n1, ..., ed: nd)`
    LinComb(Vec<(Expr, SizeExpr)>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Identity(s) | Expr::Escape(_, s) | Expr::Group(_, s) | Expr::Pair(_, s) => *s,
            Expr::Symbol(n) => n.span,
            Expr::Op { span, .. } | Expr::LinComb(_, span) => *span,
        }
    }
}

/// One entry of `axes![...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisDecl {
    pub name: Name,
    pub def: AxisDef,
    /// The whole entry `A = 8`.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisDef {
    /// `A = 8`
    Size(SizeExpr),
    /// `B' = B - A`: a skewed axis whose coordinate is `B - A` (wrapping modulo `B::SIZE`).
    Skew { base: Name, minus: Name },
}

/// One entry of `i![...]`: `A: 2` or `B / 64: i`. A value that is not a constant is `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    pub key: Expr,
    pub value: Option<u64>,
    pub span: Span,
}

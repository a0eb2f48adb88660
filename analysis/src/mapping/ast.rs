//! Syntax of the three mapping macros, as the manual uses them (api.md §1).

use crate::diagnostic::Span;
use std::fmt;

/// An identifier with its span. Primed names (`B'`) keep their prime in `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// The argument of a postfix operator: `8`, `B::SIZE`, `(B::SIZE * 2)`, or escaped,
/// `{ B::SIZE / 8 }`.
///
/// The two generations of the vendor's parser disagree on what a size is: the manual's
/// library (`furiosa_visa_std`) takes an integer literal, and visa-lint has always read
/// `X::SIZE` and `( … )` too; furiosa-opt-std 0.4+ takes an integer literal or an escaped
/// constant expression `{ … }` (`furiosa-mapping-macro/src/parser/parser.lalrpop:95-100` at
/// ebb846a) and no unescaped `X::SIZE` (`furiosa-mapping/tests/escaped_const.rs:12-13`). The
/// parser accepts the union; [`super::dialect_forms`] lists which was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeExpr {
    Lit(u64, Span),
    /// `X::SIZE` where `X` is an axis or a mapping alias.
    SizeOf(Name, Span),
    Bin(Box<SizeExpr>, BinOp, Box<SizeExpr>, Span),
    /// `{ e }`: a size escaped as a Rust constant expression (furiosa-opt-std 0.4+); the span
    /// covers the braces. Its contents are a size expression, plus bare constant names.
    Escaped(Box<SizeExpr>, Span),
    /// `N` or `consts::N` inside an escaped size (`{ N }`): a `const` item or a const generic
    /// parameter, by name.
    Const(Name),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl SizeExpr {
    /// The value of an integer literal, escaped or not (`8`, `{ 8 }`).
    pub fn literal(&self) -> Option<u64> {
        match self {
            SizeExpr::Lit(n, _) => Some(*n),
            SizeExpr::Escaped(inner, _) => inner.literal(),
            _ => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            SizeExpr::Lit(_, s)
            | SizeExpr::SizeOf(_, s)
            | SizeExpr::Bin(_, _, _, s)
            | SizeExpr::Escaped(_, s) => *s,
            SizeExpr::Const(n) => n.span,
        }
    }
}

/// What the padding positions of `# n` are. The manual's library has only [`PadKind::Top`];
/// furiosa-opt-std 0.3+ writes the kind as `#{*}`, `#{!}` or `#{0}`
/// (`furiosa-mapping-macro/src/parser/lexer.rs:38-47`, `parser.lalrpop:51-72` at ebb846a) and
/// makes it part of the type (`Padding<L, N, { PaddingKind::K }>`,
/// `furiosa-mapping-types/src/dsl.rs:206-234`). Ordered as the vendor orders them, strictest
/// first: `Bottom < Zero < Top` (`furiosa-mapping-types/src/lib.rs:545-574`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PadKind {
    /// `#{!}`: inaccessible; reading or writing it is undefined behaviour.
    Bottom,
    /// `#{0}`: accessible, reads as zero (the manual's dump notation `1z`).
    Zero,
    /// `#` or `#{*}`: accessible positions holding arbitrary values (the manual's only
    /// padding).
    #[default]
    Top,
}

impl PadKind {
    /// The operator as printed: `#` for [`PadKind::Top`], `#{!}`, `#{0}`.
    pub fn operator(self) -> &'static str {
        match self {
            PadKind::Bottom => "#{!}",
            PadKind::Zero => "#{0}",
            PadKind::Top => "#",
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
    /// `# n`: pad to n positions, the new ones of `kind`. `marked`: the kind was written
    /// `#{*}`, `#{!}` or `#{0}` (furiosa-opt-std's syntax), not as a plain `#`.
    Pad { kind: PadKind, marked: bool },
    /// `= n`: resize (truncate) to n positions.
    Resize,
}

impl Op {
    /// `# n` as the manual writes it: top padding, a plain `#`.
    pub const PAD: Op = Op::Pad {
        kind: PadKind::Top,
        marked: false,
    };

    /// The operator's symbol; every padding is `#`.
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Stride => "/",
            Op::Modulo => "%",
            Op::Pad { .. } => "#",
            Op::Resize => "=",
        }
    }
}

/// A mapping expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `1`
    Identity(Span),
    /// `N` for N >= 2: N live positions that all hold the empty index, placing no axis
    /// (`Broadcast<N>`, `furiosa-mapping-types/src/dsl.rs:35-58` at ebb846a; furiosa-opt-std
    /// 0.3+ only: the manual's library rejects every number but `1`).
    Broadcast(u64, Span),
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
            Expr::Identity(s)
            | Expr::Broadcast(_, s)
            | Expr::Escape(_, s)
            | Expr::Group(_, s)
            | Expr::Pair(_, s) => *s,
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

/// A mapping body as it can be written back into `m![...]` (an edit that rewrites part of a
/// mapping and prints the rest): groups print with `[ ]`, a padding with the kind written as
/// it was (`#`, or `#{!}`, `#{0}`, `#{*}` when marked), sizes as written.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Identity(_) => f.write_str("1"),
            Expr::Broadcast(n, _) => write!(f, "{n}"),
            Expr::Symbol(name) => f.write_str(&name.text),
            Expr::Escape(name, _) => write!(f, "{{ {} }}", name.text),
            Expr::Group(inner, _) => write!(f, "[{inner}]"),
            Expr::Pair(terms, _) => {
                for (k, t) in terms.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                Ok(())
            }
            Expr::Op { inner, op, arg, .. } => {
                let op = match op {
                    Op::Pad { kind, marked: true } => match kind {
                        PadKind::Top => "#{*}",
                        kind => kind.operator(),
                    },
                    op => op.symbol(),
                };
                match **inner {
                    Expr::Pair(..) => write!(f, "[{inner}] {op} {arg}"),
                    _ => write!(f, "{inner} {op} {arg}"),
                }
            }
            Expr::LinComb(terms, _) => {
                f.write_str("$(")?;
                for (k, (e, n)) in terms.iter().enumerate() {
                    if k > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}: {n}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeExpr::Lit(n, _) => write!(f, "{n}"),
            SizeExpr::SizeOf(name, _) => write!(f, "{}::SIZE", name.text),
            SizeExpr::Bin(a, op, b, _) => {
                let op = match op {
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                    BinOp::Div => "/",
                };
                write!(f, "({a} {op} {b})")
            }
            SizeExpr::Escaped(inner, _) => write!(f, "{{ {inner} }}"),
            SizeExpr::Const(name) => f.write_str(&name.text),
        }
    }
}

impl Expr {
    /// Gives the padding whose operator is at `op_span` the kind `kind` (written marked, as
    /// furiosa-opt-std does, unless it is the plain `#`); whether one was there.
    pub fn set_pad_kind(&mut self, op_span: Span, kind: PadKind) -> bool {
        match self {
            Expr::Op {
                inner,
                op,
                op_span: at,
                ..
            } => {
                if *at == op_span
                    && let Op::Pad { .. } = op
                {
                    *op = Op::Pad {
                        kind,
                        marked: kind != PadKind::Top,
                    };
                    return true;
                }
                inner.set_pad_kind(op_span, kind)
            }
            Expr::Group(x, _) => x.set_pad_kind(op_span, kind),
            Expr::Pair(xs, _) => xs.iter_mut().any(|x| x.set_pad_kind(op_span, kind)),
            Expr::LinComb(xs, _) => xs.iter_mut().any(|(x, _)| x.set_pad_kind(op_span, kind)),
            Expr::Identity(_) | Expr::Broadcast(..) | Expr::Symbol(_) | Expr::Escape(..) => false,
        }
    }
}

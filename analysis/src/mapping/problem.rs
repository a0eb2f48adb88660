//! What parsing, declaring and lowering mappings find, as data.
//!
//! The mapping engine names no rule: it records each finding with its spans and the values
//! its report needs. The rules layer chooses the rule and writes the message and the fixes
//! (`rules::mapping_diagnostic`: [`Invalid`] in `rules/mapping/`, [`Unevaluated`] in
//! `rules/tool/`), beside the rules' documentation.

use super::ast::{BinOp, Name, Op};
use super::parse::ParseProblem;
use crate::diagnostic::Span;

/// One finding about a mapping, an `axes!` declaration or an `i!` key. Spans are in the
/// coordinates of the text the caller lowered (file coordinates once the expression was
/// shifted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The mapping breaks a rule of the notation (constraints.md §3).
    Invalid(Invalid),
    /// visa-lint cannot evaluate the mapping: it does not parse, uses notation visa-lint does
    /// not evaluate, overflows 64 bits, nests past visa-lint's limits, or names something from
    /// a place visa-lint cannot read.
    Unevaluated(Unevaluated),
}

/// A mapping against the notation's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalid {
    /// `axes![A = 0]`: `at` is the size.
    ZeroSizeAxis { name: String, at: Span },
    /// An axis declared again with another size: `at` is the new declaration, `first` the
    /// one in scope.
    AxisRedeclared {
        name: String,
        at: Span,
        size: u64,
        was: u64,
        first: Span,
    },
    /// A symbol that is not a declared axis. `alias` / `generic`: the name is a mapping alias
    /// or a generic parameter of the function (written without its braces).
    Undeclared {
        name: Name,
        alias: bool,
        generic: bool,
    },
    /// A skewed axis used without an explicit logical size (`A` instead of `A = 8`).
    UnsizedSkew { name: Name, size: u64 },
    /// `E / 0` or `E % 0` (`op` is `Stride` or `Modulo`): `at` is the argument.
    DivideByZero { op: Op, at: Span },
    /// `E / n` or `E % n` where n does not divide the operand's size. `at` is the whole
    /// operation, `op_span` the operator, `operand` the operand as messages name it and
    /// `operand_end` where a padding of it would be inserted.
    NotDivisible {
        op: Op,
        at: Span,
        op_span: Span,
        operand: String,
        operand_end: u32,
        size: u64,
        n: u64,
    },
    /// `E # n` with n below the operand's size: `at` is the operation, `arg` its argument.
    ShortPad {
        at: Span,
        arg: Span,
        op_span: Span,
        operand: String,
        size: u64,
        n: u64,
    },
    /// `E = 0`: `at` is the argument.
    ZeroResize { at: Span },
    /// `E = n` with n above the operand's size: `at` is the operation.
    GrowingResize {
        at: Span,
        op_span: Span,
        operand: String,
        size: u64,
        n: u64,
    },
    /// `{ X }` where `X` is no mapping alias in scope (`axis`: it is an axis).
    UnknownAlias { at: Span, name: String, axis: bool },
    /// `X::SIZE` inside the alias `X` itself.
    SizeOfOwnAlias { name: Name },
    /// `X::SIZE` where `X` is neither an axis nor a mapping alias.
    SizeOfUnknown { name: Name },
    /// Mapping aliases that escape each other in a loop: `cycle` lists them in order from the
    /// one whose body holds `at`, the escape that starts the loop.
    AliasCycle { at: Span, cycle: Vec<Name> },
}

/// A mapping visa-lint does not evaluate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unevaluated {
    /// The body did not parse (spans already in the caller's coordinates).
    Parse(ParseProblem),
    /// A name declared nowhere visa-lint can read, while the module glob-imports `from` (and
    /// `others` more places) that visa-lint cannot read.
    NotRead {
        name: Name,
        from: String,
        others: usize,
    },
    /// A pair whose size is beyond 2^64 - 1: `left × right`.
    PairOverflow { at: Span, left: u64, right: u64 },
    /// A linear combination whose size is beyond 2^64 - 1.
    LinCombOverflow { at: Span },
    /// Size arithmetic (`B::SIZE - 8`) that is negative, divides by zero or overflows.
    SizeArithmetic { at: Span, op: BinOp },
    /// A lowered value nesting windows, strides and linear combinations past `limit` levels.
    LayoutTooDeep { at: Span, limit: u32 },
    /// An escape of `name` reaching aliases nested past `limit` levels.
    AliasesTooDeep {
        at: Span,
        name: String,
        limit: usize,
    },
    /// `name::SIZE` reaching aliases nested past `limit` levels.
    SizeOfTooDeep { name: Name, limit: usize },
    /// A mapping alias written as the types `m!` expands to (`type E = Resize<Symbol<F>, N>;`,
    /// manual L632-L886) that visa-lint cannot read (`why`): its uses are not checked.
    TypeForm { name: Name, why: String },
    /// A constant named in an escaped size (`A / { N }`, furiosa-opt-std): lowering knows
    /// axes and aliases, not the values of `const` items.
    NamedConst { name: Name },
}

impl From<Invalid> for Problem {
    fn from(p: Invalid) -> Problem {
        Problem::Invalid(p)
    }
}

impl From<Unevaluated> for Problem {
    fn from(p: Unevaluated) -> Problem {
        Problem::Unevaluated(p)
    }
}

impl Problem {
    /// A parse problem of a body that starts at `base` in the caller's text.
    pub fn parse(p: ParseProblem, base: u32) -> Problem {
        Unevaluated::Parse(p.shifted(base)).into()
    }
}

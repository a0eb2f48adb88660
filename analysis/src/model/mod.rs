//! The kernel model: per function, its tensors and its chains of engine calls, with the type
//! at every step (api.md §2-3). Rules and the simulator read this, never the syntax tree.

pub mod build;
pub mod consts;
pub mod methods;
pub mod ops;
pub mod problem;
pub mod types;

use crate::diagnostic::Span;
pub use methods::Engine;
pub use problem::Problem;
pub use types::{
    Kind, MapVal, Slot, TensorTy, Tu, VeStage, canonical, elems_for, size_bytes, slot_bytes,
};

/// One method call of a chain.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub method: String,
    /// The method name token.
    pub span: Span,
    pub engine: Option<Engine>,
    /// The receiver's type (the first argument's for `begin`), when known.
    pub input: Option<TensorTy>,
    /// The result's type, when known.
    pub output: Option<TensorTy>,
    /// Slots the result keeps from the input (for backward type flow).
    pub keep: Vec<Slot>,
    pub context: Option<Tu>,
    /// The constant address argument (`to_dm`, `commit`, `to_hbm`), when there is one.
    pub address: Option<u64>,
    pub awaited: bool,
    /// The turbofish arguments as written (`i32`, `m![A % 8]`, `_`), lifetimes left out.
    pub generics: Vec<Arg>,
    /// The value arguments as written (`FxpBinaryOp::AddFxp`, `1`, `&rhs`).
    pub args: Vec<Arg>,
}

/// An argument as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Arg {
    pub text: String,
    pub span: Span,
}

/// A chain of method calls, as one statement or `let` initializer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chain {
    pub span: Span,
    pub binding: Option<String>,
    /// The type the chain's result is declared with, as written (a `let` annotation or the
    /// function's return type for its tail expression), before it is merged into the steps.
    pub declared: Option<TensorTy>,
    /// The variable the chain starts from (`x` in `x.view().to_hbm(…)`), when it is a plain
    /// name; `None` for `ctx.main.begin(…)` and other roots.
    pub receiver: Option<String>,
    pub steps: Vec<Step>,
}

/// Where a tensor value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    Param,
    Let,
}

/// A named tensor value: a parameter or a `let` binding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorVar {
    pub name: String,
    pub span: Span,
    pub origin: Origin,
    pub ty: TensorTy,
    pub context: Option<Tu>,
    pub address: Option<u64>,
}

/// What kind of function this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FnKind {
    /// `#[device(chip = N)]`
    Device { chips: Option<u64> },
    /// `async fn`, host code.
    Host,
    /// Anything else (helpers, tests, doc-test wrappers).
    Plain,
}

/// The model of one function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnModel {
    pub name: String,
    /// The function's name token.
    pub span: Span,
    pub kind: FnKind,
    pub tensors: Vec<TensorVar>,
    pub chains: Vec<Chain>,
    /// What building the model found (the rules layer reports each).
    pub problems: Vec<Problem>,
}

/// The turbofish argument at `i` when it is written out (not `_`).
pub fn written(step: &Step, i: usize) -> Option<&Arg> {
    step.generics.get(i).filter(|a| a.text.trim() != "_")
}

/// The edit that pads a written `m![...]` argument to `n` positions (see
/// [`crate::mapping::edit::pad`]).
pub fn pad_edit(arg: &Arg, n: u64) -> Option<crate::diagnostic::Edit> {
    crate::mapping::edit::pad(&arg.text, arg.span, n)
}

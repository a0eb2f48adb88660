//! Builds a [`FnModel`] from one function's syntax: types flow forward along each chain from
//! its root and backward from `let` annotations, parameter and return types, as rustc would.
//! The pipeline state machine is checked on the way: what goes wrong is recorded as a
//! [`Problem`] where the pipeline state is known.
//!
//! One file per construct the builder evaluates: [`function`] (a function and its
//! parameters), [`statements`], [`loops`], [`expressions`], [`calls`] of functions (and [`results`], what their traces give back) and
//! [`chains`] of engine methods, and [`buf_tensor`] the Sequencer page's
//! simplified buffer interface. [`env`] is what a function sees of its module and how types
//! read, [`state`] the builder's state and values, [`reading`] what it reads off the syntax.
//!
//! [`FnModel`]: super::FnModel
//! [`Problem`]: super::Problem

mod buf_tensor;
mod calls;
mod chains;
mod env;
mod expressions;
mod function;
mod loops;
mod reading;
mod receivers;
mod results;
mod state;
mod statements;
#[cfg(test)]
mod tests;

pub use env::{
    Env, FnSig, GenericAlias, LazySig, generic_alias_layout, generic_alias_problems, signature,
    tensor_type,
};
pub use function::build_fn;
pub use reading::{escaped_exprs, escapes_rust};
pub use state::{Builder, MAX_ITERATIONS};

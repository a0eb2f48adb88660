//! CST: the Cast Engine, which lowers i32/f32 stream elements to narrower types flit by flit
//! (constraints.md §15, manual L6756-L6819).
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run on each `.cast()`. The rules share no derived facts: each reads the
//! cast step as it needs.

mod cast_one_flit;
mod cast_position;
mod cast_supported_pair;
#[cfg(test)]
mod tests;

pub use cast_one_flit::CST_002;
pub use cast_position::CST_003;
pub use cast_supported_pair::CST_001;

use super::context::FnContext;
use crate::diagnostic::Diagnostic;
use crate::model::Method;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[CST_001, CST_002, CST_003];

/// Checks each `.cast()` of the function: the type pair (CST-001), the packets and Time
/// (CST-002), then where it runs (CST-003).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for (ci, chain) in cx.model.chains.iter().enumerate() {
        for (i, step) in chain.steps.iter().enumerate() {
            if step.method != Method::Cast {
                continue;
            }
            cast_supported_pair::check(cx, step, out);
            cast_one_flit::check(cx, chain, i, step, out);
            cast_position::check(cx, ci, chain, i, step, out);
        }
    }
}

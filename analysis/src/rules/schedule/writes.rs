//! How the SCH rules name a write in their messages.

use crate::derive::timeline::{Timeline, Var, Write};

/// The write `w` of the timeline `t`, as `describe_write` names it.
pub(super) fn describe(t: &Timeline<'_>, w: &Write<'_>) -> String {
    describe_write(&t.vars, w)
}

/// The variable a write binds, or the method that writes, as a message names it.
pub(super) fn describe_write(vars: &[Var<'_>], w: &Write<'_>) -> String {
    match w.var {
        Some(v) => format!("`{}`", vars[v].tv.name),
        None => format!("this {}", w.step.method),
    }
}

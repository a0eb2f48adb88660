//! SCH-001 on a tensor a loop carries into its next iteration through an assignment: the next
//! iteration must not write over it before its last read of it. The same for a window one
//! iteration fills and the code after the loop reads: no later iteration may write over it.

use super::live_tensors_must_not_overlap::SCH_001;
use crate::derive::carried::{CarriedClash, Carry};
use crate::diagnostic::Diagnostic;
use crate::rules::context::FnContext;

/// SCH-001 on each write over a carried tensor (`best` of `best = Some(..)`, read at the top
/// of the next iteration; `tiles[k]` filled by iteration `k` and read after the loop), once
/// per write, in the first iteration it clashes; not where the sweep of the first pass
/// already reports the write. The address is one iteration's: no fix.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let mut reported: Vec<crate::diagnostic::Span> = out
        .iter()
        .filter(|d| d.rule.code == SCH_001.code)
        .map(|d| d.span)
        .collect();
    let assigned = crate::derive::carried::carried_clashes(cx.model);
    let filled = crate::derive::carried::filled_clashes(cx.model);
    for clash in assigned.into_iter().chain(filled) {
        if reported.contains(&clash.at) {
            continue;
        }
        reported.push(clash.at);
        out.push(over_carried(&clash));
    }
}

fn over_carried(c: &CarriedClash<'_>) -> Diagnostic {
    let name = &c.carried.name;
    let what = c
        .writer
        .map_or_else(|| "this write".to_string(), |w| format!("`{w}`"));
    let (held, placed) = match c.how {
        Carry::Assigned => (
            format!(
                "the iteration before ({}) left it there and this one still reads it after the write",
                c.from
            ),
            format!("`{name}` is assigned here (when {})", c.from),
        ),
        Carry::Filled => (
            format!(
                "the iteration {} filled it and it is read after the loop, so it must outlive the \
                 iterations after that one (here {})",
                c.from, c.into
            ),
            format!("`{name}` is placed here"),
        ),
    };
    Diagnostic::new(
        &SCH_001,
        c.at,
        format!(
            "{what} occupies DM [{}, {}) of each slice, which overlaps `{name}` at [{}, {}): \
             {held}; addresses of live tensors must not collide",
            c.write.start, c.write.end, c.fp.start, c.fp.end
        ),
    )
    .with_related(c.carried.span, placed)
    .with_related(c.read, read_here(c))
}

fn read_here(c: &CarriedClash<'_>) -> String {
    let name = &c.carried.name;
    let when = match c.how {
        Carry::Assigned => format!(" (when {})", c.into),
        Carry::Filled => String::new(),
    };
    match c.read_as == name {
        true => format!("`{name}` is read here{when}"),
        false => format!("`{name}` is read here, as `{}`{when}", c.read_as),
    }
}

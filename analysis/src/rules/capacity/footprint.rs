//! The capacity check the DM, TRF, VRF and HBM rules (CAP-005/006/007/008/011) share: a stored
//! tensor fits its unit's capacity, and a constant address leaves room for it. Each rule says
//! which capacity, in a [`Capacity`].

use super::sites::shown;
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Span};
use crate::rule::Rule;
use crate::rules::context::{FnContext, at_arg};

/// The capacity of one unit of a memory, as one rule checks it and words its message.
pub(super) struct Capacity {
    pub rule: &'static Rule,
    /// The unit's capacity, in bytes.
    pub bytes: u64,
    /// The unit (`slice`, `Row`, `chip`).
    pub unit: &'static str,
    /// The memory (`of DM`).
    pub space: &'static str,
    /// What to do when the tensor does not fit.
    pub advice: &'static str,
    /// How the TRF region was decided, after the capacity in the message (`""` elsewhere).
    pub mode: &'static str,
    /// What the tensor is, after the unit in the message (`""` but for an interleaved VRF).
    pub combined: &'static str,
}

/// `c` on the stored tensor `s`: its footprint within the capacity, then its constant address.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, c: &Capacity, out: &mut Vec<Diagnostic>) {
    let what = match s.element {
        Some(m) => format!("the {} Element {}", s.kind.type_name(), shown(cx, m)),
        None => format!("the stream loaded into this {}", s.kind.type_name()),
    };
    let amount = format!("{} × {} = {}", s.elements, s.dtype, human(s.bytes));
    if s.bytes > c.bytes {
        let (unit, combined, space, mode, advice) = (c.unit, c.combined, c.space, c.mode, c.advice);
        let msg = format!(
            "{what} holds {amount} per {unit}{combined}; a {unit} has {} {space}{mode}: {advice}",
            human(c.bytes)
        );
        // At the Element where it is written; the storing call beside it when elsewhere.
        out.push(match s.step {
            Some(step) => at_arg(c.rule, step, Some(s.at), msg),
            None => Diagnostic::new(c.rule, s.at, msg),
        });
        return;
    }
    past_address(s, c, &what, &amount, out);
}

/// `c` on the constant address of the stored tensor `s`, which fits the capacity: the tensor
/// ends within it.
fn past_address(s: &Store<'_>, c: &Capacity, what: &str, amount: &str, out: &mut Vec<Diagnostic>) {
    let placed = match s.step {
        Some(step) => step.address.map(|addr| {
            let span = step
                .method
                .transfer()
                .and_then(|m| m.address_arg)
                .and_then(|i| step.args.get(i))
                .map_or(step.span, |a| a.span);
            (addr, span)
        }),
        // Placed by hand (`from_addr`): at its binding.
        None => s.placed,
    };
    let Some((addr, span)) = placed else { return };
    out.extend(ends_past(c, what, amount, (addr, s.bytes), span));
}

/// `c` on a tensor of `bytes` at the constant address `addr` (written at `span`): the
/// diagnostic when it does not end within the capacity.
pub(super) fn ends_past(
    c: &Capacity,
    what: &str,
    amount: &str,
    (addr, bytes): (u64, u64),
    span: Span,
) -> Option<Diagnostic> {
    let (cap, unit, space) = (c.bytes, c.unit, c.space);
    let end = addr.checked_add(bytes);
    if end.is_some_and(|e| e <= cap) {
        return None;
    }
    let tail = if bytes <= cap {
        format!("; the last address that fits is {:#x}", cap - bytes)
    } else {
        String::new()
    };
    Some(Diagnostic::new(
        c.rule,
        span,
        format!(
            "{what} at address {addr:#x} occupies {addr:#x}..{} ({amount}), past the {} {space} per {unit}{tail}",
            end.map_or_else(|| "2^64 and beyond".to_string(), |e| format!("{e:#x}")),
            human(cap)
        ),
    ))
}

/// `16384 bytes (16 KB)`.
pub(super) fn human(b: u64) -> String {
    const KB: u64 = 1024;
    if b >= KB && b.is_multiple_of(KB) {
        let (v, unit) = if b >= KB * KB * KB && b.is_multiple_of(KB * KB * KB) {
            (b / (KB * KB * KB), "GB")
        } else if b >= KB * KB && b.is_multiple_of(KB * KB) {
            (b / (KB * KB), "MB")
        } else {
            (b / KB, "KB")
        };
        format!("{b} bytes ({v} {unit})")
    } else {
        format!("{b} bytes")
    }
}

//! The constant addresses ALN-001, ALN-002, ALN-008 and ALN-010 read, and the fix they share:
//! round a misaligned address up to the next multiple, written in the argument's own notation.

use crate::diagnostic::Diagnostic;
use crate::model::{Arg, Method};
use crate::rule::Rule;

/// The index of the address argument of a method with a constant address.
pub(super) fn address_arg(method: &Method) -> Option<usize> {
    match method {
        Method::ToDm | Method::ToHbm => Some(1),
        Method::Commit | Method::ToVrf => Some(0),
        _ => None,
    }
}

pub(super) fn round_up(v: u64, m: u64) -> Option<u64> {
    v.div_ceil(m).checked_mul(m)
}

fn address_text(original: &str, v: u64) -> String {
    if original.trim_start().starts_with("0x") {
        format!("{v:#x}")
    } else {
        v.to_string()
    }
}

/// The fix of a misaligned constant address: round it up to the next multiple of `align`,
/// written in the argument's own notation (`0x..`, `1 << n` or decimal).
pub(super) fn round_up_fix(d: Diagnostic, arg: &Arg, addr: u64, align: u64) -> Diagnostic {
    match round_up(addr, align) {
        Some(up) => {
            let text = address_text(&arg.text, up);
            d.with_edit(
                format!("round the address up to {text}"),
                false,
                arg.span,
                text,
            )
        }
        None => d,
    }
}

/// The diagnostic of `rule` on the constant address `arg` (`addr`), `what` the alignment of `a`
/// bytes it misses, with the fix that rounds it up.
pub(super) fn misaligned(
    rule: &'static Rule,
    arg: &Arg,
    addr: u64,
    a: u64,
    what: &str,
) -> Diagnostic {
    let d = Diagnostic::new(
        rule,
        arg.span,
        format!(
            "{what}; address {} is {} bytes past a multiple of {a}",
            arg.text.trim(),
            addr % a
        ),
    );
    round_up_fix(d, arg, addr, a)
}

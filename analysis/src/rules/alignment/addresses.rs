//! The constant addresses ALN-001, ALN-002, ALN-008 and ALN-010 read, and the fix they share:
//! round a misaligned address up to the next multiple, written in the argument's own notation.

use crate::diagnostic::Diagnostic;
use crate::model::Arg;
use crate::rule::Rule;

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

/// The fix of a misaligned constant address: round it up to the next multiple of `align`. A
/// number is rewritten as the rounded number in its own notation (`0x..` or decimal); any other
/// expression (`slot.w_up`, `BASE + i * PITCH`), whose value may differ from one call or loop
/// iteration to the next, is rounded where it is computed: `(BASE + i * PITCH).next_multiple_of(256)`.
pub(super) fn round_up_fix(d: Diagnostic, arg: &Arg, addr: u64, align: u64) -> Diagnostic {
    let Some(up) = round_up(addr, align) else {
        return d;
    };
    let written = arg.text.trim();
    let (title, text) = if is_number(written) {
        let text = address_text(written, up);
        (format!("round the address up to {text}"), text)
    } else {
        let simple = written
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | ':'));
        let expr = match simple {
            true => written.to_string(),
            false => format!("({written})"),
        };
        (
            format!("round the address up to a multiple of {align} ({up:#x} here)"),
            format!("{expr}.next_multiple_of({align})"),
        )
    };
    d.with_edit(title, false, arg.span, text)
}

/// Whether `text` is an integer literal (`4100`, `0x1004`, `1_024`, `4096u64`).
fn is_number(text: &str) -> bool {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
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
            address_as_written(arg, addr),
            addr % a
        ),
    );
    round_up_fix(d, arg, addr, a)
}

/// The address `arg` as written, with its value when it is an expression (`0x1008 + i *
/// 0x400 = 0x1408`, in a loop's iteration).
pub(super) fn address_as_written(arg: &Arg, addr: u64) -> String {
    let text = arg.text.trim();
    match is_number(text) {
        true => text.to_string(),
        false => format!("{text} = {addr:#x}"),
    }
}

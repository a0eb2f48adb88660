//! FET-007: a zero point fits the fetch output type (furiosa-opt-std 0.6: the source type,
//! which `fetch_zero_point_sub` asserts). Integer literals are checked, in a fetch of the
//! manual's library (`fetch_with_zero_point(s)`) or furiosa-opt-std's adapter, each literal
//! of `zp` or `[zp0, zp1]` at its own place in the argument.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::ZeroPointRange;
use crate::model::{Arg, Dtype};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const FET_007: Rule = Rule {
    code: "FET-007",
    name: "zero-point-range",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A zero point fits the fetch output type (furiosa-opt-std: the source type)",
    docs: "`fetch_with_zero_point(zp)` and `fetch_with_zero_points([zp0, zp1])` subtract the zero \
           point while converting to the output type D2; the value must be representable in D2 \
           (i9 holds -256..=255, i5 holds -16..=15). furiosa-opt-std 0.6's \
           `fetch_zero_point_sub::<D2>(zp)` asserts the stricter range of the type it reads, \
           -128..=127 for i8 → i9 and -8..=7 for i4 → i5, which keeps every residual within \
           D2. visa-lint checks integer literals. Use a wider output type or requantize.",
    bad: "...fetch_with_zero_point(300) // D2 = i9",
    good: "...fetch_with_zero_point(100) // D2 = i9",
    manual: "L2117, L2030-L2049",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 writes it `fetch_zero_point_sub::<D>(zp)` with one zero point and \
         asserts the range of the source type, -8..=7 for i4 and -128..=127 for i8 \
         (`FetchZeroPointSub::ZERO_POINT_RANGE`, `furiosa-opt-std/src/cast.rs:83-108`, asserted \
         at `engine/fetch_adapter.rs:314-318`); visa-lint checks that range there",
    ),
};

/// FET-007 where the zero point is given: a fetch of the manual's library (`step`), or
/// furiosa-opt-std's `fetch_zero_point_sub` adapter, from its input type to the one it names.
pub(super) fn check(
    cx: &FnContext<'_>,
    (from, to): (Option<Dtype>, Option<Dtype>),
    arg: Option<&Arg>,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(to), Some(arg)) = (to, arg) else {
        return;
    };
    let Some((what, (lo, hi), why)) = zero_point_range(cx, from, to) else {
        return;
    };
    let value = arg.value_text();
    let text = value.as_ref();
    // The literals of `zp` or `[zp0, zp1]`, with their offsets in the argument.
    let mut items: Vec<(usize, &str)> = Vec::new();
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    if let Some(body) = trimmed.strip_prefix('[') {
        let body = body.trim_end().strip_suffix(']').unwrap_or(body);
        let mut off = lead + 1;
        for part in body.split(',') {
            items.push((off, part));
            off += part.len() + 1;
        }
    } else {
        items.push((0, text));
    }
    for (off, part) in items {
        let Some(v) = parse_int(part) else { continue };
        if v < lo || v > hi {
            let start = off + (part.len() - part.trim_start().len());
            // A zero point the argument names is not written here: the argument is the place.
            let span = if arg.in_place() {
                Span::new(
                    arg.span.start as usize + start,
                    arg.span.start as usize + start + part.trim().len(),
                )
            } else {
                arg.span
            };
            out.push(Diagnostic::new(
                &FET_007,
                span,
                format!("the zero point {v} does not fit {what} ({lo}..={hi}){why}"),
            ));
        }
    }
}

/// The range a zero-point fetch's zero point must lie in, what it is the range of, and why
/// (for a message's end): the output type's for the manual (L2117); for furiosa-opt-std 0.6
/// the source type's, which `fetch_zero_point_sub` asserts (`fetch_adapter.rs:314-318`), when
/// the fetch is one of its pairs (another is FET-004's).
fn zero_point_range(
    cx: &FnContext<'_>,
    from: Option<Dtype>,
    to: Dtype,
) -> Option<(String, (i64, i64), String)> {
    let conv = cx.conversions();
    match conv.zero_point_range {
        ZeroPointRange::Output => Some((
            format!("the fetch output type {to}"),
            to.int_range()?,
            String::new(),
        )),
        ZeroPointRange::Source => {
            let from = from?;
            if !conv.zero_point_sub.pairs.contains(&(from, to)) {
                return None;
            }
            let why = format!(
                ": `fetch_zero_point_sub` asserts the range of the type it reads, which keeps \
                 every residual within {to}"
            );
            Some((format!("the source type {from}"), from.int_range()?, why))
        }
    }
}

/// An integer literal (`-10`, `100i8`, `0x7f`, `1_000`), or `None`.
fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim().replace('_', "");
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start().to_string()),
        None => (false, t),
    };
    let (radix, body) = match t.strip_prefix("0x") {
        Some(h) => (16, h),
        None => (10, t.as_str()),
    };
    let end = body
        .find(|c: char| !c.is_digit(radix) || (radix == 16 && matches!(c, 'i' | 'u')))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(end);
    let typed = ["", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];
    if digits.is_empty() || !typed.contains(&suffix) {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_point_ranges_l2117() {
        assert_eq!(Dtype::I9.int_range(), Some((-256, 255)));
        assert_eq!(
            Dtype::I32.int_range(),
            Some((i64::from(i32::MIN), i64::from(i32::MAX)))
        );
        assert_eq!(Dtype::F32.int_range(), None);
        assert_eq!(parse_int("-100"), Some(-100));
        assert_eq!(parse_int("100i8"), Some(100));
        assert_eq!(parse_int(" 0x7f "), Some(127));
        assert_eq!(parse_int("1_000i32"), Some(1000));
        assert_eq!(parse_int("zero_point"), None);
    }

    /// The zero point's source type through a generic tensor type alias (`Hbm<i8, ..>`): the
    /// alias is instantiated with the use's arguments, so the i8 it gives is read.
    #[test]
    fn a_generic_tensor_alias_gives_its_element_type() {
        let src = "use furiosa_opt_std::prelude::*;\naxes![A = 8, K = 32];\n\
                   type Chip = m![1];\ntype Cluster = m![1 # 2];\n\
                   pub type Hbm<Ty, Element> = HbmTensor<Ty, Chip, Element>;\n\
                   #[device(chip = 1)]\n\
                   pub fn k(ctx: &mut Context, x: &Hbm<i8, m![A, K]>) {\n\
                   let x_dm = x.to_dm::<Cluster, m![1 # 256], m![A, K]>(&mut ctx.tdma);\n\
                   let _y = ctx.main.begin(x_dm.view()).fetch::<m![A], m![K]>()\n\
                   .fetch_zero_point_sub::<i9>(200);\n}\n";
        let found = crate::check_text(src);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code(), "FET-007");
        assert!(
            found[0].message.contains("source type i8"),
            "{}",
            found[0].message
        );
    }
}

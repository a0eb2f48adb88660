//! The operation arguments of Vector Engine calls (`FxpBinaryOp::AddFxp`, `IntraSliceReduceOpI32::Min`):
//! how they are written and whether one fits the stream's element type. The reduce (ISR) and
//! inter-slice (XSL) rule families check them with these helpers.

use crate::diagnostic::Diagnostic;
use crate::model::{Dtype, Step};
use crate::rule::Rule;

/// `Enum::Variant` -> (`Enum`, `Variant`), ignoring a leading path.
pub fn split_op(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let (path, variant) = t.rsplit_once("::")?;
    let en = path.rsplit("::").next()?.trim();
    Some((en, variant.trim()))
}

/// Checks an op argument against `(enum for i32, ops)` / `(enum for f32, ops)`; shared with XSL.
pub fn op_problem(
    code: &'static Rule,
    step: &Step,
    i32_enum: &str,
    i32_ops: &[&str],
    f32_enum: &str,
    f32_ops: &[&str],
) -> Option<Diagnostic> {
    let arg = step.args.first()?;
    let text = arg.value_text();
    let (en, variant) = split_op(&text)?;
    let (is_i32, ops) = if en == i32_enum {
        (true, i32_ops)
    } else if en == f32_enum {
        (false, f32_ops)
    } else {
        return None;
    };
    // The element type the op is for.
    let op_dtype = if is_i32 { Dtype::I32 } else { Dtype::F32 };
    let dtype = step
        .input
        .as_ref()
        .and_then(|t| t.dtype)
        .or_else(|| step.output.as_ref().and_then(|t| t.dtype));
    let want_i32 = match dtype {
        Some(Dtype::I32) => Some(true),
        Some(Dtype::F32) => Some(false),
        _ => None,
    };
    if let Some(want) = want_i32
        && want != is_i32
    {
        let (d, other_enum, other_ops) = if want {
            (Dtype::I32, i32_enum, i32_ops)
        } else {
            (Dtype::F32, f32_enum, f32_ops)
        };
        let msg = format!(
            "`{en}::{variant}` is an op for {} streams, but this stream is {d}: use `{other_enum}` ({})",
            op_dtype,
            other_ops.join(", ")
        );
        let mut d = Diagnostic::new(code, arg.span, msg);
        if let Some(v) = counterpart(variant, other_ops) {
            d = d.with_edit(
                format!("use `{other_enum}::{v}`"),
                false,
                arg.span,
                format!("{other_enum}::{v}"),
            );
        }
        return Some(d);
    }
    if !ops.contains(&variant) {
        let msg = format!(
            "`{en}` has no `{variant}`: the {} ops are {}",
            op_dtype,
            ops.join(", ")
        );
        let mut d = Diagnostic::new(code, arg.span, msg);
        if let Some(v) = counterpart(variant, ops) {
            d = d.with_edit(
                format!("use `{en}::{v}`"),
                false,
                arg.span,
                format!("{en}::{v}"),
            );
        }
        return Some(d);
    }
    None
}

/// The op of `ops` that does what `variant` means (`Add` <-> `AddSat`).
fn counterpart<'a>(variant: &str, ops: &[&'a str]) -> Option<&'a str> {
    if let Some(v) = ops.iter().find(|o| **o == variant) {
        return Some(v);
    }
    let family = |s: &str| {
        if s.starts_with("Add") { "Add" } else { "" }
    };
    let f = family(variant);
    if f.is_empty() {
        return None;
    }
    ops.iter().copied().find(|o| family(o) == f)
}

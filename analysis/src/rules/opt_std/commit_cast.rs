//! OPT-005: `commit_cast` converts f32 to bf16 only, and reads the trimmed packet before it in
//! whole 16-byte units.

use super::super::context::FnContext;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Adapter, Dtype, Method};
use crate::rule::{Generations, Rule, Status};

pub const OPT_005: Rule = Rule {
    code: "OPT-005",
    name: "commit-cast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`commit_cast` converts f32 to bf16, from a trimmed packet of whole 16-byte units (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 can convert a stream while the Commit Engine writes it \
           (`commit_cast::<bf16>()`, `commit_cast_relu::<bf16>()`, after `commit_trim`). That \
           conversion is f32 to bf16 only (its `CommitCast` table), and the converting commit \
           unit writes 8 bytes from every 16 it reads, so the trimmed packet, counted in f32 \
           bytes, is a multiple of 16: 16 or 32 bytes, 4 or 8 elements (its Commit Adapter \
           verifier). The manual has no commit-side cast; another conversion goes through the \
           Cast Engine (`cast::<D, Packet>()`).",
    bad: ".commit_trim::<m![N % 4 # 6]>().commit_cast::<bf16>() // 24 bytes of f32",
    good: ".commit_trim::<m![N % 4 # 8]>().commit_cast::<bf16>() // 32 bytes of f32",
    manual: "",
    generations: Generations::OptStdOnly(
        "`commit_cast` exists only there: its `CommitCast` table is f32 → bf16 \
         (`furiosa-opt-std/src/cast.rs:128-156`; CHANGES.md:52), its packet check \
         `config_commit_cast` (`furiosa-opt-lower/src/verify/engine/commit_adapter.rs:54-73`); \
         the manual casts only in the Cast Engine",
    ),
};

/// OPT-005: each `commit_cast[_relu]::<D>()`, against the `commit_trim` before it.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let adapters = &cx.model.adapters;
    for (i, cast) in adapters.iter().enumerate() {
        if !matches!(cast.method, Method::CommitCast | Method::CommitCastRelu) {
            continue;
        }
        let to = cast
            .generic
            .as_ref()
            .and_then(|(a, _)| Dtype::from_name(a.text.trim()));
        let from = cast.input.dtype;
        if let (Some(from), Some(to)) = (from, to)
            && conversion(cx, cast, from, to, out)
        {
            continue;
        }
        trimmed_packet(cx, &adapters[..i], cast, from, to, out);
    }
}

/// The conversion of a `commit_cast`, from `from` to `to`, against the commit stage's table;
/// whether it was reported.
fn conversion(
    cx: &FnContext<'_>,
    cast: &Adapter,
    from: Dtype,
    to: Dtype,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let stage = cx.conversions().commit_cast;
    if stage.converts(from, to) {
        return false;
    }
    let pairs: Vec<String> = stage
        .pairs
        .iter()
        .map(|(a, b)| format!("{a} to {b}"))
        .collect();
    out.push(Diagnostic::new(
        &OPT_005,
        cast.span,
        format!(
            "`{}` converts {} only; this stream is {from} to {to}: convert it \
             in the Cast Engine (`cast::<{to}, ..>()`) before the commit",
            cast.method,
            pairs.join(", ")
        ),
    ));
    true
}

/// The packet the last `commit_trim` of `before` keeps, against the units a `commit_cast`
/// reads it in.
fn trimmed_packet(
    cx: &FnContext<'_>,
    before: &[Adapter],
    cast: &Adapter,
    from: Option<Dtype>,
    to: Option<Dtype>,
    out: &mut Vec<Diagnostic>,
) {
    let trim = before.iter().rev().find(|a| a.method == Method::CommitTrim);
    let Some((arg, Some(map))) = trim.and_then(|t| t.generic.as_ref()) else {
        return;
    };
    let (Some(kept), Some(from), Some(to)) = (map.layout.as_deref(), from, to) else {
        return;
    };
    let Some(bytes) = from.size_bytes(kept.size) else {
        return;
    };
    // The smallest commit width, times how many bytes are read for each one written.
    let base = cx
        .target
        .commit_sizes_main
        .iter()
        .min()
        .copied()
        .unwrap_or(8);
    let ratio = u64::from(from.bits() / to.bits().max(1)).max(1);
    let unit = base * ratio;
    if !bytes.is_multiple_of(unit) {
        out.push(
            Diagnostic::new(
                &OPT_005,
                arg.span,
                format!(
                    "`{}` reads the trimmed packet in {unit}-byte units (it writes half as \
                     many bytes as it reads), but `{}` keeps {bytes} bytes of {from}: trim \
                     to 16 or 32 bytes",
                    cast.method, arg.text
                ),
            )
            .with_related(cast.span, "the converting commit"),
        );
    }
}

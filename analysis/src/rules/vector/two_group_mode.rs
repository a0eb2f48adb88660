//! VEC-013: `vector_intra_slice_unzip::<I, ..>()` splits a stream whose Time carries the
//! 2-way grouping axis `I` (from `begin_interleaved`) into two groups that run in lock step.
//! One `_zip` op merges them before `vector_final()`, and a `_zip` op needs a pair to merge;
//! `vector_stash()`, the `Stash` operand and `vector_filter()` are unavailable while the
//! groups are paired and after the zip.

use super::ops::{is_ident, layout};
use super::pass::Pass;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::layout::Dim;
use crate::model::{Arg, Slot, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_013: Rule = Rule {
    code: "VEC-013",
    name: "two-group-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Two-group mode: the grouping axis is in Time, a `_zip` op merges before `vector_final`, no stash or filter",
    docs: "`vector_intra_slice_unzip::<I, TileTime, SplitTime>()` splits a stream whose Time carries \
           the 2-way grouping axis `I` (from `begin_interleaved`) into two lock-step groups. One \
           `_zip` op (`vector_clip_zip`, `vector_fp_zip`, `vector_fxp_zip_with_mode`, ...) merges \
           them before `vector_final()`; a `_zip` op needs a pair. `vector_stash()` and \
           `vector_filter()` are unavailable while paired and after the zip.",
    bad: ".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>().vector_fxp(FxpBinaryOp::MulInt, 10, ()).vector_final()",
    good: ".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>().vector_fxp(FxpBinaryOp::MulInt, 10, ()).vector_clip_zip(ClipBinaryOpI32::AddFxp).vector_final()",
    manual: "L5155-L5165, L5201-L5205, L5259",
    generations: Generations::Both,
};

/// VEC-013: the unzip axis must be in the input Time.
pub(super) fn unzip_axis(step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(g) = step.generics.first() else {
        return;
    };
    let axis = g.text.trim();
    if !is_ident(axis) || axis == "_" {
        return;
    }
    let Some(time) = layout(step.input.as_ref(), Slot::Time) else {
        return;
    };
    if time.dims.iter().any(|d| matches!(d, Dim::Opaque(_))) {
        return;
    }
    let found = time.dims.iter().any(|d| match d {
        Dim::Factor(f) => f.axis.as_ref().is_some_and(|a| &*a.name == axis),
        Dim::Opaque(_) => false,
    });
    if !found {
        let t = step
            .input
            .as_ref()
            .and_then(|t| t.get(Slot::Time))
            .map_or(String::new(), |v| v.text.trim().to_string());
        out.push(Diagnostic::new(
            &VEC_013,
            g.span,
            format!(
                "`vector_intra_slice_unzip::<{axis}, ..>()` splits the groups along `{axis}`, but the \
                 stream's Time `{t}` has no `{axis}` factor (interleave two tensors with \
                 `begin_interleaved::<{axis}, ..>()`)"
            ),
        ));
    }
}

/// VEC-013 at a `vector_stash()` in two-group mode, before or after the zip. True when
/// reported.
pub(super) fn stash(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) -> bool {
    let msg = if p.paired {
        "`vector_stash()` is unavailable in two-group mode (while the groups are paired)"
    } else {
        "`vector_stash()` is unavailable after a `_zip` merged the two groups"
    };
    stash_unavailable(p, step.span, msg, out)
}

/// VEC-013 at a `Stash` operand in two-group mode. True when reported.
pub(super) fn stash_operand(p: &Pass<'_>, a: &Arg, out: &mut Vec<Diagnostic>) -> bool {
    stash_unavailable(p, a.span, "the stash is unavailable in two-group mode", out)
}

/// Reports `msg` at `at` when the pass is in two-group mode, before or after the zip, where
/// the stash is unavailable. True when reported.
fn stash_unavailable(p: &Pass<'_>, at: Span, msg: &str, out: &mut Vec<Diagnostic>) -> bool {
    if !p.paired && p.zipped.is_none() {
        return false;
    }
    out.push(Diagnostic::new(&VEC_013, at, msg));
    true
}

/// VEC-013 at a `_zip` op: it merges a pair, which was not merged before.
pub(super) fn zip(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    if p.paired {
        return;
    }
    let msg = match p.zipped {
        Some(_) => {
            format!("`{m}` merges a two-group pair, but the pair was already merged")
        }
        None => format!(
            "`{m}` merges the two groups of `vector_intra_slice_unzip()`, but this stream \
             is a single group"
        ),
    };
    let mut d = Diagnostic::new(&VEC_013, step.span, msg);
    if let Some(z) = p.zipped {
        d = d.with_related(z.span, "merged here");
    }
    out.push(d);
}

/// VEC-013 at any other op: no filter around the pair, and the pair merged before
/// `vector_final()`.
pub(super) fn check(p: &Pass<'_>, stage: VeStage, step: &Step, out: &mut Vec<Diagnostic>) {
    if stage == VeStage::Filter && (p.paired || p.zipped.is_some()) {
        out.push(Diagnostic::new(
            &VEC_013,
            step.span,
            "`vector_filter()` is unavailable in two-group mode, before and after the `_zip`",
        ));
    }
    if stage == VeStage::Final && p.paired {
        out.push(
            Diagnostic::new(
                &VEC_013,
                step.span,
                "the two groups are still paired: merge them with a `_zip` op (`vector_clip_zip`, \
                 `vector_fp_zip`, `vector_fxp_zip_with_mode`, ...) before `vector_final()`",
            )
            .with_related(
                p.stage_step.map_or(step.span, |s| s.span),
                "last op on the pair",
            ),
        );
    }
}

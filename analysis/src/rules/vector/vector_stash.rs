//! VEC-010: `vector_stash()` snapshots the stream at a Stashable stage (Branch, Logic, Fxp,
//! Narrow, Float, FpDiv, Clip) into the pass's single stash slot, and a later binary or ternary
//! op reads it as the `Stash` operand. The slot is typed (an f32 stash feeds only f32 ops), a
//! binary op that reads it consumes it, and there is one per pass. (The stash in two-group mode
//! is VEC-013.)

use super::pass::Pass;
use super::stages::{stage_name, stashable};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Arg, Dtype, Step};
use crate::rule::{Generations, Rule, Status};

pub const VEC_010: Rule = Rule {
    code: "VEC-010",
    name: "vector-stash",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "One typed stash per pass, taken at a Stashable stage, consumed at most once",
    docs: "`vector_stash()` snapshots the stream at a Stashable stage (Branch, Logic, Fxp, Narrow, \
           Float, FpDiv, Clip) into a single slot; a later binary or ternary op reads it as the \
           `Stash` operand. The slot is typed (an f32 stash feeds only f32 ops, an i32 stash only \
           i32 ops), it is not available after a binary op consumed it, and there is one per \
           pass. (Stash in two-group mode is VEC-013.)",
    bad: ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, Stash).vector_clip(ClipBinaryOpI32::Max, Stash)",
    good: ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_clip(ClipBinaryOpI32::Max, Stash)",
    manual: "L4977-L4988, L5006, L5059, L5258",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 also reads a stash at the scalar and the way it was written with, and \
         refuses a stash in pair mode at compile time (CHANGES.md:56, 111); visa-lint checks the \
         manual's one stash, read once (L4977-L4988), under both",
    ),
};

/// VEC-010 at a `vector_stash()`: a Stashable stage, and the slot neither consumed nor live.
pub(super) fn check(p: &Pass<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    if !stashable(p.stage) {
        out.push(Diagnostic::new(
            &VEC_010,
            step.span,
            format!(
                "`vector_stash()` is not available after the {} stage; the Stashable stages are \
                 Branch, Logic, Fxp, Narrow, Float, FpDiv and Clip",
                stage_name(p.stage)
            ),
        ));
    }
    if let Some(c) = p.consumed {
        out.push(
            Diagnostic::new(
                &VEC_010,
                step.span,
                "`vector_stash()` is not available after a binary op consumed the stash: the pass \
                 has a single stash slot",
            )
            .with_related(c.span, "the stash was consumed here"),
        );
    } else if let Some(s) = p.stash {
        out.push(
            Diagnostic::new(
                &VEC_010,
                step.span,
                "a stash is already live in this pass, and the pass has a single stash slot",
            )
            .with_related(s.span, "the live stash"),
        );
    }
}

/// VEC-010 at a `Stash` operand of an op on a `d` stream: a stash that is live and of the
/// stream's type. (Reading it consumes it: the walk records that.)
pub(super) fn operand(p: &Pass<'_>, d: Option<Dtype>, a: &Arg, out: &mut Vec<Diagnostic>) {
    if let Some(c) = p.consumed {
        out.push(
            Diagnostic::new(
                &VEC_010,
                a.span,
                "the stash is not available any more: a binary op already consumed it in this pass",
            )
            .with_related(c.span, "the stash was consumed here"),
        );
        return;
    }
    match p.stash {
        None if p.complete => out.push(Diagnostic::new(
            &VEC_010,
            a.span,
            "`Stash` reads the stash slot, but nothing was stashed in this pass: call \
             `vector_stash()` at an earlier Stashable stage",
        )),
        Some(s) => {
            let sd = s.input.as_ref().and_then(|t| t.dtype);
            if let (Some(sd), Some(d)) = (sd, d)
                && sd != d
            {
                out.push(
                    Diagnostic::new(
                        &VEC_010,
                        a.span,
                        format!(
                            "the stash is typed: it holds {sd}, so only {sd} ops can consume it; \
                             this op runs on {d}"
                        ),
                    )
                    .with_related(s.span, format!("stashed as {sd} here")),
                );
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::vector::tests::vec_codes;

    #[test]
    fn stash_consumed_once_l4983() {
        // L4983: not available after a binary op consumes it; a non-consuming op in between is fine
        // (the manual's L4990 and L5012 examples).
        let ok = vec_codes(
            "i32",
            ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert!(ok.is_empty(), "{ok:?}");
        let twice = vec_codes(
            "i32",
            ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, Stash).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert_eq!(twice, vec![("VEC-010".into(), "Stash".into())]);
        let none = vec_codes("i32", ".vector_clip(ClipBinaryOpI32::Max, Stash)");
        assert_eq!(none, vec![("VEC-010".into(), "Stash".into())]);
        // Typed (L4981): an f32 stash fed to the i32 stream after fp_to_fxp.
        let typed = vec_codes(
            "f32",
            ".vector_stash().vector_fp_to_fxp(31).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert_eq!(typed, vec![("VEC-010".into(), "Stash".into())]);
    }
}

//! CST-001: the Cast Engine only lowers precision within a family, i32 to i4/i8/i16 and f32 to
//! the narrow floats, as the crate's library's table says; the stream's type and the cast's
//! target must be such a pair.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Dtype, Step, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CST_001: Rule = Rule {
    code: "CST-001",
    name: "cast-supported-pair",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Cast Engine lowers i32 to i4/i8/i16 and f32 to f8e5m2/f8e4m3/f16/bf16 only",
    docs: "`.cast::<D2, OutPacket>()` requires `D: Cast<D2>` on a `VeScalar` stream: the Cast \
           Engine narrows i32 to i4, i8 or i16, and f32 to f8e5m2, f8e4m3, f16 or bf16. There is \
           no float-to-integer or integer-to-float lowering, no widening, and no cast of a stream \
           that is already narrow (a bf16 stream straight from collect). Convert between integer \
           and float in the Vector Engine (FxpToFp / FpToFxp) before the cast, cast to a type of \
           the same family, or drop the cast when the stream already has the type to commit. \
           furiosa-opt-std 0.6 has no f16, so f32 lowers to f8e5m2, f8e4m3 or bf16 there.",
    bad: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<i8, m![1 # 32]>() // f32",
    good: "...accumulate::<m![1], m![1 # 8]>(AccumulationKind::Interleaved).cast::<bf16, m![1 # 16]>()",
    manual: "L6759, L6765, L6776-L6779",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `CastEngineCast` has the same pairs without f16, which it removed, \
         and no identity (`furiosa-opt-std/src/cast.rs:111-126`; CHANGES.md:33-35); visa-lint \
         checks that table there. It converts f32 to bf16 in the commit as well (OPT-005)",
    ),
};

/// CST-001: the stream's type against the Cast Engine table of the crate's library.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(d1) = step.input.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    let Some(d2) = step.output.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    let stage = cx.conversions().cast_engine;
    if stage.converts(d1, d2) {
        return;
    }
    let span = written(step, 0).map_or(step.span, |a| a.span);
    let names = |ds: Vec<Dtype>| ds.iter().map(|d| d.as_str()).collect::<Vec<_>>();
    let sources = names(stage.sources());
    let msg = if !sources.contains(&d1.as_str()) {
        format!(
            "the Cast Engine lowers {} streams only; this stream is {d1}: it is already narrow, \
             commit it without `.cast()` or widen it first",
            sources.join(" and ")
        )
    } else if d1 == d2 {
        format!("the stream is already {d1}: the Cast Engine only lowers precision; drop `.cast()`")
    } else {
        format!(
            "the Cast Engine lowers {d1} to {} only, not to {d2}",
            names(stage.targets(d1)).join(", ")
        )
    };
    out.push(Diagnostic::new(&CST_001, span, msg));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::Generation;
    use crate::target::RNGD;

    /// The precision-lowering table, L6776-L6779; furiosa-opt-std 0.6's has no f16
    /// (`cast.rs:119-126` at ebb846a).
    #[test]
    fn cast_table() {
        let stage = Generation::VisaStd.conversions(&RNGD).cast_engine;
        let supported = |d1: &str, d2: &str| {
            stage.converts(
                Dtype::from_name(d1).expect(d1),
                Dtype::from_name(d2).expect(d2),
            )
        };
        for d2 in ["i4", "i8", "i16"] {
            assert!(supported("i32", d2), "{d2}");
            assert!(!supported("f32", d2), "{d2}");
        }
        for d2 in ["f8e5m2", "f8e4m3", "f16", "bf16", "f8"] {
            assert!(supported("f32", d2), "{d2}");
            assert!(!supported("i32", d2), "{d2}");
        }
        for (d1, d2) in [
            ("f32", "f32"),
            ("i32", "i32"),
            ("bf16", "f8e4m3"),
            ("i8", "i4"),
            ("i16", "i8"),
        ] {
            assert!(!supported(d1, d2), "{d1} -> {d2}");
        }
        assert_eq!(stage.pairs.len(), 7);
        let opt = Generation::OptStd.conversions(&RNGD).cast_engine;
        assert!(!opt.converts(Dtype::F32, Dtype::F16) && opt.converts(Dtype::F32, Dtype::Bf16));
    }
}

//! VEC-004: the Logic, Fxp, Float and Clip stages each have a pool of ALUs, and each ALU runs
//! once per pass (`AddFxp` then `SubFxp` both need FxpAdd). A reuse is reported at the op that
//! needs the taken ALU; the fix takes the twin multiplier where it is free, and the message
//! suggests the Clip stage's adder for an Fxp add. VEC-015 offers to split the pass.

use super::ops::{Op, parse_op};
use super::pass::Pass;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Arg, Step, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_004: Rule = Rule {
    code: "VEC-004",
    name: "vector-alu-single-use",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Each ALU of the Logic, Fxp, Float and Clip stages is used at most once per pass",
    docs: "Ops of one stage share a pool of ALUs (Logic: LogicAnd/Or/Xor/Lshift/Rshift; Fxp: \
           FxpAdd/Lshift/Mul/Rshift; Float: FpFma/FpFpu/FpExp/FpMul0/FpMul1; Clip: \
           ClipAdd/Max/Min) and each ALU runs once per pass: `AddFxp` then `SubFxp` both need \
           FxpAdd and panic with \"FxpAdd is already in use\"; `tanh(sqrt(x))` needs FpFpu twice. \
           A multiply routed to the FMA unit (`MulF(FpMulAlu::Fma)`) takes FpFma, as `AddF` \
           does. Use the twin multiplier (`FpMulAlu::Mul1` next to `Mul0`), move an add to the Clip \
           stage (`ClipBinaryOpI32::AddFxp`), or split the work into two Tensor Unit passes with \
           the intermediate in DM. In two-group mode an ALU used by either group is used for both. \
           A pass written across helper calls (a helper given a stream in mid-pass, or \
           returning one its caller continues) is one pass: the ALUs its parts take are \
           counted together and a reuse is reported at the call. VEC-015 offers the split as a \
           quick fix.",
    bad: ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2).vector_fxp(FxpBinaryOp::SubFxp, 5)",
    good: ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2).vector_clip(ClipBinaryOpI32::AddFxp, -5)",
    manual: "L4750, L4805-L4836, L4877-L4906, L4955-L4972, L5205, L5253, L5260-L5269",
    generations: Generations::Both,
};

/// The ALU an op of `stage` uses (tables L4806-L4836, L4878-L4904, L4956-L4972).
fn alu(stage: VeStage, op: &Op<'_>) -> Option<&'static str> {
    let v = op.variant;
    Some(match stage {
        VeStage::Logic => match v {
            "BitAnd" => "LogicAnd",
            "BitOr" => "LogicOr",
            "BitXor" => "LogicXor",
            "LeftShift" => "LogicLshift",
            "LogicRightShift" | "ArithRightShift" => "LogicRshift",
            _ => return None,
        },
        VeStage::Fxp => match v {
            "AddFxp" | "AddFxpSat" | "SubFxp" | "SubFxpSat" => "FxpAdd",
            "LeftShift" | "LeftShiftSat" => "FxpLshift",
            "MulFxp" | "MulInt" => "FxpMul",
            "LogicRightShift" | "ArithRightShift" | "ArithRightShiftRound" => "FxpRshift",
            _ => return None,
        },
        VeStage::Fp => match v {
            "Exp" | "NegExp" => "FpExp",
            "Sqrt" | "Tanh" | "Sigmoid" | "Erf" | "Log" | "Sin" | "Cos" | "DivF" => "FpFpu",
            "AddF" | "SubF" | "FmaF" | "MaskFmaF" => "FpFma",
            "MulF" | "MaskMulF" => match op.lane.map(|l| l.0) {
                Some("Mul0") => "FpMul0",
                Some("Mul1") => "FpMul1",
                // Not in the manual's table (L4895-L4898), in both libraries' `FpMulAlu`.
                Some("Fma") => "FpFma",
                _ => return None,
            },
            _ => return None,
        },
        VeStage::Clip => match v {
            "Min" | "AbsMin" => "ClipMin",
            "Max" | "AbsMax" => "ClipMax",
            "AddFxp" | "AddFxpSat" | "Add" => "ClipAdd",
            _ => return None,
        },
        _ => return None,
    })
}

/// VEC-004: one use of each ALU per pass. Returns the ALU the op takes, with its argument,
/// when no earlier op of the pass took it: the pass holds it from then on.
pub(super) fn check<'a>(
    p: &Pass<'a>,
    stage: VeStage,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) -> Option<(&'static str, &'a Arg)> {
    let a = step.args.first()?;
    let text = a.value_text();
    let op = parse_op(&text)?;
    let unit = alu(stage, &op)?;
    let Some(&(_, first)) = p.alus.iter().find(|(u, _)| *u == unit) else {
        return Some((unit, a));
    };
    // The op as the pass runs it (`SubF`), and as written when that does not name it
    // (`R::CENTER`).
    let first_value = first.value_text();
    let first_op = match parse_op(&first_value) {
        Some(o) if first.text.contains(o.variant) => format!("`{}`", o.variant),
        Some(o) => format!("`{}` (`{}`)", o.variant, first.text.trim()),
        None => format!("`{}`", first.text.trim()),
    };
    let mut d = Diagnostic::new(
        &VEC_004,
        a.span,
        format!(
            "{unit} is already in use: `{}` needs the {unit} ALU, which {first_op} took earlier in \
             this pass, and each ALU runs once per Tensor Unit pass; split the work into two passes \
             (vector_final + commit, then begin again from the intermediate)",
            op.variant
        ),
    )
    .with_related(first.span, format!("{unit} is first used by {first_op} here"));
    // The twin multiplier lane (L4895-L4896).
    let twin = match unit {
        "FpMul0" => Some(("Mul1", "FpMul1")),
        "FpMul1" => Some(("Mul0", "FpMul0")),
        _ => None,
    };
    // The lane is edited where the argument writes it; one reached through a name
    // (`MUL_LANES[GAMMA_LANE]`) is not written at the argument, and is not edited there.
    if let (Some((lane, twin_unit)), Some((_, off))) = (twin, op.lane)
        && !p.alus.iter().any(|(u, _)| *u == twin_unit)
        && a.text.trim() == text.trim()
    {
        let start = a.span.start as usize + off;
        d = d.with_edit(
            format!("use the other multiplier lane `FpMulAlu::{lane}` ({twin_unit} is free)"),
            true,
            Span::new(start, start + 4),
            lane.to_string(),
        );
    } else if unit == "FxpAdd"
        && matches!(op.variant, "AddFxp" | "AddFxpSat")
        && !p.alus.iter().any(|(u, _)| *u == "ClipAdd")
    {
        d.message.push_str(&format!(
            "; or add in the Clip stage: `vector_clip(ClipBinaryOpI32::{}, ..)`",
            op.variant
        ));
    }
    out.push(d);
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::vector::tests::vec_codes;

    fn alu_of(stage: VeStage, op: &str) -> Option<&'static str> {
        alu(stage, &parse_op(op)?)
    }

    #[test]
    fn alu_tables_follow_the_manual() {
        // Logic, L4806-L4814.
        assert_eq!(
            alu_of(VeStage::Logic, "LogicBinaryOp::ArithRightShift"),
            Some("LogicRshift")
        );
        // Fxp, L4824-L4836: the four FxpAdd ops.
        for op in ["AddFxp", "AddFxpSat", "SubFxp", "SubFxpSat"] {
            assert_eq!(alu_of(VeStage::Fxp, op), Some("FxpAdd"), "{op}");
        }
        assert_eq!(alu_of(VeStage::Fxp, "FxpBinaryOp::MulInt"), Some("FxpMul"));
        assert_eq!(
            alu_of(VeStage::Fxp, "FxpBinaryOp::ArithRightShiftRound"),
            Some("FxpRshift")
        );
        // Float, L4878-L4904: DivF inside the Fp stage uses FpFpu.
        assert_eq!(alu_of(VeStage::Fp, "FpBinaryOp::DivF"), Some("FpFpu"));
        assert_eq!(
            alu_of(VeStage::Fp, "FpBinaryOp::MaskMulF(FpMulAlu::Mul1)"),
            Some("FpMul1")
        );
        assert_eq!(alu_of(VeStage::Fp, "FmaF"), Some("FpFma"));
        // A multiply routed to the FMA unit (`FpMulAlu::Fma`, docs/manual-notes.md N-19).
        assert_eq!(
            alu_of(VeStage::Fp, "FpBinaryOp::MulF(FpMulAlu::Fma)"),
            Some("FpFma")
        );
        // Clip, L4956-L4972: i32 AddFxp and f32 Add share ClipAdd.
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpI32::AddFxp"),
            Some("ClipAdd")
        );
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpF32::Add"),
            Some("ClipAdd")
        );
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpF32::AbsMax"),
            Some("ClipMax")
        );
    }

    #[test]
    fn golden_l4905_five_float_alus_fit_one_pass() {
        // Manual L4905-L4906: exp(sqrt(((x + 1) * 2) * 3)) uses FpFma, FpMul0, FpMul1, FpFpu, FpExp.
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>()\
             .vector_fp_binary(FpBinaryOp::AddF, 1.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul1), 3.0f32)\
             .vector_fp_unary(FpUnaryOp::Sqrt).vector_fp_unary(FpUnaryOp::Exp)\
             .vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn golden_l4750_tanh_sqrt_needs_fpfpu_twice() {
        // Manual L4750: tanh(sqrt(x)) is impossible in one pass (both on FpFpu).
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_fp_unary(FpUnaryOp::Sqrt)\
             .vector_fp_unary(FpUnaryOp::Tanh).vector_concat::<m![1], m![A % 8]>()",
        );
        assert_eq!(got, vec![("VEC-004".into(), "FpUnaryOp::Tanh".into())]);
    }

    #[test]
    fn twin_multiplier_fix_swaps_the_lane() {
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
             fn kernel(ctx: &mut Context, a: &DmTensor<f32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
             let out = ctx.main.begin(a.view()).fetch::<f32, m![1], m![A % 8]>()\
             .collect::<m![1], m![A % 8]>().vector_init()\
             .vector_intra_slice_branch(BranchMode::Unconditional)\
             .vector_split::<m![A / 4 % 2], m![A % 4]>()\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 3.0f32)\
             .vector_concat::<m![1], m![A % 8]>().vector_final().commit::<m![A % 8]>(0x1000);\n}\n";
        let d = crate::check_text(text)
            .into_iter()
            .find(|d| d.code() == "VEC-004")
            .expect("VEC-004");
        let edit = &d.fixes[0].edits[0];
        assert_eq!(&text[edit.span.range()], "Mul0");
        assert_eq!(edit.new_text, "Mul1");
        assert!(d.fixes[0].safe);
    }
}

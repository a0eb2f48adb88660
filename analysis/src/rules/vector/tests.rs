//! What the VEC tests share, and the tests that span several rules.

/// The VEC diagnostics of a kernel body (an i32 or f32 stream `x` of 8 lanes per packet).
pub(super) fn vec_codes(dtype: &str, body: &str) -> Vec<(String, String)> {
    let text = format!(
        "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
         fn kernel(ctx: &mut Context, a: &DmTensor<{dtype}, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {{\n\
         let out = ctx.main.begin(a.view()).fetch::<{dtype}, m![1], m![A % 8]>()\
         .collect::<m![1], m![A % 8]>().vector_init()\
         .vector_intra_slice_branch(BranchMode::Unconditional){body}\
         .vector_final().commit::<m![A % 8]>(0x1000);\n}}\n"
    );
    crate::check_text(&text)
        .into_iter()
        .filter(|d| d.code().starts_with("VEC"))
        .map(|d| {
            let s = &text[d.span.range()];
            (d.code().to_string(), s.to_string())
        })
        .collect()
}

#[test]
fn golden_l5262_add_mul_sub_conflicts_on_fxpadd() {
    // Manual L5260-L5269: AddFxp (FxpAdd), MulInt (FxpMul), SubFxp (FxpAdd again) panics.
    let got = vec_codes(
        "i32",
        ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2)\
         .vector_fxp(FxpBinaryOp::SubFxp, 5)",
    );
    // VEC-015 offers the split in front of the same call (its method name comes first).
    assert_eq!(
        got,
        vec![
            ("VEC-015".into(), "vector_fxp".into()),
            ("VEC-004".into(), "FxpBinaryOp::SubFxp".into())
        ]
    );
}

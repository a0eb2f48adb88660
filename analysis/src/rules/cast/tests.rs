//! Tests of several rules at once, and the helper the rules' tests share.

/// The CST diagnostics (code, spanned text) of a cast of a `d1` collect stream.
pub(super) fn cst(d1: &str, packet: &str, cast: &str) -> Vec<(String, String)> {
    let text = format!(
        "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
         fn kernel(ctx: &mut Context, a: &DmTensor<{d1}, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {{\n\
         let out = ctx.main.begin(a.view()).fetch::<{d1}, m![1], m![A % 8]>()\
         .collect::<m![1], m![{packet}]>().cast::<{cast}>();\n}}\n"
    );
    crate::check_text(&text)
        .into_iter()
        .filter(|d| d.code().starts_with("CST"))
        .map(|d| (d.code().to_string(), text[d.span.range()].to_string()))
        .collect()
}

#[test]
fn pairs_and_packets() {
    // L6787-L6800: 8 × i32 → i8 padded to 32.
    assert!(cst("i32", "A % 8", "i8, m![A % 8 # 32]").is_empty());
    // L358 / L2171: f32 → bf16 padded to 16.
    assert!(cst("f32", "A % 8", "bf16, m![A % 8 # 16]").is_empty());
    // i4: 64 per flit; f8: 32.
    assert!(cst("i32", "A % 8", "i4, m![A % 8 # 64]").is_empty());
    assert!(cst("f32", "A % 8", "f8e4m3, m![A % 8 # 32]").is_empty());
    assert!(cst("i32", "A % 8", "i16, m![A % 8 # 16]").is_empty());
    assert_eq!(
        cst("f32", "A % 8", "i8, m![A % 8 # 32]"),
        [("CST-001".to_string(), "i8".to_string())]
    );
    assert_eq!(
        cst("i32", "A % 8", "bf16, m![A % 8 # 16]"),
        [("CST-001".to_string(), "bf16".to_string())]
    );
    assert_eq!(
        cst("i32", "A % 8", "i8, m![A % 8 # 16]"),
        [("CST-002".to_string(), "m![A % 8 # 16]".to_string())]
    );
    // Elements moved or dropped: not the input packet.
    assert_eq!(
        cst("i32", "A % 8", "i8, m![A % 4 # 32]"),
        [("CST-002".to_string(), "m![A % 4 # 32]".to_string())]
    );
}

//! The MAP test of DMA transfers, which spans MAP-010 and MAP-011, and the helpers the rules'
//! tests share.

/// The MAP codes visa-lint reports on `src`.
pub(super) fn codes(src: &str) -> Vec<String> {
    crate::db::analyse_text(src)
        .diagnostics()
        .iter()
        .map(|d| d.code().to_string())
        .filter(|c| c.starts_with("MAP"))
        .collect()
}

/// The MAP codes of a `.tile` call on a view of an `m![A, B]` tensor.
pub(super) fn tile(axes: &str, call: &str) -> Vec<String> {
    codes(&format!(
        "use furiosa_visa_std::prelude::*;\naxes![{axes}];\n\
         fn t(x: &HbmTensor<bf16, m![1], m![A, B]>) {{\n let v = x.view();\n let t = v.{call};\n}}\n"
    ))
}

/// The MAP codes of a `to_dm` from an HBM tensor of Element `hbm` to a DM tensor whose Slice
/// and Element are `dm`.
pub(super) fn dma(hbm: &str, dm: &str) -> Vec<String> {
    codes(&format!(
        "use furiosa_visa_std::prelude::*;\naxes![A = 15, B = 64, C = 2048];\n\
         #[device(chip = 1)]\nfn k(ctx: &mut Context, a: &HbmTensor<i8, m![1], {hbm}>) {{\n\
         let d: DmTensor<i8, m![1], m![1 # 2], {dm}> = a.to_dm(&mut ctx.tdma, 0);\n}}\n"
    ))
}

#[test]
fn dma_coverage_and_factorization() {
    assert!(dma("m![C, B]", "m![C / 8 # 256], m![C % 8, B]").is_empty());
    assert_eq!(dma("m![C, B]", "m![C / 8 # 256], m![B]"), ["MAP-010"]);
    assert_eq!(dma("m![C, B]", "m![C / 8 # 256], m![C % 8]"), ["MAP-010"]);
    // Broadcast: `A` only in the destination is accepted.
    assert!(dma("m![B]", "m![A # 256], m![B]").is_empty());
    // An HBM tensor holding part of an axis is reported on its own type.
    assert_eq!(
        dma("m![C % 8, B]", "m![1 # 256], m![C % 8, B]"),
        ["MAP-010"]
    );
    assert_eq!(
        dma("m![A % 5, A / 5, B]", "m![1 # 256], m![A % 3, A / 3, B]"),
        ["MAP-011"]
    );
    assert!(dma("m![A % 5, A / 5, B]", "m![1 # 256], m![A % 5, A / 5, B]").is_empty());
}

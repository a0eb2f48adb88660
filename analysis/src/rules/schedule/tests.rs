//! The SCH tests' shared helper, and a test of SCH-001 and SCH-002 together.

use crate::diagnostic::Diagnostic;

pub(super) fn sch(text: &str) -> Vec<Diagnostic> {
    crate::check_text(text)
        .into_iter()
        .filter(|d| d.code().starts_with("SCH"))
        .collect()
}

/// A sub-byte (i4) tensor is packed: 24 elements = 12 bytes, rounded up to 16.
fn packed(y_addr: u64, x_last: bool) -> String {
    let (first, second) = if x_last {
        ("x.to_hbm(&mut ctx.tdma, 0);", "")
    } else {
        ("", "x.to_hbm(&mut ctx.tdma, 0);")
    };
    format!(
        "axes![S = 256, A = 24];
#[device(chip = 1)]
fn kernel(ctx: &mut Context, x: &HbmTensor<i4, m![1], m![S, A]>, y: &HbmTensor<i4, m![1], m![S, A]>) {{
    let x = x.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, 0);
    {first}
    let y = y.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, {y_addr});
    {second}
    y.to_hbm(&mut ctx.tdma, 1 << 20);
}}"
    )
}

#[test]
fn packed_sizes_and_reuse_after_last_use() {
    let d = sch(&packed(8, false));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].message.contains("[0, 16)"), "{}", d[0].message);
    assert!(sch(&packed(16, false)).is_empty());
    // `x` is dead before `y` is written: reuse is fine (same resource: no SCH-002 either).
    assert!(sch(&packed(0, true)).is_empty());
}

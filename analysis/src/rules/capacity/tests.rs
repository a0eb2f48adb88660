//! Tests of the family as a whole and of several rules at once, and the helpers the rules'
//! tests share.

use crate::db::analyse_text;
use crate::target::RNGD;

/// (code, message) of every diagnostic of this module (CAP-*, KRN-010); other families'
/// findings on the same kernels are not this module's business.
pub(super) fn diags(src: &str) -> Vec<(String, String)> {
    analyse_text(src)
        .diagnostics()
        .iter()
        .filter(|d| d.code().starts_with("CAP-") || d.code() == "KRN-010")
        .map(|d| (d.code().to_string(), d.message.clone()))
        .collect()
}

pub(super) fn codes(src: &str) -> Vec<String> {
    diags(src).into_iter().map(|d| d.0).collect()
}

pub(super) fn fix_texts(src: &str, code: &str) -> Vec<String> {
    analyse_text(src)
        .diagnostics()
        .iter()
        .filter(|d| d.code() == code)
        .flat_map(|d| {
            d.fixes
                .iter()
                .flat_map(|f| f.edits.iter().map(|e| e.new_text.clone()))
        })
        .collect()
}

#[test]
fn l1088_l1090_per_unit_capacities() {
    // 512 KB per slice, 8 KB per Row (L4116: 2 bank columns × 128 rows × 32 B), 8 KB per slice.
    assert_eq!(RNGD.dm_bytes_per_slice, 524_288);
    assert_eq!(RNGD.trf_bytes_per_row, 2 * 128 * 32);
    assert_eq!(RNGD.vrf_bytes_per_slice, 8192);
    // L140 / L7191: 8 KB ≈ 4096 bf16.
    assert_eq!(RNGD.vrf_bytes_per_slice / 2, 4096);
}

#[test]
fn l55_first_program_breaks_chip_cluster_and_slice() {
    let src = include_str!("../../../../fixtures/manual/0023_first_program.rs");
    let d = diags(src);
    let cap: Vec<_> = d.iter().filter(|d| d.0.starts_with("CAP")).collect();
    assert!(
        cap.iter()
            .any(|d| d.0 == "CAP-001" && d.1.contains("got 8")),
        "{d:?}"
    );
    assert!(
        cap.iter()
            .any(|d| d.0 == "CAP-002" && d.1.contains("got 1")),
        "{d:?}"
    );
    assert!(
        cap.iter()
            .any(|d| d.0 == "CAP-003" && d.1.contains("got 8")),
        "{d:?}"
    );
    // The HostTensor in `main` is not a device tensor, and `main` is not a kernel.
    assert_eq!(cap.len(), 3, "{d:?}");
}

#[test]
fn l1141_stream_type_padded_in_a_kernel() {
    // The Tensor Unit Stream example: Cluster `m![1]`, Slice `m![C / 2]` = 32 slices.
    let src = "axes![N = 4, C = 64, H = 32, W = 32];\n#[device(chip = 1)]\nfn k<'l, const T: Tu>(s: FetchTensor<'l, T, bf16, m![1], m![1], m![C / 2], m![N, H, W], m![C % 2]>) {}\n";
    let d = diags(src);
    assert!(
        d.iter()
            .any(|d| d.0 == "CAP-002" && d.1.starts_with("Cluster size must be 2, got 1")),
        "{d:?}"
    );
    assert!(
        d.iter()
            .any(|d| d.0 == "CAP-003" && d.1.starts_with("Slice size must be 256, got 32")),
        "{d:?}"
    );
    assert_eq!(fix_texts(src, "CAP-002"), vec!["m![1 # 2]".to_string()]);
    assert_eq!(
        fix_texts(src, "CAP-003"),
        vec!["m![C / 2 # 256]".to_string()]
    );
}

#[test]
fn helper_functions_are_not_held_to_the_launch_sizes() {
    let src =
        "axes![C = 64];\nfn helper(d: &DmTensor<bf16, m![1], m![1], m![C / 2], m![C % 2]>) {}\n";
    assert!(codes(src).is_empty());
}

#[test]
fn vrf_and_interleaved_vrf() {
    let plain = |h: &str, addr: &str| {
        format!(
            "axes![H = {h}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, a: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>) {{\n    let v = ctx.sub.begin(a.view()).fetch::<bf16, m![H / 16], m![H % 16]>().collect::<m![H / 16], m![H % 16]>().to_vrf({addr});\n}}\n"
        )
    };
    assert!(
        !codes(&plain("4096", "0"))
            .iter()
            .any(|c| c.starts_with("CAP"))
    );
    assert!(codes(&plain("8192", "0")).contains(&"CAP-007".to_string()));
    assert!(codes(&plain("2048", "0x1800")).contains(&"CAP-007".to_string()));
    let inter = |h: &str| {
        format!(
            "axes![I = 2, H = {h}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, a: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>, b: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![H]>) {{\n    let v = ctx.sub.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view()).fetch::<bf16, m![I, H / 16], m![H % 16]>().collect::<m![I, H / 16], m![H % 16]>().to_vrf(0);\n}}\n"
        )
    };
    let c = codes(&inter("4096"));
    assert!(
        c.contains(&"CAP-011".to_string()) && !c.contains(&"CAP-007".to_string()),
        "{c:?}"
    );
    assert!(!codes(&inter("2048")).iter().any(|c| c.starts_with("CAP")));
}

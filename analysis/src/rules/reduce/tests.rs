//! Tests of the family as a whole and of several rules at once, and the helpers the rules'
//! tests share.

use super::mapping_edits::find_pad;
use crate::db::analyse_text;
use crate::model::ops::split_op;

pub(super) fn codes(src: &str) -> Vec<(String, String)> {
    analyse_text(src)
        .diagnostics()
        .iter()
        .map(|d| (d.code().to_string(), d.message.clone()))
        .collect()
}

pub(super) fn kernel(
    axes: &str,
    d: &str,
    slice: &str,
    time: &str,
    packet: &str,
    trim: &str,
    call: &str,
) -> String {
    format!(
        "axes![{axes}];\nfn k<'l, const T: Tu>(input: VectorBranchTensor<'l, T, {d}, m![1], m![1], m![{slice}], m![{time}], m![{packet}], {d}, NoTensor, {{ stage::VeOrder::IntraFirst }}>) {{\n    input.vector_trim_way4::<m![{trim}]>().{call};\n}}\n"
    )
}

#[test]
fn l5890_interleave_fix_and_l6026_packet_swap() {
    // L5877-L5890: fix Slice m![X, R # 16 / 4], Time m![R # 16 % 4].
    let src = kernel(
        "R = 13, X = 64",
        "i32",
        "X, R # 16 / 2 % 4",
        "R # 16 / 8, R # 16 % 2",
        "1 # 8",
        "1 # 4",
        "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Min)",
    );
    let m = codes(&src)
        .into_iter()
        .find(|(c, _)| c == "VCG-006")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert!(m.contains("R # 16 / 4], Time m![R # 16 % 4]"), "{m}");
    // L6025-L6026: Time m![R # 24 / 8], Packet m![R # 24 % 8].
    let src = kernel(
        "A = 8, R = 19, X = 64",
        "f32",
        "X, A / 2",
        "R # 24 % 8",
        "R # 24 / 8 # 8",
        "R # 24 / 4",
        "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
    );
    let m = codes(&src)
        .into_iter()
        .find(|(c, _)| c == "VCG-002")
        .map(|(_, m)| m)
        .unwrap_or_default();
    assert!(
        m.contains("Time m![R # 24 / 8], Packet m![R # 24 % 8]"),
        "{m}"
    );
}

#[test]
fn output_shape_and_ops() {
    let src = kernel(
        "A = 8, R = 16",
        "f32",
        "A / 2",
        "R / 4, A % 2",
        "R % 4 # 8",
        "R % 4",
        "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
    );
    let d = codes(&src);
    assert!(
        d.iter()
            .any(|(c, m)| c == "ISR-002" && m.contains("i.e. m![A % 2]")),
        "{d:?}"
    );
    assert!(d.iter().any(|(c, _)| c == "ISR-001"), "{d:?}");
}

/// A `BranchMode::ValidCount` branch over a collected i32 stream.
fn valid_count(axes: &str, slice: &str, time: &str, packet: &str) -> Vec<(String, String)> {
    codes(&format!(
        "axes![{axes}];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![{slice}], m![{time}], m![{packet}]>) {{\n    c.vector_init().vector_intra_slice_branch(BranchMode::ValidCount).vector_final();\n}}\n"
    ))
}

#[test]
fn l6177_valid_count_prefix_and_l6459_four_dimensions() {
    // L6177-L6179: lanes 0, 2, 4, 6 are not a prefix; L6459: 1 packet dim + 3 gates.
    let d = valid_count("A = 4, B = 16, X = 256", "X", "B", "A, 1 # 2");
    assert!(
        d.iter()
            .any(|(c, m)| c == "VCG-001" && m.contains("lanes {0, 2, 4, 6}")),
        "{d:?}"
    );
    assert!(valid_count("A = 4, B = 16, X = 256", "X", "B", "A # 8").is_empty());
    let axes = "A = 3, B = 60, C = 3, D = 3, E = 5";
    let d = valid_count(axes, "A # 4, B # 64", "C # 4, D # 4", "E # 8");
    assert!(
        d.iter()
            .any(|(c, m)| c == "VCG-008" && m.starts_with("5 padded axes (A, B, C, D, E)")),
        "{d:?}"
    );
    // L6553: with no padded axis in Packet the packet dim is a fourth gate.
    let d = valid_count(axes, "A # 4, B # 64", "C # 4, D # 4", "1 # 8");
    assert!(!d.iter().any(|(c, _)| c == "VCG-008"), "{d:?}");
}

#[test]
fn l6213_eight_counters_and_l6284_innermost_packet_counter() {
    // L6213: up to 8 nested counters; 8 Time digits + the Packet counter = 9.
    let src = kernel(
        "A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, R = 14, X = 256",
        "f32",
        "X",
        "A, B, C, D, E, F, G, R # 16 / 4",
        "R # 16 % 4 # 8",
        "R # 16 % 4",
        "vector_intra_slice_reduce::<R, m![A, B, C, D, E, F, G], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
    );
    let d = codes(&src);
    assert!(
        d.iter()
            .any(|(c, m)| c == "SEQ-011" && m.contains("needs 9 nested counters")),
        "{d:?}"
    );
    // L6284: padding inside R's packet part makes the innermost counter a padding one.
    let src = kernel(
        "R = 3, X = 256",
        "f32",
        "X",
        "R # 4 / 2",
        "[R # 4 % 2, 1 # 2] # 8",
        "R # 4 % 2, 1 # 2",
        "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
    );
    let d = codes(&src);
    assert!(
        d.iter()
            .any(|(c, m)| c == "VCG-009" && m.contains("Packet m![R # 4 % 2 # 8]")),
        "{d:?}"
    );
}

#[test]
fn l5903_time_order_and_l6540_aligned_packet_stay_silent() {
    // VCG-004 (L5611, L5903): R's Time factors reversed around X; VCG-010 (L6540): R = 2040
    // over Slice and Packet has no partial packet.
    let src = kernel(
        "A = 4, R = 13, X = 2, Y = 128",
        "i32",
        "Y, R # 16 / 8",
        "R # 16 % 2, X, R # 16 / 2 % 4",
        "A # 8",
        "A",
        "vector_intra_slice_reduce::<R, m![X], m![A]>(IntraSliceReduceOpI32::Max)",
    );
    assert!(codes(&src).is_empty(), "{:?}", codes(&src));
    let src = kernel(
        "R = 2040",
        "i32",
        "R # 2048 / 8",
        "1",
        "R # 2048 % 8",
        "R # 2048 % 4",
        "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
    );
    assert!(
        !codes(&src).iter().any(|(c, _)| c.starts_with("VCG")),
        "{:?}",
        codes(&src)
    );
}

/// Applies the first fix of the first `code` diagnostic of `text` that has one.
fn fixed(text: &str, code: &str) -> Option<String> {
    crate::rules::fix_testing::apply(text, code, 0)
}

#[test]
fn l5807_l5858_l5890_fixes_rewrite_parameter_and_return_types() {
    // L5779-L5807: "Use R # 16 instead of R # 20", written in the parameter and the return
    // type; L5838-L5858: the Slice reordered in both; L5871-L5890: the standard split
    // Slice m![X, R # 16 / 4], Time m![R # 16 % 4]. The fixed kernels are silent.
    for (text, code) in [
        (
            include_str!("../../../../fixtures/manual/5779_vcg_transposed_unsupported_err.rs"),
            "VCG-007",
        ),
        (
            include_str!("../../../../fixtures/manual/5838_vcg_non_outer_inner_ordering_err.rs"),
            "VCG-003",
        ),
        (
            include_str!("../../../../fixtures/manual/5871_vcg_time_slice_time_interleave_err.rs"),
            "VCG-006",
        ),
    ] {
        let Some(after) = fixed(text, code) else {
            panic!("{code}: no fix");
        };
        let left = crate::check_text(&after);
        assert!(left.is_empty(), "{code}: {left:?}\n{after}");
    }
}

#[test]
fn pad_text_search() {
    assert_eq!(find_pad("m![X, R # 20 % 4]", "R", "20"), vec![10]);
    assert_eq!(
        find_pad("m![RR # 20, R #200]", "R", "20"),
        Vec::<usize>::new()
    );
    assert_eq!(
        split_op(" IntraSliceReduceOpI32::Min "),
        Some(("IntraSliceReduceOpI32", "Min"))
    );
}

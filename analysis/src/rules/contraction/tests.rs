//! Tests of the family as a whole, and the helpers the rules' tests share.

use super::layouts::collected_flits;
use crate::db::analyse_text;
use crate::mapping::Layout;

pub(super) fn lay(axes: &str, mapping: &str) -> Layout {
    crate::mapping::evaluate(axes, mapping)
        .layout
        .unwrap_or_else(Layout::identity)
}

pub(super) fn codes(src: &str) -> Vec<String> {
    analyse_text(src)
        .diagnostics()
        .iter()
        .filter(|d| d.code().starts_with("CON") || d.code() == "SEQ-010")
        .map(|d| d.code().to_string())
        .collect()
}

#[test]
fn collect_flits_golden() {
    // L3847-L3851: Time [M, O, L], Packet [K] -> OutPacket [L, K] collects 2 flits.
    let a = "M = 32, K = 16, L = 2, O = 2";
    assert_eq!(
        collected_flits(&lay(a, "M, O, L"), &lay(a, "K"), &lay(a, "L, K"), 3),
        Some(2)
    );
    // L3998-L4001: Packet [K] -> [K # 32] is collect_flits = 1.
    assert_eq!(
        collected_flits(&lay(a, "M"), &lay(a, "K"), &lay(a, "K # 32"), 3),
        Some(1)
    );
    // The outer Time factor cannot be collected.
    assert_eq!(
        collected_flits(&lay(a, "L, M"), &lay(a, "K"), &lay(a, "L, K"), 3),
        None
    );
}

#[test]
fn manual_contraction_examples_are_silent() {
    for src in [
        include_str!("../../../../fixtures/manual/0307_dot_product.rs"),
        include_str!("../../../../fixtures/manual/0401_gemv.rs"),
        include_str!("../../../../fixtures/manual/0473_gemm.rs"),
        include_str!("../../../../fixtures/manual/3823_aligner_batched_matmul.rs"),
        include_str!("../../../../fixtures/manual/4012_align_time_broadcast.rs"),
        include_str!("../../../../fixtures/manual/4203_trf_basic_weight_broadcast.rs"),
        include_str!("../../../../fixtures/manual/4250_trf_small_reg_read_size.rs"),
        include_str!("../../../../fixtures/manual/4335_reducer_matmul.rs"),
    ] {
        assert!(codes(src).is_empty(), "{:?}", codes(src));
    }
}

#[test]
fn no_panic_on_extreme_sizes() {
    let src = "use furiosa_visa_std::prelude::*;\naxes![M = 9223372036854775808, N = 8, K = 1];\nfn f<'l, const T: Tu>(input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M], m![K # 16]>, trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![K]>) -> AccumulationTensor<'l, T, f32, m![1], m![1], m![1], m![M], m![N]> {\n    input.align::<m![M], m![K # 32], _, _>(trf).contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)\n}\n";
    let _ = codes(src);
}

//! Tests of several rules at once and of the derived transpose facts the rules read, and the
//! helper the rules' tests share.

use crate::derive::transpose::used;
use crate::mapping::Layout;
use crate::mapping::layout::Dim;

/// The TRN diagnostics of `fn f(input: CollectTensor<.., D, .., Time, Packet>) { input.transpose::<OutTime, OutPacket>() }`.
pub(super) fn trn(
    axes: &str,
    d: &str,
    time: &str,
    packet: &str,
    out_time: &str,
    out_packet: &str,
) -> Vec<String> {
    let text = format!(
        "use furiosa_visa_std::prelude::*;\naxes![P = 256, {axes}];\n\
         fn f<'l, const T: Tu>(input: CollectTensor<'l, T, {d}, m![1], m![1], m![P], m![{time}], m![{packet}]>) \
         -> TransposeTensor<'l, T, {d}, m![1], m![1], m![P], m![{out_time}], m![{out_packet}]> {{\n\
         input.transpose::<m![{out_time}], m![{out_packet}]>()\n}}\n"
    );
    crate::check_text(&text)
        .into_iter()
        .filter(|d| d.code().starts_with("TRN"))
        .map(|d| d.code().to_string())
        .collect()
}

/// The manual's four examples (L6916-L7041) stay silent; their mirror images do not.
#[test]
fn manual_examples() {
    assert!(
        trn(
            "C = 8, D = 8, E = 8",
            "i8",
            "C, D",
            "E # 32",
            "C, E",
            "D # 32"
        )
        .is_empty()
    );
    assert!(trn("A = 4, B = 2", "i8", "A", "B # 32", "B", "A # 32").is_empty());
    assert!(
        trn(
            "B = 2, C = 8, D = 4, E = 8",
            "i8",
            "B, C, D",
            "E # 32",
            "B, D, E",
            "C # 32"
        )
        .is_empty()
    );
    assert!(
        trn(
            "C = 8, D = 4, E = 8",
            "bf16",
            "C, D",
            "E # 16",
            "C, E",
            "D # 16"
        )
        .is_empty()
    );
    assert_eq!(
        trn(
            "C = 8, D = 8, E = 8",
            "i8",
            "C, D",
            "E # 32",
            "D, E",
            "C # 32"
        ),
        // Rows C with the 8 packets of D per column: in_cols 64.
        ["TRN-001"]
    );
    assert_eq!(
        trn(
            "C = 8, D = 8, E = 8",
            "i8",
            "C, D",
            "E # 32",
            "E, C",
            "D # 32"
        ),
        ["TRN-003"]
    );
    assert_eq!(
        trn(
            "C = 8, D = 8, E = 8",
            "i8",
            "C, D",
            "E # 32",
            "C, E",
            "D # 16"
        ),
        ["TRN-002"]
    );
    // Huge outer axes: no enumeration, no overflow.
    assert!(
        trn(
            "C = 4611686018427387904, D = 8, E = 8",
            "i8",
            "C, D",
            "E # 32",
            "C, E",
            "D # 32"
        )
        .is_empty()
    );
}

#[test]
fn used_positions() {
    use crate::mapping::layout::{Axis, Factor};
    let f = |extent, valid, name: &str| {
        Dim::Factor(Factor {
            extent,
            valid,
            axis: Some(Axis::new(name, valid)),
            coef: 1,
            pad: crate::mapping::layout::PadKind::Top,
        })
    };
    let l = Layout::from_dims(vec![f(32, 2, "B")]).expect("layout");
    assert_eq!(used(&l), Some(2));
    let l = Layout::from_dims(vec![f(4, 4, "D"), f(32, 8, "E")]).expect("layout");
    assert_eq!(used(&l), Some(3 * 32 + 8));
    assert_eq!(used(&Layout::identity()), Some(1));
    let big = Layout::from_dims(vec![f(1 << 61, 1 << 61, "X"), f(4, 4, "Y")]).expect("layout");
    assert_eq!(used(&big), Some(1 << 63));
}

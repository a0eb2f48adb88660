//! Tests of several XSL rules, and the helpers the rules' own tests share.

use crate::db::analyse_text;

fn diags(body: &str, op: &str, d: &str) -> Vec<(String, String)> {
    let src = format!(
        "axes![R = 4, A = 512, T0 = 2, T2 = 4];\nfn k<'l, const T: Tu>(input: CollectTensor<'l, T, {d}, m![1], m![1 # 2], m![A / 8, R], m![T0, T2], m![A % 8]>) {{\n    input.vector_init(){body}({op}).vector_final();\n}}\n"
    );
    analyse_text(&src)
        .diagnostics()
        .iter()
        .map(|x| (x.code().to_string(), x.message.clone()))
        .collect()
}

pub(super) fn codes_of(src: &str) -> Vec<(String, String)> {
    analyse_text(src)
        .diagnostics()
        .iter()
        .map(|x| (x.code().to_string(), x.message.clone()))
        .collect()
}

#[test]
fn l6638_dummy_and_l6676_promotion_are_silent() {
    // L6638-L6652 (Dummy, here with Time kept) and L6676-L6693 (Promotion of a middle axis).
    let d = diags(
        ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![T0, T2]>",
        "InterSliceReduceOpI32::AddSat",
        "i32",
    );
    assert!(d.is_empty(), "{d:?}");
    let d = diags(
        ".vector_inter_slice_reduce::<m![A / 8, T2], m![T0]>",
        "InterSliceReduceOpF32::Add",
        "f32",
    );
    assert!(d.is_empty(), "{d:?}");
}

#[test]
fn l6737_declared_packet_and_l4369_ring_tail() {
    // L6737: Packet does not change; L4610-L4624 with a different declared Packet.
    let src = "axes![R = 4, A = 512];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, R], m![1], m![A % 8]>) -> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 4 # 8]> {\n    c.vector_init().vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(InterSliceReduceOpI32::AddSat).vector_final()\n}\n";
    let d = codes_of(src);
    assert!(d.iter().any(|(c, _)| c == "XSL-004"), "{d:?}");
    assert!(codes_of(&src.replace("m![A % 4 # 8]", "m![A % 8]")).is_empty());
    // L4369: 256 slices = 256 cycles of tail; one flit per slice does not hide it.
    let src = "axes![R = 256, A = 8, B = 1024];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, f32, m![1], m![1 # 2], m![R], m![1], m![A]>) {\n    c.vector_init().vector_inter_slice_reduce::<m![1 # 256], m![1]>(InterSliceReduceOpF32::Add).vector_final();\n}\n";
    let d = codes_of(src);
    assert!(
        d.iter()
            .any(|(c, m)| c == "XSL-006" && m.contains("about 256 cycles")),
        "{d:?}"
    );
    let hidden = src
        .replace("m![R], m![1]", "m![R], m![B]")
        .replace("<m![1 # 256], m![1]>", "<m![1 # 256], m![B]>");
    assert!(codes_of(&hidden).is_empty(), "{:?}", codes_of(&hidden));
}

#[test]
fn shrunk_slice_and_wrong_time_and_ops() {
    let d = diags(
        ".vector_inter_slice_reduce::<m![A / 8], m![T0, T2]>",
        "InterSliceReduceOpI32::AddSat",
        "i32",
    );
    assert!(
        d.iter()
            .any(|(c, m)| c == "XSL-005" && m.contains("Dummy, m![A / 8, 1 # 4]")),
        "{d:?}"
    );
    let d = diags(
        ".vector_inter_slice_reduce::<m![A / 8, T2], m![T0, T2]>",
        "InterSliceReduceOpF32::Mul",
        "f32",
    );
    assert!(
        d.iter()
            .any(|(c, m)| c == "XSL-005" && m.ends_with("m![T0]")),
        "{d:?}"
    );
    let d = diags(
        ".vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![T0, T2]>",
        "InterSliceReduceOpI32::Mul",
        "i32",
    );
    assert!(d.iter().any(|(c, _)| c == "XSL-001"), "{d:?}");
}

//! ISR-004: padded positions of a reduce axis hold arbitrary data, so they must be masked by
//! the VCG or filled with the reduce's identity element. The VCG rules report an unsupported
//! placement with that advice; when the sum runs over Exp, NegExp or Sigmoid no pad value
//! cancels, and the placement is reported here instead.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Method, ops::split_op};
use crate::rule::{Generations, Rule, Status};

pub const ISR_004: Rule = Rule {
    code: "ISR-004",
    name: "padded-reduce-axis",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded reduce axis needs a VCG-supported placement or identity-element padding",
    docs: "Padded positions hold arbitrary data. Either place R where the VCG can mask it, or fill \
           the padding with the reduce's identity element (AddSat/Add 0, Max i32::MIN / -inf, \
           Min i32::MAX / +inf) through the fetch pad_value. Unsupported placements are reported \
           by VCG-002/003/005/006/007 with that advice. When the sum runs over a preceding Exp, \
           NegExp or Sigmoid, identity padding cannot work (no p has exp(p) = 0): the placement \
           is reported here instead, and the mapping must be restructured. (The fetch \
           pad_value has no API in the manual, so identity padding itself cannot be seen.)",
    bad: "// Slice m![X, R # 16 % 4], Time m![R # 16 / 4], R = 10\n.vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
    good: "// Slice m![X, R # 12 % 4], Time m![R # 12 / 4], R = 10\n.vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
    manual: "L5544-L5563",
    generations: Generations::Both,
};

/// Hands on the VCG diagnostics `vcg` of the reduce `chain.steps[k]` over `r`: as they are, or
/// each as ISR-004 when the reduce sums over Exp, NegExp or Sigmoid.
pub(super) fn check(
    chain: &Chain,
    k: usize,
    r: &str,
    vcg: Vec<Diagnostic>,
    out: &mut Vec<Diagnostic>,
) {
    match composed(chain, k) {
        Some(f) => out.extend(vcg.into_iter().map(|d| no_identity(d, r, f))),
        None => out.extend(vcg),
    }
}

/// A sum over a preceding non-invertible op with no zero in its range (Exp, NegExp, Sigmoid):
/// identity padding cannot cancel the padded lanes (L5562-L5563). Returns the op.
fn composed(chain: &Chain, k: usize) -> Option<&'static str> {
    let step = chain.steps.get(k)?;
    let op_text = step.args.first()?.value_text();
    let (_, op) = split_op(&op_text)?;
    if !matches!(op, "Add" | "AddSat") {
        return None;
    }
    let start = chain.steps[..k]
        .iter()
        .rposition(|s| s.method == Method::VectorInit)
        .unwrap_or(0);
    chain.steps[start..k]
        .iter()
        .filter(|s| {
            matches!(
                s.method,
                Method::VectorFpUnary | Method::VectorFpUnaryWithMode
            )
        })
        .find_map(|s| {
            let text = s.args.first()?.value_text();
            let (_, v) = split_op(&text)?;
            ["Exp", "NegExp", "Sigmoid"].into_iter().find(|f| *f == v)
        })
}

/// An unsupported VCG placement after Exp/NegExp/Sigmoid: only restructuring helps (ISR-004).
fn no_identity(d: Diagnostic, r: &str, f: &str) -> Diagnostic {
    let reason = d
        .message
        .split("; otherwise fill the padding")
        .next()
        .unwrap_or_default()
        .to_string();
    let msg = format!(
        "the padding of the reduce axis {r} cannot be excluded. The VCG cannot mask it ({}: \
         {reason}), and identity-element padding does not help either: the sum runs over {f} \
         results and no pad value p makes {f}(p) = 0. Restructure the mapping",
        d.code()
    );
    let mut out = Diagnostic::new(&ISR_004, d.span, msg);
    out.related = d.related;
    out.fixes = d.fixes;
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, kernel};

    #[test]
    fn l5562_exp_sum_cannot_use_identity_padding() {
        // L5562-L5563: exp(x) + exp(y) + ...: no p has exp(p) = 0, so the unsupported
        // placement becomes ISR-004; a Max over exp keeps the VCG diagnostic.
        let src = kernel(
            "A = 4, R = 14, X = 64",
            "f32",
            "X, R # 20 % 4",
            "R # 20 / 4",
            "A # 8",
            "A",
            "vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
        );
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "ISR-004" && m.contains("Exp(p) = 0")),
            "{d:?}"
        );
        assert!(!d.iter().any(|(c, _)| c == "VCG-007"), "{d:?}");
        let src = src.replace("IntraSliceReduceOpF32::Add", "IntraSliceReduceOpF32::Max");
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "VCG-007" && m.contains("f32::NEG_INFINITY")),
            "{d:?}"
        );
    }
}

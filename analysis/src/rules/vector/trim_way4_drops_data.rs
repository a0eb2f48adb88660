//! VEC-007: `vector_trim_way4` keeps the lower 4 lanes of each 8-lane packet and discards the
//! rest, so a Packet that maps a tensor element to lane 4 or above silently loses it. Such a
//! stream is split (`vector_split`, widened back with `vector_concat`) instead, or its packet
//! padded so only 4 lanes are valid.

use super::ops::valid_lanes;
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Generation;
use crate::model::{Method, Slot, Step};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VEC_007: Rule = Rule {
    code: "VEC-007",
    name: "trim-way4-drops-data",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "`vector_trim_way4` only when lanes 4-7 of the packet are padding",
    docs: "Trim keeps the lower 4 lanes of each 8-lane packet and discards the rest. If the \
           incoming Packet maps a tensor element to lane 4 or above, that element is silently \
           lost. Use `vector_split::<m![T, P / 2], m![P % 4]>()` (and `vector_concat` to widen) \
           when both halves carry data, or pad the packet so only 4 lanes are valid.",
    bad: "// Packet m![A % 8]\n.vector_trim_way4::<m![A % 4]>()",
    good: "// Packet m![A % 8]\n.vector_split::<m![A / 4 % 2], m![A % 4]>()",
    manual: "L4851, L6578, L6582",
    generations: Generations::Differs(
        "an error under furiosa-opt-std 0.6, whose verifier refuses a `vector_narrow_trim` whose \
         back four lanes are not padding (`VectorError::TrimBackNotDummy`, \
         `furiosa-opt-lower/src/verify/engine/vector/tensor.rs:202-211` at ebb846a); a warning \
         under `furiosa_visa_std`, where the lanes are silently lost (L6582)",
    ),
};

/// VEC-007: the lanes a `vector_trim_way4` drops hold no data.
pub(super) fn check(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n4 = cx.target.ve_way4_lanes;
    if step.method == Method::VectorTrimWay4
        && let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet))
        && let Some(l) = pk.layout.as_deref()
        && let Some(lanes) = valid_lanes(l)
    {
        let lost: Vec<u64> = lanes.into_iter().filter(|&i| i >= n4).collect();
        if !lost.is_empty() {
            let severity = match cx.model.library {
                Generation::OptStd => Severity::Error,
                Generation::VisaStd => Severity::Warning,
            };
            out.push(Diagnostic::new(
                &VEC_007,
                step.span,
                format!(
                    "`vector_trim_way4` keeps lanes 0-{} and drops the rest, but Packet `{}` holds \
                     data in {} of the upper lanes ({}): those elements are lost; use \
                     `vector_split` (and `vector_concat`) when both halves carry data",
                    n4 - 1,
                    pk.text.trim(),
                    lost.len(),
                    lost.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .with_severity(severity));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::vector::tests::vec_codes;

    #[test]
    fn trim_needs_four_valid_lanes_l6582() {
        // L6578-L6582: trim_way4 requires v <= 4 valid lanes.
        let got = vec_codes(
            "f32",
            ".vector_trim_way4::<m![A % 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 4 # 8]>()",
        );
        assert_eq!(got, vec![("VEC-007".into(), "vector_trim_way4".into())]);
    }
}

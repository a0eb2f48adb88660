//! XSL-004: the inter-slice reduce keeps Packet, so a chain's result declared with another
//! Packet than the reduce carries is wrong.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Method, Slot};
use crate::rule::{Generations, Rule, Status};

pub const XSL_004: Rule = Rule {
    code: "XSL-004",
    name: "inter-slice-keeps-packet",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Packet, Chip and Cluster pass through the inter-slice reduce unchanged",
    docs: "Only Slice and Time are rewritten, into SliceOut and TimeOut; the result keeps the \
           stream's Packet, Chip and Cluster. A result declared (a `let` annotation or the \
           function's return type) with another Packet, when every step after the reduce keeps \
           Packet, is reported here with the carried Packet as the fix. A declared Chip or \
           Cluster that differs is KRN-004, which covers every Tensor Unit chain.",
    bad: "// input Packet m![A % 8]\n-> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 4 # 8]>",
    good: "// input Packet m![A % 8]\n-> VectorFinalTensor<'l, T, i32, m![1], m![1 # 2], m![A / 8, 1 # 4], m![1], m![A % 8]>",
    manual: "L6585, L6633-L6634, L6737",
    generations: Generations::Both,
};

/// XSL-004: the inter-slice reduce keeps Packet (Chip and Cluster too: a changed declaration of
/// those is KRN-004). Compares the Packet a chain's result is declared with against the Packet
/// the reduce carries, when every step after the reduce keeps Packet.
pub(super) fn check(chain: &Chain, out: &mut Vec<Diagnostic>) {
    let Some(declared) = &chain.declared else {
        return;
    };
    let Some(k) = chain
        .steps
        .iter()
        .rposition(|s| s.method == Method::VectorInterSliceReduce)
    else {
        return;
    };
    if !chain.steps[k + 1..]
        .iter()
        .all(|s| s.keep.contains(&Slot::Packet))
    {
        return;
    }
    let step = &chain.steps[k];
    let result_kind = chain
        .steps
        .last()
        .and_then(|s| s.output.as_ref())
        .map(|t| t.kind);
    if result_kind != Some(declared.kind) {
        return;
    }
    let (Some(want), Some(have)) = (
        declared.get(Slot::Packet),
        step.input.as_ref().and_then(|t| t.get(Slot::Packet)),
    ) else {
        return;
    };
    let (Some(lw), Some(lh)) = (&want.layout, &have.layout) else {
        return;
    };
    if lw == lh {
        return;
    }
    let msg = format!(
        "the inter-slice reduce keeps Packet: the stream reaches it with Packet {} and leaves \
         with the same, but the result is declared with Packet {}. Only Slice and Time are \
         rewritten (into SliceOut and TimeOut)",
        have.text.trim(),
        want.text.trim()
    );
    let span = want.span.unwrap_or(step.span);
    let mut d = Diagnostic::new(&XSL_004, span, msg)
        .with_related(step.span, "the reduce rewrites only Slice and Time here");
    if let Some(sp) = want.span {
        d = d.with_edit(
            format!("declare Packet {}", have.text.trim()),
            false,
            sp,
            have.text.trim().to_string(),
        );
    }
    out.push(d);
}

//! KRN-004: the Tensor Unit never changes Chip or Cluster, and Slice only at Switch or the
//! inter-slice reduce. An annotation that gives the end of a chain another spatial mapping
//! than the chain carries is reported.

use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};

pub const KRN_004: Rule = Rule {
    code: "KRN-004",
    name: "spatial-invariance",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Chip and Cluster never change in the Tensor Unit; Slice only at Switch or the inter-slice reduce",
    docs: "Fetch inherits Chip, Cluster and Slice from its BeginTensor; Collect, Contraction, Cast, \
           Transpose and the intra-slice stages keep them. An annotation (a `let` type, a parameter \
           or a return type) that gives the end of a chain another Chip, Cluster or Slice than the \
           chain carries is reported; mappings are compared by meaning (MAP-007).",
    bad: "let x: CollectTensor<'_, T, i8, m![1], m![1 # 2], m![A / 4 # 256], _, _> = fetched_with_slice_a_div_8.collect()",
    good: "let x: CollectTensor<'_, T, i8, m![1], m![1 # 2], m![A / 8 # 256], _, _> = ...",
    manual: "L1725, L3087, L3899, L4073, L5361, L6585, L6839",
    generations: Generations::Both,
};

/// The spatial `slot` that an annotation turns from `from` into `to` across a chain ending at
/// `at`. Where the annotation writes `to` as a mapping (at `annotation`), it is reported there,
/// with the fix that writes what the chain carries; else at the chain's end.
pub(super) fn spatial_change(
    at: Span,
    slot: Slot,
    from: &str,
    to: &str,
    annotation: Option<Span>,
) -> Diagnostic {
    let message = format!(
        "{} changes from `{from}` to `{to}` across this chain, but the Tensor Unit keeps Chip and Cluster, and changes Slice only at `.switch()` or the inter-slice reduce",
        capitalized(slot.name())
    );
    match annotation {
        Some(span) if from.starts_with("m![") => Diagnostic::new(&KRN_004, span, message)
            .with_related(
                at,
                format!("the chain carries the {} `{from}`", slot.name()),
            )
            .with_fix(
                format!("annotate the {} the chain carries, `{from}`", slot.name()),
                true,
                vec![Edit {
                    span,
                    new_text: from.to_string(),
                }],
            ),
        _ => Diagnostic::new(&KRN_004, at, message),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

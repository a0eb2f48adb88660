//! DMA-002: a DM tensor specification names its chip, cluster and slice, so a `to_dm` must not
//! leave its Cluster and Slice to inference.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, Slot, Step, written};
use crate::rule::{Generations, Rule, Status};

pub const DMA_002: Rule = Rule {
    code: "DMA-002",
    name: "dm-spatial-dimensions",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "DM tensor specifications name Chip, Cluster and Slice",
    docs: "A DM tensor specification must include the chip, cluster and slice dimensions to \
           identify the exact memory location. visa-lint reports `to_dm` calls whose Cluster and \
           Slice mappings are written nowhere (no turbofish, no `let` annotation, no return \
           type): inference may then pick sizes that break CAP-002/CAP-003. Write them, for \
           example `to_dm::<m![1], m![A # 256], m![B]>(..)`.",
    bad: "let dm = hbm.to_dm(&mut ctx.tdma, 0);",
    good: "let dm = hbm.to_dm::<m![1], m![A # 256], m![B]>(&mut ctx.tdma, 0);",
    manual: "seed 000 L175; L2527",
    generations: Generations::Both,
};

/// DMA-002: `to_dm` whose Cluster and Slice are written nowhere.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    // A DMA into a destination view writes the layout the destination was declared with.
    if step.method != Method::ToDm
        || step.into_view
        || written(step, 0).is_some()
        || written(step, 1).is_some()
    {
        return;
    }
    let known = |s: Slot| {
        step.output
            .as_ref()
            .and_then(|o| o.get(s))
            .is_some_and(|m| m.span.is_some())
    };
    if known(Slot::Cluster) || known(Slot::Slice) {
        return;
    }
    out.push(Diagnostic::new(
        &DMA_002,
        step.span,
        "`to_dm` leaves the DM tensor's Cluster and Slice to inference: a DM tensor specification \
         names chip, cluster and slice; write them (`to_dm::<Cluster, Slice, Element>`) or annotate \
         the binding"
            .to_string(),
    ));
}

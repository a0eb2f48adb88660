//! CMT-009: a commit writes each flit whole when the packet's elements are contiguous in the
//! Element; a permutation (not padding) splits each flit into several writes.

use crate::derive::{self, Op};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::mapping::layout::Dim;
use crate::model::Tu;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const CMT_009: Rule = Rule {
    code: "CMT-009",
    name: "full-flit-commit",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Commit each flit in one write: keep the packet's axes adjacent in the Element",
    docs: "commit_size = gcd(contiguous DM run, commit_in_size): when the packet's elements lie \
           in pieces of the Element, each flit is split into commit_in_size / commit_size writes \
           (L2244-L2245) and the commit takes that many times more cycles (full-flit commits \
           are the fast case, L7709-L7764). visa-lint reports main-context commits split this \
           way by a permutation (pieces separated by the Element's own padding are a layout \
           choice and not reported; a fetch that could take more per step is FET-003). Store \
           the packet's axes innermost and adjacent in the Element.",
    bad: "axes![K = 2, M = 4, W = 8]; ...collect::<m![K], m![M, W]>().commit::<m![M, K, W]>(0) // 4 writes per flit",
    good: "axes![K = 2, M = 4, W = 8]; ...collect::<m![K], m![M, W]>().commit::<m![K, M, W]>(0)",
    manual: "L2244-L2245, L2341-L2345, L7709-L7764",
    generations: Generations::Both,
};

/// CMT-009: the commit splits each flit into several writes because the packet's elements are
/// not contiguous in the Element (a permutation, not padding: L2244-L2245, L2341-L2345).
pub(super) fn check(
    op: &Op<'_>,
    cfg: &derive::Config,
    cin: u64,
    span: Option<Span>,
    out: &mut Vec<Diagnostic>,
) {
    if op.context == Some(Tu::Sub) || cin == 0 {
        return;
    }
    let Some(sizes) = op.commit else { return };
    let Some(cs) = sizes.commit_size else { return };
    if cs >= cin {
        return;
    }
    if matches!(op.buf.dims.last(), Some(Dim::Factor(f)) if f.extent > f.valid) {
        return; // the gaps are the Element's own padding
    }
    let steps = derive::time_steps(cfg);
    let per = cin / cs;
    out.push(at_arg(
        &CMT_009,
        op.step,
        span,
        format!(
            "the packet's {cin} bytes lie in {}-byte contiguous pieces of the Element (commit \
             sequencer {cfg}), so commit_size is {cs} and each flit takes {per} writes: {} write \
             cycles instead of {steps}; store the packet's axes innermost and adjacent in the \
             Element to commit whole flits",
            sizes.contiguous_bytes,
            steps.saturating_mul(per)
        ),
    ));
}

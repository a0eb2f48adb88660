//! CMT-005: the commit sequencer's strides outside the innermost contiguous run are multiples
//! of 8 bytes, so the packet stays innermost and contiguous in the Element.

use super::commit_op::CommitOp;
use crate::derive::Op;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CMT_005: Rule = Rule {
    code: "CMT-005",
    name: "commit-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The commit sequencer has the fetch sequencer's limits and 8-byte strides",
    docs: "The commit sequencer shares the fetch sequencer's limits (at most 8 entries of at most \
           65,536 iterations; SEQ-001 and SEQ-002 report those for every sequencer) and \
           additionally every stride must be a multiple of 8 bytes. visa-lint derives the \
           commit sequencer and reports strides that are not (the packet's own contiguous entry \
           excepted); the base address is ALN-008, a kept prefix that is not 8/16/24/32 bytes \
           CMT-002. Keep the packet's elements innermost and contiguous in the Element and pad \
           inner axes to 8 bytes.",
    bad: "axes![M = 4, K = 2, W = 8]; ...cast::<i8, m![W # 32]>().commit::<m![K, W, M]>(0) // W stride 4 B",
    good: "axes![M = 4, K = 2, W = 8]; ...cast::<i8, m![W # 32]>().commit::<m![K, M, W]>(0)",
    manual: "L2321, L2338, L7699",
    generations: Generations::Both,
};

/// CMT-005 on a commit sequencer entry that steps a stride not aligned to the commit stride
/// unit; whether it fired (CMT-009 is then silent).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    c: &CommitOp<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (cfg, bits, span) = (c.cfg, c.bits, c.span);
    let align = cx.target.commit_stride_align_bytes;
    // Entries inside the innermost contiguous run are one write; the loops around it step.
    let n = cfg.entries.len();
    let mut inner = n;
    if cfg.entries.last().is_some_and(|e| e.stride == 1) {
        inner = n - 1;
        while inner > 0 {
            let (o, i) = (cfg.entries[inner - 1], cfg.entries[inner]);
            if o.stride != i.size.saturating_mul(i.stride) {
                break;
            }
            inner -= 1;
        }
    }
    let bad = cfg.entries.iter().enumerate().find(|(k, e)| {
        *k < inner
            && e.stride != 0
            && !e
                .stride
                .saturating_mul(u64::from(bits))
                .is_multiple_of(align.saturating_mul(8))
    });
    if let Some((_, e)) = bad {
        let sb = e.stride.saturating_mul(u64::from(bits)) as f64 / 8.0;
        out.push(at_arg(
            &CMT_005,
            op.step,
            span,
            format!(
                "the commit sequencer {cfg} steps {sb} bytes in its {} : {} entry; \
                 commit-sequencer strides must be multiples of {align} bytes (keep the \
                 packet innermost and contiguous in the Element, pad inner axes to {align} bytes)",
                e.size, e.stride
            ),
        ));
        return true;
    }
    false
}

//! CMT-003: a sub-context commit writes a fixed number of bytes at a time, which must divide
//! the Element's contiguous DM run.

use super::commit_op::CommitOp;
use crate::derive::Op;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Tu;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CMT_003: Rule = Rule {
    code: "CMT-003",
    name: "commit-size-per-context",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "commit_size is 8, 16, 24 or 32 bytes (main), 8 (sub)",
    docs: "The Commit Engine writes commit_size = gcd(contiguous DM run, commit_in_size) bytes at \
           a time; the main context supports 8, 16, 24 or 32, the sub context only 8. visa-lint \
           derives the commit sequencer from the stream's Time/Packet and the destination \
           Element (crate::derive) and reports sub-context commits whose contiguous DM run breaks \
           the 8-byte units (a commit_in_size that is not a multiple of 8 is ALN-007). Keep the \
           innermost Element run a multiple of 8 bytes (pad it), or commit on `ctx.main`.",
    bad: "axes![B = 2, A = 4]; ctx.sub...collect::<m![1], m![[B, A] # 32]>().commit::<m![A, B]>(0) // 1-byte runs",
    good: "axes![B = 2, A = 4]; ctx.sub...collect::<m![1], m![[B, A] # 32]>().commit::<m![B, A]>(0)",
    manual: "L2243, L2247-L2248, L2330",
    generations: Generations::Both,
};

/// CMT-003 on a sub-context commit whose run the sub commit size does not divide; whether it
/// fired (the commit's later findings are then silent).
pub(super) fn check(
    cx: &FnContext<'_>,
    op: &Op<'_>,
    c: &CommitOp<'_>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let (cfg, span, cin, sizes) = (c.cfg, c.span, c.cin, &c.sizes);
    let run = sizes.contiguous_bytes;
    if op.context == Some(Tu::Sub)
        && let Some(sub) = cx.target.commit_sizes_sub.iter().copied().max()
        && !run.is_multiple_of(sub)
    {
        out.push(at_arg(
            &CMT_003,
            op.step,
            span,
            format!(
                "a sub-context commit writes {sub} bytes at a time, but the Element's \
                 contiguous DM run is {run} bytes (commit_in_size {cin}, sequencer {cfg}); pad \
                 the innermost run to a multiple of {sub} bytes or commit on ctx.main"
            ),
        ));
        return true;
    }
    false
}

//! SEQ-008: write sequencers need non-zero strides (no broadcast); a write whose stream has
//! axes the buffer does not hold would write them with stride 0.

use super::ops::{buffer_name, who};
use crate::derive::{Config, Op, OpKind};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const SEQ_008: Rule = Rule {
    code: "SEQ-008",
    name: "write-stride-zero",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Write sequencers (`BufTensor::write`) need non-zero strides: no broadcast, no selective writes",
    docs: "A stream factor whose axis the destination buffer does not hold would be written with \
           stride 0: every step overwrites the same addresses. Write sequencers require non-zero \
           strides for all entries, so writes cannot discard data (beyond slicing) or reduce a \
           broadcast (the manual's `broadcasting_write`, L1263-L1335, is the reverse of a legal \
           broadcasting read and is rejected). SEQ-008 reports the Sequencer page's \
           `BufTensor::write`; the same condition on a commit (the Commit Engine's write \
           sequencer) is CMT-006, so each write is reported once. Add the axis to the buffer, or \
           reduce it before the write.",
    bad: "// buf: &mut BufTensor<i8, m![A]>\nbuf.write(stream) // stream: StreamTensor<i8, m![T, A], m![P]>",
    good: "// buf: &mut BufTensor<i8, m![T, A, P]>\nbuf.write(stream)",
    manual: "L7775, L2321, L1328-L1335",
    generations: Generations::Both,
};

/// SEQ-008: a write sequencer with a stride-0 entry.
pub(super) fn check(op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    let span = op.span;
    if op.kind == OpKind::Write
        && let Some(what) = op.stride_zero(cfg)
    {
        let it = if op.missing_axes().len() > 1 {
            "them"
        } else {
            "it"
        };
        out.push(Diagnostic::new(
            &SEQ_008,
            span,
            format!(
                "{} would write {what} with stride 0 ({cfg}): {} does not hold {it}, and write sequencers need non-zero strides (no broadcast, no selective writes)",
                who(op),
                buffer_name(op)
            ),
        ));
    }
}

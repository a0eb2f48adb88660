//! SEQ-006: the stream must produce every index the buffer holds (reads), or the buffer must
//! hold every index the stream writes; otherwise the sequencer has no address for them. The
//! derivation reports the factor that is missing.

use super::ops::{buffer_name, who};
use crate::derive::{DeriveError, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};

pub const SEQ_006: Rule = Rule {
    code: "SEQ-006",
    name: "insufficient-input",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The stream must not iterate indices the buffer does not hold (\"insufficient input\")",
    docs: "Each factor of Time and Packet is located in the buffer mapping to get its stride. A \
           factor of an axis the buffer holds only in part (`N / 512` when the buffer is `m![N % \
           512]`) has no address: the compiler rejects the configuration. (A whole axis absent \
           from the buffer is a broadcast, stride 0.) For writes the reverse also holds: the \
           stream must produce every position of the destination Element.",
    bad: "buf: &BufTensor<i8, m![N % 512]> → StreamTensor<i8, m![N / 512], m![N % 512]>",
    good: "buf: &BufTensor<i8, m![N]> → StreamTensor<i8, m![N / 512], m![N % 512]>",
    manual: "L1639-L1659",
    generations: Generations::Both,
};

/// SEQ-006 for an op whose derivation found a factor one side lacks.
pub(super) fn report(op: &Op<'_>, err: &DeriveError, out: &mut Vec<Diagnostic>) {
    let DeriveError::Insufficient {
        axis,
        needed,
        have,
        reverse,
        slot,
    } = err
    else {
        return;
    };
    let span = op.span;
    let msg = if *reverse {
        format!(
            "insufficient input: {} holds `{needed}` of `{axis}`, but the stream's Time and Packet never produce it; those positions would not be written",
            buffer_name(op)
        )
    } else {
        format!(
            "insufficient input: {slot} requires `{needed}`, but {} only contains `{have}`; {} has no address for those indices",
            buffer_name(op),
            who(op)
        )
    };
    out.push(Diagnostic::new(&SEQ_006, span, msg));
}

//! SEQ-009: the last element a write sequencer writes lies within the destination; a stream
//! whose padding reaches past the tensor would write beyond it.

use super::ops::{buffer_name, who};
use crate::derive::{Config, Direction, Op};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::rule::{Generations, Rule, Status};

pub const SEQ_009: Rule = Rule {
    code: "SEQ-009",
    name: "write-within-bounds",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Write sequencers must never write beyond the destination tensor",
    docs: "A read sequencer may overfetch past its tensor (the padding is dummy data), but a write \
           sequencer must stay within the destination: past it lie other tensors. visa-lint \
           derives the write configuration (the commit truncates only the outermost packet \
           factor, L2199) and reports a stream whose padded Time (or inner Packet) factor makes \
           the last written element lie past the Element's extent (`Time = m![M # 8]` committed \
           into `m![M, W]` with M = 4). Slice the padding off before the commit (`= n`), or pad \
           the destination Element as well. The 8-byte tail dummy and DM allocation are \
           CMT-007's.",
    bad: "// stream Time m![M # 8], Packet m![W # 32]; M = 4, W = 8, i8\n.commit::<m![M, W]>(0)",
    good: ".commit::<m![M # 8, W]>(0)",
    manual: "L7884, L7896",
    generations: Generations::Both,
};

/// SEQ-009: the last element a write sequencer writes lies within the destination.
pub(super) fn check(op: &Op<'_>, cfg: &Config, out: &mut Vec<Diagnostic>) {
    if op.kind.direction() != Direction::Write || cfg.entries.iter().any(|e| e.stride == 0) {
        return;
    }
    let mut last: u64 = 0;
    for e in &cfg.entries {
        let Some(v) = e.size.checked_sub(1).and_then(|n| n.checked_mul(e.stride)) else {
            return;
        };
        let Some(l) = last.checked_add(v) else { return };
        last = l;
    }
    if last < op.buf.size || !injective(op) {
        return;
    }
    out.push(Diagnostic::new(
        &SEQ_009,
        op.span,
        format!(
            "{} ({cfg}) reaches element {last}, but {} holds {} elements: it would write {} elements past the tensor. Slice the stream's padding off (`= n`) or pad the Element too",
            who(op),
            buffer_name(op),
            op.buf.size,
            last + 1 - op.buf.size
        ),
    ));
}

/// `true` when no two factors of the stream cover the same positions of one axis (a stream that
/// repeats indices is another rule's finding, e.g. VEC-006).
fn injective(op: &Op<'_>) -> bool {
    let mut seen: Vec<(&str, u64, u64)> = Vec::new();
    for d in op.time.dims.iter().chain(op.packet.dims.iter()) {
        let Dim::Factor(f) = d else { return false };
        let Some(a) = &f.axis else { continue };
        let (lo, hi) = (f.coef, f.coef.saturating_mul(f.valid));
        if seen
            .iter()
            .any(|&(n, l, h)| n == &*a.name && lo < h && l < hi)
        {
            return false;
        }
        seen.push((&a.name, lo, hi));
    }
    true
}

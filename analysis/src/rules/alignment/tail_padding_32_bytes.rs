//! ALN-012: when a DM tensor's innermost axis is padded, its rows are the contiguous runs of
//! the fetch and commit sequencers, and the largest access is the largest of 8/16/24/32 bytes
//! dividing the row. Reported on padded rows of fetched or committed tensors that are longer
//! than a flit and not a multiple of it, with the access sizes; the fix pads the row.

use super::addresses::round_up;
use crate::derive::Op;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::{Dtype, MapVal, Slot};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const ALN_012: Rule = Rule {
    code: "ALN-012",
    name: "tail-padding-32-bytes",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Tail padding to a multiple of 32 bytes enables 32-byte fetches and commits",
    docs: "When a DM tensor's innermost axis is padded (`m![B, A # 72]`) its rows are the \
           contiguous runs of the fetch and commit sequencers, and the largest fetch/commit \
           size is the largest of 8/16/24/32 bytes dividing the row: with A = 65 (f8), 72 \
           bytes gives 24-byte accesses, 80 bytes 16, 88 bytes 8, 96 bytes 32 (L7860-L7867). \
           visa-lint reports padded innermost axes of fetched or committed tensors whose row is \
           not a multiple of 32 bytes, with the access sizes. Pad to the next multiple of 32 \
           bytes.",
    bad: "let out: DmTensor<f8, m![1], m![1], m![1], m![B, A # 88]> = ...commit(1024);",
    good: "let out: DmTensor<f8, m![1], m![1], m![1], m![B, A # 96]> = ...commit(1024);",
    manual: "L7860-L7881",
    generations: Generations::Both,
};

/// The padded innermost row of the DM tensor a fetch reads or a commit writes.
struct PaddedRow<'a> {
    /// The mapping that writes the row (the fetch's Packet, the commit's Element).
    mv: &'a MapVal,
    span: Span,
    d: Dtype,
    /// The padded extent of the innermost axis, in elements.
    extent: u64,
    /// The row's size in bytes.
    row: u64,
}

impl<'a> PaddedRow<'a> {
    fn of(op: &Op<'a>) -> Option<Self> {
        use crate::derive::OpKind;
        use crate::mapping::layout::Dim;
        let (ty, slot) = match op.kind {
            OpKind::Fetch => (op.step.input.as_ref(), Slot::Packet),
            OpKind::Commit => (op.step.output.as_ref(), Slot::Element),
            _ => return None,
        };
        let ty = ty?;
        let mv = ty.get(slot)?;
        let (Some(span), Some(d)) = (mv.span, ty.dtype) else {
            return None;
        };
        let Some(Dim::Factor(f)) = op.buf.dims.last() else {
            return None;
        };
        if f.extent <= f.valid || f.axis.is_none() {
            return None;
        }
        let row = d.size_bytes(f.extent)?;
        Some(PaddedRow {
            mv,
            span,
            d,
            extent: f.extent,
            row,
        })
    }
}

/// ALN-012: a fetched or committed DM tensor whose padded innermost row is longer than a flit
/// and not a multiple of 32 bytes (L7860-L7881).
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    let mut seen = Vec::new();
    for op in &cx.ops {
        let Some(p) = PaddedRow::of(op) else { continue };
        if p.row <= flit || p.row.is_multiple_of(flit) || seen.contains(&p.span) {
            continue;
        }
        seen.push(p.span);
        out.push(report(cx, op, &p));
    }
}

/// ALN-012's diagnostic on the row `p` of `op`, with the fix that pads it to whole flits.
fn report(cx: &FnContext<'_>, op: &Op<'_>, p: &PaddedRow<'_>) -> Diagnostic {
    let (flit, row, d) = (cx.target.flit_bytes, p.row, p.d);
    let sizes = cx.target.commit_sizes_main;
    let best = sizes
        .iter()
        .copied()
        .filter(|&s| row.is_multiple_of(s))
        .max()
        .unwrap_or(1);
    let full = round_up(row, flit).unwrap_or(flit);
    let mut diag = at_arg(
        &ALN_012,
        op.step,
        Some(p.span),
        format!(
            "the padded innermost axis is {} × {d} = {row} bytes per row, so fetches and commits \
             of it move {best} bytes at a time ({} per row); padding the row to {full} bytes \
             allows {flit}-byte accesses ({} per row)",
            p.extent,
            row / best,
            full / flit
        ),
    );
    if let Some(new) = d
        .elems_for(full)
        .and_then(|n| crate::mapping::edit::pad_last_term(&p.mv.text, n))
    {
        diag = diag.with_edit(
            format!("pad the row to {full} bytes: {new}"),
            false,
            p.span,
            new,
        );
    }
    diag
}

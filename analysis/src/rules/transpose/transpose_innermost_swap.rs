//! TRN-003: the engine turns `[outer, rows, packets_per_col] × [packet]` into `[outer,
//! packets_per_col, packet] × [rows # align]` within flits, keeping the outer Time order; an
//! OutTime and OutPacket that are no such swap of the input are reported, with the transposed
//! Time when it can be rebuilt.

use super::call::{Out, Transpose};
use super::layouts::text;
use crate::derive::transpose::expected_time;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const TRN_003: Rule = Rule {
    code: "TRN-003",
    name: "transpose-innermost-swap",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Transpose swaps only the innermost Time factors with the packet, within flits",
    docs: "The Transpose Engine turns [outer, rows, packets_per_col] × [packet] into [outer, \
           packets_per_col, packet (trimmed)] × [rows # output_alignment]: the outer Time \
           factors stay where they are and only the innermost rows move into the packet. \
           OutTime/OutPacket that reorder outer Time factors, take rows that are not innermost, or \
           keep something other than the transposed columns are not a transpose the engine can do \
           (reorder outer factors at the commit's Element instead). Chip, Cluster and Slice pass \
           through; an annotation that changes them is reported by KRN-004, not here.",
    bad: "input: CollectTensor<.., i8, .., m![C, D], m![E # 32]>; input.transpose::<m![E, C], m![D # 32]>()",
    good: "input: CollectTensor<.., i8, .., m![C, D], m![E # 32]>; input.transpose::<m![C, E], m![D # 32]>()",
    manual: "L6830-L6831, L6839, L3043",
    generations: Generations::Both,
};

/// Reports a transpose whose output is not the innermost swap of its input (no split of the
/// input Time gives it).
pub(super) fn report(t: &Transpose<'_>, o: &Out<'_>, out: &mut Vec<Diagnostic>) {
    let (g, step, input, output) = (t.g, t.step, t.input, t.output);
    let (tin, pin, tout, pout, in_rows) = (t.time, t.packet, o.time, o.packet, o.in_rows);
    let align = g.output_alignment;
    let time_arg = output_arg(step, Some(0), Slot::Time);
    let span = time_arg.as_ref().map(|a| a.span);
    let hint = expected_time(g, tin, pin, pout, in_rows.max(1));
    let mut diag = at_arg(
        &TRN_003,
        step,
        span,
        format!(
            "Time {} × Packet {} → OutTime {} × OutPacket {} is not a transpose of the \
             innermost Time factors with the packet: the engine turns [outer, rows, \
             packets_per_col] × [packet] into [outer, packets_per_col, packet] × [rows # {align}] \
             within flits, keeping the outer Time order{}",
            text(input, Slot::Time),
            text(input, Slot::Packet),
            text(output, Slot::Time),
            text(output, Slot::Packet),
            hint.as_ref()
                .filter(|t| *t != tout)
                .map_or(String::new(), |t| format!(
                    " (OutTime m![{}] here)",
                    t.to_expr()
                ))
        ),
    );
    if let (Some(t), Some(a)) = (hint.filter(|t| t != tout), time_arg) {
        diag = diag.with_edit(
            "use the transposed Time",
            false,
            a.span,
            format!("m![{}]", t.to_expr()),
        );
    }
    out.push(diag);
}

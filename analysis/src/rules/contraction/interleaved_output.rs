//! CON-015: Interleaved accumulation outputs one value of each of the 8 accumulator rows per
//! beat (OutPacket is the Row padded to 8) and keeps the Time order without the reduced axes,
//! followed by the packet the tree left (OutTime).

use super::accumulate::Accumulate;
use super::interleaved_slice_padding_only;
use super::layouts::{at, m, pad_where_written, same_data, strip, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_015: Rule = Rule {
    code: "CON-015",
    name: "interleaved-output",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Interleaved accumulate: OutTime = Time' ++ surviving packet, OutPacket = Row # 8",
    docs: "Interleaved mode outputs one value of every Row per beat on all 8 accumulator rows: \
           OutPacket is the Row padded to 8 (`m![N]` for 8 Rows, `m![1 # 8]` for one), and \
           OutTime is Time without the reduced axes followed by the packet left after the tree \
           (`m![M, K % 16 / 4]`). The fix pads a short Row.",
    bad: "..contract::<m![1]>().accumulate::<m![A], m![1]>(AccumulationKind::Interleaved) // Row m![1]",
    good: "..contract::<m![1]>().accumulate::<m![A], m![1 # 8]>(AccumulationKind::Interleaved)",
    manual: "L4436-L4448, L4535-L4536",
    generations: Generations::Both,
};

/// CON-015 (and CON-017) on an Interleaved `.accumulate()`: whether its shape is right.
pub(super) fn check(cx: &FnContext<'_>, a: &Accumulate<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let packet_ok = check_packet(cx, a, out);
    let time_ok = check_time(a, out);
    packet_ok && time_ok
}

/// OutPacket = Row # 8, padded by the fix when it is the Row unpadded.
fn check_packet(cx: &FnContext<'_>, a: &Accumulate<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (r, op, step) = (a.row, a.out_packet, a.step);
    let rows = cx.target.trf_rows;
    if r.size > rows || (op.size == rows && same_data(op, r)) {
        return true;
    }
    let want = r.window(rows);
    let mut diag = at_arg(
        &CON_015,
        step,
        at(step, 1, Slot::Packet),
        format!(
            "Interleaved accumulation outputs one value of each of the {rows} accumulator \
             rows per beat: OutPacket must be the Row {} padded to {rows}, {}, not {}",
            text(a.input, Slot::Row),
            m(&want),
            text(a.output, Slot::Packet)
        ),
    );
    if same_data(op, r)
        && op.size < rows
        && let Some(edit) = pad_where_written(cx.scope, step, (1, Slot::Packet), rows)
    {
        diag = diag.with_fix(format!("pad OutPacket to {rows}"), false, vec![edit]);
    }
    out.push(diag);
    false
}

/// OutTime = Time without the reduced axes ++ the packet left after the tree; an OutTime that
/// slices that packet is CON-017's.
fn check_time(a: &Accumulate<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let Ok(want) = a.time_kept.pair(a.packet) else {
        return true;
    };
    if same_data(a.out_time, &want) {
        return true;
    }
    if let Some(k) = interleaved_slice_padding_only::slice(a) {
        interleaved_slice_padding_only::check(a, k, out);
        return true;
    }
    out.push(at_arg(
        &CON_015,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "Interleaved accumulation keeps the Time order without the reduced axes \
             and appends the packet left after the tree: OutTime must be {}, not {}",
            strip(&want).map_or_else(|| m(&want), |s| m(&s)),
            text(a.output, Slot::Time)
        ),
    ));
    false
}

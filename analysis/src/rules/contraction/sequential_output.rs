//! CON-016: Sequential accumulation outputs Time without the reduced axes, then the Row, then
//! the packet, on an 8-element bus: OutPacket is 8, 16, 24 or 32 elements.

use super::accumulate::Accumulate;
use super::layouts::{at, factor_axis, m, overlaps, pad_where_written, same_data, strip, text};
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::model::{Slot, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_016: Rule = Rule {
    code: "CON-016",
    name: "sequential-output",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Sequential accumulate: OutTime = Time' ++ Row ++ packet outer, OutPacket 8/16/24/32 elements",
    docs: "Sequential mode outputs each Row's reduced packet in turn on an 8-element bus: OutTime \
           is Time without the reduced axes, then Row, then the packet's outer part; OutPacket is \
           the packet's inner part padded to 8, 16, 24 or 32 elements (`m![K % 16 / 4 # 8]`). \
           A Row written in OutPacket (`m![R # 8]`, the Interleaved layout) is reported too: \
           the same data, split where the bus cannot carry it: its first fix makes the mode \
           Interleaved, the layout the types spell, and moving the Row into OutTime is \
           offered when the stages after it still hold. Otherwise the fix pads OutPacket to a \
           multiple of 8.",
    bad: "..accumulate::<m![M, N], m![K % 16 / 4]>(AccumulationKind::Sequential)",
    good: "..accumulate::<m![M, N], m![K % 16 / 4 # 8]>(AccumulationKind::Sequential)",
    manual: "L4484-L4491, L4521, L4537-L4538",
    generations: Generations::Both,
};

/// CON-016 on a Sequential `.accumulate()`: whether its shape is right.
pub(super) fn check(cx: &FnContext<'_>, a: &Accumulate<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (op, step) = (a.out_packet, a.step);
    let bus = cx.target.reducer_output_bus;
    let cols = cx.target.reducer_columns;
    let size_ok = op.size.is_multiple_of(bus) && op.size <= cols && op.size > 0;
    let want = a.time_kept.pair(a.row).and_then(|l| l.pair(a.packet));
    let have = a.out_time.pair(op);
    // The Row goes to OutTime: the bus carries one Row's packet at a time. A Row in
    // OutPacket (`m![R # 8]`) is the Interleaved layout, the same data split elsewhere.
    let row_in_packet = a
        .row
        .dims
        .iter()
        .any(|d| factor_axis(d).is_some() && op.dims.iter().any(|o| overlaps(d, o)));
    let data_ok = !row_in_packet && matches!((&want, &have), (Ok(w), Ok(h)) if same_data(w, h));
    if size_ok && data_ok {
        return true;
    }
    let padded = op.size.div_ceil(bus).saturating_mul(bus);
    let mut diag = at_arg(
        &CON_016,
        step,
        if data_ok {
            at(step, 1, Slot::Packet)
        } else if row_in_packet {
            // From the layouts to the mode: either is the fix.
            let mode = step.args.first().map(|a| a.span);
            at(step, 0, Slot::Time).map(|t| match mode {
                Some(m) if m.end > t.start => Span::new(t.start as usize, m.end as usize),
                _ => t,
            })
        } else {
            at(step, 0, Slot::Time)
        },
        if data_ok {
            format!(
                "Sequential accumulation outputs the packet on an {bus}-element bus: \
                 OutPacket {} has {} elements; it must be {bus}, 16, 24 or {cols}: pad it \
                 to {padded}",
                text(a.output, Slot::Packet),
                op.size
            )
        } else if row_in_packet {
            format!(
                "Sequential accumulation outputs one Row's packet at a time, so the Row {} \
                 belongs in OutTime (Time without the reduced axes, then the Row, then the \
                 packet's outer part) and OutPacket holds the packet's inner part; OutPacket \
                 {} holds the Row, which is the Interleaved layout: move the Row into OutTime \
                 or accumulate Interleaved",
                text(a.input, Slot::Row),
                text(a.output, Slot::Packet)
            )
        } else {
            format!(
                "Sequential accumulation outputs Time without the reduced axes, then the \
                 Row, then the packet: OutTime ++ OutPacket must hold {}, but {} ++ {} \
                 does not",
                want.as_ref()
                    .ok()
                    .map_or_else(|| "?".into(), |w| strip(w).map_or_else(|| m(w), |s| m(&s))),
                text(a.output, Slot::Time),
                text(a.output, Slot::Packet)
            )
        },
    );
    if data_ok
        && padded <= cols
        && let Some(edit) = pad_where_written(cx.scope, step, (1, Slot::Packet), padded)
    {
        diag = diag.with_fix(format!("pad OutPacket to {padded}"), false, vec![edit]);
    }
    if row_in_packet && let Some(edit) = interleaved(a) {
        diag = diag.with_fix(
            "accumulate Interleaved, the layout OutTime and OutPacket spell",
            false,
            vec![edit],
        );
    }
    if row_in_packet && let Some(edits) = row_to_time(a, bus) {
        diag = diag.with_fix("move the Row into OutTime", false, edits);
    }
    out.push(diag);
    false
}

/// The mode argument of an accumulate written with the Row in OutPacket, made Interleaved
/// (`LaneMode::Sequential` → `LaneMode::Interleaved`, or a variable naming it): the layout its
/// types already spell, which leaves the stages after it as they are.
fn interleaved(a: &Accumulate<'_>) -> Option<Edit> {
    let arg = a.step.args.first()?;
    let kind = arg.value_text();
    let new_text = kind.replace("Sequential", "Interleaved");
    (new_text != kind).then_some(Edit {
        span: arg.span,
        new_text,
    })
}

/// The Sequential layout of an accumulate written with the Row in OutPacket: OutTime is Time
/// without the reduced axes, then the Row (`m![M % 64, R]`), and OutPacket the reduced packet
/// padded to the bus (`m![1 # 8]`), both written at the call's turbofish.
fn row_to_time(a: &Accumulate<'_>, bus: u64) -> Option<Vec<Edit>> {
    let (time, packet) = (written(a.step, 0)?, written(a.step, 1)?);
    if a.packet.dims.iter().any(|d| factor_axis(d).is_some()) {
        // The packet's outer part would go to OutTime too: not written here.
        return None;
    }
    let new_time = a.time_kept.pair(a.row).ok()?;
    let lanes = a.packet.size.max(1).div_ceil(bus).saturating_mul(bus);
    let new_packet = match a.packet.size {
        0 | 1 => format!("m![1 # {lanes}]"),
        _ => format!("m![{} # {lanes}]", a.packet.to_expr()),
    };
    Some(vec![
        Edit {
            span: time.span,
            new_text: format!("m![{}]", new_time.to_expr()),
        },
        Edit {
            span: packet.span,
            new_text: new_packet,
        },
    ])
}

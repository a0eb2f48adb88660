//! CON-020: a contraction using fewer than the 8 Rows while a tiling axis of the TRF Element is
//! iterated in Time leaves MACs idle; moving that axis to Row uses them.

use super::align::{Align, TrfSide};
use super::layouts::{factor_axis, layout, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CON_020: Rule = Rule {
    code: "CON-020",
    name: "row-utilization",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Fewer than 8 Rows while a TRF axis is iterated in Time",
    docs: "Each Row is a 64 B/cycle MAC lane; using R < 8 Rows runs at R/8 of the slice's \
           throughput (bf16: 256 MACs/cycle with 8 Rows). When the TRF Element holds an output \
           axis that is iterated in Time (not contracted), moving it to Row spreads the work over \
           more Rows for free. Reported only then.",
    bad: "trf: &TrfTensor<bf16, .., m![1], m![O, K]>; input.align::<m![M, O], m![K # 32], _, _>(trf)",
    good: "trf: &TrfTensor<bf16, .., m![O], m![K]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L3780, L3785, L4450, L4545",
    generations: Generations::Both,
};

/// CON-020 on an `.align()`.
pub(super) fn check(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (d, var, e) = (a.d, side.var, side.element);
    let Some(r) = layout(&var.ty, Slot::Row).filter(|r| r.size < cx.target.trf_rows) else {
        return;
    };
    let time_axes = a.out_time.axis_names();
    let Some(dim) = e.dims.iter().find(|x| {
        x.extent() >= 2
            && factor_axis(x).is_some_and(|n| time_axes.contains(n) && !a.stream_axes.contains(n))
    }) else {
        return;
    };
    let mac = cx.target.mac_width_bytes;
    let rows = cx.target.trf_rows;
    let macs = d.elems_for(mac).map_or(0, |n| n.saturating_mul(rows));
    let used = r.size.saturating_mul(dim.extent()).min(rows);
    out.push(Diagnostic::new(
        &CON_020,
        a.step.span,
        format!(
            "the contraction uses {} of {rows} Rows ({}/{rows} of the {macs} {d} MACs per \
             cycle of a slice); the tiling axis `{}` of the TRF Element {} is iterated in \
             Time: moving it to Row would use {used} Rows",
            r.size,
            r.size,
            dim.to_expr(),
            text(&var.ty, Slot::Element)
        ),
    ));
}

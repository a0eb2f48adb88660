//! CON-007: OutTime factors the collected stream lacks (tiling axes, from the TRF) repeat each
//! packet in place, so they are OutTime's innermost factors; the fix moves them there.

use super::align::Align;
use super::layouts::{at, factor_axis, m, text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Slot, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const CON_007: Rule = Rule {
    code: "CON-007",
    name: "time-broadcast-innermost",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Time-broadcast (tiling) axes are the innermost OutTime factors",
    docs: "OutTime factors absent from the collected stream (a TRF-only axis `T`) repeat each \
           activation packet with stride 0; the Stream Adapter can only repeat a packet in place, \
           so tiling axes must be the innermost positions of OutTime: `m![M, T]`, not `m![T, M]`. \
           The fix moves them to the end.",
    bad: "input.align::<m![T, M], m![K # 32], _, _>(&trf) // T only in the TRF",
    good: "input.align::<m![M, T], m![K # 32], _, _>(&trf)",
    manual: "L3938-L3946, L3954",
    generations: Generations::Both,
};

/// CON-007 on an `.align()` whose TRF Element is `element`; whether it fired.
pub(super) fn check(a: &Align<'_>, element: Option<&Layout>, out: &mut Vec<Diagnostic>) -> bool {
    let (ot, step, input) = (a.out_time, a.step, a.input);
    let tiling = |d: &Dim| a.is_tiling(d);
    let Some(first) = ot.dims.iter().position(tiling) else {
        return false;
    };
    if !ot.dims[first..].iter().any(|d| !tiling(d)) {
        return false;
    }
    let mut dims: Vec<Dim> = ot.dims.iter().filter(|d| !tiling(d)).cloned().collect();
    let moved: Vec<Dim> = ot.dims.iter().filter(|d| tiling(d)).cloned().collect();
    let names: Vec<String> = moved.iter().map(Dim::to_expr).collect();
    dims.extend(moved);
    let fixed = Layout {
        size: ot.size,
        dims,
    };
    let in_trf = element.is_some_and(|e| {
        let held = e.axis_names();
        ot.dims
            .iter()
            .filter(|d| tiling(d))
            .all(|d| factor_axis(d).is_some_and(|a| held.contains(a)))
    });
    let mut diag = at_arg(
        &CON_007,
        step,
        at(step, 0, Slot::Time),
        format!(
            "`{}` {} absent from the collected stream (Time {}, Packet {}){}: tiling axes repeat \
             each packet in place and must be the innermost OutTime factors: {}",
            names.join("`, `"),
            if names.len() == 1 { "is" } else { "are" },
            text(input, Slot::Time),
            text(input, Slot::Packet),
            match (in_trf, names.len() == 1) {
                (false, _) => "",
                (true, true) => " and comes from the TRF",
                (true, false) => " and come from the TRF",
            },
            m(&fixed)
        ),
    );
    if let Some(arg) = written(step, 0).filter(|arg| arg.text.trim().starts_with("m![")) {
        diag = diag.with_edit(
            "move the tiling axes to the end of OutTime",
            false,
            arg.span,
            m(&fixed),
        );
    }
    out.push(diag);
    true
}

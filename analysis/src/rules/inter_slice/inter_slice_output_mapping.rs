//! XSL-005: the reduce's output mapping: SliceOut keeps Slice's size (the reduced factor's
//! positions filled by Broadcast, Dummy or Promotion), and TimeOut is Time without the Time
//! factors promoted into SliceOut.

use super::super::context::at_arg;
use super::layouts::{layout, render};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Slot, Step, output_arg};
use crate::rule::{Generations, Rule, Status};

pub const XSL_005: Rule = Rule {
    code: "XSL-005",
    name: "inter-slice-output-mapping",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "SliceOut keeps Slice's size; TimeOut is Time minus the axes promoted into SliceOut",
    docs: "After the reduced Slice factor is removed its positions are filled by a new axis \
           (Broadcast, `m![A, X]`), by padding (Dummy, `m![A, 1 # n]`) or by a Time axis \
           (Promotion, `m![A, C]` with that axis removed from TimeOut). SliceOut therefore has \
           as many positions as Slice (a cluster's slices), and TimeOut is Time without the \
           promoted factors.",
    bad: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8], m![1]>(op)",
    good: "// Slice m![A / 8, R], Time m![1]\n.vector_inter_slice_reduce::<m![A / 8, 1 # 4], m![1]>(op)",
    manual: "L6627-L6634, L6653, L6671-L6675",
    generations: Generations::Both,
};

/// XSL-005: SliceOut against Slice, then TimeOut against Time.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(slice), Some(time), Some(slice2), Some(time2)) = (
        layout(step, false, Slot::Slice),
        layout(step, false, Slot::Time),
        layout(step, true, Slot::Slice),
        layout(step, true, Slot::Time),
    ) else {
        return;
    };
    if slice2.size != slice.size {
        slice_out_size(step, slice, slice2, out);
        return;
    }
    time_out_follows(step, time, slice2, time2, out);
}

/// XSL-005 on a SliceOut of another size than Slice: the reduced factor's positions are to be
/// filled; the fix fills them with padding (Dummy) in place.
fn slice_out_size(step: &Step, slice: &Layout, slice2: &Layout, out: &mut Vec<Diagnostic>) {
    // Dummy replacement: the factors SliceOut dropped become `1 # n` in place.
    let dummy: Vec<String> = slice
        .dims
        .iter()
        .map(|d| {
            if slice2.dims.contains(d) {
                render(std::slice::from_ref(d))
            } else {
                format!("1 # {}", d.extent())
            }
        })
        .collect();
    let dummy = dummy.join(", ");
    let msg = format!(
        "SliceOut m![{slice2}] has {} positions but Slice m![{slice}] has {}: the reduced \
         factor's positions must be filled by a new axis (Broadcast), padding (Dummy, \
         m![{dummy}]) or a Time axis (Promotion)",
        slice2.size, slice.size
    );
    // Where SliceOut is written: the turbofish, else where `_` takes it from (a `let`
    // annotation, the signature), unless inside a tensor alias this use cannot edit.
    let written = output_arg(step, Some(0), Slot::Slice);
    let at = written.as_ref().map(|a| a.span);
    let mut d = at_arg(&XSL_005, step, at, msg);
    if let Some(a) = written.filter(|a| !a.in_tensor_alias && a.text.trim() != "_") {
        d = d.with_edit(
            format!("fill the reduced positions with padding: m![{dummy}]"),
            false,
            a.span,
            format!("m![{dummy}]"),
        );
    }
    out.push(d);
}

/// XSL-005 on TimeOut: Time without the Time factors promoted into SliceOut (a partial
/// promotion, a piece of a Time factor, is not decided here).
fn time_out_follows(
    step: &Step,
    time: &Layout,
    slice2: &Layout,
    time2: &Layout,
    out: &mut Vec<Diagnostic>,
) {
    if !(time.is_regular() && time2.is_regular() && slice2.is_regular()) {
        return;
    }
    let Some(promoted) = promoted(time, slice2) else {
        return;
    };
    let rest: Vec<Dim> = time
        .dims
        .iter()
        .filter(|d| !promoted.contains(d))
        .cloned()
        .collect();
    let Ok(want) = Layout::from_dims(rest) else {
        return;
    };
    if want == *time2 {
        return;
    }
    let what = if promoted.is_empty() {
        "no Time axis is promoted into SliceOut, so TimeOut must equal Time".to_string()
    } else {
        let names: Vec<String> = promoted
            .iter()
            .map(|d| render(std::slice::from_ref(d)))
            .collect();
        format!(
            "{} moves into SliceOut, so TimeOut is Time without it",
            names.join(", ")
        )
    };
    let msg = format!("TimeOut m![{time2}] does not follow the output rule: {what}, m![{want}]");
    let arg_time = step.generics.get(1).filter(|a| a.text.trim() != "_");
    let at = output_arg(step, Some(1), Slot::Time).map(|a| a.span);
    let mut d = at_arg(&XSL_005, step, at, msg);
    if let Some(a) = arg_time {
        d = d.with_edit(
            format!("write TimeOut = m![{want}]"),
            true,
            a.span,
            format!("m![{want}]"),
        );
    }
    out.push(d);
}

/// The factors of SliceOut that come from Time: promoted. `None` on a partial promotion (a
/// piece of a Time factor), which is not decided here.
fn promoted(time: &Layout, slice2: &Layout) -> Option<Vec<Dim>> {
    let time_axes: Vec<&str> = time
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) => Some(&*a.name),
            _ => None,
        })
        .collect();
    let mut promoted = Vec::new();
    for d in &slice2.dims {
        if let Dim::Factor(Factor { axis: Some(a), .. }) = d
            && time_axes.contains(&&*a.name)
        {
            if time.dims.contains(d) {
                promoted.push(d.clone());
            } else {
                return None;
            }
        }
    }
    Some(promoted)
}

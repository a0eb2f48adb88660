//! CON-008: the Stream Adapter and the TRF Sequencer produce the same computation mapping. The
//! stream side keeps the collected Time order and takes its tiling axes from the TRF; the TRF
//! side fills the packet by repeating one contiguous read of the Element and finds every
//! OutTime factor it reads there.

use super::align::{Align, TrfSide};
use super::layouts::{at, factor_axis, m, same_data, text};
use crate::derive::DeriveError;
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CON_008: Rule = Rule {
    code: "CON-008",
    name: "computation-mapping-match",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "OutTime/OutPacket must be producible by both the Stream Adapter and the TRF Sequencer",
    docs: "Both Aligner paths produce the same computation mapping. The Stream Adapter keeps the \
           collected Time order (less the collected flits, plus innermost tiling axes): it cannot \
           reorder Time. The TRF Sequencer reorders and broadcasts Time with its nested-loop \
           entries, but must find every OutTime factor it reads in the TRF Element, and fills the \
           packet only by repeating one contiguous read: the packet's TRF factors must be the \
           Element's innermost factors. A tiling axis (an OutTime factor absent from the collected \
           stream) must be in the TRF Element: the library asserts \"tiling axes must be present \
           in TRF\" in `align`, so an axis in neither the stream nor the TRF panics, an error. \
           Packet-size and collection problems are CON-004/005, the read size CON-009.",
    bad: "input: CollectTensor<.., m![M, O], m![K]>; input.align::<m![O, M], m![K # 32], _, _>(&trf)",
    good: "input: CollectTensor<.., m![M, O], m![K]>; input.align::<m![M, O], m![K # 32], _, _>(&trf)",
    manual: "L3778, L3791, L3899-L3910, L4081-L4085",
    generations: Generations::Differs(
        "the tiling-axis part differs: `furiosa_visa_std`'s `align` asserts that tiling axes are \
         in the TRF (L4083), furiosa-opt-std 0.6's `contract_outer` only that they are OutTime's \
         innermost factors \
         (`furiosa-opt-lower/src/verify/engine/contraction/outer/stream_adapter.rs:62-70`), so \
         that part is not checked on its crates",
    ),
};

/// Tiling axes repeat a packet the TRF Sequencer reads; the manual's library asserts "tiling
/// axes must be present in TRF" (an axis in neither the stream nor the TRF Element is data
/// neither side has); furiosa-opt-std 0.6 does not. Whether it fired.
pub(super) fn tiling_axes_in_trf(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    element: Option<&Layout>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let library = cx.model.library;
    let Some(e) = element.filter(|e| {
        library.tiling_axes_must_be_in_trf() && e.dims.iter().all(|d| matches!(d, Dim::Factor(_)))
    }) else {
        return false;
    };
    let (input, output) = (a.input, a.output);
    let held = e.axis_names();
    let missing: Vec<String> = a
        .out_time
        .dims
        .iter()
        .filter(|d| a.is_tiling(d) && factor_axis(d).is_some_and(|x| !held.contains(x)))
        .map(Dim::to_expr)
        .collect();
    if missing.is_empty() {
        return false;
    }
    out.push(at_arg(
        &CON_008,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "OutTime `{}` tiles over `{}`, which is in neither the collected stream (Time \
             {}, Packet {}) nor the TRF Element `{}`: tiling axes must be present in TRF \
             (the TRF Sequencer repeats each packet over them); drop {} from OutTime or \
             load the TRF with {}",
            text(output, Slot::Time),
            missing.join("`, `"),
            text(input, Slot::Time),
            text(input, Slot::Packet),
            m(e),
            if missing.len() == 1 { "it" } else { "them" },
            if missing.len() == 1 { "it" } else { "them" },
        ),
    ));
    true
}

/// The Stream Adapter keeps the collected Time order: OutTime without its tiling axes is the
/// collected Time less the `c` flits collected into the packet.
pub(super) fn time_order(a: &Align<'_>, c: u64, out: &mut Vec<Diagnostic>) {
    let (t, ot) = (a.time, a.out_time);
    let kept: Vec<Dim> = ot
        .dims
        .iter()
        .filter(|d| !a.is_tiling(d))
        .cloned()
        .collect();
    let Ok(kept) = Layout::from_dims(kept) else {
        return;
    };
    if c > 1 && !t.size.is_multiple_of(c) {
        return;
    }
    let expected = if c == 1 { t.clone() } else { t.stride(c) };
    if same_data(&kept, &expected) {
        return;
    }
    out.push(at_arg(
        &CON_008,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "the Stream Adapter keeps the collected Time order: with collect_flits = {c}, OutTime \
             (without tiling axes) must be {} (from Time {}), not {}; only the TRF Sequencer can \
             reorder Time, so reorder the stream upstream (fetch/collect)",
            m(&expected),
            text(a.input, Slot::Time),
            text(a.output, Slot::Time)
        ),
    ));
}

/// The TRF Sequencer fills the packet by repeating one contiguous read of the Element: the
/// packet's factor `stray`, held by the TRF, lies outside it.
pub(super) fn trf_read_covers_packet(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    stray: &str,
    out: &mut Vec<Diagnostic>,
) {
    let mac = cx.target.mac_width_bytes;
    let (op_span, op_text) = a.out_packet_at();
    let e_text = text(&side.var.ty, Slot::Element);
    out.push(
        at_arg(
            &CON_008,
            a.step,
            op_span,
            format!(
                "the TRF Sequencer fills the {mac}-byte packet by repeating one contiguous read \
                 of the TRF Element {e_text}; OutPacket {op_text} also needs `{stray}` from \
                 the TRF, which that read does not cover: make the packet's TRF factors the \
                 Element's innermost factors"
            ),
        )
        .with_related(side.var.span, "the TRF tensor is declared here"),
    );
}

/// The TRF Sequencer cannot read the Element as OutTime (`error`, from its derivation).
pub(super) fn trf_time_loop(
    a: &Align<'_>,
    side: &TrfSide<'_>,
    error: &DeriveError,
    out: &mut Vec<Diagnostic>,
) {
    let (output, var) = (a.output, side.var);
    let message = match error {
        DeriveError::Insufficient {
            axis, needed, have, ..
        } => format!(
            "the TRF Sequencer cannot produce OutTime {}: it needs `{needed}` of {axis} from \
             the TRF Element {}, which holds `{have}`",
            text(output, Slot::Time),
            text(&var.ty, Slot::Element)
        ),
        DeriveError::Incompatible {
            axis,
            buf_split,
            stream_split,
        } => format!(
            "the TRF Sequencer cannot produce OutTime {} from the TRF Element {}: {axis} is \
             split at {buf_split} in the TRF and at {stream_split} in OutTime",
            text(output, Slot::Time),
            text(&var.ty, Slot::Element)
        ),
        DeriveError::Unsupported(_) => return,
    };
    out.push(
        at_arg(&CON_008, a.step, at(a.step, 0, Slot::Time), message)
            .with_related(var.span, "the TRF tensor is declared here"),
    );
}

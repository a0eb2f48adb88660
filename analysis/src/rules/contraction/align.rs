//! What the rules of one `.align()` read, derived once: [`Align`], and the TRF side of it,
//! [`TrfSide`].

use super::layouts::{at, collected_flits, layout, text};
use crate::diagnostic::Span;
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Dtype, Slot, Step, TensorTy, TensorVar};
use crate::rules::context::FnContext;
use std::collections::BTreeSet;
use std::sync::Arc;

/// What the rules of one `.align()` read: the collected stream it takes (Time and Packet), the
/// computation mapping it produces (OutTime and OutPacket), the TRF tensor it pairs them with,
/// and how many flits the Stream Adapter collects into OutPacket.
pub(super) struct Align<'a> {
    pub step: &'a Step,
    pub input: &'a TensorTy,
    pub output: &'a TensorTy,
    /// The stream's element type.
    pub d: Dtype,
    /// The TRF tensor the argument names, when it names one.
    pub trf: Option<&'a TensorVar>,
    pub time: &'a Layout,
    pub packet: &'a Layout,
    pub out_time: &'a Layout,
    pub out_packet: &'a Layout,
    /// OutPacket's size in bytes.
    pub out_packet_bytes: u64,
    /// The flits the Stream Adapter's Flit Buffer holds.
    pub max_flits: u64,
    /// How many flits the Stream Adapter collects to build OutPacket from the stream, when
    /// OutPacket is such a collection (of up to `max_flits + 5`, to name an oversized one).
    pub flits: Option<u64>,
    /// The axes of the collected stream (Time and Packet): an OutTime factor of another axis
    /// is a tiling axis.
    pub stream_axes: BTreeSet<Arc<str>>,
}

impl<'a> Align<'a> {
    pub(super) fn of(
        cx: &FnContext<'_>,
        step: &'a Step,
        d: Dtype,
        trf: Option<&'a TensorVar>,
    ) -> Option<Align<'a>> {
        let (input, output) = (step.input.as_ref()?, step.output.as_ref()?);
        let (time, packet) = (layout(input, Slot::Time)?, layout(input, Slot::Packet)?);
        let (out_time, out_packet) = (layout(output, Slot::Time)?, layout(output, Slot::Packet)?);
        let out_packet_bytes = d.size_bytes(out_packet.size)?;
        let flit = cx.target.flit_bytes;
        let max_flits = (cx.target.flit_buffer_bytes / flit.max(1)).max(1);
        let flits = collected_flits(time, packet, out_packet, max_flits.saturating_add(5));
        let mut stream_axes = time.axis_names();
        stream_axes.extend(packet.axis_names());
        Some(Align {
            step,
            input,
            output,
            d,
            trf,
            time,
            packet,
            out_time,
            out_packet,
            out_packet_bytes,
            max_flits,
            flits,
            stream_axes,
        })
    }

    /// Where OutPacket is written, and its text.
    pub fn out_packet_at(&self) -> (Option<Span>, String) {
        (
            at(self.step, 1, Slot::Packet),
            text(self.output, Slot::Packet),
        )
    }

    /// Whether `d`, a factor of OutTime, is a tiling axis: one the collected stream lacks.
    pub fn is_tiling(&self, d: &Dim) -> bool {
        super::layouts::factor_axis(d).is_some_and(|a| !self.stream_axes.contains(a))
    }
}

/// The TRF side of an `.align()`: the TRF tensor and its Element.
pub(super) struct TrfSide<'a> {
    pub var: &'a TensorVar,
    pub element: &'a Layout,
}

//! What the rules of one `.transpose()` read, derived once: its input side ([`Transpose`]:
//! the stream's type, the engine's geometry for it, Time and Packet) and, once the input packet
//! is found right, its output side ([`Out`]: OutTime, OutPacket and the rows it takes).

use super::layouts::layout;
use crate::diagnostic::Span;
use crate::mapping::Layout;
use crate::model::{Arg, Chain, Dtype, Slot, Step, TensorTy, output_arg};
use crate::rules::context::FnContext;
use crate::target::TransposeGeometry;

use crate::derive::transpose::used;

/// The geometry row for a dtype.
pub(crate) fn geometry<'t>(cx: &'t FnContext<'_>, dtype: Dtype) -> Option<&'t TransposeGeometry> {
    let bits = dtype.bits();
    cx.target.transpose_geometry.iter().find(|g| g.bits == bits)
}

/// The input side of one transpose `chain.steps[index]`: its element type and the engine's
/// geometry for it, the flit, and the input Time and Packet.
pub(super) struct Transpose<'a> {
    pub chain: &'a Chain,
    pub index: usize,
    pub step: &'a Step,
    pub input: &'a TensorTy,
    pub output: &'a TensorTy,
    pub d: Dtype,
    pub g: &'a TransposeGeometry,
    /// The flit's size in bytes.
    pub flit: u64,
    /// The elements of type `d` in one flit.
    pub flit_elems: u64,
    pub time: &'a Layout,
    pub packet: &'a Layout,
}

impl<'a> Transpose<'a> {
    pub(super) fn of(
        cx: &'a FnContext<'_>,
        chain: &'a Chain,
        index: usize,
        step: &'a Step,
    ) -> Option<Transpose<'a>> {
        let flit = cx.target.flit_bytes;
        let (input, output) = (step.input.as_ref()?, step.output.as_ref()?);
        let d = input.dtype?;
        let g = geometry(cx, d)?;
        let flit_elems = d.elems_for(flit)?;
        let (time, packet) = (layout(input, Slot::Time)?, layout(input, Slot::Packet)?);
        Some(Transpose {
            chain,
            index,
            step,
            input,
            output,
            d,
            g,
            flit,
            flit_elems,
            time,
            packet,
        })
    }
}

/// The output side of a transpose: OutTime and OutPacket, where OutPacket is written, and
/// `in_rows`, the data of OutPacket.
pub(super) struct Out<'a> {
    pub time: &'a Layout,
    pub packet: &'a Layout,
    pub packet_arg: Option<Arg>,
    pub packet_span: Option<Span>,
    pub in_rows: u64,
}

impl<'a> Out<'a> {
    pub(super) fn of(t: &Transpose<'a>) -> Option<Out<'a>> {
        let (time, packet) = (
            layout(t.output, Slot::Time)?,
            layout(t.output, Slot::Packet)?,
        );
        let packet_arg = output_arg(t.step, Some(1), Slot::Packet);
        let packet_span = packet_arg.as_ref().map(|a| a.span);
        let in_rows = used(packet)?;
        Some(Out {
            time,
            packet,
            packet_arg,
            packet_span,
            in_rows,
        })
    }
}

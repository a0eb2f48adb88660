//! What COL-002 and COL-004 read of one collect whose packet is one flit: the stream's Time
//! and Packet as it receives them, the output type as written, and the flits collect derives
//! from them.

use crate::derive::collect::{Flits, normalize};
use crate::model::{MapVal, Slot, Step, TensorTy};
use crate::rules::context::FnContext;

/// A collect's input and output as written, and what collect derives from the input.
pub(super) struct Collected<'a> {
    /// The input's Time and Packet.
    pub t: &'a MapVal,
    pub p: &'a MapVal,
    /// The output type, whose Time2 and Packet2 the derivation checks.
    pub outp: &'a TensorTy,
    /// The flits collect derives from the input.
    pub f: Flits,
}

impl<'a> Collected<'a> {
    /// The collect `step`, when its input and output types, element type and input layouts
    /// are known and the flits derive.
    pub(super) fn of(cx: &FnContext<'_>, step: &'a Step) -> Option<Self> {
        let flit = cx.target.flit_bytes;
        let (inp, outp) = (step.input.as_ref()?, step.output.as_ref()?);
        let d = inp.dtype.or(outp.dtype)?;
        let bits = d.bits();
        let (t, p) = (inp.get(Slot::Time)?, inp.get(Slot::Packet)?);
        let (tl, pl) = (t.layout.as_deref()?, p.layout.as_deref()?);
        let f = normalize(tl, pl, bits, flit)?;
        Some(Self { t, p, outp, f })
    }
}

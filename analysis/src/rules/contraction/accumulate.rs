//! What the rules of one `.accumulate()` read, derived once ([`Accumulate`]): its mode, the
//! layouts it takes and gives, and which Time factors it reduces.

use super::layouts::{factor_axis, layout, overlaps};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Slot, Step, TensorTy};

/// How the accumulator outputs its rows (`AccumulationKind`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mode {
    Interleaved,
    Sequential,
}

/// What the rules of one `.accumulate()` read: the Row, Time and Packet of the contraction it
/// takes, the OutTime and OutPacket it gives (all regular), and the Time factors it reduces
/// (those neither OutTime nor OutPacket keeps).
#[derive(Clone)]
pub(super) struct Accumulate<'a> {
    pub step: &'a Step,
    pub input: &'a TensorTy,
    pub output: &'a TensorTy,
    pub mode: Mode,
    pub row: &'a Layout,
    pub time: &'a Layout,
    pub packet: &'a Layout,
    pub out_time: &'a Layout,
    pub out_packet: &'a Layout,
    /// For each factor of Time, whether it is reduced.
    pub reduced: Vec<bool>,
    /// Time without its reduced factors.
    pub time_kept: Layout,
}

impl<'a> Accumulate<'a> {
    /// This accumulation with the Time `contract_time` (`reduce`, furiosa-opt-std's step
    /// before `contract_lane`) reduced: its input Time is the one before the reduce, the
    /// reduced factors those its output leaves out (the vendor's `ContractLane` verifier
    /// counts the accumulator's inner positions the same way). `None` when that step's
    /// types are not known.
    pub(super) fn reduced_earlier(&self, reduce: &'a Step) -> Option<Accumulate<'a>> {
        let before = layout(reduce.input.as_ref()?, Slot::Time)?;
        let after = layout(reduce.output.as_ref()?, Slot::Time)?;
        if !before.dims.iter().all(|d| matches!(d, Dim::Factor(_))) {
            return None;
        }
        let reduced: Vec<bool> = before
            .dims
            .iter()
            .map(|d| factor_axis(d).is_some() && !after.dims.iter().any(|o| overlaps(d, o)))
            .collect();
        let kept = before.dims.iter().zip(&reduced).filter(|(_, red)| !**red);
        let time_kept = Layout::from_dims(kept.map(|(d, _)| d.clone()).collect()).ok()?;
        Some(Accumulate {
            time: before,
            out_time: after,
            reduced,
            time_kept,
            ..self.clone()
        })
    }

    pub(super) fn of(step: &'a Step) -> Option<Accumulate<'a>> {
        let (input, output) = (step.input.as_ref()?, step.output.as_ref()?);
        let kind = step
            .args
            .first()
            .map_or_else(String::new, |a| a.value_text().into_owned());
        let mode = if kind.contains("Interleaved") {
            Mode::Interleaved
        } else if kind.contains("Sequential") {
            Mode::Sequential
        } else {
            return None;
        };
        let (row, time) = (layout(input, Slot::Row)?, layout(input, Slot::Time)?);
        let packet = layout(input, Slot::Packet)?;
        let (out_time, out_packet) = (layout(output, Slot::Time)?, layout(output, Slot::Packet)?);
        let all_regular = [row, time, packet, out_time, out_packet]
            .iter()
            .all(|l| l.dims.iter().all(|d| matches!(d, Dim::Factor(_))));
        if !all_regular {
            return None;
        }
        let kept_in_out = |d: &Dim| {
            let mut kept = out_time.dims.iter().chain(out_packet.dims.iter());
            kept.any(|o| overlaps(d, o))
        };
        let reduced: Vec<bool> = time
            .dims
            .iter()
            .map(|d| factor_axis(d).is_some() && !kept_in_out(d))
            .collect();
        let kept = time.dims.iter().zip(&reduced).filter(|(_, red)| !**red);
        let time_kept = Layout::from_dims(kept.map(|(d, _)| d.clone()).collect()).ok()?;
        Some(Accumulate {
            step,
            input,
            output,
            mode,
            row,
            time,
            packet,
            out_time,
            out_packet,
            reduced,
            time_kept,
        })
    }
}

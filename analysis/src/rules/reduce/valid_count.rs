//! What the rules of one `vector_intra_slice_branch(BranchMode::ValidCount)` read, derived
//! once: [`ValidCount`], the stream it branches and the padded axes whose validity the VCG
//! must track for it.

use super::layouts::layout_of;
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Arg, Slot, Step, ops::split_op};

/// A `BranchMode::ValidCount` branch: its mode argument, the Time and Packet of the stream it
/// branches, and the padded axes of that stream (in its Slice, Time and Packet).
pub(super) struct ValidCount<'a> {
    pub step: &'a Step,
    /// The `BranchMode::ValidCount` argument.
    pub arg: &'a Arg,
    pub time: &'a Layout,
    pub packet: &'a Layout,
    /// The named axes with padding, with whether one of their digits is in Packet.
    pub axes: Vec<(String, bool)>,
    /// Whether a padded axis is in Packet: the VCG's packet dim tracks it.
    pub packet_dim: bool,
}

impl<'a> ValidCount<'a> {
    /// The branch `step` when its mode is `ValidCount` and its stream's layouts are known and
    /// regular.
    pub(super) fn of(step: &'a Step) -> Option<ValidCount<'a>> {
        let arg = step.args.first()?;
        if split_op(&arg.value_text()).map(|(_, v)| v) != Some("ValidCount") {
            return None;
        }
        let input = step.input.as_ref();
        let (Some(slice), Some(time), Some(packet)) = (
            layout_of(input, Slot::Slice),
            layout_of(input, Slot::Time),
            layout_of(input, Slot::Packet),
        ) else {
            return None;
        };
        if !(slice.is_regular() && time.is_regular() && packet.is_regular()) {
            return None;
        }
        let axes = padded_axes(&[slice, time, packet]);
        let packet_dim = axes.iter().any(|(_, p)| *p);
        Some(ValidCount {
            step,
            arg,
            time,
            packet,
            axes,
            packet_dim,
        })
    }

    /// The names of the padded axes.
    pub fn names(&self) -> Vec<&str> {
        self.axes.iter().map(|(n, _)| n.as_str()).collect()
    }
}

/// Named axes with padding in any of `layouts` (a padded digit, or digits reaching past the
/// axis size), with whether one of their digits is in the last layout (the Packet).
fn padded_axes(layouts: &[&Layout]) -> Vec<(String, bool)> {
    let mut acc: Vec<(String, u64, u128, bool, bool)> = Vec::new();
    let last = layouts.len().saturating_sub(1);
    for (i, l) in layouts.iter().enumerate() {
        for d in &l.dims {
            let Dim::Factor(f) = d else { continue };
            let Some(a) = &f.axis else { continue };
            let reach = u128::from(f.valid.saturating_sub(1)) * u128::from(f.coef);
            let pad = f.valid < f.extent;
            match acc.iter_mut().find(|e| *e.0 == *a.name) {
                Some(e) => {
                    e.2 += reach;
                    e.3 |= pad;
                    e.4 |= i == last;
                }
                None => acc.push((a.name.to_string(), a.size, reach, pad, i == last)),
            }
        }
    }
    acc.into_iter()
        .filter(|(_, n, reach, pad, _)| *pad || *reach >= u128::from(*n))
        .map(|(name, _, _, _, in_packet)| (name, in_packet))
        .collect()
}

//! What the rules of one `.switch()` read, derived once ([`Switch`]): its config, the tensors
//! it takes and gives and their Slice and Time; with the ring's cycles ([`ring_cycles`]) and the
//! edits that rewrite its output.

use super::config::{Config, parse_config};
use super::layouts::{axes_of, layout};
use crate::diagnostic::{Edit, Span};
use crate::mapping::Layout;
use crate::model::{Chain, Slot, Step, TensorTy, output_arg, slot_bytes};
use std::collections::BTreeSet;

/// The Switch Engine's cycles (L3207, L3524-L3526): `ring_size × input_time ×
/// cycles_per_packet`, a packet taking one cycle per started flit.
pub(crate) fn ring_cycles(ring: u64, input_time: u64, packet_bytes: u64, flit: u64) -> Option<u64> {
    let flits = packet_bytes.div_ceil(flit.max(1));
    ring.checked_mul(input_time)?.checked_mul(flits)
}

/// One `.switch()` call with everything the checks read.
pub(super) struct Switch<'a> {
    pub chain: &'a Chain,
    pub index: usize,
    pub step: &'a Step,
    pub config: Config,
    pub input: &'a TensorTy,
    pub output: &'a TensorTy,
    pub in_slice: &'a Layout,
    pub in_time: &'a Layout,
    pub out_slice: &'a Layout,
    pub out_time: &'a Layout,
}

impl<'a> Switch<'a> {
    /// The switch `chain.steps[index]`, when its config is literal and its input and output
    /// Slice and Time are known.
    pub(super) fn of(chain: &'a Chain, index: usize, step: &'a Step) -> Option<Switch<'a>> {
        let config = parse_config(step.args.first()?)?;
        let input = step.input.as_ref()?;
        let output = step.output.as_ref()?;
        Some(Switch {
            chain,
            index,
            step,
            config,
            input,
            output,
            in_slice: layout(input, Slot::Slice)?,
            in_time: layout(input, Slot::Time)?,
            out_slice: layout(output, Slot::Slice)?,
            out_time: layout(output, Slot::Time)?,
        })
    }
}

impl Switch<'_> {
    /// The slices of the cluster the switch's ring runs through: its input Slice, once SWI-001
    /// has found it the whole cluster of the function's grid (every check after it).
    pub fn cluster_slices(&self) -> u64 {
        self.in_slice.size
    }

    pub fn slice_span(&self) -> Span {
        output_arg(self.step, Some(0), Slot::Slice).map_or(self.step.span, |a| a.span)
    }

    pub fn time_span(&self) -> Span {
        output_arg(self.step, Some(1), Slot::Time).map_or(self.step.span, |a| a.span)
    }

    /// `ring_size × input_time × packet_flits`, when the packet size is known.
    pub fn cycles(&self, ring: u64, flit: u64) -> Option<(u64, u64)> {
        let (_, _, bytes) = slot_bytes(self.input, Slot::Packet)?;
        Some((ring_cycles(ring, self.in_time.size, bytes, flit)?, bytes))
    }

    /// The axes of the input Slice and Time; `None` when either has irregular digits.
    pub fn known_axes(&self) -> Option<BTreeSet<String>> {
        axes_of(self.in_slice)
            .zip(axes_of(self.in_time))
            .map(|(mut a, b)| {
                a.extend(b);
                a
            })
    }

    /// The edits that rewrite the output `slot` of a switch: where the turbofish writes it, and
    /// the declared type of the chain's result when the switch ends the chain and says the same.
    pub fn out_edits(&self, i: usize, slot: Slot, new_text: &str) -> Vec<Edit> {
        let mut edits = Vec::new();
        let Some(a) = output_arg(self.step, Some(i), slot) else {
            return edits;
        };
        edits.push(Edit {
            span: a.span,
            new_text: new_text.to_string(),
        });
        if self.index + 1 == self.chain.steps.len()
            && let Some(m) = self.chain.declared.as_ref().and_then(|t| t.get(slot))
            && let Some(span) = m.span
            && span != a.span
            && m.layout.is_some()
            && m.layout.as_deref() == layout(self.output, slot)
        {
            edits.push(Edit {
                span,
                new_text: new_text.to_string(),
            });
        }
        edits
    }
}

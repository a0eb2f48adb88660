//! SEQ-010: the TRF Sequencer reads the Element as OutTime with at most 8 nested-loop entries,
//! each of bounded size and a stride a signed 32-bit register holds.

use super::align::{Align, TrfSide};
use super::layouts::{at, entries_text, text};
use crate::derive::{Config, bytes};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const SEQ_010: Rule = Rule {
    code: "SEQ-010",
    name: "trf-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "TRF sequencer: 1-8 entries, size 1-65,536, signed 32-bit strides",
    docs: "The TRF read sequencer iterates OutTime with the common sequencer limits: at most 8 \
           (size, stride) entries after merging, each size at most 65,536, each byte stride a \
           signed 32-bit value; stride 0 broadcasts weights over time. Derived from the TRF \
           Element and the align OutTime.",
    bad: "axes![A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, I = 2]; \
          trf Element m![I, H, G, F, E, D, C, B, A, K]; align::<m![A, B, C, D, E, F, G, H, I], ..>",
    good: "trf Element m![A, B, C, D, E, F, G, H, I, K]; align::<m![A, B, C, D, E, F, G, H, I], ..>",
    manual: "L4171-L4177",
    generations: Generations::Both,
};

/// SEQ-010 on the time loop `cfg` the TRF Sequencer runs for an `.align()`.
pub(super) fn check(
    cx: &FnContext<'_>,
    a: &Align<'_>,
    side: &TrfSide<'_>,
    cfg: &Config,
    out: &mut Vec<Diagnostic>,
) {
    let limit = cx.target.sequencer_entries;
    let max_size = cx.target.sequencer_entry_size;
    let bits = a.d.bits();
    let stride_bytes = |s: u64| bytes(s, bits);
    let problem = if cfg.entries.len() > limit {
        Some(format!(
            "{} entries ({}), more than the {limit} it has",
            cfg.entries.len(),
            entries_text(&cfg.entries, &stride_bytes)
        ))
    } else if let Some(en) = cfg.entries.iter().find(|en| en.size > max_size) {
        Some(format!("an entry of size {} (at most {max_size})", en.size))
    } else {
        cfg.entries
            .iter()
            .find(|en| stride_bytes(en.stride) > i32::MAX as u64)
            .map(|en| {
                format!(
                    "a stride of {} bytes, beyond a signed 32-bit stride",
                    stride_bytes(en.stride)
                )
            })
    };
    let Some(problem) = problem else { return };
    out.push(at_arg(
        &SEQ_010,
        a.step,
        at(a.step, 0, Slot::Time),
        format!(
            "reading the TRF Element {} as OutTime {} takes the TRF Sequencer {problem}",
            text(&side.var.ty, Slot::Element),
            text(a.output, Slot::Time)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, lay};
    use crate::derive::{Direction, bytes, configure};

    #[test]
    fn trf_sequencer_entries_golden() {
        let bytes_of = |cfg: &crate::derive::Config| -> Vec<(u64, u64)> {
            cfg.entries
                .iter()
                .map(|e| (e.size, bytes(e.stride, 16)))
                .collect()
        };
        let axes = "M = 32, N = 8, K = 16, L = 2, O = 2";
        // L3862-L3864: Entry 0 {2, 1024} (O, inner), Entry 1 {32, 32} (M, outer).
        let cfg = configure(
            &lay(axes, "O, M, K"),
            &lay(axes, "M, O").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(32, 32), (2, 1024)]));
        // L4284-L4286: Entry 0 {32, 0} (M, broadcast), Entry 1 {2, 32} (O).
        let cfg = configure(
            &lay(axes, "O, K"),
            &lay(axes, "O, M").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(2, 32), (32, 0)]));
        // L4238-L4239: Entry 0 {32, 0} (M, broadcast).
        let axes = "M = 32, N = 8, K = 32";
        let cfg = configure(
            &lay(axes, "K"),
            &lay(axes, "M").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(32, 0)]));
    }

    #[test]
    fn trf_sequencer_nine_entries() {
        // L4171-L4174: 1-8 entries. Nine size-2 axes in the reverse of the TRF order do not merge.
        let src = "use furiosa_visa_std::prelude::*;\naxes![A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, I = 2, N = 8, K = 32];\nfn f<'l, const T: Tu>(input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![A, B, C, D, E, F, G, H, I, K / 16], m![K % 16]>, trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![ELEM, K]>) -> AlignedPair<'l, T, bf16, m![1], m![1], m![1], m![N], m![A, B, C, D, E, F, G, H, I], m![K]> {\n    input.align::<m![A, B, C, D, E, F, G, H, I], m![K], _, _>(trf)\n}\n";
        let reversed = src.replace("ELEM", "I, H, G, F, E, D, C, B, A");
        let same = src.replace("ELEM", "A, B, C, D, E, F, G, H, I");
        assert_eq!(codes(&reversed), vec!["SEQ-010"]);
        assert!(codes(&same).is_empty());
    }
}

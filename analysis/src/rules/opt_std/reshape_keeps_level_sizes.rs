//! OPT-006: `reshape` relabels the cells a tensor holds and moves no data, so each level
//! (Chip, Cluster, Slice and Element in DM, Chip and Element in HBM) keeps its size.

use super::super::context::at_arg;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Kind, Slot, Step, TensorTy, input_arg, output_arg};
use crate::rule::{Generations, Rule, Status};

pub const OPT_006: Rule = Rule {
    code: "OPT-006",
    name: "reshape-keeps-level-sizes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`reshape` keeps the size of each level: Chip, Cluster, Slice and Element in DM, Chip and Element in HBM (furiosa-opt-std)",
    docs: "`unsafe { x.reshape::<..>() }` relabels the cells a tensor already holds: it moves no \
           data, so furiosa-opt-std 0.6 const-asserts that each level keeps its size. On a DM \
           tensor or view (`DmTensor`, `DmTensorView`, `DmTensorViewMut`) the Chip, Cluster, \
           Slice and Element mappings each keep their `SIZE`; on an HBM tensor or view the Chip \
           and Element mappings do (`furiosa-opt-std/src/constraints.rs:128-173`, called from \
           every `reshape` of `src/tensor/memory.rs`, e.g. `:438-448` and `:952-971` at ebb846a; \
           CHANGES.md:55 records that 0.6 made the DM Element and the HBM size part of it). \
           Padding counts toward `SIZE` (`A # 16` has 16 positions). To change an extent write \
           `pad` / `unpad` or `tile`. The other condition of a reshape, that both mappings lay \
           the cells out in the same order (a regrouping, not a permutation), is the caller's \
           promise behind `unsafe` and is not checked here. The manual has no `reshape`; the \
           rule applies to furiosa-opt-std crates.",
    bad: "axes![A = 8, B = 64, C = 1024];\nlet y: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![C]> = unsafe { x.reshape() }; // x: .., m![A, B] (512)",
    good: "axes![A = 8, B = 64, C = 512];\nlet y: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![C]> = unsafe { x.reshape() }; // x: .., m![A, B] (512)",
    manual: "",
    generations: Generations::OptStdOnly(
        "the manual's library has no `reshape`; furiosa-opt-std 0.6 const-asserts the level sizes \
         in every `reshape` (`furiosa-opt-std/src/constraints.rs:128-173`, \
         `src/tensor/memory.rs:438-448`)",
    ),
};

/// OPT-006: the level sizes a `reshape` keeps, compared between its receiver and its result.
pub(super) fn check(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    // The levels in the order of the method's turbofish.
    let levels: &[Slot] = match input.kind {
        Kind::Dm | Kind::DmView | Kind::DmViewMut => {
            &[Slot::Chip, Slot::Cluster, Slot::Slice, Slot::Element]
        }
        Kind::Hbm | Kind::HbmView => &[Slot::Chip, Slot::Element],
        _ => return,
    };
    let size = |ty: &TensorTy, slot: Slot| ty.get(slot)?.layout.as_deref().map(|l| l.size);
    for (i, slot) in levels.iter().enumerate() {
        let (Some(was), Some(now)) = (size(input, *slot), size(output, *slot)) else {
            continue;
        };
        if was == now {
            continue;
        }
        let written = output_arg(step, Some(i), *slot);
        let text = written.as_ref().map_or_else(
            || format!("the {slot:?} mapping"),
            |a| format!("`{}`", a.text.trim()),
        );
        let mut d = at_arg(
            &OPT_006,
            step,
            written.map(|a| a.span),
            format!(
                "`reshape` relabels the cells the tensor holds, so its {slot:?} keeps {was} \
                 positions, but {text} has {now}: change an extent with `pad`, `unpad` or \
                 `tile`, not `reshape`"
            ),
        );
        if let Some(from) = input_arg(step, *slot) {
            d = d.with_related(from.span, format!("the tensor's {slot:?}: {was} positions"));
        }
        out.push(d);
    }
}

//! ALN-003: a DMA that writes DM moves packets that are multiples of 8 bytes, so the run that
//! is contiguous in both layouts must have such a divisor; the fix pads the DM tensor's
//! innermost axis.

use super::padding::{dm_element, dtype, pad_fix, row_bytes};
use crate::derive::dma::{DmaOp, DmaPair};
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Generation;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const ALN_003: Rule = Rule {
    code: "ALN-003",
    name: "dma-packet-alignment",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A DMA packet written to DM (or moved HBM to DM) is a multiple of 8 bytes",
    docs: "The DMA packet (`stride0`) divides the innermost run of bytes that is contiguous in \
           both the source and the destination layouts; the manual requires it to be a multiple \
           of 8 bytes for DM writes and HBM-to-DM moves (L2425-L2427, L2834), or the transfer \
           fails with a hardware exception. visa-lint derives the DMA read/write sequencer pair \
           of `to_dm` (crate::derive::dma) and reports a common contiguous run that is not a \
           multiple of 8 bytes. Severity: a warning, not an error. The `furiosa_visa_std` \
           library these kernels are written against does not check DMA packets at all (its \
           transfers only check that the destination holds the source, see MAP-010), and the \
           vendor's own tested examples move 1- and 4-byte runs (a transposing `to_dm`), so \
           such a kernel runs on the library's simulator; later vendor libraries do assert an \
           8-byte DMA tail for writes into DM, and the manual says the hardware faults. Treat \
           the warning as a portability risk to real hardware and newer libraries. Pad the \
           innermost Element axis of the DM tensor (`m![A, C]` → `m![A, C # 16]` for i8, \
           C = 13): the padded positions are written with the packet; when the DM layout \
           reorders the source's innermost axis, transpose in the Tensor Unit instead.",
    bad: "axes![A = 3, C = 13]; let d = h.to_dm::<m![1], m![1], m![A, C]>(&mut ctx.tdma, 0); // 39-byte run",
    good: "axes![A = 3, C = 13]; let d = h.to_dm::<m![1], m![1], m![A, C # 16]>(&mut ctx.tdma, 0);",
    manual: "L2425-L2427, L2593, L2834",
    generations: Generations::Differs(
        "an error under furiosa-opt-std 0.6, whose DMA into DM asserts an 8-byte destination tail \
         (`assert_dma_layout`, `furiosa-opt-std/src/tensor/memory.rs:25-112`); a warning under \
         `furiosa_visa_std`, which checks no DMA packet (the hardware rule is L2425-L2427)",
    ),
};

/// ALN-003 is an error under furiosa-opt-std, whose DMA asserts an 8-byte tail for every
/// write into DM (`tensor/memory.rs:25-112` at ebb846a); a warning under the manual's
/// library, which never checks it (see the rule's docs).
fn dma_tail_severity(cx: &FnContext<'_>, diag: Diagnostic) -> Diagnostic {
    match cx.model.library {
        Generation::OptStd => diag.with_severity(Severity::Error),
        Generation::VisaStd => diag,
    }
}

/// ALN-003 on the DMA pair `p`, which has no packet (`stride0`): no 8-byte packet divides the
/// run.
pub(super) fn check(cx: &FnContext<'_>, op: &DmaOp<'_>, p: &DmaPair, out: &mut Vec<Diagnostic>) {
    let run = p.run_bytes;
    if op.align <= 1 {
        return;
    }
    let row = row_bytes(op).unwrap_or(run);
    if run < row {
        // The layouts disagree on the innermost axis: padding cannot help.
        let diag = at_arg(
            &ALN_003,
            op.step,
            dm_element(op).map(|w| w.0),
            format!(
                "the DMA moves {run}-byte runs that are contiguous in both layouts (read \
                 {}, write {}): the DM layout reorders the source's innermost axis, and a \
                 DMA writing DM needs packets that are multiples of {} bytes; padding cannot \
                 lengthen a run that the reordering cuts, so keep the same innermost axis on \
                 both sides (transpose in the Tensor Unit instead)",
                p.read, p.write, op.align
            ),
        );
        out.push(dma_tail_severity(cx, diag));
        return;
    }
    let up = row.div_ceil(op.align).saturating_mul(op.align);
    let diag = at_arg(
        &ALN_003,
        op.step,
        dm_element(op).map(|w| w.0),
        format!(
            "the DMA moves {run}-byte runs that are contiguous in both layouts (read \
             {}, write {}); a DMA writing DM needs packets that are multiples of {} bytes, \
             and none divides {run}: pad the DM tensor's innermost axis to {up} bytes",
            p.read, p.write, op.align
        ),
    );
    out.push(dma_tail_severity(cx, pad_fix(op, dtype(op.step), up, diag)));
}

#[cfg(test)]
mod tests {
    #[test]
    fn tail_pad_fix_pads_an_innermost_term_with_operators() {
        // L1183: the DM Element m![B % 2] (bf16) keeps 4-byte rows; pad it to 8 bytes.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/manual/1183_hbm_to_dm_fn.rs"),
            "ALN-003",
        );
        assert!(fixed.contains("m![B / 2], m![B % 2 # 4]>"), "{fixed}");
    }
}

//! ALN-003: a DMA that writes DM moves packets that are multiples of 8 bytes, so the run that
//! is contiguous in both layouts must have such a divisor; the fix pads the DM tensor's
//! innermost axis.

use super::padding::{dm_element, dm_written, dtype, pad_fix, row_bytes};
use crate::derive::dma::{DmaOp, DmaPair, Media};
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::library::Generation;
use crate::mapping::edit::move_innermost;
use crate::mapping::layout::{Dim, Factor};
use crate::model::Slot;
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
           C = 13): the padded positions are written with the packet. When the DM layout \
           reorders the source's innermost axis, the fix for review puts that axis innermost \
           in the DM Element (`m![K, R % 8]` → `m![R % 8, K]` for a source `m![R, K]`), or gives \
           the Element the low digits a Slice took (`m![A % 256], m![A / 256]` → `m![A / 8], \
           m![A % 8]`); where the kernel needs the transposed layout, transpose in the Tensor \
           Unit instead.",
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
        out.push(dma_tail_severity(cx, reorder_fix(op, diag)));
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
    out.push(dma_tail_severity(
        cx,
        pad_fix(cx.scope, op, dtype(op.step), up, diag),
    ));
}

/// The fix for a DM layout that reorders the other side's innermost axis: the DM Element's
/// term that holds that axis moves innermost (`m![K, R % 8]` → `m![R % 8, K]` for a source
/// `m![R, K]`), so the run both layouts share is that axis's row again. It changes the DM
/// tensor's layout, so it is offered for review; a transpose the kernel needs then belongs to
/// the Tensor Unit.
fn reorder_fix(op: &DmaOp<'_>, diag: Diagnostic) -> Diagnostic {
    let other = match op.dst_media {
        Media::Dm => &op.src,
        Media::Hbm => &op.dst,
    };
    let Some(Dim::Factor(Factor {
        axis: Some(axis), ..
    })) = other.dims.last()
    else {
        return diag;
    };
    if let Some((span, text)) = dm_element(op)
        && let Some(new_text) = move_innermost(&text, &axis.name)
    {
        return diag.with_fix(
            format!(
                "put `{}` innermost in the DM Element: `{new_text}`",
                axis.name
            ),
            false,
            vec![Edit { span, new_text }],
        );
    }
    match slice_exchange(op, &axis.name) {
        Some((title, edits)) => diag.with_fix(title, false, edits),
        None => diag,
    }
}

/// The fix for a DM Slice that holds the low digits of the source's innermost axis: the
/// Element takes them and the Slice the high ones, the same sizes (`m![A % 256], m![A / 256]`
/// → `m![A / 8], m![A % 8]` for a source `m![A]`, A = 2048), so each slice's row is a run of
/// the source again.
fn slice_exchange(op: &DmaOp<'_>, axis: &str) -> Option<(String, Vec<Edit>)> {
    if op.dst_media != Media::Dm {
        return None;
    }
    let ty = op.step.output.as_ref()?;
    let slice = ty.get(Slot::Slice)?.layout.as_deref()?;
    let element = ty.get(Slot::Element)?.layout.as_deref()?;
    match slice.dims.last() {
        Some(Dim::Factor(Factor { axis: Some(a), .. })) if &*a.name == axis => {}
        _ => return None,
    }
    let both = element.pair(slice).ok()?;
    let rows = element.size;
    let new_slice = format!("m![{}]", both.stride(rows).to_expr());
    let new_element = format!("m![{}]", both.window(rows).to_expr());
    let (slice_at, _) = dm_written(op, Slot::Slice)?;
    let (element_at, _) = dm_written(op, Slot::Element)?;
    let title = format!(
        "give the low digits of `{axis}` to the DM Element: `{new_slice}`, `{new_element}`"
    );
    let edits = vec![
        Edit {
            span: slice_at,
            new_text: new_slice,
        },
        Edit {
            span: element_at,
            new_text: new_element,
        },
    ];
    Some((title, edits))
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::assert_fix_clears;

    /// The fixture's `to_dm` puts `R % 8` innermost where the source has `K`: the fix puts `K`
    /// back innermost, and the 8-byte rows of `K` are the DMA's packets again.
    #[test]
    fn a_reordering_dm_element_gets_the_source_innermost_axis_back() {
        let text = include_str!("../../../../fixtures/rules/ALN-003-transpose.rs");
        let fixed = assert_fix_clears(text, "ALN-003");
        assert!(
            fixed.contains("m![R / 8 % 2 # 256], m![R % 8, K]>"),
            "{fixed}"
        );
    }

    /// A Slice that took the low digits of the source's only axis gives them to the Element.
    #[test]
    fn a_slice_holding_the_low_digits_gives_them_to_the_element() {
        let text = "axes![A = 2048];\n#[device(chip = 1)]\n\
            fn k(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![A]>) {\n\
            let _d = x.to_dm::<m![1 # 2], m![A % 256], m![A / 256]>(&mut ctx.tdma, 0);\n}\n";
        let fixed = assert_fix_clears(text, "ALN-003");
        assert!(
            fixed.contains("to_dm::<m![1 # 2], m![A / 8], m![A % 8]>"),
            "{fixed}"
        );
    }

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

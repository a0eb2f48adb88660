//! TRN-002: the packets the Transpose Engine takes and gives. Its input packet is one flit;
//! the Align stage pads each output row to one flit (`output_alignment` elements); and Trim
//! keeps at most `in_cols` rows of the transposed matrix.

use super::call::{Out, Transpose};
use super::layouts::text;
use crate::derive::transpose::Split;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Method, Slot, Step, output_arg, pad_edit, slot_bytes};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, rewrite_output};

pub const TRN_002: Rule = Rule {
    code: "TRN-002",
    name: "transpose-packets",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Input and output packets are 32 bytes; out_rows <= in_cols; OutPacket = `rows # output_alignment`",
    docs: "Both packets of the Transpose Engine are one 32-byte flit: the Align stage pads every \
           output row of in_rows elements to output_alignment = 32 bytes (64 × i4, 32 × i8, 16 × \
           bf16, 8 × f32), and the Trim stage can only drop transposed rows, so OutTime keeps \
           out_rows <= in_cols of them. The fix pads OutPacket: `m![D # 32]` for i8, `m![D # 16]` \
           for bf16. An input packet that does not come from collect or cast (which report their \
           own) is checked too.",
    bad: "input.transpose::<m![C, E], m![D # 32]>() // bf16: 64 bytes",
    good: "input.transpose::<m![C, E], m![D # 16]>() // bf16: 32 bytes",
    manual: "L6848, L6885-L6886",
    generations: Generations::Both,
};

/// The input packet: whether it is not one flit (then the checks after it stop); reported
/// unless a collect or cast before the transpose reports its own packet.
pub(super) fn check_input(t: &Transpose<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (input, step, d, flit, pin) = (t.input, t.step, t.d, t.flit, t.packet);
    // TRN-002, input: collect and cast report their own packets.
    let producer = t.index.checked_sub(1).map(|p| &t.chain.steps[p].method);
    if pin.size != t.flit_elems {
        if !matches!(producer, Some(Method::Collect | Method::Cast)) {
            let bytes = slot_bytes(input, Slot::Packet).map_or(0, |(_, _, b)| b);
            out.push(Diagnostic::new(
                &TRN_002,
                step.span,
                format!(
                    "the transpose input packet {} is {bytes} bytes ({} × {d}); the Transpose \
                     Engine takes {flit}-byte packets",
                    text(input, Slot::Packet),
                    pin.size
                ),
            ));
        }
        return true;
    }
    false
}

/// The output packet: each row padded to `output_alignment` elements, one flit. The fix pads
/// the row.
pub(super) fn check_output(
    cx: &FnContext<'_>,
    t: &Transpose<'_>,
    o: &Out<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let (output, step, d, flit, pout) = (t.output, t.step, t.d, t.flit, o.packet);
    let packet_arg = &o.packet_arg;
    // TRN-002, output: each row is padded to output_alignment = one flit.
    let align = t.g.output_alignment;
    if pout.size != align {
        let bytes = slot_bytes(output, Slot::Packet).map_or(0, |(_, _, b)| b);
        let mut diag = at_arg(
            &TRN_002,
            step,
            o.packet_span,
            format!(
                "the transpose output packet {} is {bytes} bytes ({} × {d}); the Align stage pads \
                 each row to one {flit}-byte packet, output_alignment = {align} elements",
                text(output, Slot::Packet),
                pout.size
            ),
        );
        if let Some(edit) = packet_arg
            .as_ref()
            .and_then(|a| pad_edit(cx.scope, a, align))
        {
            diag = diag.with_fix(
                format!("pad the row to {align} elements ({flit} bytes)"),
                true,
                vec![edit],
            );
        }
        out.push(diag);
    }
}

/// Trim: whether OutTime keeps more rows than the transposed matrix has columns; reported
/// when so, with [`trim_rows_fix`].
pub(super) fn check_trim(t: &Transpose<'_>, split: &Split, out: &mut Vec<Diagnostic>) -> bool {
    let (output, step) = (t.output, t.step);
    // TRN-002, Trim: out_rows <= in_cols.
    if split.out_rows > split.in_cols {
        let span = output_arg(step, Some(0), Slot::Time).map(|a| a.span);
        let diag = at_arg(
            &TRN_002,
            step,
            span,
            format!(
                "OutTime {} keeps out_rows = {} transposed rows, but the transposed matrix has \
                 in_cols = {}: out_rows <= in_cols",
                text(output, Slot::Time),
                split.out_rows,
                split.in_cols
            ),
        );
        out.push(trim_rows_fix(diag, t.chain, step, split.in_cols));
        return true;
    }
    false
}

/// TRN-002's fix of an OutTime longer than in_cols: its first `in_cols` positions (`m![B # 16]`
/// → `m![B # 8]`), when every position past them is padding; otherwise the message says to
/// move data out of OutTime. Unsafe: later steps see the shorter OutTime.
fn trim_rows_fix(diag: Diagnostic, chain: &Chain, step: &Step, in_cols: u64) -> Diagnostic {
    let Some(time) = step
        .output
        .as_ref()
        .and_then(|t| t.get(Slot::Time))
        .and_then(|m| m.layout.as_deref())
    else {
        return diag;
    };
    if (in_cols..time.size).any(|i| time.map(i).is_some()) {
        let mut diag = diag;
        diag.message.push_str(&format!(
            "; OutTime holds data past row {in_cols}, so no padding fixes it: move its outer \
             factors out of the transposed rows (into the stream's Time before the transpose)"
        ));
        return diag;
    }
    let new = format!("m![{}]", time.window(in_cols).to_expr());
    match rewrite_output(chain, step, Some(0), Slot::Time, &new) {
        Some(edits) => diag.with_fix(format!("keep {in_cols} rows: {new}"), false, edits),
        None => diag,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::transpose::tests::trn;

    /// The per-dtype table, L6877-L6883.
    #[test]
    fn too_many_rows_fix_trims_the_padding() {
        // out_rows 16 > in_cols 8, and OutTime m![B # 16] holds 2 rows of data: m![B # 8], in the
        // turbofish and the return type together.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/TRN-002-trim.rs"),
            "TRN-002",
        );
        assert_eq!(
            fixed.matches("m![B # 8], m![A # 32]>").count(),
            2,
            "{fixed}"
        );
    }

    /// Output alignment (L6848, L6885): OutPacket pads the rows to one 32-byte packet.
    #[test]
    fn output_alignment_per_dtype() {
        for (d, epp, align) in [
            ("i4", 16, 64),
            ("i8", 8, 32),
            ("bf16", 8, 16),
            ("f32", 8, 8),
        ] {
            let axes = format!("C = 4, D = 2, E = {epp}");
            let p = format!("E # {align}");
            assert!(
                trn(&axes, d, "C, D", &p, "C, E", &format!("D # {align}")).is_empty(),
                "{d}"
            );
            let got = trn(&axes, d, "C, D", &p, "C, E", &format!("D # {}", align * 2));
            assert_eq!(got, ["TRN-002"], "{d}");
        }
    }
}

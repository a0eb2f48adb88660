//! TRN-001: the Transpose Engine's geometry for the element type. Unpack keeps the first
//! `elements_per_packet` elements of each packet, the engine transposes at most `max_in_rows`
//! rows, and it takes only the `valid_in_cols` column counts of the type.

use super::call::{Out, Transpose};
use super::layouts::text;
use crate::derive::transpose::{Split, used};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;

pub const TRN_001: Rule = Rule {
    code: "TRN-001",
    name: "transpose-geometry",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "in_rows, in_cols and the packet's data fit the Transpose Engine's per-dtype limits",
    docs: "The Transpose Engine keeps the first elements_per_packet elements of each input packet \
           (16 for 4-bit types, 8 otherwise), stacks in_rows time steps of packets_per_col \
           packets into an [in_rows × in_cols] matrix and transposes it. in_rows is at most 16 \
           (4-bit), 8 (8-bit), 4 (16-bit) or 2 (32-bit); in_cols = packets_per_col × \
           elements_per_packet is 16 or 32 (4-bit) or 8, 16 or 32 (wider types). visa-lint reads \
           in_rows from the data of OutPacket and packets_per_col from the input Time, and \
           reports a packet holding more than elements_per_packet elements (split it, moving the \
           outer part into Time), too many rows (move the extra rows outward in Time) and an \
           in_cols outside the table.",
    bad: "axes![C = 8, D = 8, E = 8]; // bf16: in_rows 8 > 4\n\
          input: CollectTensor<'l, T, bf16, m![1], m![1], m![P], m![C, D], m![E # 16]>\n\
          input.transpose::<m![C, E], m![D # 16]>()",
    good: "axes![C = 8, D = 4, E = 8];\n\
           input: CollectTensor<'l, T, bf16, m![1], m![1], m![P], m![C, D], m![E # 16]>\n\
           input.transpose::<m![C, E], m![D # 16]>()",
    manual: "L6843-L6848, L6859-L6871, L6877-L6883",
    generations: Generations::Both,
};

/// Unpack: whether the checks after it stop, the input packet's data unknown or holding more
/// than the `elements_per_packet` kept (reported).
pub(super) fn check_unpack(t: &Transpose<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (g, d, input, step) = (t.g, t.d, t.input, t.step);
    // TRN-001, Unpack: only the first elements_per_packet elements of a packet are kept.
    let epp = g.elements_per_packet;
    let Some(in_used) = used(t.packet) else {
        return true;
    };
    if in_used > epp {
        out.push(Diagnostic::new(
            &TRN_001,
            step.span,
            format!(
                "the transpose input packet {} holds {in_used} {d} elements, but the Transpose \
                 Engine keeps the first {epp} of each packet (elements_per_packet for {}-bit \
                 types): keep {epp} elements in the packet and move the rest into Time",
                text(input, Slot::Packet),
                g.bits
            ),
        ));
        return true;
    }
    false
}

/// in_rows: whether OutPacket takes more rows than the engine transposes; reported when so.
pub(super) fn check_in_rows(t: &Transpose<'_>, o: &Out<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (g, output, step, in_rows) = (t.g, t.output, t.step, o.in_rows);
    // TRN-001, in_rows: the data of OutPacket.
    if in_rows > g.max_in_rows {
        out.push(at_arg(
            &TRN_001,
            step,
            o.packet_span,
            format!(
                "OutPacket {} takes in_rows = {in_rows} time steps into the packet; the Transpose \
                 Engine transposes at most {} rows of {}-bit elements: keep {} rows innermost in \
                 Time and move the rest outward",
                text(output, Slot::Packet),
                g.max_in_rows,
                g.bits,
                g.max_in_rows
            ),
        ));
        return true;
    }
    false
}

/// in_cols: whether the columns of the transposed matrix are not a count the engine takes for
/// the type; reported when so.
pub(super) fn check_in_cols(t: &Transpose<'_>, split: &Split, out: &mut Vec<Diagnostic>) -> bool {
    let (g, step) = (t.g, t.step);
    let epp = g.elements_per_packet;
    // TRN-001, in_cols.
    if !g.valid_in_cols.contains(&split.in_cols) {
        let valid = g
            .valid_in_cols
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        out.push(Diagnostic::new(
            &TRN_001,
            step.span,
            format!(
                "in_cols = packets_per_col {} × elements_per_packet {epp} = {}; the Transpose \
                 Engine takes in_cols of {valid} for {}-bit types",
                split.packets_per_col, split.in_cols, g.bits
            ),
        ));
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::rules::transpose::tests::trn;
    use crate::target::{RNGD, TransposeGeometry};

    fn row(bits: u32) -> &'static TransposeGeometry {
        RNGD.transpose_geometry
            .iter()
            .find(|g| g.bits == bits)
            .expect("row")
    }

    #[test]
    fn geometry_table() {
        let want = [
            (4, 16, 64, 16, &[16u64, 32][..]),
            (8, 8, 32, 8, &[8, 16, 32][..]),
            (16, 8, 16, 4, &[8, 16, 32][..]),
            (32, 8, 8, 2, &[8, 16, 32][..]),
        ];
        for (bits, epp, align, rows, cols) in want {
            let g = row(bits);
            assert_eq!(g.elements_per_packet, epp, "{bits}");
            assert_eq!(g.output_alignment, align, "{bits}");
            assert_eq!(g.max_in_rows, rows, "{bits}");
            assert_eq!(g.valid_in_cols, cols, "{bits}");
            // output_alignment elements are one 32-byte flit (L6848, L6885).
            assert_eq!(align * u64::from(bits), RNGD.flit_bytes * 8);
        }
        assert_eq!(RNGD.transpose_buffer_cols, 16); // L6859
    }

    /// Max in_rows per dtype (L6877-L6883): the limit passes, twice the limit is TRN-001.
    #[test]
    fn max_in_rows_per_dtype() {
        for (d, epp, align, max) in [
            ("i4", 16, 64, 16),
            ("i8", 8, 32, 8),
            ("bf16", 8, 16, 4),
            ("f32", 8, 8, 2),
        ] {
            for (rows, want) in [(max, 0), (max * 2, 1)] {
                let axes = format!("C = 4, D = {rows}, E = {epp}");
                let got = trn(
                    &axes,
                    d,
                    "C, D",
                    &format!("E # {}", align),
                    "C, E",
                    &format!("D # {align}"),
                );
                assert_eq!(got.len(), want, "{d} in_rows {rows}: {got:?}");
                if want == 1 {
                    assert_eq!(got[0], "TRN-001");
                }
            }
        }
    }

    /// Valid in_cols (L6877-L6883): 16, 32 for 4-bit; 8, 16, 32 otherwise.
    #[test]
    fn valid_in_cols_per_dtype() {
        for (d, epp, align, ok, bad) in [
            ("i4", 16, 64, &[1u64, 2][..], &[3u64][..]),
            ("i8", 8, 32, &[1, 2, 4], &[3]),
            ("f32", 8, 8, &[1, 2, 4], &[3, 8]),
        ] {
            for (&ppc, want) in ok.iter().map(|p| (p, 0)).chain(bad.iter().map(|p| (p, 1))) {
                let axes = format!("B = 2, C = 2, D = {ppc}, E = {epp}");
                let got = trn(
                    &axes,
                    d,
                    "B, C, D",
                    &format!("E # {align}"),
                    "B, D, E",
                    &format!("C # {align}"),
                );
                assert_eq!(got.len(), want, "{d} packets_per_col {ppc}: {got:?}");
            }
        }
    }
}

//! TRN: the Transpose Engine, which swaps the innermost Time factors with the packet within
//! 32-byte flits (constraints.md §16, manual L6820-L7041).
//!
//! The geometry is recovered from the types: `in_rows` is the data of OutPacket (the innermost
//! input Time factors that move into the packet), `packets_per_col` the input Time factors inside
//! them, `in_cols = packets_per_col × elements_per_packet`, and `out_rows` what OutTime keeps of
//! the transposed columns. The expected OutTime/OutPacket are rebuilt from the input layouts and
//! compared by meaning (`Layout ==`), so the check never enumerates elements.

use super::context::{FnContext, at_arg, rewrite_output};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::model::{
    Chain, Dtype, Method, Slot, Step, TensorTy, output_arg, pad_edit, slot_bytes, written,
};
use crate::rule::{Generations, Rule, Status};

use crate::derive::transpose::{Split, cycles, expected_time, find_split, used};
use crate::target::TransposeGeometry;

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

pub const TRN_003: Rule = Rule {
    code: "TRN-003",
    name: "transpose-innermost-swap",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Transpose swaps only the innermost Time factors with the packet, within flits",
    docs: "The Transpose Engine turns [outer, rows, packets_per_col] × [packet] into [outer, \
           packets_per_col, packet (trimmed)] × [rows # output_alignment]: the outer Time \
           factors stay where they are and only the innermost rows move into the packet. \
           OutTime/OutPacket that reorder outer Time factors, take rows that are not innermost, or \
           keep something other than the transposed columns are not a transpose the engine can do \
           (reorder outer factors at the commit's Element instead). Chip, Cluster and Slice pass \
           through; an annotation that changes them is reported by KRN-004, not here.",
    bad: "input: CollectTensor<.., i8, .., m![C, D], m![E # 32]>; input.transpose::<m![E, C], m![D # 32]>()",
    good: "input: CollectTensor<.., i8, .., m![C, D], m![E # 32]>; input.transpose::<m![C, E], m![D # 32]>()",
    manual: "L6830-L6831, L6839, L3043",
    generations: Generations::Both,
};

pub const TRN_004: Rule = Rule {
    code: "TRN-004",
    name: "transpose-double-buffering",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "in_cols <= 16 lets the Transpose Engine double-buffer",
    docs: "The engine has two buffers of 16 columns: with in_cols <= 16 one fills while the other \
           drains (cycles = in + (n - 1) × max(in, out) + out), with in_cols = 32 input and output \
           alternate (n × (in + out)). When this function chooses the input Time order (the chain \
           collects it here) and no rows are trimmed, ordering Time as [outer, packets_per_col, \
           rows] instead of [outer, rows, packets_per_col] gives the same OutTime and OutPacket \
           with in_cols = elements_per_packet; the hint gives both cycle counts (cost model F22). \
           A transpose of a stream the caller hands in is not reported.",
    bad: "...collect::<m![B, C, D], m![E # 32]>().transpose::<m![B, D, E], m![C # 32]>() // 128 cycles",
    good: "...collect::<m![B, D, C], m![E # 32]>().transpose::<m![B, D, E], m![C # 32]>() // 72 cycles",
    manual: "L6859, L6889-L6912",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[TRN_001, TRN_002, TRN_003, TRN_004];

/// The geometry row for a dtype.
pub(crate) fn geometry<'t>(cx: &'t FnContext<'_>, dtype: Dtype) -> Option<&'t TransposeGeometry> {
    let bits = dtype.bits();
    cx.target.transpose_geometry.iter().find(|g| g.bits == bits)
}

fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot).and_then(|m| m.layout.as_deref())
}

fn text(ty: &TensorTy, slot: Slot) -> &str {
    ty.get(slot).map_or("?", |m| m.text.as_str())
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

fn check_step(cx: &FnContext<'_>, chain: &Chain, i: usize, step: &Step, out: &mut Vec<Diagnostic>) {
    let flit = cx.target.flit_bytes;
    let (Some(input), Some(output)) = (step.input.as_ref(), step.output.as_ref()) else {
        return;
    };
    let Some(d) = input.dtype else {
        return;
    };
    let Some(g) = geometry(cx, d) else {
        return;
    };
    let Some(flit_elems) = d.elems_for(flit) else {
        return;
    };
    let (Some(tin), Some(pin)) = (layout(input, Slot::Time), layout(input, Slot::Packet)) else {
        return;
    };
    // TRN-002, input: collect and cast report their own packets.
    let producer = i.checked_sub(1).map(|p| &chain.steps[p].method);
    if pin.size != flit_elems {
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
        return;
    }
    // TRN-001, Unpack: only the first elements_per_packet elements of a packet are kept.
    let epp = g.elements_per_packet;
    let Some(in_used) = used(pin) else {
        return;
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
        return;
    }
    let (Some(tout), Some(pout)) = (layout(output, Slot::Time), layout(output, Slot::Packet))
    else {
        return;
    };
    let packet_arg = output_arg(step, Some(1), Slot::Packet);
    let packet_span = packet_arg.as_ref().map(|a| a.span);
    // TRN-001, in_rows: the data of OutPacket.
    let Some(in_rows) = used(pout) else {
        return;
    };
    if in_rows > g.max_in_rows {
        out.push(at_arg(
            &TRN_001,
            step,
            packet_span,
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
        return;
    }
    // TRN-002, output: each row is padded to output_alignment = one flit.
    let align = g.output_alignment;
    if pout.size != align {
        let bytes = slot_bytes(output, Slot::Packet).map_or(0, |(_, _, b)| b);
        let mut diag = at_arg(
            &TRN_002,
            step,
            packet_span,
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
    // TRN-003: OutTime/OutPacket must be the innermost swap.
    let Some(split) = find_split(g, tin, pin, tout, pout, in_rows.max(1)) else {
        let time_arg = output_arg(step, Some(0), Slot::Time);
        let span = time_arg.as_ref().map(|a| a.span);
        let hint = expected_time(g, tin, pin, pout, in_rows.max(1));
        let mut diag = at_arg(
            &TRN_003,
            step,
            span,
            format!(
                "Time {} × Packet {} → OutTime {} × OutPacket {} is not a transpose of the \
                 innermost Time factors with the packet: the engine turns [outer, rows, \
                 packets_per_col] × [packet] into [outer, packets_per_col, packet] × [rows # {align}] \
                 within flits, keeping the outer Time order{}",
                text(input, Slot::Time),
                text(input, Slot::Packet),
                text(output, Slot::Time),
                text(output, Slot::Packet),
                hint.as_ref()
                    .filter(|t| *t != tout)
                    .map_or(String::new(), |t| format!(
                        " (OutTime m![{}] here)",
                        t.to_expr()
                    ))
            ),
        );
        if let (Some(t), Some(a)) = (hint.filter(|t| t != tout), time_arg) {
            diag = diag.with_edit(
                "use the transposed Time",
                false,
                a.span,
                format!("m![{}]", t.to_expr()),
            );
        }
        out.push(diag);
        return;
    };
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
        return;
    }
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
        out.push(trim_rows_fix(diag, chain, step, split.in_cols));
        return;
    }
    check_buffering(cx, chain, i, step, g, &split, out);
}

/// TRN-004: single buffering where this function could order Time for double buffering.
fn check_buffering(
    cx: &FnContext<'_>,
    chain: &Chain,
    i: usize,
    step: &Step,
    g: &TransposeGeometry,
    split: &Split,
    out: &mut Vec<Diagnostic>,
) {
    let cols = cx.target.transpose_buffer_cols;
    if split.in_cols <= cols || split.out_rows != split.in_cols || split.packets_per_col <= 1 {
        return;
    }
    // Actionable only when this chain chooses the input Time order.
    if !chain.steps[..i].iter().any(|s| s.method == Method::Collect) {
        return;
    }
    let epp = g.elements_per_packet;
    let Some((_, now)) = cycles(
        cols,
        split.rows,
        split.packets_per_col,
        split.in_cols,
        split.out_rows,
        split.out_time,
    ) else {
        return;
    };
    let Some((true, alt)) = cycles(cols, split.rows, 1, epp, epp, split.out_time) else {
        return;
    };
    if alt >= now {
        return;
    }
    let Ok(time) = split
        .outer
        .pair(&split.col_layout)
        .and_then(|l| l.pair(&split.row_layout))
    else {
        return;
    };
    let collect_time = chain.steps[..i]
        .iter()
        .rev()
        .find(|s| s.method == Method::Collect)
        .and_then(|s| written(s, 0));
    let mut diag = Diagnostic::new(
        &TRN_004,
        step.span,
        format!(
            "in_cols = {} exceeds the {cols} transpose buffer columns, so the engine single-buffers: \
             {now} cycles; with the input Time ordered m![{}] (packets_per_col m![{}] outside the \
             {} rows) in_cols is {epp}, the buffers alternate and the same OutTime/OutPacket take \
             {alt} cycles",
            split.in_cols,
            time.to_expr(),
            split.col_layout.to_expr(),
            split.rows
        ),
    );
    if let Some(a) = collect_time {
        diag = diag.with_related(a.span, "the input Time order is chosen here");
    }
    out.push(diag);
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            if step.method == Method::Transpose {
                check_step(cx, chain, i, step, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::layout::Dim;
    use crate::target::RNGD;

    fn row(bits: u32) -> &'static TransposeGeometry {
        RNGD.transpose_geometry
            .iter()
            .find(|g| g.bits == bits)
            .expect("row")
    }

    /// The per-dtype table, L6877-L6883.
    #[test]
    fn too_many_rows_fix_trims_the_padding() {
        // out_rows 16 > in_cols 8, and OutTime m![B # 16] holds 2 rows of data: m![B # 8], in the
        // turbofish and the return type together.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../fixtures/rules/TRN-002-trim.rs"),
            "TRN-002",
        );
        assert_eq!(
            fixed.matches("m![B # 8], m![A # 32]>").count(),
            2,
            "{fixed}"
        );
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

    /// The manual's cycle counts: 72 (L6939-L6942), 6 (L6973-L6975), 128 (L7005-L7007),
    /// 68 (L7035-L7038).
    #[test]
    fn manual_cycle_counts() {
        let b = RNGD.transpose_buffer_cols;
        assert_eq!(cycles(b, 8, 1, 8, 8, 64), Some((true, 72)));
        assert_eq!(cycles(b, 4, 1, 8, 2, 2), Some((true, 6)));
        assert_eq!(cycles(b, 8, 4, 32, 32, 64), Some((false, 128)));
        assert_eq!(cycles(b, 4, 1, 8, 8, 64), Some((true, 68)));
        // The buffering modes of L6890-L6896.
        assert!(cycles(b, 1, 1, 8, 1, 1).is_some_and(|c| c.0));
        assert!(cycles(b, 1, 2, 16, 1, 1).is_some_and(|c| c.0));
        assert!(cycles(b, 1, 4, 32, 1, 1).is_some_and(|c| !c.0));
        assert_eq!(cycles(b, 1, 1, 8, 0, 1), None);
        assert_eq!(cycles(b, u64::MAX, 2, 32, 1, 1), None);
    }

    /// The TRN diagnostics of `fn f(input: CollectTensor<.., D, .., Time, Packet>) { input.transpose::<OutTime, OutPacket>() }`.
    fn trn(
        axes: &str,
        d: &str,
        time: &str,
        packet: &str,
        out_time: &str,
        out_packet: &str,
    ) -> Vec<String> {
        let text = format!(
            "use furiosa_visa_std::prelude::*;\naxes![P = 256, {axes}];\n\
             fn f<'l, const T: Tu>(input: CollectTensor<'l, T, {d}, m![1], m![1], m![P], m![{time}], m![{packet}]>) \
             -> TransposeTensor<'l, T, {d}, m![1], m![1], m![P], m![{out_time}], m![{out_packet}]> {{\n\
             input.transpose::<m![{out_time}], m![{out_packet}]>()\n}}\n"
        );
        crate::check_text(&text)
            .into_iter()
            .filter(|d| d.code().starts_with("TRN"))
            .map(|d| d.code().to_string())
            .collect()
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

    /// The manual's four examples (L6916-L7041) stay silent; their mirror images do not.
    #[test]
    fn manual_examples() {
        assert!(
            trn(
                "C = 8, D = 8, E = 8",
                "i8",
                "C, D",
                "E # 32",
                "C, E",
                "D # 32"
            )
            .is_empty()
        );
        assert!(trn("A = 4, B = 2", "i8", "A", "B # 32", "B", "A # 32").is_empty());
        assert!(
            trn(
                "B = 2, C = 8, D = 4, E = 8",
                "i8",
                "B, C, D",
                "E # 32",
                "B, D, E",
                "C # 32"
            )
            .is_empty()
        );
        assert!(
            trn(
                "C = 8, D = 4, E = 8",
                "bf16",
                "C, D",
                "E # 16",
                "C, E",
                "D # 16"
            )
            .is_empty()
        );
        assert_eq!(
            trn(
                "C = 8, D = 8, E = 8",
                "i8",
                "C, D",
                "E # 32",
                "D, E",
                "C # 32"
            ),
            // Rows C with the 8 packets of D per column: in_cols 64.
            ["TRN-001"]
        );
        assert_eq!(
            trn(
                "C = 8, D = 8, E = 8",
                "i8",
                "C, D",
                "E # 32",
                "E, C",
                "D # 32"
            ),
            ["TRN-003"]
        );
        assert_eq!(
            trn(
                "C = 8, D = 8, E = 8",
                "i8",
                "C, D",
                "E # 32",
                "C, E",
                "D # 16"
            ),
            ["TRN-002"]
        );
        // Huge outer axes: no enumeration, no overflow.
        assert!(
            trn(
                "C = 4611686018427387904, D = 8, E = 8",
                "i8",
                "C, D",
                "E # 32",
                "C, E",
                "D # 32"
            )
            .is_empty()
        );
    }

    #[test]
    fn used_positions() {
        use crate::mapping::layout::{Axis, Factor};
        let f = |extent, valid, name: &str| {
            Dim::Factor(Factor {
                extent,
                valid,
                axis: Some(Axis::new(name, valid)),
                coef: 1,
                pad: crate::mapping::layout::PadKind::Top,
            })
        };
        let l = Layout::from_dims(vec![f(32, 2, "B")]).expect("layout");
        assert_eq!(used(&l), Some(2));
        let l = Layout::from_dims(vec![f(4, 4, "D"), f(32, 8, "E")]).expect("layout");
        assert_eq!(used(&l), Some(3 * 32 + 8));
        assert_eq!(used(&Layout::identity()), Some(1));
        let big = Layout::from_dims(vec![f(1 << 61, 1 << 61, "X"), f(4, 4, "Y")]).expect("layout");
        assert_eq!(used(&big), Some(1 << 63));
    }
}

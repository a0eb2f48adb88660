//! TRN-004: an `in_cols` past the engine's buffer columns single-buffers. When this function
//! chooses the input Time order (a collect before the transpose) and ordering it with one
//! packet per column makes the buffers alternate and the same output cheaper, the hint says
//! so, with both cycle counts.

use super::call::Transpose;
use crate::derive::transpose::{Split, cycles};
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Method, written};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;
use crate::target::TransposeGeometry;

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

/// TRN-004: single buffering where this function could order Time for double buffering.
pub(super) fn check(
    cx: &FnContext<'_>,
    t: &Transpose<'_>,
    split: &Split,
    out: &mut Vec<Diagnostic>,
) {
    let (chain, i, step, g) = (t.chain, t.index, t.step, t.g);
    let cols = cx.target.transpose_buffer_cols;
    if split.in_cols <= cols || split.out_rows != split.in_cols || split.packets_per_col <= 1 {
        return;
    }
    // Actionable only when this chain chooses the input Time order.
    if !chain.steps[..i].iter().any(|s| s.method == Method::Collect) {
        return;
    }
    let epp = g.elements_per_packet;
    let Some((now, alt)) = faster(cols, g, split) else {
        return;
    };
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

/// The cycles of the transpose as split (single-buffered) and with one packet per column
/// (double-buffered), when the latter is both double-buffered and faster.
fn faster(cols: u64, g: &TransposeGeometry, split: &Split) -> Option<(u64, u64)> {
    let epp = g.elements_per_packet;
    let (_, now) = cycles(
        cols,
        split.rows,
        split.packets_per_col,
        split.in_cols,
        split.out_rows,
        split.out_time,
    )?;
    let Some((true, alt)) = cycles(cols, split.rows, 1, epp, epp, split.out_time) else {
        return None;
    };
    if alt >= now {
        return None;
    }
    Some((now, alt))
}

#[cfg(test)]
mod tests {
    use crate::derive::transpose::cycles;
    use crate::target::RNGD;

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
}

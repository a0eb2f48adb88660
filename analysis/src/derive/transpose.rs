//! The Transpose Engine's geometry (L6859-L6883): where a transpose input splits into rows and
//! columns, which positions hold data, and the cycles of one burst (cost model F22). The TRN
//! rules and the cost simulator read these.

use crate::mapping::Layout;
use crate::mapping::layout::{Dim, OpaqueKind};
use crate::target::TransposeGeometry;

/// The positions `0..used` hold every data element of the layout; the rest is padding.
pub fn used(l: &Layout) -> Option<u64> {
    let mut inner: u64 = 1;
    let mut last: u64 = 0;
    for d in l.dims.iter().rev() {
        let (extent, valid) = match d {
            Dim::Factor(f) => (f.extent, f.valid.min(f.extent)),
            Dim::Opaque(o) => match &o.kind {
                OpaqueKind::Window(w, _) => (o.extent, used(w)?.min(o.extent)),
                _ => (o.extent, o.extent),
            },
        };
        last = last.checked_add(valid.saturating_sub(1).checked_mul(inner)?)?;
        inner = inner.checked_mul(extent)?;
    }
    if l.size == 0 {
        return Some(0);
    }
    last.checked_add(1)
}

/// One way the input decomposes as [outer, rows (r), cols (ppc)] × [packet].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub rows: u64,
    pub packets_per_col: u64,
    pub in_cols: u64,
    pub out_rows: u64,
    /// OutTime::SIZE.
    pub out_time: u64,
    pub outer: Layout,
    pub row_layout: Layout,
    pub col_layout: Layout,
}

/// Finds the split whose transpose gives exactly `tout` × `pout`.
pub fn find_split(
    g: &TransposeGeometry,
    tin: &Layout,
    pin: &Layout,
    tout: &Layout,
    pout: &Layout,
    in_rows: u64,
) -> Option<Split> {
    let epp = g.elements_per_packet;
    let unpacked = pin.window(epp);
    let max_ppc = g
        .valid_in_cols
        .iter()
        .copied()
        .max()
        .unwrap_or(epp)
        .checked_mul(2)?
        / epp.max(1);
    for rows in in_rows..=in_rows.max(g.max_in_rows) {
        for ppc in 1..=max_ppc.max(1) {
            let Some(block) = rows.checked_mul(ppc) else {
                continue;
            };
            if block == 0 || !tin.size.is_multiple_of(block) {
                continue;
            }
            let row_layout = tin.stride(ppc).window(rows);
            if row_layout.window(pout.size) != *pout {
                continue;
            }
            let outer = tin.stride(block);
            if outer.size == 0 || !tout.size.is_multiple_of(outer.size) {
                continue;
            }
            let out_rows = tout.size / outer.size;
            let Ok(cols) = tin.window(ppc).pair(&unpacked) else {
                continue;
            };
            let Ok(expected) = outer.pair(&cols.window(out_rows)) else {
                continue;
            };
            if expected == *tout {
                return Some(Split {
                    rows,
                    packets_per_col: ppc,
                    in_cols: cols.size,
                    out_rows,
                    out_time: tout.size,
                    outer,
                    row_layout,
                    col_layout: tin.window(ppc),
                });
            }
        }
    }
    None
}

/// The OutTime a transpose with this OutPacket gives, when OutPacket is the innermost rows
/// (no rows trimmed beyond the packet's padding).
pub fn expected_time(
    g: &TransposeGeometry,
    tin: &Layout,
    pin: &Layout,
    pout: &Layout,
    in_rows: u64,
) -> Option<Layout> {
    let epp = g.elements_per_packet;
    let max_ppc = g.valid_in_cols.iter().copied().max().unwrap_or(epp) / epp.max(1);
    for rows in in_rows..=in_rows.max(g.max_in_rows) {
        for ppc in 1..=max_ppc.max(1) {
            let block = rows.checked_mul(ppc)?;
            if block == 0 || !tin.size.is_multiple_of(block) {
                continue;
            }
            if tin.stride(ppc).window(rows).window(pout.size) != *pout {
                continue;
            }
            let unpacked = pin.window(used(pin)?.max(1));
            let cols = tin.window(ppc).pair(&unpacked).ok()?;
            return tin.stride(block).pair(&cols).ok();
        }
    }
    None
}

/// Cycles of one transpose burst (cost model F22): `(double_buffered, cycles)`.
pub fn cycles(
    buffer_cols: u64,
    rows: u64,
    packets_per_col: u64,
    in_cols: u64,
    out_rows: u64,
    out_time: u64,
) -> Option<(bool, u64)> {
    let input = rows.checked_mul(packets_per_col)?;
    let output = out_rows;
    if output == 0 {
        return None;
    }
    let n = out_time / output;
    if in_cols <= buffer_cols {
        let per = input.max(output);
        let mid = n.checked_sub(1)?.checked_mul(per)?;
        Some((true, input.checked_add(mid)?.checked_add(output)?))
    } else {
        Some((false, n.checked_mul(input.checked_add(output)?)?))
    }
}

//! Human descriptions of a layout, for hovers and `visa-lint eval`: the buffer-position ->
//! tensor-index table for small mappings (as the manual draws it), the digit and bit layout
//! for large ones.

use super::layout::{Dim, Index, Layout, OpaqueKind, PadKind};
use std::fmt::Write as _;

/// Mappings up to this many positions get the full table.
pub const TABLE_LIMIT: u64 = 64;

/// `B=97`, `A=1, B=7`, `{}` for the zero index, `-` for padding.
pub fn format_index(idx: Option<&Index>) -> String {
    match idx {
        None => "-".into(),
        Some(i) if i.is_empty() => "{}".into(),
        Some(i) => i
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The description: a table when the mapping is small, the digit layout always.
/// `columns` is the size of the innermost term as written (`m![B / 4, B % 4]` -> 4), so the
/// table has the shape the user wrote even when the normal form merged the terms.
pub fn describe(layout: &Layout, columns: Option<u64>) -> String {
    let mut out = String::new();
    if layout.size <= TABLE_LIMIT {
        out.push_str(&table(layout, columns));
        out.push('\n');
    }
    out.push_str(&digits(layout));
    out
}

/// Rows of `columns` positions (default: the innermost digit, or 16 for a single digit).
pub fn table(layout: &Layout, columns: Option<u64>) -> String {
    let cols = match (columns, layout.dims.last()) {
        (Some(c), _) if c > 1 && layout.size.is_multiple_of(c) => c,
        (_, Some(d)) if layout.dims.len() > 1 => d.extent(),
        _ => layout.size.min(16),
    }
    .max(1);
    let rows = layout.size.div_ceil(cols);
    let cells: Vec<Vec<String>> = (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| {
                    let i = r * cols + c;
                    let all = layout.map_all(i);
                    if all.len() > 1 {
                        all.iter()
                            .map(|x| format_index(Some(x)))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    } else {
                        format_index(all.first())
                    }
                })
                .collect()
        })
        .collect();
    let row_label = |r: u64| format!("{}", r * cols);
    let label_w = row_label(rows.saturating_sub(1)).len().max(3);
    let mut widths = vec![0usize; cols as usize];
    for row in &cells {
        for (c, cell) in row.iter().enumerate() {
            widths[c] = widths[c].max(cell.chars().count());
        }
    }
    for (c, w) in widths.iter_mut().enumerate() {
        *w = (*w).max(format!("+{c}").len());
    }
    let mut out = String::new();
    let _ = write!(out, "{:>label_w$} |", "pos");
    for (c, w) in widths.iter().enumerate() {
        let _ = write!(out, " {:>w$}", format!("+{c}"));
    }
    out.push('\n');
    for (r, row) in cells.iter().enumerate() {
        let _ = write!(out, "{:>label_w$} |", row_label(r as u64));
        for (c, cell) in row.iter().enumerate() {
            let _ = write!(out, " {:>w$}", cell, w = widths[c]);
        }
        out.push('\n');
    }
    out
}

/// One line per digit: its buffer stride, extent and what it adds to the tensor index; then
/// the bit layout when every digit is a power of two.
pub fn digits(layout: &Layout) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "size {} = {}", layout.size, extents(layout));
    if layout.dims.is_empty() {
        out.push_str("a single position holding the empty index i![]\n");
        return out;
    }
    let strides = buffer_strides(layout);
    let w = strides
        .iter()
        .map(|s| s.to_string().len())
        .max()
        .unwrap_or(1)
        .max(6);
    let _ = writeln!(out, "{:>w$}  {:>8}  tensor", "stride", "extent");
    for (d, s) in layout.dims.iter().zip(&strides) {
        let meaning = match d {
            Dim::Factor(f) => {
                let pad = if f.valid < f.extent {
                    format!(" (positions >= {} are {})", f.valid, padding(f.pad))
                } else {
                    String::new()
                };
                match &f.axis {
                    Some(a) if f.coef == 1 => format!("{}{pad}", a.name),
                    Some(a) => format!("{} × {}{pad}", a.name, f.coef),
                    None if f.is_broadcast() => format!("broadcast: each position holds i![]{pad}"),
                    None => format!("{} (only 0 is valid)", padding(f.pad)),
                }
            }
            Dim::Opaque(o) => match &o.kind {
                OpaqueKind::Window(l, k) if o.extent > l.size && *k != PadKind::Top => {
                    format!("[{l}] in a window of {} ({})", o.extent, padding(*k))
                }
                OpaqueKind::Window(l, _) => format!("[{l}] in a window of {}", o.extent),
                OpaqueKind::Strided(l, s) => format!("every {s}-th position of [{l}]"),
                OpaqueKind::LinComb(_) => {
                    "linear combination (one position may hold several indices)".into()
                }
            },
        };
        let _ = writeln!(out, "{s:>w$}  {:>8}  {meaning}", d.extent());
    }
    if let Some(bits) = bit_layout(layout) {
        out.push_str(&bits);
    }
    out
}

/// How a digit's padding positions are described: `padding` for the manual's (top) kind.
fn padding(kind: PadKind) -> &'static str {
    match kind {
        PadKind::Top => "padding",
        PadKind::Bottom => "inaccessible padding `#{!}`",
        PadKind::Zero => "zero padding `#{0}`",
    }
}

fn extents(layout: &Layout) -> String {
    if layout.dims.is_empty() {
        return "1".into();
    }
    layout
        .dims
        .iter()
        .map(|d| d.extent().to_string())
        .collect::<Vec<_>>()
        .join(" × ")
}

fn buffer_strides(layout: &Layout) -> Vec<u64> {
    let mut strides = vec![1u64; layout.dims.len()];
    let mut acc = 1u64;
    for (k, d) in layout.dims.iter().enumerate().rev() {
        strides[k] = acc;
        acc = acc.saturating_mul(d.extent());
    }
    strides
}

fn bits(v: u64) -> Option<u32> {
    v.is_power_of_two().then(|| v.trailing_zeros())
}

fn range(lo: u32, width: u32) -> String {
    if width == 1 {
        format!("[{lo}]")
    } else {
        format!("[{}:{lo}]", lo + width - 1)
    }
}

/// `buffer bits [8:6]_[5:1]_[0] hold B bits [8:6]_[4:0]_[5]` when every digit is an unpadded
/// power-of-two factor with a power-of-two coefficient.
fn bit_layout(layout: &Layout) -> Option<String> {
    let mut buf = Vec::new();
    let mut ten: Vec<(String, Vec<String>)> = Vec::new();
    let mut lo = 0u32;
    let mut digits = Vec::new();
    for d in layout.dims.iter().rev() {
        let Dim::Factor(f) = d else { return None };
        let width = bits(f.extent)?;
        if f.valid != f.extent || width == 0 {
            return None;
        }
        let axis = f.axis.as_ref()?;
        let c = bits(f.coef)?;
        buf.push(range(lo, width));
        digits.push((axis.name.to_string(), range(c, width)));
        lo += width;
    }
    buf.reverse();
    digits.reverse();
    // Consecutive digits of one axis read as one group: `B bits [8:6]_[4:0]_[5]`.
    for (name, r) in digits {
        match ten.last_mut() {
            Some((n, rs)) if *n == name => rs.push(r),
            _ => ten.push((name, vec![r])),
        }
    }
    let ten: Vec<String> = ten
        .into_iter()
        .map(|(n, rs)| format!("{n} bits {}", rs.join("_")))
        .collect();
    Some(format!(
        "buffer bits {} hold {}\n",
        buf.join("_"),
        ten.join(", ")
    ))
}

//! Which part of each axis a stored tensor's mappings place (its digits), and the first range
//! of an axis that none places: what MAP-010 reads of a type.

use std::collections::BTreeMap;

use crate::mapping::layout::Dim;
use crate::model::{Slot, TensorTy};

/// The slots that place a stored tensor's elements.
const PLACES: [Slot; 5] = [
    Slot::Chip,
    Slot::Cluster,
    Slot::Slice,
    Slot::Row,
    Slot::Element,
];

pub(super) fn digit_text(axis: &str, lo: u64, hi: u64, size: u64) -> String {
    match (lo, hi >= size) {
        (1, true) => axis.to_string(),
        (1, false) => format!("{axis} % {hi}"),
        (_, true) => format!("{axis} / {lo}"),
        _ => format!("{axis} / {lo} % {}", hi / lo.max(1)),
    }
}

/// Which part of each axis a type places: axis -> (size, [(coef, valid)], first slot).
pub(super) type Placed = BTreeMap<String, (u64, Vec<(u64, u64)>, Option<Slot>)>;

/// The digits of every axis `ty`'s placing mappings hold; `None` when a mapping is unknown or
/// irregular.
pub(super) fn placed(ty: &TensorTy) -> Option<Placed> {
    let mut per = Placed::new();
    for s in PLACES {
        if !ty.kind.params().contains(&s) {
            continue;
        }
        let l = ty.get(s)?.layout.as_deref()?;
        for d in &l.dims {
            match d {
                Dim::Opaque(_) => return None,
                Dim::Factor(f) => {
                    let Some(a) = &f.axis else { continue };
                    if a.skew.is_some() {
                        return None;
                    }
                    let e = per
                        .entry(a.name.to_string())
                        .or_insert((a.size, Vec::new(), Some(s)));
                    e.1.push((f.coef, f.valid));
                }
            }
        }
    }
    Some(per)
}

/// The first digit range `[lo, hi)` of an axis of `size` that no factor places.
pub(super) fn gap(size: u64, fs: &[(u64, u64)]) -> Option<(u64, u64)> {
    let mut fs = fs.to_vec();
    fs.sort_unstable();
    let mut cur = 1u64;
    for &(coef, valid) in &fs {
        if cur >= size {
            return None;
        }
        if coef > cur {
            return Some((cur, coef));
        }
        let end = coef.saturating_mul(valid);
        if end > cur {
            cur = end;
        }
    }
    (cur < size).then_some((cur, size))
}

/// The axes `ty` places completely.
pub(super) fn whole_axes(ty: &TensorTy) -> Option<Vec<(String, u64)>> {
    Some(
        placed(ty)?
            .into_iter()
            .filter(|(_, (size, fs, _))| gap(*size, fs).is_none())
            .map(|(a, (size, _, _))| (a, size))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps() {
        assert_eq!(gap(2048, &[(8, 256)]), Some((1, 8)));
        assert_eq!(gap(2048, &[(8, 256), (1, 8)]), None);
        assert_eq!(gap(15, &[(1, 4), (4, 4)]), None);
        assert_eq!(gap(512, &[(1, 32)]), Some((32, 512)));
        assert_eq!(gap(u64::MAX, &[(1, u64::MAX)]), None);
        assert_eq!(digit_text("A", 8, 64, 512), "A / 8 % 8");
    }
}

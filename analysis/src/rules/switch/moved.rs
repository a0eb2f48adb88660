//! The factors of a custom switch's output Time that come from its input Slice ([`moved`]),
//! which SWI-006 and SWI-007 read, and the rewritten Time their fixes write.

use super::call::Switch;
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};

/// Where a moved factor sat in the input Slice: the digit, then outermost first within it.
pub(super) type MoveKey = (usize, std::cmp::Reverse<u64>);

/// The factors of the output Time that come from the input Slice, with their order key
/// (position of the input Slice digit, then outermost first within it).
pub(super) fn moved(sw: &Switch<'_>) -> Vec<(usize, Option<MoveKey>)> {
    sw.out_time
        .dims
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let key = match d {
                Dim::Factor(Factor {
                    axis: Some(a),
                    coef,
                    ..
                }) => sw
                    .in_slice
                    .dims
                    .iter()
                    .enumerate()
                    .find_map(|(j, s)| match s {
                        Dim::Factor(Factor {
                            axis: Some(b),
                            coef: c,
                            extent,
                            ..
                        }) if b.name == a.name
                            && *coef >= *c
                            && u128::from(*coef) < u128::from(*c) * u128::from(*extent) =>
                        {
                            Some((j, std::cmp::Reverse(*coef)))
                        }
                        _ => None,
                    }),
                _ => None,
            };
            (k, key)
        })
        .collect()
}

/// Renders the output Time with the digits in `order`.
pub(super) fn reordered(time: &Layout, order: &[usize]) -> Option<String> {
    let dims = order
        .iter()
        .map(|&k| time.dims.get(k).cloned())
        .collect::<Option<Vec<_>>>()?;
    Layout::from_dims(dims)
        .ok()
        .map(|l| format!("m![{}]", l.to_expr()))
}

/// The `k`th digit of `time` as written.
pub(super) fn digit(time: &Layout, k: usize) -> String {
    time.dims
        .get(k)
        .and_then(|d| Layout::from_dims(vec![d.clone()]).ok())
        .map_or_else(|| "?".to_string(), |l| l.to_expr())
}

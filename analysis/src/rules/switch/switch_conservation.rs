//! SWI-009: a custom switch only rearranges its data. New axes appear in Slice only, as
//! broadcast copies; every input axis reaches the output, and no more of it than the input
//! holds.

use super::call::Switch;
use super::layouts::text;
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::at_arg;
use std::collections::{BTreeMap, BTreeSet};

pub const SWI_009: Rule = Rule {
    code: "SWI-009",
    name: "switch-conservation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A custom switch conserves the data: new axes only as Slice broadcasts, nothing dropped or duplicated",
    docs: "The output (Slice2 × Time2) is the input (Slice × Time) rearranged. New axes (`X`) may \
           appear in Slice only, as broadcast copies; every input axis reaches the output, and no \
           more of it than the input holds. A custom topology may take part of a moved axis \
           (`B % 4 = 3`, partial extraction). Checked for CustomBroadcast; regular topologies are \
           checked exactly by SWI-002.",
    bad: "fetched /* Slice m![A, B], Time m![C] */ .switch::<m![A, B / 4, X], m![C, Y]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    good: "fetched /* Slice m![A, B], Time m![C] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3341, L3420-L3457",
    generations: Generations::Both,
};

/// SWI-009; true when reported: an axis new in Time2, else an input axis dropped or
/// duplicated.
pub(super) fn check(sw: &Switch<'_>, known: &BTreeSet<String>, out: &mut Vec<Diagnostic>) -> bool {
    new_axis_in_time(sw, known, out) || dropped_or_duplicated(sw, known, out)
}

/// Whether Time2 holds an axis the input does not have; reported when so.
fn new_axis_in_time(sw: &Switch<'_>, known: &BTreeSet<String>, out: &mut Vec<Diagnostic>) -> bool {
    let fresh_in_time: Vec<String> = sw
        .out_time
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) if !known.contains(&*a.name) => {
                Some(a.name.to_string())
            }
            _ => None,
        })
        .collect();
    if let Some(name) = fresh_in_time.first() {
        out.push(at_arg(
            &SWI_009,
            sw.step,
            Some(sw.time_span()),
            format!(
                "Time2 holds `{name}`, an axis the input (Slice `{}`, Time `{}`) does not have: a switch only rearranges its data, and new axes appear only in Slice, as broadcast copies",
                text(sw.input, Slot::Slice),
                text(sw.input, Slot::Time),
            ),
        ));
        return true;
    }
    false
}

/// Whether an input axis is missing from the output, or covers more values there than in the
/// input; reported when so.
fn dropped_or_duplicated(
    sw: &Switch<'_>,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) -> bool {
    let none = |_: &str| false;
    let fresh = |n: &str| !known.contains(n);
    let (Some(have), Some(got)) = (
        coverage(&[sw.in_slice, sw.in_time], &none),
        coverage(&[sw.out_slice, sw.out_time], &fresh),
    ) else {
        return false;
    };
    for (axis, n) in &have {
        let m = got.get(axis).copied().unwrap_or(1);
        if *n > 1 && m == 1 {
            out.push(at_arg(
                &SWI_009,
                sw.step,
                Some(sw.time_span()),
                format!(
                    "axis `{axis}` ({n} values in the input Slice × Time) is missing from Slice2 `{}` and Time2 `{}`: a switch cannot drop data; move it to Time",
                    text(sw.output, Slot::Slice),
                    text(sw.output, Slot::Time),
                ),
            ));
            return true;
        }
        if m > *n {
            out.push(at_arg(
                &SWI_009,
                sw.step,
                Some(sw.time_span()),
                format!(
                    "axis `{axis}` covers {m} values in Slice2 × Time2 but only {n} in the input: the same data cannot be both in Slice and in Time; broadcast with a new axis instead",
                ),
            ));
            return true;
        }
    }
    false
}

/// Per axis: how many coordinates the factors cover (the product of their valid counts).
fn coverage(ls: &[&Layout], skip: &dyn Fn(&str) -> bool) -> Option<BTreeMap<String, u128>> {
    let mut m: BTreeMap<String, u128> = BTreeMap::new();
    for l in ls {
        for d in &l.dims {
            match d {
                Dim::Factor(f) => {
                    if let Some(a) = &f.axis
                        && !skip(&a.name)
                    {
                        let e = m.entry(a.name.to_string()).or_insert(1);
                        *e = e.checked_mul(u128::from(f.valid))?;
                    }
                }
                Dim::Opaque(_) => return None,
            }
        }
    }
    Some(m)
}

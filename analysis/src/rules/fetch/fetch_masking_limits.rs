//! FET-008: fetch masking of a right-padded innermost axis counts the valid elements of the
//! last packet row (`last_dim_rightmost_valid_count`), 0-255 for 4-bit types and 0-31 for
//! f32. The fix splits the padded axis so a packet row holds at most that many, as the
//! manual's padding case 1 does.

use crate::derive::{self, OpKind};
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::mapping::Axis;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{Method, Slot, output_arg};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg, rewrite_output};

pub const FET_008: Rule = Rule {
    code: "FET-008",
    name: "fetch-masking-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Masked innermost axes stay within the valid-count limits (0-255 for 4-bit, 0-31 for f32)",
    docs: "Fetch masking handles an innermost axis padded on the right (`A # n`, `(# n + A + # m)`): \
           `last_dim_rightmost_valid_count[0]` counts the valid elements of the last packet row \
           and is limited to 0-255 for 4-bit types and 0-31 for f32 (L1902). The stated reason \
           (a 256-byte final packet) does not match these numbers (constraints.md §22 A-25), so \
           visa-lint enforces the literal counts and no byte limit, and no limit for the types \
           the manual does not list. Split the padded axis so the packet row holds at most 31 \
           f32 (or 255 4-bit) elements of it (`m![A # 64]` → Time `A # 64 / 16`, Packet `A # 64 \
           % 16`, as in the manual's padding case 1, L1903-L1911); visa-lint offers this split as \
           a fix when both mappings are written out.",
    bad: "axes![A = 60]; .fetch::<f32, m![1], m![A # 64]>() // 60 valid f32 in the last row",
    good: ".fetch::<f32, m![A # 64 / 16], m![A # 64 % 16]>() // 12 valid in the last row",
    manual: "L1899-L1927",
    generations: Generations::Both,
};

/// FET-008: the rightmost valid count of a masked innermost axis.
pub(super) fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for op in &cx.ops {
        if op.kind != OpKind::Fetch {
            continue;
        }
        let Some(dtype) = op.step.input.as_ref().and_then(|t| t.dtype) else {
            continue;
        };
        let Some(&(_, max)) = cx
            .target
            .fetch_mask_valid_max
            .iter()
            .find(|(d, _)| *d == dtype.canonical())
        else {
            continue;
        };
        let Some(Dim::Factor(f)) = op.packet.dims.last() else {
            continue;
        };
        let Some(axis) = &f.axis else { continue };
        if f.coef != 1 || f.extent == 0 {
            continue;
        }
        let Some(rightmost) = rightmost_valid(op, f, axis) else {
            continue;
        };
        if rightmost <= max {
            continue;
        }
        let at = output_arg(
            op.step,
            (op.step.method == Method::Fetch).then_some(2),
            Slot::Packet,
        );
        let diag = at_arg(
            &FET_008,
            op.step,
            at.map(|a| a.span),
            format!(
                "masking the padded `{}` leaves {rightmost} valid {dtype} elements in the last {}-element packet row (last_dim_rightmost_valid_count); the Fetch Engine counts 0-{max} for {dtype} (L1902, constraints.md §22 A-25). Split the axis so a packet row holds at most {max} of its elements",
                axis.name, f.extent
            ),
        );
        out.push(match split_masked(cx, op, f.extent, max) {
            Some((edits, title)) => diag.with_fix(title, false, edits),
            None => diag,
        });
    }
}

/// The valid elements of the masked innermost Packet factor `f` (of `axis`) in the last packet
/// row, when the axis is padded there; `None` when the row is full.
fn rightmost_valid(op: &derive::Op<'_>, f: &Factor, axis: &Axis) -> Option<u64> {
    // The valid elements of the axis in the last packet row.
    let covered = op
        .time
        .dims
        .iter()
        .chain(op.packet.dims.iter())
        .filter_map(|d| match d {
            Dim::Factor(g) if g.axis.as_ref().is_some_and(|a| a.name == axis.name) => {
                Some(g.coef.saturating_mul(g.valid))
            }
            _ => None,
        })
        .max()
        .unwrap_or(f.valid)
        .min(axis.size);
    let rem = covered % f.extent;
    let rightmost = if covered < f.extent {
        covered
    } else if rem != 0 {
        rem
    } else {
        return None;
    };
    if f.valid == f.extent && covered >= f.extent && rem == 0 {
        return None;
    }
    Some(rightmost)
}

/// FET-008's fix (the manual's padding case 1, L1903-L1911): the masked innermost Packet term
/// `T` (of `extent` positions) split into Time `T / k` and Packet `T % k`, `k` the largest
/// divisor of `extent` within the valid-count limit `max` that keeps the packet a whole
/// number of 8-byte units (ALN-005), so the last packet row holds at most `k` valid
/// elements. Both mappings are rewritten where they are written (the turbofish and the
/// chain's declared type). Its edits and title.
fn split_masked(
    cx: &FnContext<'_>,
    op: &derive::Op<'_>,
    extent: u64,
    max: u64,
) -> Option<(Vec<Edit>, String)> {
    if op.step.method != Method::Fetch {
        return None;
    }
    let ty = op.step.output.as_ref()?;
    let (tm, pm) = (ty.get(Slot::Time)?, ty.get(Slot::Packet)?);
    let time = cx.scope.lowered_terms(&tm.text)?;
    let mut packet = cx.scope.lowered_terms(&pm.text)?;
    let (term, l) = packet.pop()?;
    if l.size != extent || term.contains([',', '[', '(']) {
        return None;
    }
    let outer = packet
        .iter()
        .try_fold(1u64, |a, (_, l)| a.checked_mul(l.size))?;
    let bits = op.bits?;
    let align = cx.target.fetch_align_bytes;
    let k = (2..=max.min(extent - 1)).rev().find(|&k| {
        extent.is_multiple_of(k)
            && outer
                .checked_mul(k)
                .is_some_and(|n| derive::bytes(n, bits).is_multiple_of(align))
    })?;
    let list = |terms: Vec<String>| format!("m![{}]", terms.join(", "));
    let mut time: Vec<String> = time.into_iter().map(|(t, _)| t).collect();
    time.retain(|t| t != "1");
    time.push(format!("{term} / {k}"));
    let mut packet: Vec<String> = packet.into_iter().map(|(t, _)| t).collect();
    packet.push(format!("{term} % {k}"));
    let (time, packet) = (list(time), list(packet));
    let chain = cx
        .model
        .chains
        .iter()
        .find(|c| c.steps.iter().any(|s| std::ptr::eq(s, op.step)))?;
    let mut edits = rewrite_output(chain, op.step, Some(1), Slot::Time, &time)?;
    edits.extend(rewrite_output(
        chain,
        op.step,
        Some(2),
        Slot::Packet,
        &packet,
    )?);
    Some((
        edits,
        format!("split `{term}` by {k}: Time {time}, Packet {packet}"),
    ))
}

#[cfg(test)]
mod tests {
    use crate::rules::fix_testing::assert_fix_clears;

    /// FET-008's fix follows the manual's padding case 1 (L1903-L1911): `A # 64` split by 16
    /// leaves 60 - 48 = 12 valid f32 in the last packet row, within 0-31 (L1902).
    #[test]
    fn masking_fix_splits_the_padded_axis() {
        let fixed = assert_fix_clears(
            include_str!("../../../../fixtures/rules/FET-008.rs"),
            "FET-008",
        );
        assert!(
            fixed.contains(".fetch::<f32, m![B, A # 64 / 16], m![A # 64 % 16]>()"),
            "{fixed}"
        );
    }
}

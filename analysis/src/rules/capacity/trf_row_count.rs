//! CAP-004: a Row mapping has 1, 2, 4 or 8 positions, the MAC row counts an operation uses;
//! a smaller size is padded up to the next one.

use super::sites::{Site, move_into_element, pad_fix, shown};
use crate::diagnostic::{Diagnostic, Edit, Severity};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_004: Rule = Rule {
    code: "CAP-004",
    name: "trf-row-count",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The TRF Row mapping has size 1, 2, 4 or 8",
    docs: "A slice has 8 MAC rows, one TRF bank row each; an operation uses 1, 2, 4 or 8 of them \
           and the Row dimension must have one of these sizes. Pad a Row of 3, 5, 6 or 7 to the \
           next allowed size (`m![N # 8]` for N = 6); a Row over 8 moves factors into Element. \
           Checked on TrfTensor types and the Row of `to_trf`, `align` and the contraction types.",
    bad: "axes![N = 6, K = 64];\nlet w: TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N], m![K]> = ...;",
    good: "axes![N = 6, K = 64];\nlet w: TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N # 8], m![K]> = ...;",
    manual: "L1089, L4529-L4530, L4162-L4167, L132",
    generations: Generations::Both,
};

/// CAP-004: Row sizes 1, 2, 4 or 8.
pub(super) fn check(cx: &FnContext<'_>, sites: &[Site<'_>], out: &mut Vec<Diagnostic>) {
    let allowed = cx.target.trf_row_sizes;
    for site in sites.iter().filter(|s| s.slot == Slot::Row) {
        let Some(n) = site.map.layout.as_deref().map(|l| l.size) else {
            continue;
        };
        if allowed.contains(&n) {
            continue;
        }
        let list = match allowed.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!(
                "{} or {last}",
                rest.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => allowed
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        };
        let next = allowed.iter().copied().find(|&a| a > n);
        let what = shown(cx, site.map);
        let msg = match next {
            Some(m) => format!(
                "the Row mapping {what} of this {} has size {n}; an operation uses {list} of the {} MAC rows: pad it to {m}",
                site.kind.type_name(),
                cx.target.trf_rows
            ),
            None => format!(
                "the Row mapping {what} of this {} has size {n}; a slice has only {} MAC rows (Row::SIZE is {list}), and padding only adds rows, so no padding brings {n} down to a row count: move factors into Element (keep at most {} in Row)",
                site.kind.type_name(),
                cx.target.trf_rows,
                cx.target.trf_rows
            ),
        };
        let d = Diagnostic::new(&CAP_004, site.at, msg);
        out.push(match next {
            Some(m) => pad_fix(cx, d, site, m, format!("pad the Row mapping to {m}")),
            None => match rows_into_element(site, allowed, n) {
                Some((title, edits)) => d.with_fix(title, false, edits),
                None => d,
            },
        });
    }
}

/// The fix for a Row of `n` positions, more than any row count: the Row keeps the outer
/// factor of the largest allowed size that divides `n` (`m![M]`, M = 16 → `m![M / 2]`) and the
/// rest moves to the outside of the Element (`m![M % 2, K]`).
fn rows_into_element(site: &Site<'_>, allowed: &[u64], n: u64) -> Option<(String, Vec<Edit>)> {
    let layout = site.map.layout.as_deref()?;
    let rows = allowed
        .iter()
        .copied()
        .filter(|&a| a > 0 && n.is_multiple_of(a))
        .max()?;
    let inner = n / rows;
    let kept = format!("m![{}]", layout.stride(inner).to_expr());
    move_into_element(site, kept, &layout.window(inner))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, diags, fix_texts};

    #[test]
    fn row_sizes() {
        let k = |n: &str| {
            format!(
                "axes![N = {n}, K = 64];\n#[device(chip = 1)]\nfn k(w: &TrfTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![N], m![K]>) {{}}\n"
            )
        };
        for ok in ["1", "2", "4", "8"] {
            assert!(codes(&k(ok)).is_empty(), "{ok}");
        }
        assert_eq!(codes(&k("6")), vec!["CAP-004"]);
        assert_eq!(fix_texts(&k("6"), "CAP-004"), vec!["m![N # 8]".to_string()]);
        assert_eq!(fix_texts(&k("3"), "CAP-004"), vec!["m![N # 4]".to_string()]);
        assert_eq!(codes(&k("16")), vec!["CAP-004"]);
        // Over 8: the Row keeps 8 and the rest moves to the outside of the Element.
        assert_eq!(
            fix_texts(&k("16"), "CAP-004"),
            vec!["m![N / 2]".to_string(), "m![N % 2, K]".to_string()]
        );
        let d = diags(&k("16"));
        assert!(
            d[0].1.ends_with(
                "padding only adds rows, so no padding brings 16 down to a row count: move \
                 factors into Element (keep at most 8 in Row)"
            ),
            "{}",
            d[0].1
        );
    }
}

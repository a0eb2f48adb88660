//! VCG-003: each gate classifies slices with one threshold, so every slice must hold a
//! contiguous run of the reduce axis: several R factors in Slice need increasing strides from
//! inner to outer. The fix writes the Slice reordered wherever the function writes it.

use super::layouts::{is_axis, render_dim};
use super::mapping_edits::{at_fix, rewrite_mapping};
use super::placement::{Placement, RPart};
use crate::diagnostic::{Diagnostic, Severity};
use crate::mapping::layout::Dim;
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_003: Rule = Rule {
    code: "VCG-003",
    name: "vcg-slice-order",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Several R factors in Slice must have increasing stride from inner to outer",
    docs: "Each gate classifies slices with one threshold, so every slice must hold a contiguous run \
           of R: when R appears several times in Slice, the outer factor must have the larger \
           stride (`R # 16 / 8` before `R # 16 / 2 % 4`). Reordered factors make validity go up \
           and down across slices, which the VCG cannot express. The fix rewrites the Slice wherever the function writes it (parameter types, \
           annotations, return type, turbofish).",
    bad: "Slice m![X, R # 16 / 2 % 4, R # 16 / 8], Time m![R # 16 % 2]",
    good: "Slice m![X, R # 16 / 8, R # 16 / 2 % 4], Time m![R # 16 % 2]",
    manual: "L5610-L5611, L5709-L5712, L5844-L5858, L6454-L6457",
    generations: Generations::Both,
};

/// VCG-003 on a padded R whose Slice factors are not ordered outer to inner: whether it fired.
pub(super) fn check(cx: &FnContext<'_>, p: &Placement<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let (r, more) = (p.r, &p.more);
    if p.slice_parts.len() <= 1 {
        return false;
    }
    let mut by_pos = p.slice_parts.clone();
    by_pos.sort_by_key(|q| q.pos);
    let ordered = by_pos.windows(2).all(|w| w[0].coef > w[1].coef);
    if ordered {
        return false;
    }
    let fixed = reordered(p, &by_pos);
    let written: Vec<String> = by_pos
        .iter()
        .map(|q| format!("{} (stride {})", p.render(q), q.coef))
        .collect();
    let msg = format!(
        "{r}'s Slice factors {} are not ordered outer to inner: strides must increase \
         from inner to outer so each slice holds a contiguous run of {r}, otherwise \
         slice validity is not monotonic. Use Slice m![{}]{more}",
        written.join(", "),
        fixed.join(", "),
    );
    let edits = rewrite_mapping(cx.model, p.slice, &format!("m![{}]", fixed.join(", ")));
    let mut d = at_fix(cx, &VCG_003, p.step, &edits, msg);
    if !edits.is_empty() {
        d = d.with_fix(
            format!("order {r}'s Slice factors outer to inner"),
            false,
            edits,
        );
    }
    out.push(d);
    true
}

/// The digits of Slice with R's factors `by_pos` (in Slice order) put outer to inner, each
/// rendered.
fn reordered(p: &Placement<'_>, by_pos: &[RPart]) -> Vec<String> {
    let (slice, r) = (p.slice, p.r);
    let mut dims = slice.dims.clone();
    let mut sorted = by_pos.to_vec();
    sorted.sort_by_key(|q| std::cmp::Reverse(q.coef));
    let moved: Vec<Dim> = sorted.iter().map(|q| slice.dims[q.pos].clone()).collect();
    for (q, d) in by_pos.iter().zip(moved) {
        dims[q.pos] = d;
    }
    dims.iter()
        .map(|d| match d {
            Dim::Factor(f) if is_axis(d, r) => p.render(&RPart {
                slot: Slot::Slice,
                pos: 0,
                extent: f.extent,
                valid: f.valid,
                coef: f.coef.max(1),
            }),
            _ => render_dim(d),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, kernel};

    #[test]
    fn l5858_slice_reorder_fix_text() {
        // L5844-L5858: the fix is Slice m![X, R # 16 / 8, R # 16 / 2 % 4].
        let src = kernel(
            "R = 13, X = 32",
            "i32",
            "X, R # 16 / 2 % 4, R # 16 / 8",
            "R # 16 % 2",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Min)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-003")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(
            m.contains("Use Slice m![X, R # 16 / 8, R # 16 / 2 % 4]"),
            "{m}"
        );
        assert!(m.contains("i32::MAX"), "{m}");
    }
}

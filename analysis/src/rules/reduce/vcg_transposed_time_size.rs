//! VCG-007: with the reduce axis's inner part in Slice and its outer part in Time, slices
//! below the threshold count as valid at every time step, so padding that adds whole
//! padding-only time steps is over-counted. The fix pads R to slice_size x ceil(|R| /
//! slice_size) wherever the function writes it.

use super::mapping_edits::{at_fix, pad_edits};
use super::placement::Placement;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const VCG_007: Rule = Rule {
    code: "VCG-007",
    name: "vcg-transposed-time-size",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Transposed Slice + Time needs time_size == ceil(|R| / slice_size)",
    docs: "With R's inner part in Slice and its outer part in Time, slices below the threshold are \
           treated as valid at every time step; if the padding adds whole padding-only time steps \
           the VCG over-counts them. Pad R to slice_size x ceil(|R| / slice_size) instead \
           (R = 14 over 4 slices: `R # 16`, not `R # 20`). The fix rewrites `R # p` wherever the function writes it (parameter types, \
           annotations, return type, turbofish).",
    bad: "axes![R = 14]; Slice m![X, R # 20 % 4], Time m![R # 20 / 4]",
    good: "axes![R = 14]; Slice m![X, R # 16 % 4], Time m![R # 16 / 4]",
    manual: "L5734-L5739, L5785-L5807, L6484-L6503",
    generations: Generations::Both,
};

/// VCG-007 on a padded R transposed over Slice (`slice_size`, inner) and Time (`time_size`,
/// outer) whose Time is not ceil(|R| / slice_size).
pub(super) fn check(
    cx: &FnContext<'_>,
    p: &Placement<'_>,
    slice_size: u64,
    time_size: u64,
    out: &mut Vec<Diagnostic>,
) {
    let (r, n, more) = (p.r, p.n, &p.more);
    let need = n.div_ceil(slice_size.max(1));
    if time_size == need {
        return;
    }
    let written = slice_size.saturating_mul(time_size);
    let good = slice_size.saturating_mul(need);
    let msg = format!(
        "transposed Slice + Time placement over-allocates time steps: {r} ({n}) is padded \
         to {written} = {slice_size} (Slice) x {time_size} (Time), but ceil({n} / \
         {slice_size}) = {need}, so the VCG counts padding-only time steps as valid. Pad \
         {r} to {good} instead ({r} # {good}){more}"
    );
    let edits = pad_edits(cx.model, r, written, good);
    let mut d = at_fix(cx, &VCG_007, p.step, &edits, msg);
    if !edits.is_empty() {
        d = d.with_fix(
            format!("pad {r} to {good} instead of {written} where the mappings are written"),
            false,
            edits,
        );
    }
    out.push(d);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, kernel};
    use crate::db::analyse_text;

    #[test]
    fn l5797_transposed_r14_pad20_needs_16() {
        // L5785-L5797: R = 14 over 4 slices padded to 20: time 5 != ceil(14 / 4) = 4, pad to 16.
        let src = kernel(
            "R = 14, X = 64",
            "i32",
            "X, R # 20 % 4",
            "R # 20 / 4",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-007")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(m.contains("padded to 20 = 4 (Slice) x 5 (Time)"), "{m}");
        assert!(m.contains("ceil(14 / 4) = 4"), "{m}");
        assert!(m.contains("R # 16"), "{m}");
        // L5741-L5777: R = 5 padded to 8 over 4 slices, time 2 == ceil(5 / 4): supported.
        let ok = kernel(
            "R = 5, X = 64",
            "i32",
            "X, R # 8 % 4",
            "R # 8 / 4",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(codes(&ok).is_empty(), "{:?}", codes(&ok));
    }

    #[test]
    fn vcg_007_fix_edits_padding_in_parameter_type() {
        // L5807: "Use R # 16 instead of R # 20", applied where the mapping is written.
        let src = "axes![A = 4, R = 14, X = 64];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![X, R # 20 % 4], m![R # 20 / 4], m![A # 8]>) {\n    c.vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_trim_way4::<m![A]>().vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpI32::AddSat);\n    let d = c.vector_init().vector_intra_slice_branch(BranchMode::Unconditional);\n}\n";
        let all = analyse_text(src).diagnostics();
        let d = all.iter().find(|d| d.code() == "VCG-007");
        assert!(d.is_some(), "{all:?}");
        // R # 20 is written twice in the parameter type: both are edited to R # 16.
        let fix = d.and_then(|d| d.fixes.first());
        let edits: Vec<(usize, &str)> = fix
            .map(|f| {
                f.edits
                    .iter()
                    .map(|e| (e.span.start as usize, e.new_text.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(edits.len(), 2, "{edits:?}");
        for (at, text) in edits {
            assert_eq!(text, "16");
            assert_eq!(&src[at..at + 2], "20");
        }
    }
}

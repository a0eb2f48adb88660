//! ALN-007: commits write whole 8-byte units, so a committed Element that is not a multiple of
//! 8 bytes gets a dummy tail from the compiler that writes past the tensor. The dispatcher
//! skips it when that tail clobbers a neighbour, which is CMT-007's error; the fix makes the
//! padding explicit.

use super::addresses::round_up;
use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Chain, Method, Slot, Step, output_arg, slot_bytes};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{
    FnContext, at_arg, pad_alias_in_tensor_alias, pad_in_tensor_alias, pad_output,
};

pub const ALN_007: Rule = Rule {
    code: "ALN-007",
    name: "commit-8-byte-units",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A committed Element spans whole 8-byte units",
    docs: "commit_in_size and commit_size are 8, 16, 24 or 32 bytes, so a commit always writes \
           an 8-byte-aligned range; when the Element mapping is not a multiple of 8 bytes the \
           compiler appends a dummy tail that writes past the tensor and can clobber its \
           neighbour (CMT-007). visa-lint checks the committed Element's total size; the per-flit \
           split needs the commit-sequencer derivation. Make the padding explicit: bf16 `m![1]` → \
           `m![1 # 4]`.",
    bad: "...cast::<bf16, m![1 # 16]>().commit::<m![1]>(0)",
    good: "...cast::<bf16, m![1 # 16]>().commit::<m![1 # 4]>(0)",
    manual: "L2193, L2330, L7699",
    generations: Generations::Both,
};

/// ALN-007: a committed Element is a whole number of 8-byte units.
pub(super) fn check(cx: &FnContext<'_>, chain: &Chain, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(ty) = step.output.as_ref() else {
        return;
    };
    let Some((d, n, bytes)) = slot_bytes(ty, Slot::Element) else {
        return;
    };
    // Commits write in units of the smallest commit size, 8 bytes (L2193, L7699).
    let Some(u) = cx.target.commit_sizes_main.iter().copied().min() else {
        return;
    };
    if bytes.is_multiple_of(u) {
        return;
    }
    // `commit::<Element>(addr)` writes it; `commit_view(dst)` takes it from `dst`'s type.
    let generic = (step.method == Method::Commit).then_some(0);
    let at = output_arg(step, generic, Slot::Element);
    let text = ty.get(Slot::Element).map_or("", |m| m.text.as_str());
    let full = round_up(bytes, u).unwrap_or(u);
    let mut diag = at_arg(
        &ALN_007,
        step,
        at.map(|a| a.span),
        format!(
            "the committed Element {text} is {bytes} bytes ({n} × {d}); commits write whole {u}-byte units, \
             so the compiler adds a {}-byte dummy tail past the tensor",
            full - bytes
        ),
    );
    let title = format!("make the padding explicit ({full} bytes)");
    let elems = d.elems_for(full);
    if let Some(edits) =
        elems.and_then(|m| pad_output(cx.scope, chain, step, generic, Slot::Element, m))
    {
        diag = diag.with_fix(title, false, edits);
    } else if let Some((k, padded)) =
        elems.and_then(|m| pad_in_tensor_alias(step, generic, Slot::Element, m))
    {
        let title = format!("{title} where the tensor type alias is defined");
        diag = diag.with_tensor_alias_pad(title, k, padded);
    } else if let Some((alias, padded)) =
        elems.and_then(|m| pad_alias_in_tensor_alias(cx.scope, step, generic, Slot::Element, m))
    {
        diag = diag.with_alias_pad(&alias, padded);
    }
    out.push(diag);
}

#[cfg(test)]
mod tests {
    #[test]
    fn commit_units_fix_pads_the_annotation() {
        // GEMV (L452-L461): the committed Element m![1] is written in the `let` annotation.
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/manual/0401_gemv.rs"),
            "ALN-007",
        );
        assert!(fixed.contains("Slice, m![1 # 4]> = ctx"), "{fixed}");
    }

    /// A mapping alias named inside a tensor type alias is padded where it is defined.
    #[test]
    fn commit_units_fix_pads_the_mapping_alias() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/ALN-007-mapping-alias-in-tensor-alias.rs"),
            "ALN-007",
        );
        assert!(fixed.contains("pub type Cell = m![1 # 2];"), "{fixed}");
    }

    /// The Element written in place inside a tensor type alias is padded where the alias is
    /// defined; the other alias keeps its mapping.
    #[test]
    fn commit_units_fix_pads_the_tensor_alias() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/ALN-007-tensor-alias.rs"),
            "ALN-007",
        );
        assert!(
            fixed.contains("m![A / 8 # 256], m![A % 8 = 5 # 8]>;"),
            "{fixed}"
        );
        assert!(
            fixed.contains(
                "pub type Row = DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>;"
            ),
            "{fixed}"
        );
    }
}

//! CAP-003: every Slice mapping of a `#[device]` kernel has as many positions as a cluster has
//! slices; an error where the Tensor Unit reads it, a warning where only DMA, views and tiles do.

use super::grid;
use super::sites::Site;
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;
use std::collections::HashSet;

pub const CAP_003: Rule = Rule {
    code: "CAP-003",
    name: "slice-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Every Slice mapping of a device kernel has size exactly 256",
    docs: "A cluster has 256 slices and partial-cluster operation is not supported (L1081): \
           `furiosa_visa_std`'s `BeginTensor::fetch` asserts \"Slice size must be 256, got \
           {n}\" and the Switch Engine requires `InSlice::SIZE = OutSlice::SIZE`. Pad a \
           smaller mapping (`m![A / 8]` of size 64 → `m![A / 8 # 256]`); a larger one must \
           move factors into Time or Element. Checked in `#[device]` kernels (see CAP-001). \
           Severity: an error for a Slice mapping that reaches the Tensor Unit (as CAP-002); a \
           warning for a DM or HBM tensor only DMA, views and tiles touch: the library does not \
           check those (the vendor's tested `view_padding` example keeps a DM tensor of 4 \
           slices), but the manual states the size for every tensor and fetching it later \
           panics.",
    bad: "axes![A = 512];\ntype Slice = m![A / 8];",
    good: "axes![A = 512];\ntype Slice = m![A / 8 # 256];",
    manual: "L1081, L1710, L3501-L3502",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 allows a Slice of 64, 128 or 256 \
         (`furiosa-opt-std/src/constraints.rs:48-56`): 64 slices for 1 processing element, 128 for \
         2, 256 for 4 or 8 (`furiosa-opt-examples/src/pe_count.rs:14-20`); visa-lint asks for the \
         size of the `#[device(pe)]` grid there, as an error outside {64, 128, 256} (the library's \
         assertion) and a warning for another topology's size, which the library accepts",
    ),
};

/// CAP-003 on the Slice mappings of `sites`, which must have `want` positions (the
/// grid's slices); `reached` holds the spans of the mappings that reach the Tensor Unit.
pub(super) fn check(
    cx: &FnContext<'_>,
    sites: &[Site<'_>],
    reached: &HashSet<Span>,
    want: u64,
    out: &mut Vec<Diagnostic>,
) {
    grid::check(cx, sites, reached, Slot::Slice, &CAP_003, want, out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{diags, fix_texts};

    #[test]
    fn alias_reported_once_with_its_padded_mapping_at_the_use() {
        let src = "axes![A = 512];\ntype S = m![A / 8];\n#[device(chip = 1)]\nfn k(a: &DmTensor<i8, m![1], m![1 # 2], S, m![A % 8]>, b: &DmTensor<i8, m![1], m![1 # 2], S, m![A % 8]>) {}\n";
        let d = diags(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].1.contains("`S`") && d[0].1.contains("type S"),
            "{}",
            d[0].1
        );
        // The use is replaced by the padded mapping, so the other use keeps its type.
        assert_eq!(fix_texts(src, "CAP-003"), ["m![A / 8 # 256]"]);
    }

    /// `Blocks` is named inside the tensor alias `Input`, so no use in the kernel can be
    /// edited: the fix pads the alias where it is defined, following `Blocks = Strip` to
    /// `Strip`'s `m![...]` (L1081: `m![X / N # 256]`).
    #[test]
    fn alias_inside_a_tensor_alias_is_padded_where_it_is_defined() {
        let src = include_str!("../../../../fixtures/rules/CAP-003-form-alias-chain.rs");
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CAP-003");
        assert!(fixed.contains("type Strip = m![A / 16 # 256];"), "{fixed}");
        assert!(fixed.contains("type Blocks = Strip;"), "{fixed}");
        let d = crate::check_text(src);
        let fix = &d[0].fixes[0];
        assert_eq!(fix.title, "pad `Blocks` where it is defined, for every use");
        assert!(fix.edits_definition && fix.alias_pad.is_empty());
    }

    /// A helper's Slice parameter inferred from its argument's type (`rows(ctx, &staged)`,
    /// `staged` typed `Tile16::Slice` by `stage::<Tile16>`): nothing at the call writes it,
    /// so the fix pads `Tile16::Slice` where its `impl` defines it, the staging call's fix.
    /// A helper's tail writes its tensor's Slice twice (the return type and the `to_dm`
    /// turbofish): the fix pads both, so its caller gets the padded tensor.
    #[test]
    fn the_fix_pads_the_return_type_with_the_turbofish() {
        let fixed = crate::rules::fix_testing::assert_fix_clears(
            include_str!("../../../../fixtures/rules/CAP-003-return-and-turbofish.rs"),
            "CAP-003",
        );
        assert!(
            fixed.contains("-> DmTensor<i32, Chip, Cluster, m![1 # 256], m![P]> {\n    iota.to_dm::<Cluster, m![1 # 256], m![P]>"),
            "{fixed}"
        );
    }

    #[test]
    fn a_slice_inferred_from_an_argument_is_padded_where_its_alias_is_defined() {
        let src = include_str!("../../../../fixtures/rules/CAP-003-inferred-from-argument.rs");
        let d = crate::check_text(src);
        let at_rows: Vec<&str> = d
            .iter()
            .filter(|d| d.code() == "CAP-003" && d.message.contains("mapping `S`"))
            .flat_map(|d| d.fixes.iter().map(|f| f.title.as_str()))
            .collect();
        assert_eq!(at_rows, ["pad the Slice mapping to 256 in `Tile16::Slice`"]);
        let fixed = crate::rules::fix_testing::assert_fix_clears(src, "CAP-003");
        assert!(
            fixed.contains("type Slice = m![[T, 1 # 2] # 256];"),
            "{fixed}"
        );
    }

    /// No padding brings 1024 slices down to 256: the fix keeps A's outer 256 in the Slice
    /// and moves the rest to the outside of the Element, where every element keeps a place.
    #[test]
    fn larger_than_the_hardware_moves_factors_into_the_element() {
        let src = "axes![A = 1024];\n#[device(chip = 1)]\nfn k(a: &DmTensor<i8, m![1], m![1 # 2], m![A], m![1]>) {}\n";
        let d = diags(src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].1.starts_with("Slice size must be 256, got 1024"),
            "{}",
            d[0].1
        );
        assert!(
            d[0].1.contains(
                "padding only adds positions, so no padding brings 1024 down to 256; move \
                 factors into Time or Element"
            ),
            "{}",
            d[0].1
        );
        assert_eq!(fix_texts(src, "CAP-003"), ["m![A / 4]", "m![A % 4]"]);
        crate::rules::fix_testing::assert_fix_clears(src, "CAP-003");
    }
}

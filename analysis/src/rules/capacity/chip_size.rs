//! CAP-001: every Chip mapping of a `#[device]` kernel has as many positions as the chips the
//! kernel runs on (`#[device(chip = N)]`), since each position is one chip.

use super::sites::Site;
use super::spatial_size::spatial;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::Severity;
use crate::model::Slot;
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_001: Rule = Rule {
    code: "CAP-001",
    name: "chip-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "In a `#[device(chip = N)]` kernel every Chip mapping has size exactly N",
    docs: "The runtime launches kernels at chip granularity, so a device tensor's Chip mapping \
           covers exactly the kernel's chips: `Chip::SIZE == NUM_CHIPS`. Use fewer chips by \
           padding (`m![1]` → `m![1 # N]`); a Chip mapping larger than N does not fit and its \
           extra factors belong in Element (or the kernel runs on more chips): the fix moves \
           them to the outside of the Element (`m![A], m![B]` → `m![1], m![A, B]`). Checked on every \
           Chip mapping written in a `#[device]` kernel (parameters, `let` annotations, \
           turbofish); helper functions are generic over the launch and are not checked \
           (constraints.md §22 A-2). The manual's first program puts `HbmTensor<i8, m![A], m![B]>` \
           (A = 8) under `chip = 1` (§22 A-12). KRN-010 reports a `#[device]` attribute whose chip \
           count is missing; this rule compares the mappings with it.",
    bad: "axes![A = 8, B = 512];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![A], m![B]>) {}",
    good: "axes![A = 8, B = 512];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![A, B]>) {}",
    manual: "L1079, L1083-L1084, L1751, L55-L63",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `#[device]` without `chip` runs on one chip \
         (`furiosa-opt-macro/src/lib.rs:179-187`), so there the Chip mappings of such a kernel \
         have size 1; under the manual's library it is KRN-010 and the Chip mappings are not \
         checked",
    ),
};

/// CAP-001 on the Chip mappings of `sites`, in a kernel that runs on `chips` chips.
pub(super) fn check(cx: &FnContext<'_>, sites: &[Site<'_>], chips: u64, out: &mut Vec<Diagnostic>) {
    spatial(cx, sites, Slot::Chip, &CAP_001, chips, out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, diags, fix_texts};

    const HBM_8_CHIPS: &str = "axes![A = 8, B = 512];\n#[device(chip = CHIPS)]\nfn kernel(ctx: &mut Context, h: &HbmTensor<bf16, m![A], m![B]>) {}\n";

    #[test]
    fn l1069_hbm_over_eight_chips() {
        // "HbmTensor<bf16, m![A], m![B]> distributes 8 × 512 = 4096 elements across 8 chips
        // with 512 elements per chip."
        assert!(codes(&HBM_8_CHIPS.replace("CHIPS", "8")).is_empty());
        let d = diags(&HBM_8_CHIPS.replace("CHIPS", "1"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "CAP-001");
        assert!(
            d[0].1.starts_with("Chip size must be 1, got 8"),
            "{}",
            d[0].1
        );
    }

    /// The catalog's sketch of CAP-001 (the manual's first program, L55-L63): the Chip
    /// factors move to the outside of the Element, `m![A], m![B]` → `m![1], m![A, B]`; on 2
    /// chips the Chip keeps A's outer 2, and a Chip of padding only is written smaller.
    #[test]
    fn l55_l63_chip_factors_move_into_the_element() {
        let one = HBM_8_CHIPS.replace("CHIPS", "1");
        assert_eq!(fix_texts(&one, "CAP-001"), ["m![1]", "m![A, B]"]);
        let two = HBM_8_CHIPS.replace("CHIPS", "2");
        assert_eq!(fix_texts(&two, "CAP-001"), ["m![A / 4]", "m![A % 4, B]"]);
        let padding = one.replace("m![A], m![B]", "m![1 # 4], m![B]");
        assert_eq!(fix_texts(&padding, "CAP-001"), ["m![1]"]);
    }

    /// A Chip alias shared with a one-chip kernel cannot be padded where it is defined; the
    /// two-chip kernel's other fix runs it on one chip, as its mappings say, which clears its
    /// finding and its helper's at once and adds no error.
    #[test]
    fn shared_chip_alias_fix_runs_the_kernel_on_fewer_chips() {
        let text = include_str!("../../../../fixtures/rules/CAP-001-shared-chip-alias.rs");
        let before = crate::check_text(text);
        let fixes = &before
            .iter()
            .find(|d| d.code() == "CAP-001")
            .expect("CAP-001")
            .fixes;
        let k = fixes
            .iter()
            .position(|f| f.title.starts_with("run the kernel on 1 chip"))
            .expect("the chip-count fix");
        assert!(!fixes[k].safe);
        let fixed = crate::rules::fix_testing::apply(text, "CAP-001", k).expect("applies");
        assert!(
            fixed.contains("#[device(chip = 1)]\nfn training_card"),
            "{fixed}"
        );
        let after = crate::check_text(&fixed);
        assert!(
            after
                .iter()
                .all(|d| d.severity < crate::diagnostic::Severity::Error),
            "{after:#?}"
        );
    }
}

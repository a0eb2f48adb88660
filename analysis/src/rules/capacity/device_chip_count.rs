//! KRN-010: a `#[device]` kernel says on how many chips it runs (`chip = N`, at least 1), since
//! every Chip mapping of the kernel is sized by it.

use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const KRN_010: Rule = Rule {
    code: "KRN-010",
    name: "device-chip-count",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`#[device(chip = N)]` names the kernel's chip count, N >= 1",
    docs: "The device attribute sets NUM_CHIPS, the size every Chip mapping of the kernel must \
           have: the runtime launches kernels at chip granularity. A `#[device]` without \
           `chip = N` (an integer literal), or with `chip = 0`, gives the kernel no chip count; \
           this rule reports the attribute (at the function's name). Each Chip mapping that \
           disagrees with N is CAP-001, reported where the mapping is written.",
    bad: "#[device]\nfn kernel(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A, B]>) {}",
    good: "#[device(chip = 1)]\nfn kernel(ctx: &mut Context, h: &HbmTensor<i8, m![1], m![A, B]>) {}",
    manual: "L62, L1083-L1084, L1751",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `#[device]` defaults `chip` to 1 and `pe` to 8 \
         (`furiosa-opt-macro/src/lib.rs:179-188`; the macro also takes a `chip` that is not an \
         integer literal as 1), so an attribute without `chip` is legal there: visa-lint reads it \
         as one chip (CAP-001 sizes the Chip mappings by 1) and reports only `chip = 0`",
    ),
};

/// KRN-010: a `#[device]` kernel with no chip count (`chips` is `None`) or `chip = 0`.
pub(super) fn report(cx: &FnContext<'_>, chips: Option<u64>) -> Diagnostic {
    let message = match chips {
        Some(_) => {
            "`#[device(chip = 0)]`: a kernel runs on at least one chip; write the number \
             of chips it uses"
        }
        None => {
            "`#[device]` needs `chip = N` with N an integer literal, the number of chips the \
             kernel runs on; every Chip mapping of the kernel is sized by it"
        }
    };
    Diagnostic::new(&KRN_010, cx.model.span, message)
}

#[cfg(test)]
mod tests {
    use super::super::tests::codes;

    #[test]
    fn krn010_missing_or_zero_chip_count() {
        let k = |attr: &str| {
            format!("axes![A = 8];\n{attr}\nfn k(h: &HbmTensor<i8, m![1], m![A]>) {{}}\n")
        };
        assert_eq!(codes(&k("#[device]")), vec!["KRN-010"]);
        assert_eq!(codes(&k("#[device(chip = 0)]")), vec!["KRN-010"]);
        assert!(codes(&k("#[device(chip = 1)]")).is_empty());
    }
}

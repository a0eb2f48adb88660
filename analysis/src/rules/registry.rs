//! The rule registry: every diagnostic code visa-lint can emit, with its documentation.
//!
//! Codes from `spec/constraints.md` (`MAP-001`, `SEQ-001`, …) are the hardware rules; `VL-*`
//! codes are the tool's own (syntax errors, unsupported notation, arithmetic overflow).

pub use crate::rule::{Rule, Status};

/// Every family's rules, in the order `--list-rules` prints them.
const FAMILIES: &[&[Rule]] = &[
    super::tool::RULES,
    super::kernel::RULES,
    super::opt_std::RULES,
    super::mapping::RULES,
    super::capacity::RULES,
    super::alignment::RULES,
    super::sequencer::RULES,
    super::fetch::RULES,
    super::collect::RULES,
    super::vector::RULES,
    super::reduce::RULES,
    super::inter_slice::RULES,
    super::switch::RULES,
    super::contraction::RULES,
    super::cast::RULES,
    super::transpose::RULES,
    super::commit::RULES,
    super::dma::RULES,
    super::bank::RULES,
    super::schedule::RULES,
];

/// Every registered rule: families in the order their codes first appear in [`FAMILIES`],
/// codes in order within each. (A rule is declared in the module that checks it, which is not
/// always the module named after its code's family: KRN-003 lives with the switch rules.)
pub fn all() -> impl Iterator<Item = &'static Rule> {
    static SORTED: std::sync::OnceLock<Vec<&'static Rule>> = std::sync::OnceLock::new();
    SORTED
        .get_or_init(|| {
            let family = |r: &Rule| r.code.split('-').next().unwrap_or_default();
            let mut order: Vec<&str> = Vec::new();
            for r in FAMILIES.iter().flat_map(|f| f.iter()) {
                if !order.contains(&family(r)) {
                    order.push(family(r));
                }
            }
            let mut rules: Vec<&'static Rule> = FAMILIES.iter().flat_map(|f| f.iter()).collect();
            rules.sort_by_key(|r| (order.iter().position(|f| *f == family(r)), r.code));
            rules
        })
        .iter()
        .copied()
}

/// Looks a rule up by its code (`MAP-001`) or its name (`stride-must-divide`).
pub fn rule(code_or_name: &str) -> Option<&'static Rule> {
    all().find(|r| r.code.eq_ignore_ascii_case(code_or_name) || r.name == code_or_name)
}

/// The rules reference (`docs/rules.md`), generated from the registry.
pub fn markdown() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "# visa-lint rules\n\n<!-- Generated from analysis/src/rules by `cargo test --test docs`; do not edit. -->\n\n\
         Each rule's *Manual* line gives where the TCP Virtual ISA manual states it: `L1234` is a \
         line of the manual's main text, `seed 000 L123` a line of its separate DMA page.\n\n\
         | code | name | severity | status |\n|---|---|---|---|\n",
    );
    let status = |s: Status| match s {
        Status::Implemented => "implemented".to_string(),
        _ => format!("{}: {}", s.as_str(), s.reason()),
    };
    for r in all() {
        let _ = writeln!(
            out,
            "| [{}](#{}) | {} | {} | {} |",
            r.code,
            r.code.to_ascii_lowercase(),
            r.name,
            r.severity.as_str(),
            status(r.status)
        );
    }
    for r in all() {
        let _ = write!(
            out,
            "\n## {}\n\n**{}** · default severity `{}` · {}\n\n{}\n\n{}\n",
            r.code,
            r.name,
            r.severity.as_str(),
            status(r.status),
            r.summary,
            r.docs
        );
        if !r.bad.is_empty() {
            let _ = write!(out, "\nBreaks the rule:\n\n```rust\n{}\n```\n", r.bad);
        }
        if !r.good.is_empty() {
            let _ = write!(out, "\nFollows it:\n\n```rust\n{}\n```\n", r.good);
        }
        let _ = writeln!(out, "\nManual: {}", r.manual);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_and_names_are_unique_and_well_formed() {
        let mut codes = HashSet::new();
        let mut names = HashSet::new();
        for r in all() {
            assert!(codes.insert(r.code), "duplicate code {}", r.code);
            assert!(names.insert(r.name), "duplicate name {}", r.name);
            let (family, number) = r.code.split_once('-').expect("code has a dash");
            assert!(family.chars().all(|c| c.is_ascii_uppercase()), "{}", r.code);
            assert!(
                number.len() == 3 && number.chars().all(|c| c.is_ascii_digit()),
                "{}",
                r.code
            );
            assert!(
                r.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
            );
            assert!(
                !r.summary.is_empty() && !r.docs.is_empty(),
                "{} lacks docs",
                r.code
            );
        }
    }

    #[test]
    fn lookup_by_code_and_name() {
        assert_eq!(rule("MAP-001").map(|r| r.name), Some("stride-must-divide"));
        assert_eq!(rule("stride-must-divide").map(|r| r.code), Some("MAP-001"));
        assert!(rule("XYZ-999").is_none());
    }
}

//! The rule registry: every diagnostic code visa-lint can emit, with its documentation.
//!
//! Codes from `spec/constraints.md` (`MAP-001`, `SEQ-001`, …) are the hardware rules; `VL-*`
//! codes are the tool's own (syntax errors, unsupported notation, arithmetic overflow).

pub use crate::rule::{Generations, Rule, Status};

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
         line of the manual's main text, `seed 000 L123` a line of its separate DMA page. Its \
         *Applies to* line says which generations of the vendor's library it applies to, the \
         manual's `furiosa_visa_std` and furiosa-opt-std 0.6, and where they differ, why: a \
         `file:line` there is the vendor's repository furiosa-ai/furiosa-opt at `ebb846a`.\n\n\
         | code | name | severity | status | applies to |\n|---|---|---|---|---|\n",
    );
    let applies = |g: Generations| match g {
        Generations::Both => "both",
        Generations::VisaStdOnly(_) => "furiosa_visa_std only",
        Generations::OptStdOnly(_) => "furiosa-opt-std 0.6 only",
        Generations::Differs(_) => "both, differently",
    };
    let status = |s: Status| match s {
        Status::Implemented => "implemented".to_string(),
        _ => format!("{}: {}", s.as_str(), s.reason()),
    };
    for r in all() {
        let _ = writeln!(
            out,
            "| [{}](#{}) | {} | {} | {} | {} |",
            r.code,
            r.code.to_ascii_lowercase(),
            r.name,
            r.severity.as_str(),
            status(r.status),
            applies(r.generations)
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
        let _ = writeln!(out, "\nApplies to: {}", r.generations);
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

    /// Whether a note names its evidence: a manual line (`L1089`), a file and line
    /// (`CHANGES.md:26-32`, `cast.rs:20-33`) or a section of the project's notes (`§7`).
    fn cites_evidence(note: &str) -> bool {
        let chars: Vec<char> = note.chars().collect();
        chars.windows(3).any(|w| match w {
            [before, 'L', digit] => !before.is_alphanumeric() && digit.is_ascii_digit(),
            [_, ':', digit] => digit.is_ascii_digit(),
            [_, '§', _] => true,
            _ => false,
        })
    }

    #[test]
    fn every_rule_says_which_generations_it_applies_to_and_why() {
        for r in all() {
            let g = r.generations;
            let note = g.note();
            if g == Generations::Both {
                continue;
            }
            assert!(
                cites_evidence(note),
                "{}: its generations note cites no manual line or vendor file:line: {note}",
                r.code
            );
            if !matches!(g, Generations::OptStdOnly(_)) {
                assert!(
                    note.contains("furiosa-opt-std 0.6"),
                    "{}: the note must say what furiosa-opt-std 0.6 does: {note}",
                    r.code
                );
            }
        }
    }

    #[test]
    fn rules_the_manual_does_not_state_apply_to_furiosa_opt_std_only() {
        for r in all() {
            let vendor_only = r.code.starts_with("OPT-") || r.manual.is_empty();
            let opt_only = matches!(r.generations, Generations::OptStdOnly(_));
            if vendor_only {
                assert!(opt_only, "{} is furiosa-opt-std's rule: say so", r.code);
            }
            if opt_only {
                let tools_own = r.code.starts_with("VL-") && r.manual.starts_with('(');
                assert!(
                    vendor_only || tools_own,
                    "{} follows the manual ({}), yet applies to furiosa-opt-std only",
                    r.code,
                    r.manual
                );
            }
        }
    }

    #[test]
    fn generations_read_as_the_explain_line_says() {
        let line = |code: &str| rule(code).map(|r| r.generations.to_string());
        assert_eq!(
            line("MAP-001").as_deref(),
            Some("furiosa_visa_std (the manual) and furiosa-opt-std 0.6")
        );
        assert!(
            line("ALN-001").is_some_and(|l| l.starts_with("furiosa_visa_std (the manual) only: "))
        );
        assert!(line("OPT-001").is_some_and(|l| l.starts_with("furiosa-opt-std 0.6 only: ")));
        let alignment = rule("ALN-001").map(|r| r.generations);
        assert!(
            alignment.is_some_and(|g| g.applies_to(crate::library::Generation::VisaStd)
                && !g.applies_to(crate::library::Generation::OptStd))
        );
    }

    #[test]
    fn lookup_by_code_and_name() {
        assert_eq!(rule("MAP-001").map(|r| r.name), Some("stride-must-divide"));
        assert_eq!(rule("stride-must-divide").map(|r| r.code), Some("MAP-001"));
        assert!(rule("XYZ-999").is_none());
    }
}

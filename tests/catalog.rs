//! The rule registry is the project's catalog: 183 hardware rules plus the tool's own. The
//! tests marked `#[ignore]` also cross-check it against the external rule catalog the project
//! was specified from, when that catalog sits beside the repository (CI has it; a clone does
//! not need it): `cargo test --test catalog -- --ignored`.

use std::collections::BTreeMap;
use visa_analysis::rules::registry::{self, Status};

/// Each catalog ID with its decidability classes (`S0`..`S3`, `R`), read from its section.
fn catalog() -> BTreeMap<String, String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/constraints.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} must sit beside the repository: {e}", path.display()));
    // (Only the ignored cross-checks read it.)
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("#### ") {
            let id = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            out.insert(id.clone(), String::new());
            current = Some(id);
        } else if line.starts_with("## ") {
            current = None;
        } else if let Some(id) = &current {
            // Classes are bold: **S1**, **S2/R**, **R/I**.
            for bold in line.split("**").skip(1).step_by(2) {
                if bold
                    .split('/')
                    .all(|c| matches!(c, "S0" | "S1" | "S2" | "S3" | "R" | "I"))
                {
                    let classes = out.entry(id.clone()).or_default();
                    classes.push_str(bold);
                    classes.push(' ');
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "needs the external rule catalog beside the repository; CI runs it"]
fn the_catalog_has_183_rules() {
    // constraints.md §1: "Total 183".
    assert_eq!(catalog().len(), 183);
}

#[test]
#[ignore = "needs the external rule catalog beside the repository; CI runs it"]
fn every_catalog_rule_is_registered() {
    let missing: Vec<String> = catalog()
        .into_keys()
        .filter(|id| registry::rule(id).is_none())
        .collect();
    assert!(missing.is_empty(), "not in the registry: {missing:?}");
}

#[test]
fn the_registry_holds_the_183_hardware_rules_and_the_tools_own() {
    // The tool's own rules (VL) and furiosa-opt-std's refusals (OPT) are not in the catalog.
    let hardware = registry::all()
        .filter(|r| !r.code.starts_with("VL-") && !r.code.starts_with("OPT-"))
        .count();
    assert_eq!(hardware, 183);
    // Every rule is decided: checked, not-static, covered or unreachable, none "planned".
    let planned: Vec<&str> = registry::all()
        .filter(|r| matches!(r.status, Status::Planned(_)))
        .map(|r| r.code)
        .collect();
    assert!(planned.is_empty(), "planned: {planned:?}");
}

/// Families whose issues ask for every rule to be implemented, or not-static where the catalog
/// marks it R (issue 5: CAP, CON, SWI, CST, TRN, SCH, BNK; issue 6: VEC, ISR, VCG, XSL).
const DECIDED_FAMILIES: &[&str] = &[
    "CAP", "CON", "SWI", "CST", "TRN", "SCH", "BNK", "VEC", "ISR", "VCG", "XSL",
];

/// Rules constraints.md §22 tells us to keep dormant (no API can express them), with the entry
/// that says so; they are `unreachable` in the registry.
const DORMANT: &[(&str, &str)] = &[(
    "CON-013",
    "A-20: reduce-max has no visible API (dumps show `reduce_op = Add`, L3715); keep the rule dormant until the op selector is identified",
)];

#[test]
#[ignore = "needs the external rule catalog beside the repository; CI runs it"]
fn decided_families_have_no_planned_rules_and_not_static_only_where_the_catalog_says_r() {
    let catalog = catalog();
    let mut wrong = Vec::new();
    for r in registry::all() {
        let family = r.code.split('-').next().unwrap_or_default();
        if !DECIDED_FAMILIES.contains(&family) {
            continue;
        }
        let classes = catalog.get(r.code).map(String::as_str).unwrap_or("");
        match r.status {
            Status::Implemented => {}
            Status::NotStatic(why) if classes.contains('R') && !why.is_empty() => {}
            Status::NotStatic(_) if !classes.contains('R') => wrong.push(format!(
                "{}: not-static, but the catalog marks it `{}`",
                r.code,
                classes.trim()
            )),
            Status::Unreachable(_) if DORMANT.iter().any(|(c, _)| *c == r.code) => {}
            other => wrong.push(format!(
                "{}: {} ({})",
                r.code,
                other.as_str(),
                other.reason()
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

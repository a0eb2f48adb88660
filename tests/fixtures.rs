//! Runs every kernel under `fixtures/` and compares its diagnostics with the inline caret
//! expectations (DESIGN.md §5). Files under `fixtures/ok/` must produce no diagnostics at all.

use std::path::{Path, PathBuf};
use visa_analysis::library::Library;
use visa_analysis::rules::registry::{self, Status};
use visa_lint_tests::{Expectation, actual, expectations, misapplied};

fn fixture_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            // Fixture crates are checked as crates (tests/crates.rs), not file by file.
            if p.is_dir() && p.join("Cargo.toml").is_file() {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut out,
    );
    out
}

fn is_ok_fixture(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "ok")
}

#[test]
fn every_fixture_produces_exactly_its_expected_diagnostics() {
    let mut failures = Vec::new();
    let files = fixture_files();
    assert!(!files.is_empty(), "no fixtures found");
    for path in &files {
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        let mut expected = expectations(&text);
        if is_ok_fixture(path) && !expected.is_empty() {
            failures.push(format!(
                "{}: fixtures/ok files must not expect diagnostics",
                path.display()
            ));
        }
        let diags = visa_analysis::check_text(&text);
        // Each rule says which library generations it applies to (issue 29): a fixture written
        // against one never gets a diagnostic of a rule for the other only.
        let library = Library::from_source(&text).unwrap_or_default().generation;
        failures.extend(misapplied(path, library, &diags));
        // An annotation without a severity matches any: compare the severity only where the
        // fixture states one (`^^^ MAP-010 (warning)`).
        let mut got: Vec<Expectation> = diags
            .iter()
            .map(|d| {
                let mut g = actual(&text, d);
                if !expected
                    .iter()
                    .any(|e| e.severity.is_some() && e.matches(&g))
                {
                    g.severity = None;
                }
                g
            })
            .collect();
        expected.sort();
        got.sort();
        if expected != got {
            let missing: Vec<String> = expected
                .iter()
                .filter(|e| !got.iter().any(|g| e.matches(g)))
                .map(|e| e.to_string())
                .collect();
            let extra: Vec<String> = diags
                .iter()
                .filter(|d| !expected.iter().any(|e| e.matches(&actual(&text, d))))
                .map(|d| format!("{} ({})", actual(&text, d), d.message))
                .collect();
            failures.push(format!(
                "{}:\n  missing: {missing:?}\n  unexpected: {extra:?}",
                path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(path)
                    .display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Rules that never report by themselves (infrastructure), with the reason.
const SILENT: &[(&str, &str)] = &[
    (
        "MAP-007",
        "equivalence is used by other rules; it reports nothing itself",
    ),
    (
        "CAP-009",
        "permissive: Time has no size limit, so no CAP rule reports Time sizes; fixtures/ok/CAP-009.rs has a 2^40 Time",
    ),
    (
        "VCG-004",
        "permissive: R factors of Time in any order are accepted; fixtures/ok/VCG-004.rs would fire VCG-003/006 if they were not",
    ),
    (
        "VCG-010",
        "a suppression: no VCG is needed when every packet is full or empty; fixtures/ok/VCG-010.rs would fire VCG-005/006 otherwise",
    ),
];

/// Rules whose trigger cannot be written in a Rust file, with where they are tested instead.
const TRIGGERED_ELSEWHERE: &[(&str, &str)] = &[
    (
        "MAP-008",
        "`B'` is not a Rust token; tests/cli.rs triggers it through `visa-lint eval`",
    ),
    (
        "VL-010",
        "a crate's library version is in its Cargo.toml; analysis/src/db.rs triggers it with a \
         package on furiosa-opt-std 0.4",
    ),
];

#[test]
fn every_implemented_rule_has_a_triggering_and_a_silent_fixture() {
    let files = fixture_files();
    let mut triggered = std::collections::HashSet::new();
    let mut neighbours = std::collections::HashSet::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("fixture is UTF-8");
        for e in expectations(&text) {
            triggered.insert(e.code);
        }
        if is_ok_fixture(path)
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            // `fixtures/ok/MAP-001.rs` or `fixtures/ok/MAP-001-something.rs`
            neighbours.insert(stem.chars().take(7).collect::<String>());
        }
    }
    let mut missing = Vec::new();
    for r in registry::all().filter(|r| r.status == Status::Implemented) {
        if SILENT.iter().any(|(c, _)| *c == r.code) {
            continue;
        }
        if !triggered.contains(r.code) && !TRIGGERED_ELSEWHERE.iter().any(|(c, _)| *c == r.code) {
            missing.push(format!("{}: no fixture triggers it", r.code));
        }
        if !neighbours.contains(r.code) {
            missing.push(format!(
                "{}: no fixtures/ok/{}*.rs neighbour",
                r.code, r.code
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// A rule reported under other codes names only implemented rules, and the silent and
/// elsewhere-triggered lists name implemented rules.
#[test]
fn covered_rules_point_at_implemented_rules() {
    let mut wrong = Vec::new();
    for r in registry::all() {
        if let Status::Covered { by, .. } = r.status {
            for code in by {
                match registry::rule(code) {
                    Some(t) if t.status == Status::Implemented => {}
                    _ => wrong.push(format!(
                        "{} is reported as {code}, which is not implemented",
                        r.code
                    )),
                }
            }
        }
    }
    for (code, _) in SILENT.iter().chain(TRIGGERED_ELSEWHERE) {
        if registry::rule(code).map(|r| r.status) != Some(Status::Implemented) {
            wrong.push(format!(
                "{code} is listed as silent or triggered elsewhere but is not implemented"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

//! The fixture crates under `fixtures/crates/`: each file is checked within its crate (modules
//! followed across files, `use` resolved) and compared with its inline caret expectations,
//! through the engine's API as the language server uses it and through the CLI given one file.

use std::path::{Path, PathBuf};
use visa_analysis::{AnalysisHost, project};
use visa_lint_tests::{Expectation, actual, expectations, misapplied, run_cli};

fn crates() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crates");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/crates")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_fixture_crate_produces_exactly_its_expected_diagnostics() {
    let crates = crates();
    assert!(crates.len() >= 3, "{crates:?}");
    let mut failures = Vec::new();
    for dir in crates {
        let pkg = project::discover(&dir.join("src/lib.rs")).expect("a package");
        let files = project::load(&pkg);
        assert!(files.len() >= 3, "{}: {files:?}", dir.display());
        let mut host = AnalysisHost::new();
        host.set_packages(vec![pkg]);
        host.set_files(files.clone());
        let analysis = host.snapshot();
        for (path, text) in &files {
            let id = host.file_id(path).expect("loaded");
            let diags = analysis.diagnostics(id).expect("not cancelled");
            // As in tests/fixtures.rs: no rule reports on a library it does not apply to.
            let library = analysis.library(id).expect("not cancelled").generation;
            failures.extend(misapplied(path, library, &diags));
            let mut expected = expectations(text);
            // As in tests/fixtures.rs: a severity is compared only where the caret states one.
            let mut got: Vec<Expectation> = diags
                .iter()
                .map(|d| {
                    let mut g = actual(text, d);
                    if !expected
                        .iter()
                        .any(|e| e.severity.is_some() && e.matches(&g))
                    {
                        g.severity = None;
                    }
                    g
                })
                .collect();
            got.sort();
            expected.sort();
            if got != expected {
                failures.push(format!(
                    "{}:\n  expected {expected:?}\n  got      {got:?}",
                    path.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cli_given_one_file_checks_it_within_its_crate() {
    // The child module alone would not see its parent's axes; within its crate it does.
    let (code, out) = run_cli(&[
        "fixtures/crates/axes_in_parent/src/vector/normal.rs",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(fields(&out, "code"), vec!["MAP-003"]);
}

/// The `field` of every diagnostic of a CLI's JSON report.
fn fields(json: &str, field: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d[field].as_str().map(String::from))
        .collect()
}

/// A furiosa-opt-std crate reads its own library's names: the Vector Engine's intra-slice
/// block is `vector_intra_slice_tag(TagMode::..)` there, not the manual's
/// `vector_intra_slice_branch(BranchMode::..)`.
#[test]
fn a_furiosa_opt_std_crate_reads_its_own_method_names() {
    let (_, out) = run_cli(&[
        "fixtures/crates/opt_std_kernels/src/kernels.rs",
        "--format",
        "json",
    ]);
    let messages = fields(&out, "message");
    let vec_002 = messages
        .iter()
        .find(|m| m.contains("needs an intra-slice block"))
        .expect("the VEC-002 of zip_without_pair");
    assert!(
        vec_002.contains("`vector_intra_slice_tag(TagMode::..)`"),
        "{vec_002}"
    );
    for m in &messages {
        assert!(!m.contains("vector_intra_slice_branch"), "{m}");
    }
}

/// The fixes of the diagnostic of `code` in the CLI's JSON report of `path`.
fn fixes_of(path: &str, code: &str) -> Vec<serde_json::Value> {
    let (_, out) = run_cli(&[path, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == code)
        .and_then(|d| d["fixes"].as_array().cloned())
        .unwrap_or_default()
}

/// A padding fix through an alias of another module (`fixtures/crates/alias_fixes`): padding
/// the alias where it is defined is checked against the crate. Where every use stays valid it
/// is the safe fix, listed first, with its edit in `layouts.rs`; where padding it breaks
/// another use (`Unit` is also a Chip, which must stay 1), it is unsafe and names the other
/// use it changes and what it breaks, and padding the mapping at this use is the safe fix.
#[test]
fn an_alias_of_another_file_is_padded_where_it_is_defined_when_every_use_allows() {
    let fixes = fixes_of("fixtures/crates/alias_fixes", "CAP-003");
    let first = &fixes[0];
    assert_eq!(first["safe"], true, "{fixes:#?}");
    // `Slice` has no other use: the title names none.
    assert_eq!(
        first["title"],
        "pad `Slice` where it is defined, for every use"
    );
    assert!(first["edits"].as_array().is_some_and(Vec::is_empty));
    let other = &first["other_files"][0];
    assert!(
        other["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("src/layouts.rs"))
    );
    assert_eq!(other["edits"][0]["line"], 6);
    assert_eq!(other["edits"][0]["new_text"], "m![A / 8 # 256]");
    assert_eq!(fixes[1]["edits"][0]["new_text"], "m![A / 8 # 256]");

    let fixes = fixes_of("fixtures/crates/alias_fixes", "CAP-002");
    assert_eq!(fixes[0]["safe"], true, "{fixes:#?}");
    assert_eq!(fixes[0]["edits"][0]["new_text"], "m![1 # 2]");
    let alias = &fixes[1];
    assert_eq!(alias["safe"], false);
    assert!(
        alias["title"]
            .as_str()
            .is_some_and(|t| t.contains("adds 1 error: CAP-001 in kernels.rs")),
        "{alias:#?}"
    );
    // The Chip use of `Unit` on the same line is the other use padding it changes.
    assert_eq!(
        alias["title"],
        "pad `Unit` where it is defined, also changing its use at kernels.rs:12 \
         (adds 1 error: CAP-001 in kernels.rs)"
    );
}

/// A mapping written in a struct field's type (`fixtures/crates/field_fixes`): the finding is
/// reported once, where the kernel first names the field, and its fix pads the field's type
/// where `buffers.rs` declares the struct; checked against the crate, it is safe.
#[test]
fn a_struct_fields_mapping_is_padded_where_the_struct_declares_it() {
    let (_, out) = run_cli(&["fixtures/crates/field_fixes", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let found: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "CAP-003")
        .collect();
    let lines: Vec<&serde_json::Value> = found.iter().map(|d| &d["line"]).collect();
    assert_eq!(lines, [11, 13], "{found:#?}");

    let top = found[0]["fixes"].as_array().expect("fixes");
    assert_eq!(top.len(), 1, "{top:#?}");
    assert_eq!(
        top[0]["title"],
        "pad the type of the field `top` of `Halo` where it is declared"
    );
    assert_eq!(top[0]["safe"], true);
    let edit = &top[0]["other_files"][0];
    assert!(
        edit["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("src/buffers.rs"))
    );
    assert_eq!(edit["edits"][0]["line"], 7);
    assert_eq!(edit["edits"][0]["new_text"], "m![X / 2 # 256]");

    // `bottom` names the alias `Short`: padding the alias (no other use) comes first, then
    // writing the padded mapping in the field's type.
    let bottom = found[1]["fixes"].as_array().expect("fixes");
    let titles: Vec<&serde_json::Value> = bottom.iter().map(|f| &f["title"]).collect();
    assert_eq!(
        titles,
        [
            "pad `Short` where it is defined, for every use",
            "pad the type of the field `bottom` of `Halo` where it is declared"
        ]
    );
    assert_eq!(bottom[1]["other_files"][0]["edits"][0]["line"], 9);
    assert_eq!(
        bottom[1]["other_files"][0]["edits"][0]["new_text"],
        "m![X / 2 # 256]"
    );
}

/// A padding fix through an alias that a helper of another file names
/// (`fixtures/crates/helper_alias_fix`): the finding is reported where the kernel calls
/// `merge_max`, and the first fix pads `MergeSlice` where `ops/merge.rs` defines it, checked
/// against the crate (safe: its other use is the helper's return type).
#[test]
fn an_alias_a_helper_of_another_file_names_is_padded_where_it_is_defined() {
    let fixes = fixes_of("fixtures/crates/helper_alias_fix", "CAP-003");
    let first = &fixes[0];
    assert_eq!(first["safe"], true, "{fixes:#?}");
    assert_eq!(
        first["title"],
        "pad `MergeSlice` where it is defined, also changing its use at merge.rs:9"
    );
    let other = &first["other_files"][0];
    assert!(
        other["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("src/ops/merge.rs"))
    );
    assert_eq!(other["edits"][0]["line"], 4);
    assert_eq!(other["edits"][0]["new_text"], "m![[G, P / 4] # 256]");
}

/// Padding fixes through associated mappings (`fixtures/crates/assoc_layout_fix`): the Slice of
/// `RowsDm<Wide>` is `<Wide as Group>::Slice`, written in a generic tensor alias and read by a
/// generic helper with `L = Wide`; the fix at the kernel's call pads `type Slice` where `impl
/// Group for Wide` defines it (layouts.rs:26). A method of an `impl` block whose head names
/// `Narrow` pads `Narrow` where it is defined (layouts.rs:10), not the head's text.
#[test]
fn an_associated_mapping_and_an_impl_head_alias_are_padded_where_they_are_defined() {
    let (_, out) = run_cli(&["fixtures/crates/assoc_layout_fix", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let at_call = |line: u64| {
        v["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .find(|d| d["code"] == "CAP-003" && d["line"] == line && d["severity"] == "error")
            .and_then(|d| d["fixes"][0].as_object().cloned())
            .unwrap_or_else(|| panic!("a fixed CAP-003 error at kernels.rs:{line}: {v:#}"))
    };
    let wide = at_call(18);
    assert_eq!(
        wide["title"],
        "pad `Wide::Slice` where it is defined, for every use"
    );
    assert_eq!(wide["safe"], true);
    let edit = &wide["other_files"][0];
    assert!(
        edit["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("src/layouts.rs"))
    );
    assert_eq!(edit["edits"][0]["line"], 26);
    assert_eq!(edit["edits"][0]["new_text"], "m![G # 256]");

    let narrow = at_call(28);
    assert_eq!(
        narrow["title"],
        "pad `Narrow` where it is defined, for every use"
    );
    let edit = &narrow["other_files"][0];
    assert_eq!(edit["edits"][0]["line"], 10);
    assert_eq!(edit["edits"][0]["new_text"], "m![G # 256]");
}

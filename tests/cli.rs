//! The `visa-lint` command line, run in-process: output snapshots and exit statuses.

use clap::Parser;
use codespan_reporting::term::termcolor::NoColor;
use expect_test::expect;
use visa_server::cli::{Cli, run_with};

use visa_lint_tests::run_cli as run;

#[test]
fn eval_json_is_the_documented_contract() {
    // The example of the issue; numbers from the manual's nested stride (L920-L950).
    let (code, out) = run(&[
        "eval",
        "--axes",
        "A = 8, B = 512",
        "m![B / 64, B % 32, B / 32 % 2]",
        "--index",
        "67",
        "--index",
        "512",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v,
        serde_json::json!({"size": 512, "normal_form": "m![B / 64, B % 32, B / 32 % 2]", "map": {"67": {"B": 97}, "512": null}})
    );
}

#[test]
fn eval_padding_positions_map_to_null() {
    // m![C, D # 64] with D = 61: positions 61..64 are padding (manual L744-L760).
    let (code, out) = run(&[
        "eval",
        "--axes",
        "C = 13, D = 61",
        "m![C, D # 64]",
        "--index",
        "61",
        "--index",
        "64",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        r#"{"size":832,"normal_form":"m![C, D # 64]","map":{"61":null,"64":{"C":1}}}"#
    );
}

#[test]
fn eval_human_draws_the_manuals_table() {
    // The 4 × 4 table of m![B / 4, B % 4] with B = 16 (manual L906-L912).
    let (code, out) = run(&[
        "eval",
        "--axes",
        "B = 16",
        "m![B / 4, B % 4]",
        "--index",
        "6",
    ]);
    assert_eq!(code, 0);
    expect![[r#"
        size:        16
        normal form: m![B]
        position 6 -> i![B: 6]

        pos |   +0   +1   +2   +3
          0 |   {}  B=1  B=2  B=3
          4 |  B=4  B=5  B=6  B=7
          8 |  B=8  B=9 B=10 B=11
         12 | B=12 B=13 B=14 B=15

        size 16 = 16
        stride    extent  tensor
             1        16  B
        buffer bits [3:0] hold B bits [3:0]
    "#]]
    .assert_eq(&out);
}

#[test]
fn eval_errors_are_diagnostics_with_exit_1() {
    let (code, out) = run(&["eval", "--axes", "A = 63", "m![A / 8]"]);
    assert_eq!(code, 1);
    expect![[r#"
        error[MAP-001]: Stride size must divide the original size: `A` has size 63, which 8 does not divide
          ┌─ <command line>:2:4
          │
        2 │ m![A / 8]
          │    ^^^^^
          │      │
          │      `/ 8`
          │
          = fix: pad to 64 first: `# 64 / 8`
          = stride-must-divide: `E / n` needs `n` to divide `E::SIZE` (`visa-lint --explain MAP-001`)

    "#]]
    .assert_eq(&out);
    let (code, out) = run(&["eval", "--axes", "A = 63", "m![A / 8]", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["diagnostics"][0]["code"], "MAP-001");
    assert_eq!(
        v["diagnostics"][0]["fixes"][0]["edits"][0]["new_text"],
        " # 64"
    );
}

#[test]
fn eval_skew_without_size_is_map_008() {
    // The manual writes m![A, B' = 4] with B' = B - A (L986-L991); without `= 4` it warns.
    let (code, out) = run(&[
        "eval",
        "--axes",
        "A = 4, B = 4, B' = B - A",
        "m![A, B']",
        "--index",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "a warning does not fail eval");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["diagnostics"][0]["code"], "MAP-008");
    assert_eq!(v["map"]["4"], serde_json::json!({"A": 1, "B": 1}));
}

#[test]
fn eval_linear_combination_lists_every_index() {
    // Position 4 of the sliding window holds {4_N}, {2_N, 1_F} and {2_F} (manual L1013).
    let (code, out) = run(&[
        "eval",
        "--axes",
        "N = 5, F = 3",
        "m![$(N: 1, F: 2)]",
        "--index",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        r#"{"size":9,"normal_form":"m![$(N: 1, F: 2)]","map":{"4":[{"F":1,"N":2},{"F":2},{"N":4}]}}"#
    );
}

#[test]
fn lint_reports_json_and_exit_status() {
    let (code, out) = run(&["fixtures/rules/MAP-004.rs", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["version"], 1);
    assert_eq!(v["files"], 1);
    let d = &v["diagnostics"][0];
    assert_eq!(
        (
            d["code"].as_str(),
            d["name"].as_str(),
            d["severity"].as_str()
        ),
        (Some("MAP-004"), Some("resize-must-shrink"), Some("error"))
    );
    assert_eq!(
        (
            d["line"].as_u64(),
            d["column"].as_u64(),
            d["end_column"].as_u64()
        ),
        (Some(6), Some(19), Some(24))
    );
    assert_eq!(
        d["file"]
            .as_str()
            .map(|f| f.ends_with("fixtures/rules/MAP-004.rs")),
        Some(true)
    );

    let (code, out) = run(&["fixtures/ok"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 errors, 0 warnings"), "{out}");
}

#[test]
fn missing_files_exit_2() {
    let (code, _) = run(&["fixtures/does-not-exist.rs"]);
    assert_eq!(code, 2);
}

#[test]
fn list_rules_json() {
    let (code, out) = run(&["--list-rules", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rules = v.as_array().expect("array");
    let map001 = rules
        .iter()
        .find(|r| r["code"] == "MAP-001")
        .expect("MAP-001 listed");
    assert_eq!(map001["status"], "implemented");
    assert_eq!(map001["name"], "stride-must-divide");
    assert_eq!(map001["generations"], "both");
    assert_eq!(
        map001["applies_to"],
        serde_json::json!(["furiosa-visa-std", "furiosa-opt-std"])
    );
    let aln001 = rules
        .iter()
        .find(|r| r["code"] == "ALN-001")
        .expect("ALN-001 listed");
    assert_eq!(
        aln001["applies_to"],
        serde_json::json!(["furiosa-visa-std"])
    );
    assert!(
        aln001["generations_note"]
            .as_str()
            .is_some_and(|n| n.contains("CHANGES.md:26-32")),
        "{aln001}"
    );
    for r in rules {
        assert!(
            r["code"].is_string()
                && r["name"].is_string()
                && r["severity"].is_string()
                && r["reason"].is_string()
        );
    }
}

#[test]
fn explain_prints_the_rule_docs() {
    let (code, out) = run(&["--explain", "MAP-003"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("MAP-003 (padding-must-not-shrink)"),
        "{out}"
    );
    assert!(out.contains("Manual: L741-L778"), "{out}");
    assert!(
        out.contains("Applies to: furiosa_visa_std (the manual) and furiosa-opt-std 0.6\n"),
        "{out}"
    );
    let (code, out) = run(&["--explain", "OPT-001"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("Applies to: furiosa-opt-std 0.6 only: "),
        "{out}"
    );
    let (code, _) = run(&["--explain", "NOPE-001"]);
    assert_eq!(code, 2);
}

#[test]
fn manual_fixtures_never_exit_2() {
    let dir = format!("{}/fixtures/manual", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(&dir).expect("fixtures/manual") {
        let path = entry.expect("entry").path();
        let arg = path.to_string_lossy().to_string();
        let cli = Cli::try_parse_from(["visa-lint", arg.as_str(), "--format", "json"])
            .expect("arguments parse");
        let mut out = NoColor::new(Vec::new());
        let code = run_with(&cli, &mut out);
        assert_ne!(code, 2, "{arg}");
        let cli = Cli::try_parse_from(["visa-lint", "model", arg.as_str(), "--format", "json"])
            .expect("arguments parse");
        assert_eq!(
            run_with(&cli, &mut NoColor::new(Vec::new())),
            0,
            "model {arg}"
        );
    }
}

#[test]
fn model_dump_names_each_steps_types() {
    let (code, out) = run(&["model", "fixtures/ok/KRN-001.rs", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let steps = &v["functions"][0]["chains"][0]["steps"];
    assert_eq!(steps[1]["method"], "fetch");
    assert_eq!(steps[1]["line"], 11);
    assert_eq!(steps[1]["dtype"], "i32");
    assert_eq!(steps[1]["time"], "m![1]");
    assert_eq!(steps[1]["packet"], "m![A % 8]");
    assert_eq!(steps[1]["slice"], "m![A / 8 # 256]");
    assert_eq!(steps[1]["context"], "main");
    let commit = &steps[steps.as_array().map_or(0, |s| s.len() - 1)];
    assert_eq!(commit["method"], "commit");
    assert_eq!(commit["dtype"], "i8");
    assert_eq!(commit["address"], 0x1000);
}

/// `--allow` / `--warn` / `--deny` take a code, a name or a family, like clippy's lint levels;
/// `--deny BNK-001` is the strict setting of constraints.md §22 A-27.
#[test]
fn rule_levels_from_the_command_line() {
    let severities = |out: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(out).expect("JSON");
        v["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .map(|d| {
                format!(
                    "{} {}",
                    d["code"].as_str().unwrap_or(""),
                    d["severity"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    let file = "fixtures/rules/BNK-001.rs";
    let (code, out) = run(&[file, "--format", "json"]);
    assert_eq!(
        (code, severities(&out)),
        (0, vec!["BNK-001 warning".to_string()])
    );
    let (code, out) = run(&[file, "--format", "json", "--deny", "BNK-001"]);
    assert_eq!(
        (code, severities(&out)),
        (1, vec!["BNK-001 error".to_string()])
    );
    let (code, out) = run(&[file, "--format", "json", "--deny", "BNK"]);
    assert_eq!(
        (code, severities(&out)),
        (1, vec!["BNK-001 error".to_string()])
    );
    let (code, out) = run(&[file, "--format", "json", "--allow", "bank-64-access-rule"]);
    assert_eq!((code, severities(&out)), (0, Vec::<String>::new()));
    let (code, out) = run(&[
        "fixtures/rules/CAP-003.rs",
        "--format",
        "json",
        "--warn",
        "CAP",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        severities(&out).iter().all(|s| s.ends_with("warning")),
        "{out}"
    );
    let (code, _) = run(&[file, "--deny", "XYZ-001"]);
    assert_eq!(code, 2);
}

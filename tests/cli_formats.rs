//! Every output format of `visa-lint` on the manual's examples (`fixtures/manual`), as
//! snapshots: `human`, `json`, `sarif`, `github` and `--statistics`. Update them with
//! `UPDATE_EXPECT=1 cargo test --test cli_formats` and review the diff.

use expect_test::{expect, expect_file};
use visa_lint_tests::run_cli_io;

fn lint(args: &[&str]) -> (u8, String) {
    let run = run_cli_io(args, "");
    assert_eq!(run.stderr, "", "no messages about the invocation");
    (run.code, run.stdout)
}

#[test]
fn human_report_of_the_manual() {
    let (code, out) = lint(&["fixtures/manual"]);
    assert_eq!(code, 1, "several of the manual's examples break its rules");
    expect_file!["snapshots/cli/manual.human.txt"].assert_eq(&out);
}

#[test]
fn json_report_of_the_manual() {
    let (code, out) = lint(&["fixtures/manual", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let pretty = serde_json::to_string_pretty(&v).expect("JSON");
    expect_file!["snapshots/cli/manual.json"].assert_eq(&format!("{pretty}\n"));
}

#[test]
fn sarif_results_of_the_manual() {
    // A relative path (tests run in the repository root), as CI gives it: relative URIs.
    let (code, out) = lint(&["./fixtures/manual", "--format", "sarif"]);
    assert_eq!(code, 1);
    let mut v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    // The driver's rule descriptions are checked by `cli_sarif`; here, the results.
    let rules = v["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(rules > 100, "every registered rule is described");
    v["runs"][0]["tool"]["driver"]["rules"] = format!("<{rules} rules>").into();
    let pretty = serde_json::to_string_pretty(&v).expect("JSON");
    expect_file!["snapshots/cli/manual.sarif.json"].assert_eq(&format!("{pretty}\n"));
}

#[test]
fn github_annotations_of_the_manual() {
    let (code, out) = lint(&["fixtures/manual", "--format", "github"]);
    assert_eq!(code, 1);
    expect_file!["snapshots/cli/manual.github.txt"].assert_eq(&out);
}

#[test]
fn statistics_of_the_manual() {
    let (code, out) = lint(&["fixtures/manual", "--statistics"]);
    assert_eq!(code, 1, "the exit status does not depend on the format");
    expect_file!["snapshots/cli/manual.statistics.txt"].assert_eq(&out);
    let (code, out) = lint(&["fixtures/manual", "--statistics", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let first = &v[0];
    assert_eq!(
        (first["code"].as_str(), first["count"].as_u64()),
        (Some("MAP-003"), Some(7)),
        "{out}"
    );
}

/// Workflow-command properties escape `,` and `:`; messages escape newlines and `%`.
#[test]
fn github_annotations_escape_their_fields() {
    let run = run_cli_io(
        &[
            "-",
            "--stdin-filename",
            "dir,with:odd%name.rs",
            "--format",
            "github",
        ],
        "axes![A = 63];\ntype E = m![A / 8];\n",
    );
    assert_eq!(run.code, 1);
    expect![[r#"
        ::error file=dir%2Cwith%3Aodd%25name.rs,line=2,col=13,endLine=2,endColumn=18,title=MAP-001 (stride-must-divide)::Stride size must divide the original size: `A` has size 63, which 8 does not divide [MAP-001]
        visa-lint: 1 file checked: 1 error, 0 warnings, 0 other
    "#]]
    .assert_eq(&run.stdout);
}

/// A 245 KB kernel on one line: each report shows a window of the line around its labels,
/// with the file's own line and column in the header, instead of the whole line.
#[test]
fn long_lines_are_cut_around_the_span() {
    let filler = "/* padding */ ".repeat(10_000);
    let text = format!("axes![A = 63]; {filler}type E = m![A / 8]; {filler}\n");
    let run = run_cli_io(&["-", "--stdin-filename", "long.rs"], &text);
    assert_eq!(run.code, 1);
    let column = "axes![A = 63]; ".len() + filler.len() + "type E = m![".len() + 1;
    assert!(
        run.stdout.contains(&format!("long.rs:1:{column}")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.len() < 2_000, "{} bytes", run.stdout.len());
    expect![[r#"
        error[MAP-001]: Stride size must divide the original size: `A` has size 63, which 8 does not divide
          ┌─ long.rs:1:140028
          │
        1 │ .../* padding */ /* padding */ type E = m![A / 8]; /* padding */ /* padding */ /* paddin...
          │                                            ^^^^^
          │                                              │
          │                                              `/ 8`
          │
          = fix: pad to 64 first: `# 64 / 8`
          = stride-must-divide: `E / n` needs `n` to divide `E::SIZE` (`visa-lint --explain MAP-001`)

        visa-lint: 1 file checked: 1 error, 0 warnings, 0 other
    "#]]
    .assert_eq(&run.stdout);
}

/// Human output shows a bounded number of reports per file, then counts the rest.
#[test]
fn human_output_is_bounded_per_file() {
    let text: String = std::iter::once("axes![A = 63];\n".to_string())
        .chain((0..300).map(|i| format!("type E{i} = m![A / 8];\n")))
        .collect();
    let run = run_cli_io(&["-", "--stdin-filename", "many.rs"], &text);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout.matches("error[MAP-001]").count(), 200);
    assert!(
        run.stdout.contains(
            "many.rs: 100 more diagnostics not shown (all are in `--format json`; `--statistics` counts them)"
        ),
        "{}",
        run.stdout
    );
    assert!(run.stdout.ends_with("300 errors, 0 warnings, 0 other\n"));
}

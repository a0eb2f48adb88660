//! `--fix`, `--unsafe-fixes` and `--diff`: every fixture with a fix reaches a fixed point the
//! analysis accepts, overlapping fixes are never applied together, and the command line
//! writes, diffs and reports as documented.

use expect_test::expect;
use std::path::{Path, PathBuf};
use visa_analysis::rules::mapping::MAP_001;
use visa_analysis::{Diagnostic, Span, check_text};
use visa_lint_tests::run_cli_io;
use visa_server::fix::{self, Applicability};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "fixtures/rules",
        "fixtures/manual",
        "fixtures/ok",
        "examples/kernels",
    ] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "rs")),
        );
    }
    files.sort();
    files
}

fn parse_errors(text: &str) -> Vec<String> {
    ra_ap_syntax::SourceFile::parse(text, ra_ap_syntax::Edition::Edition2024)
        .errors()
        .iter()
        .map(|e| e.to_string())
        .collect()
}

/// Every fixture offering a fix, fixed with `--fix --unsafe-fixes` to the fixed point: the
/// result still parses, each rule that offered a fix is silent except for the reports that had
/// none (several fixtures also show a case without a mechanical fix), and one more pass
/// changes nothing.
#[test]
fn every_fixture_with_a_fix_reaches_a_silent_fixed_point() {
    let mut fixed_files = 0;
    let mut failures = Vec::new();
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let before = check_text(&text);
        let mut fixed_codes: Vec<&str> = before
            .iter()
            .filter(|d| !d.fixes.is_empty())
            .map(|d| d.code())
            .collect();
        fixed_codes.dedup();
        if fixed_codes.is_empty() {
            continue;
        }
        fixed_files += 1;
        let name = path.strip_prefix(root()).unwrap_or(&path).display();
        let out = fix::to_fixed_point(&text, Applicability::All, &check_text);
        assert!(
            out.applied > 0,
            "{name}: a fix was offered but none applied"
        );
        if parse_errors(&text).is_empty() && !parse_errors(&out.text).is_empty() {
            failures.push(format!(
                "{name}: no longer parses: {:?}",
                parse_errors(&out.text)
            ));
        }
        for code in &fixed_codes {
            let unfixable = before
                .iter()
                .filter(|d| d.code() == *code && d.fixes.is_empty())
                .count();
            let still: Vec<String> = out
                .remaining
                .iter()
                .filter(|d| d.code() == *code)
                .map(|d| d.message.clone())
                .collect();
            if still.len() > unfixable {
                failures.push(format!(
                    "{name}: {code} reported {} times after fixing, {unfixable} without a fix before: {still:?}",
                    still.len()
                ));
            }
        }
        let (_, again) = fix::apply_once(&out.text, &out.remaining, Applicability::All);
        if again != 0 {
            failures.push(format!(
                "{name}: not a fixed point ({again} more fixes apply)"
            ));
        }
    }
    assert!(fixed_files >= 20, "only {fixed_files} fixtures offer a fix");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The diagnostics of a text with their fixes checked, as `--fix`, JSON and the editors get
/// them.
fn checked_diagnostics(text: &str) -> Vec<Diagnostic> {
    let mut host = visa_analysis::AnalysisHost::new();
    let file = host.set_file(Path::new("/fixture.rs"), text.to_string());
    let raw = host
        .snapshot()
        .diagnostics(file)
        .map(|d| d.to_vec())
        .unwrap_or_default();
    visa_analysis::check_fixes(&mut host, file, &raw)
}

/// The issue's bar, on every fixture and manual example: the offered fixes, applied with
/// `--fix --unsafe-fixes` to the fixed point, leave no rule with more errors than it had (an
/// added error that has a fix must be fixed on the way, and one that has none is a dead end
/// the engine must not offer).
#[test]
fn the_fixed_point_of_the_offered_fixes_adds_no_error() {
    let count = |ds: &[Diagnostic]| {
        let mut by_code = std::collections::BTreeMap::<String, usize>::new();
        for d in ds
            .iter()
            .filter(|d| d.severity == visa_analysis::Severity::Error)
        {
            *by_code.entry(d.code().to_string()).or_default() += 1;
        }
        by_code
    };
    let (mut fixed_files, mut failures) = (0, Vec::new());
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let before = checked_diagnostics(&text);
        if before.iter().all(|d| d.fixes.is_empty()) {
            continue;
        }
        fixed_files += 1;
        let out = fix::to_fixed_point(&text, Applicability::All, &checked_diagnostics);
        let (had, has) = (count(&before), count(&out.remaining));
        for (code, n) in &has {
            let was = had.get(code).copied().unwrap_or(0);
            if *n > was {
                let name = path.strip_prefix(root()).unwrap_or(&path).display();
                failures.push(format!(
                    "{name}: {code}: {was} errors before, {n} after fixing"
                ));
            }
        }
    }
    assert!(fixed_files >= 20, "only {fixed_files} fixtures offer a fix");
    assert!(failures.is_empty(), "{failures:#?}");
}

fn diag_with_edit(start: usize, end: usize, new_text: &str) -> Diagnostic {
    Diagnostic::new(&MAP_001, Span::new(start, end), "test").with_edit(
        "edit",
        true,
        Span::new(start, end),
        new_text,
    )
}

/// Two fixes over one range, or inserting at one point: only the first is applied in a pass.
#[test]
fn overlapping_fixes_are_never_applied_together() {
    let text = "abcdefgh";
    let diags = [
        diag_with_edit(1, 4, "X"),
        diag_with_edit(3, 6, "Y"),
        diag_with_edit(6, 6, "<"),
        diag_with_edit(6, 6, ">"),
        diag_with_edit(7, 8, "Z"),
    ];
    let (out, n) = fix::apply_once(text, &diags, Applicability::Safe);
    assert_eq!((out.as_str(), n), ("aXef<gZ", 3));
}

/// A fix needing review is applied only with `--unsafe-fixes`.
#[test]
fn unsafe_fixes_need_their_flag() {
    let d = Diagnostic::new(&MAP_001, Span::new(0, 1), "test").with_edit(
        "review me",
        false,
        Span::new(0, 1),
        "b",
    );
    let diags = [d];
    assert_eq!(
        fix::apply_once("a", &diags, Applicability::Safe),
        ("a".to_string(), 0)
    );
    assert_eq!(
        fix::apply_once("a", &diags, Applicability::All),
        ("b".to_string(), 1)
    );
}

/// A kernel with one error whose fix is safe (MAP-001: pad to 64 before dividing by 8).
const KERNEL: &str = "use furiosa_visa_std::prelude::*;\naxes![A = 63];\ntype E = m![A / 8];\n";

#[test]
fn diff_prints_the_fixes_without_writing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("k.rs");
    std::fs::write(&file, KERNEL).expect("write");
    let before = std::fs::read_to_string(&file).expect("read");
    let path = file.display().to_string();
    let run = run_cli_io(&[&path, "--diff"], "");
    assert_eq!(run.code, 1, "a diff to apply: exit status 1");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), before);
    let stdout = run
        .stdout
        .replace(&dir.path().display().to_string(), "$TMP");
    expect![[r#"
        --- $TMP/k.rs
        +++ $TMP/k.rs
        @@ -1,3 +1,3 @@
         use furiosa_visa_std::prelude::*;
         axes![A = 63];
        -type E = m![A / 8];
        +type E = m![A # 64 / 8];
    "#]]
    .assert_eq(&stdout);
    assert_eq!(run.stderr, "visa-lint: 1 fix would be applied to 1 file\n");

    let clean = run_cli_io(&["fixtures/ok", "--diff"], "");
    assert_eq!((clean.code, clean.stdout.as_str()), (0, ""));
}

#[test]
fn fix_writes_the_file_and_reports_what_remains() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("k.rs");
    std::fs::write(&file, KERNEL).expect("write");
    let path = file.display().to_string();
    let run = run_cli_io(&[&path, "--fix"], "");
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.stdout,
        "visa-lint: 1 file checked: 0 errors, 0 warnings, 0 other; 1 fix applied to 1 file\n"
    );
    let after = std::fs::read_to_string(&file).expect("read");
    assert!(after.contains("type E = m![A # 64 / 8];"), "{after}");
    assert!(check_text(&after).is_empty());
    // A second run finds nothing to fix.
    let again = run_cli_io(&[&path, "--fix"], "");
    assert!(again.stdout.ends_with("; 0 fixes applied to 0 files\n"));
}

#[test]
fn fix_leaves_unsafe_fixes_to_their_flag() {
    let fixture = fixtures()
        .into_iter()
        .find(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let diags = check_text(&text);
            !diags.is_empty()
                && diags.iter().all(|d| d.fixes.iter().all(|f| !f.safe))
                && diags.iter().any(|d| !d.fixes.is_empty())
        })
        .expect("a fixture whose only fixes need review");
    let dir = tempfile::tempdir().expect("temp dir");
    let to = dir.path().join("k.rs");
    std::fs::copy(&fixture, &to).expect("copy");
    let before = std::fs::read_to_string(&to).expect("read");
    let path = to.display().to_string();
    let run = run_cli_io(&[&path, "--fix"], "");
    assert!(run.stdout.contains("0 fixes applied"), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(&to).expect("read"), before);
    let run = run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    assert!(!run.stdout.contains("0 fixes applied"), "{}", run.stdout);
    assert_ne!(std::fs::read_to_string(&to).expect("read"), before);
}

#[test]
fn diff_of_standard_input() {
    let run = run_cli_io(
        &["-", "--stdin-filename", "k.rs", "--diff"],
        "axes![A = 63];\ntype E = m![A / 8];\n",
    );
    assert_eq!(run.code, 1);
    expect![[r#"
        --- a/k.rs
        +++ b/k.rs
        @@ -1,2 +1,2 @@
         axes![A = 63];
        -type E = m![A / 8];
        +type E = m![A # 64 / 8];
    "#]]
    .assert_eq(&run.stdout);
}

/// `text` with one fix's own-file edits applied (none overlap), or `None` when one does not
/// fit the text.
fn with_fix(text: &str, fix: &visa_analysis::Fix) -> Option<String> {
    let mut edits: Vec<&visa_analysis::Edit> = fix.edits.iter().collect();
    edits.sort_by_key(|e| e.span.start);
    let mut out = String::new();
    let mut at = 0;
    for e in edits {
        out.push_str(text.get(at..e.span.start as usize)?);
        out.push_str(&e.new_text);
        at = e.span.end as usize;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Every error of a text as (rule, message), sorted: what a fix must not add to.
fn errors_of(diags: &[Diagnostic]) -> Vec<(String, String)> {
    let mut e: Vec<(String, String)> = diags
        .iter()
        .filter(|d| d.severity == visa_analysis::Severity::Error)
        .map(|d| (d.code().to_string(), unpadded(&d.message)))
        .collect();
    e.sort();
    e
}

/// `message` without the padding of the mappings it writes (` # 16`, ` #{!} 32`): a fix that
/// pads a mapping changes how another error writes it (`Pkt = m![K % 8 # 16]` in its trail),
/// not the error.
fn unpadded(message: &str) -> String {
    let mut parts = message.split(" #");
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let tail = part
            .strip_prefix('{')
            .and_then(|p| p.split_once('}'))
            .map_or(part, |(_, t)| t);
        let rest = tail
            .strip_prefix(' ')
            .map(|t| t.trim_start_matches(|c: char| c.is_ascii_digit()));
        match rest {
            Some(rest) if rest.len() + 1 < tail.len() => out.push_str(rest),
            _ => {
                out.push_str(" #");
                out.push_str(part);
            }
        }
    }
    out
}

/// The issue's property, on every fixture and manual example: each fix offered to a user (as
/// `--fix`, JSON and the editors get them, after the engine's check), applied alone, clears
/// its diagnostic (no report of its rule left where it applied) and adds no error; a fix that
/// adds one is never offered as safe. Checked here independently of the engine's checker:
/// the fix is applied to the text and the text analysed again from scratch.
#[test]
fn every_offered_fix_clears_its_diagnostic_and_adds_no_error() {
    let (mut offered, mut failures) = (0, Vec::new());
    for path in fixtures() {
        let text = std::fs::read_to_string(&path).expect("fixture text");
        let name = path
            .strip_prefix(root())
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut host = visa_analysis::AnalysisHost::new();
        // Named as `check_text` names the fixed text: messages name the file.
        let file = host.set_file(Path::new("<text>"), text.clone());
        let raw = host
            .snapshot()
            .diagnostics(file)
            .map(|d| d.to_vec())
            .unwrap_or_default();
        let checked = visa_analysis::check_fixes(&mut host, file, &raw);
        let before = errors_of(&raw);
        for d in &checked {
            for fix in d.fixes.iter().filter(|f| f.other_files.is_empty()) {
                offered += 1;
                let Some(fixed) = with_fix(&text, fix) else {
                    failures.push(format!(
                        "{name}: {}: `{}` does not fit",
                        d.code(),
                        fix.title
                    ));
                    continue;
                };
                let after = check_text(&fixed);
                // Where the diagnostic is after the fix: from the first edit (or the
                // diagnostic) to its end, moved by the edits before that end.
                let lo = fix
                    .edits
                    .iter()
                    .map(|e| e.span.start)
                    .fold(d.span.start, u32::min);
                let grown: i64 = fix
                    .edits
                    .iter()
                    .filter(|e| e.span.start < d.span.end || e.span.end <= d.span.start)
                    .map(|e| e.new_text.len() as i64 - i64::from(e.span.end - e.span.start))
                    .sum();
                let hi = (i64::from(d.span.end) + grown).max(i64::from(lo)) as u32;
                let left = after
                    .iter()
                    .any(|a| a.code() == d.code() && a.span.start <= hi && lo <= a.span.end);
                let mut added = errors_of(&after);
                for e in &before {
                    if let Some(i) = added.iter().position(|a| a == e) {
                        added.remove(i);
                    }
                }
                added.retain(|(code, _)| code != d.code());
                if left {
                    failures.push(format!(
                        "{name}: {}: `{}` leaves its diagnostic",
                        d.code(),
                        fix.title
                    ));
                }
                if fix.safe && !added.is_empty() {
                    failures.push(format!(
                        "{name}: {}: safe `{}` adds {added:?}",
                        d.code(),
                        fix.title
                    ));
                }
                // An unsafe fix may add errors only where each has a fix of its own, so that
                // `--fix --unsafe-fixes` goes on (an alias's definition edit excepted).
                let dead_ends: Vec<_> = added
                    .iter()
                    .filter(|(code, message)| {
                        !after.iter().any(|a| {
                            a.code() == code
                                && unpadded(&a.message) == *message
                                && !a.fixes.is_empty()
                        })
                    })
                    .collect();
                if !fix.edits_definition && !dead_ends.is_empty() {
                    failures.push(format!(
                        "{name}: {}: `{}` adds {dead_ends:?}, which nothing fixes",
                        d.code(),
                        fix.title
                    ));
                }
            }
        }
    }
    assert!(offered >= 60, "only {offered} fixes offered");
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The manual's GEMM (L473) stores B's DM Element `m![J % 32, K]` against HBM's `m![K, J]`:
/// putting `J` innermost would clear ALN-003, but the sub context's fetch then reads K with a
/// stride, an error no fix repairs (SEQ-004). That fix is a dead end and is not offered; the
/// message says to transpose in the Tensor Unit instead.
#[test]
fn a_fix_that_leaves_an_error_nothing_repairs_is_not_offered() {
    let path = root().join("fixtures/manual/0473_gemm.rs");
    let text = std::fs::read_to_string(&path).expect("fixture text");
    let mut host = visa_analysis::AnalysisHost::new();
    let file = host.set_file(Path::new("/fixture.rs"), text);
    let raw = host
        .snapshot()
        .diagnostics(file)
        .map(|d| d.to_vec())
        .unwrap_or_default();
    let aln = |ds: &[Diagnostic]| -> Vec<String> {
        ds.iter()
            .filter(|d| d.code() == "ALN-003")
            .flat_map(|d| d.fixes.iter().map(|f| f.title.clone()))
            .collect()
    };
    assert_eq!(
        aln(&raw),
        ["put `J` innermost in the DM Element: `m![K, J % 32]`"]
    );
    let checked = visa_analysis::check_fixes(&mut host, file, &raw);
    assert!(aln(&checked).is_empty(), "{:?}", aln(&checked));
}

/// Copies the fixture crate `name` (`fixtures/crates/NAME`) into `to`.
fn copy_crate(name: &str, to: &std::path::Path) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/crates")
        .join(name);
    for rel in [
        "Cargo.toml",
        "src/lib.rs",
        "src/kernels.rs",
        "src/layouts.rs",
    ] {
        let target = to.join(rel);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
        std::fs::copy(from.join(rel), &target).expect("copy");
    }
}

/// `--diff` and `--fix` on one file of a crate reach the crate's fixed point: the safe fix of
/// `Slice` pads it where `layouts.rs` defines it (every use stays valid), so `--diff` shows
/// `layouts.rs` beside the file given and `--fix` writes both; the crate is then clean.
#[test]
fn fix_reaches_a_fixed_point_across_the_files_of_a_crate() {
    let dir = tempfile::tempdir().expect("temp dir");
    copy_crate("alias_fixes", dir.path());
    let kernels = dir.path().join("src/kernels.rs");
    let layouts = dir.path().join("src/layouts.rs");
    let before = std::fs::read_to_string(&layouts).expect("read");
    let path = kernels.display().to_string();

    let diff = run_cli_io(&[&path, "--diff"], "");
    assert_eq!(diff.code, 1);
    assert_eq!(std::fs::read_to_string(&layouts).expect("read"), before);
    // Lines end trimmed: a blank context line is one space, which the source would not keep.
    let stdout: String = diff
        .stdout
        .replace(&dir.path().display().to_string(), "$TMP")
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    expect![[r#"
        --- $TMP/src/kernels.rs
        +++ $TMP/src/kernels.rs
        @@ -9,5 +9,5 @@
         fn full(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], Full, m![A % 8]>) {}
 
         #[device(chip = 1)]
        -fn shared(ctx: &mut Context, a: &DmTensor<i8, Unit, Unit, Full, m![A % 8]>) {}
        +fn shared(ctx: &mut Context, a: &DmTensor<i8, Unit, m![1 # 2], Full, m![A % 8]>) {}
         //                                                  ^^^^ CAP-002
        --- $TMP/src/layouts.rs
        +++ $TMP/src/layouts.rs
        @@ -3,7 +3,7 @@
         axes![A = 512];
 
         /// 64 slices: CAP-003 wants 256 (reported where a kernel uses it).
        -pub type Slice = m![A / 8];
        +pub type Slice = m![A / 8 # 256];
 
         /// The full cluster: its uses are clean.
         pub type Full = m![A / 8 # 256];
    "#]]
    .assert_eq(&stdout);
    assert_eq!(
        diff.stderr,
        "visa-lint: 2 fixes would be applied to 2 files\n"
    );

    let fix = run_cli_io(&[&path, "--fix"], "");
    assert_eq!(fix.code, 0, "{}", fix.stdout);
    assert!(
        fix.stdout.ends_with("; 2 fixes applied to 2 files\n"),
        "{}",
        fix.stdout
    );
    let after = std::fs::read_to_string(&layouts).expect("read");
    assert!(
        after.contains("pub type Slice = m![A / 8 # 256];"),
        "{after}"
    );
    let src = dir.path().join("src").display().to_string();
    let again = run_cli_io(&[&src], "");
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again.stdout.contains("0 errors, 0 warnings, 0 other"),
        "{}",
        again.stdout
    );
}

/// `--fix` on a crate whose struct declares a field's mapping short of a cluster
/// (`fixtures/crates/field_fixes`) pads it in `buffers.rs`; the crate is then clean.
#[test]
fn fix_pads_a_struct_fields_type_in_the_file_that_declares_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crates");
    copy_dir(&crates.join("field_fixes"), dir.path());
    let src = dir.path().join("src").display().to_string();
    let fix = run_cli_io(&[&src, "--fix"], "");
    assert_eq!(fix.code, 0, "{}", fix.stdout);
    let buffers = std::fs::read_to_string(dir.path().join("src/buffers.rs")).expect("read");
    assert!(
        buffers
            .contains("pub top: DmTensor<bf16, m![1], m![1 # 2], m![X / 2 # 256], m![X % 2, R]>,"),
        "{buffers}"
    );
    let again = run_cli_io(&[&src], "");
    assert!(
        again.stdout.contains("0 errors, 0 warnings, 0 other"),
        "{}",
        again.stdout
    );
}

/// Copies the directory `from` into `to`, recursively.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The error codes of a crate's JSON report, counted.
fn error_counts(dir: &std::path::Path) -> std::collections::BTreeMap<String, usize> {
    let out = run_cli_io(&[&dir.display().to_string(), "--format", "json"], "");
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let mut counts = std::collections::BTreeMap::new();
    for d in report["diagnostics"].as_array().expect("diagnostics") {
        if d["severity"] == "error" {
            *counts
                .entry(d["code"].as_str().unwrap_or_default().to_string())
                .or_insert(0) += 1;
        }
    }
    counts
}

/// `vec_post`'s FET-003 performance note had an unsafe fix that moved a Time axis into the
/// packet and broke the collect after it (COL-002). A note's fix is offered only when it adds
/// no error, so applying every fix leaves no error the crate did not have.
#[test]
fn every_fix_applied_to_a_crate_adds_no_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crates/vec_post");
    copy_dir(&from, dir.path());
    let before = error_counts(dir.path());
    let path = dir.path().display().to_string();
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    let after = error_counts(dir.path());
    let added: Vec<(&String, &usize)> = after
        .iter()
        .filter(|(code, n)| before.get(*code).is_none_or(|b| *n > b))
        .collect();
    assert!(added.is_empty(), "before {before:?}, after {after:?}");
}

/// A fix of a helper's own text is every call's: `stage_rows`'s signature writes a Cluster of
/// 1, wrong for every caller, so padding it in `helpers.rs` is offered (and applied); qmix's
/// `gather_rows` collects 32 lanes, right for its i8 callers and wrong for a bf16 one, so the
/// same kind of fix would break the i8 calls: the bf16 call gets its own copy of the helper
/// instead, `gather_rows_bf16`, with 16 lanes, and the i8 calls keep theirs.
#[test]
fn a_helpers_text_is_fixed_only_when_every_call_stays_valid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crates");
    copy_dir(&crates.join("rope_kv"), dir.path());
    let path = dir.path().display().to_string();
    let before = error_counts(dir.path());
    run_cli_io(&[&path, "--fix"], "");
    let helpers = std::fs::read_to_string(dir.path().join("src/helpers.rs")).expect("read");
    assert!(
        helpers.contains("-> DmTensor<bf16, Chip, m![1 # 2], TokSlice, TokElem>"),
        "{helpers}"
    );
    assert!(
        !error_counts(dir.path()).contains_key("CAP-002"),
        "{before:?}"
    );

    let out = run_cli_io(
        &[
            &crates.join("qmix").display().to_string(),
            "--format",
            "json",
        ],
        "",
    );
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let gather = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| {
            d["code"] == "COL-001" && d["message"].as_str().is_some_and(|m| m.contains("KPk"))
        })
        .expect("the bf16 call's COL-001");
    let fixes = gather["fixes"].as_array().expect("fixes");
    assert_eq!(fixes.len(), 1, "{gather}");
    let title = fixes[0]["title"].as_str().unwrap_or_default();
    assert!(
        title.contains("in a copy of `gather_rows` for this call, `gather_rows_bf16`"),
        "{title}"
    );
    assert_eq!(
        fixes[0]["edits"][0]["new_text"],
        "crate::plan::gather_rows_bf16"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&crates.join("qmix"), dir.path());
    let before = error_counts(dir.path());
    run_cli_io(
        &[&dir.path().display().to_string(), "--fix", "--unsafe-fixes"],
        "",
    );
    let plan = std::fs::read_to_string(dir.path().join("src/plan.rs")).expect("read");
    assert!(plan.contains("pub fn gather_rows<'l"), "{plan}");
    assert!(plan.contains("pub fn gather_rows_bf16<'l"), "{plan}");
    let quant = std::fs::read_to_string(dir.path().join("src/kernels/quant.rs")).expect("read");
    assert!(quant.contains("gather_rows::<{ Tu::Main }, i8>"), "{quant}");
    let after = error_counts(dir.path());
    assert!(!after.contains_key("COL-001"), "{before:?} -> {after:?}");
    for (code, n) in &after {
        assert!(
            before.get(code).is_some_and(|b| b >= n),
            "{before:?} -> {after:?}"
        );
    }
}

#[test]
fn a_helper_in_the_callers_own_file_is_fixed_in_place() {
    // `widen_rows::<4>` breaks the flit in the helper's text, which lies before the call.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("widen.rs");
    let fixture = root().join("fixtures/rules/COL-001-same-file-helper.rs");
    std::fs::copy(&fixture, &file).expect("copy");
    let path = file.display().to_string();
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert!(
        fixed.contains(".collect::<m![H / { W }], m![H % { W } # 8]>()"),
        "{fixed}"
    );
    let out = run_cli_io(&[&path], "");
    assert!(out.stdout.contains("0 errors"), "{}", out.stdout);
}

#[test]
fn a_const_generic_is_fixed_where_the_outer_call_gives_it() {
    // `store_rows::<3>` passes `N` on to `commit_rows::<N>`, whose commit pads to `N`.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("rows.rs");
    let fixture = root().join("fixtures/rules/CMT-002-const-generic-chain.rs");
    std::fs::copy(&fixture, &file).expect("copy");
    let path = file.display().to_string();
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert!(
        fixed.contains("    store_rows::<2>(one, 0x2000);"),
        "{fixed}"
    );
    // Both helpers, which the other call uses legally, are as written.
    assert!(
        fixed.contains("stream.commit::<m![M, { Padding<m![1], N> }]>(at)"),
        "{fixed}"
    );
    assert!(fixed.contains("commit_rows::<N>(stream, at)"), "{fixed}");
    let out = run_cli_io(&[&path], "");
    assert!(out.stdout.contains("0 errors"), "{}", out.stdout);
}

#[test]
fn a_kernel_a_macro_generates_is_fixed_in_the_invocations_argument() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("kernels.rs");
    let fixture = root().join("fixtures/rules/COL-001-item-macro-argument.rs");
    std::fs::copy(&fixture, &file).expect("copy");
    let path = file.display().to_string();
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert!(
        fixed.contains("bias_relu_kernel!(bias_relu_q4_packed, m![K % 4 # 8]);"),
        "{fixed}"
    );
    // The template, every invocation's, is as written.
    assert!(
        fixed.contains(".collect::<m![H, K / 4], $lane>()"),
        "{fixed}"
    );
    let out = run_cli_io(&[&path], "");
    assert!(out.stdout.contains("0 errors"), "{}", out.stdout);
}

#[test]
fn a_macros_own_text_is_fixed_for_every_invocation() {
    // `rescale_half!`'s template widens to 4 lanes; no argument gave that text.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("dequant.rs");
    let fixture = root().join("fixtures/rules/VEC-006-macro-template.rs");
    std::fs::copy(&fixture, &file).expect("copy");
    let path = file.display().to_string();
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    let fixed = std::fs::read_to_string(&file).expect("read");
    // The template's second `m![Z % 2 # 4]`, the widening one, is the one edited.
    assert!(
        fixed.contains(
            ".vector_narrow_trim::<m![Z % 2 # 4]>()\n            .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), $scale)\n            .vector_widen_pad::<m![Z % 2 # 8]>()\n    };\n}\n\n/// Per-tensor rescale on the fp ALU, restoring"
        ),
        "{fixed}"
    );
    let out = run_cli_io(&[&path], "");
    assert!(out.stdout.contains("0 errors"), "{}", out.stdout);
}

/// `generic_copies`: `narrow::<f8e4m3>` casts to a 16-byte packet that `narrow::<bf16>` fills.
/// Each fp8 call gets its own copy of the helper, `stage::<f8e4m3>` a copy of `stage` that
/// calls the same copy of `narrow`: one copy per helper and values, however many calls need
/// it, and the bf16 calls keep the helpers as they were.
#[test]
fn generic_helpers_are_copied_once_for_the_calls_that_need_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crates");
    copy_dir(&crates.join("generic_copies"), dir.path());
    let path = dir.path().display().to_string();
    assert_eq!(error_counts(dir.path()).get("CST-002"), Some(&2));
    run_cli_io(&[&path, "--fix", "--unsafe-fixes"], "");
    assert!(error_counts(dir.path()).is_empty());
    let narrow = std::fs::read_to_string(dir.path().join("src/narrow.rs")).expect("read");
    assert_eq!(
        narrow.matches("pub fn narrow_f8e4m3<").count(),
        1,
        "{narrow}"
    );
    assert!(narrow.contains(".cast::<D, NarrowOut>()"), "{narrow}");
    assert!(narrow.contains(".cast::<D, m![L # 32]>()"), "{narrow}");
    assert!(
        narrow.contains("    narrow_f8e4m3::<D>(ctx, x.view())"),
        "{narrow}"
    );
    let kernels = std::fs::read_to_string(dir.path().join("src/kernels.rs")).expect("read");
    assert!(
        kernels.contains("narrow::<bf16>(ctx, x.view())"),
        "{kernels}"
    );
    assert!(
        kernels.contains("crate::narrow::stage_f8e4m3::<f8e4m3>(ctx, x)"),
        "{kernels}"
    );
}

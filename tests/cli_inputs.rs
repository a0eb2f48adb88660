//! What `visa-lint` checks and how it fails: directory walking (`.gitignore`, hidden
//! entries, `--exclude`, symbolic-link loops, FIFOs), standard input, every exit status and
//! the one-line message of every bad argument or unreadable input.

use clap::Parser;
use expect_test::expect;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;
use visa_lint_tests::{Run, run_cli_analysing, run_cli_io};
use visa_server::cli::Cli;

const BAD: &str = "use furiosa_visa_std::prelude::*;\naxes![A = 63];\ntype E = m![A / 8];\n";
const CLEAN: &str = "use furiosa_visa_std::prelude::*;\naxes![A = 64];\ntype E = m![A / 8];\n";

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

/// Runs visa-lint with `dir` in place of `$DIR` in the arguments and `$DIR` in place of `dir`
/// in the outputs, failing the test if it takes more than 60 s (a hang).
fn run_in(dir: &Path, args: &[&str]) -> Run {
    let d = dir.display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("$DIR", &d)).collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let _ = tx.send(run_cli_io(&args, ""));
    });
    let mut run = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("visa-lint finished within 60 s");
    run.stdout = run.stdout.replace(&d, "$DIR");
    run.stderr = run.stderr.replace(&d, "$DIR");
    run
}

fn summary(run: &Run) -> &str {
    run.stdout.lines().last().unwrap_or("")
}

#[test]
fn files_outside_a_package_are_each_their_own_crate() {
    // `a.rs` is a crate root whose `mod b;` the CLI does not follow for a lone file (it has no
    // package to read), so `B` is unknown there (VL-008, not checked). Checking `b.rs` first, on
    // the same thread, must not make it `a.rs`'s neighbour.
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(
        d,
        "b.rs",
        "use furiosa_visa_std::prelude::*;\npub axes![B = 64];\n",
    );
    write(
        d,
        "a.rs",
        "use furiosa_visa_std::prelude::*;\nmod b;\nuse b::*;\ntype E = m![B / 8];\n",
    );
    let alone = run_in(d, &["--jobs", "1", "--format", "json", "$DIR/a.rs"]);
    let after_b = run_in(
        d,
        &["--jobs", "1", "--format", "json", "$DIR/b.rs", "$DIR/a.rs"],
    );
    let of_a = |out: &str| -> Vec<serde_json::Value> {
        let v: serde_json::Value = serde_json::from_str(out).expect("JSON output");
        v["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["file"].as_str().is_some_and(|f| f.ends_with("a.rs")))
            .cloned()
            .collect()
    };
    assert!(!of_a(&alone.stdout).is_empty(), "{}", alone.stdout);
    assert_eq!(of_a(&alone.stdout), of_a(&after_b.stdout));
}

#[test]
fn directories_honour_gitignore_and_hidden_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, ".gitignore", "generated/\n");
    write(d, "kernel.rs", BAD);
    write(d, "generated/out.rs", BAD);
    write(d, ".hidden/k.rs", BAD);
    write(d, "target/debug/k.rs", BAD);
    write(d, "sub/notes.txt", BAD);
    let run = run_in(d, &["$DIR"]);
    assert_eq!(
        (run.code, summary(&run)),
        (1, "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other")
    );
    let run = run_in(d, &["$DIR", "--no-ignore", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let mut files: Vec<&str> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["file"].as_str())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "$DIR/.hidden/k.rs",
            "$DIR/generated/out.rs",
            "$DIR/kernel.rs"
        ]
    );
}

#[test]
fn exclude_skips_files_and_directories() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "a.rs", BAD);
    write(d, "gen_b.rs", BAD);
    write(d, "vendor/c.rs", BAD);
    write(d, "deep/vendor/e.rs", BAD);
    let run = run_in(d, &["$DIR", "--exclude", "gen_*.rs", "--exclude", "vendor"]);
    assert_eq!(
        summary(&run),
        "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other"
    );
    let run = run_in(d, &["$DIR", "--exclude", "[oops"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "visa-lint: --exclude [oops: invalid glob: unclosed character class; missing ']'\n"
    );
}

#[test]
fn files_without_the_virtual_isa_are_skipped_in_directories() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "kernel.rs", BAD);
    write(d, "build.rs", "fn main() { println!(\"hello\"); }\n");
    let run = run_in(d, &["$DIR"]);
    assert_eq!(
        summary(&run),
        "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other (1 file without furiosa_visa_std skipped)"
    );
    // Named explicitly, a file is always checked.
    let run = run_in(d, &["$DIR/build.rs"]);
    assert_eq!(
        (run.code, summary(&run)),
        (
            0,
            "visa-lint: 1 file checked: 0 errors, 0 warnings, 0 other"
        )
    );
}

/// A file of a package that depends on the library is one of its kernels' files even when it
/// names nothing of it (a file of macro invocations): it is checked, and what visa-lint cannot
/// read in it is said (VL-009), not skipped.
#[test]
fn files_of_a_kernel_package_are_checked_even_without_the_library_s_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(
        d,
        "Cargo.toml",
        "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\nfuriosa-visa-std = \"0.1\"\n",
    );
    std::fs::create_dir_all(d.join("src")).expect("mkdir");
    write(d, "src/lib.rs", "#[macro_use]\nmod macros;\nmod kernels;\n");
    write(d, "src/macros.rs", "macro_rules! none { () => {}; }\n");
    write(d, "src/kernels.rs", "elsewhere!(words, f32);\n");
    let run = run_in(d, &["$DIR"]);
    assert_eq!(
        summary(&run),
        "visa-lint: 3 files checked: 0 errors, 0 warnings, 1 other"
    );
    assert!(run.stdout.contains("VL-009"), "{}", run.stdout);
}

/// `ln -s . a; ln -s . b` used to hang with memory growing; one self-link checked the same
/// file 41 times. Each file is now checked once.
#[test]
fn symbolic_link_loops_visit_each_file_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "kernel.rs", BAD);
    std::os::unix::fs::symlink(".", d.join("a")).expect("symlink");
    std::os::unix::fs::symlink(".", d.join("b")).expect("symlink");
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    std::os::unix::fs::symlink("..", d.join("sub/up")).expect("symlink");
    std::os::unix::fs::symlink("kernel.rs", d.join("alias.rs")).expect("symlink");
    let run = run_in(d, &["$DIR", "$DIR/kernel.rs", "$DIR/a/kernel.rs"]);
    assert_eq!(
        (run.code, summary(&run), run.stderr.as_str()),
        (
            1,
            "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other",
            ""
        )
    );
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

/// A FIFO named `*.rs` blocked forever when opened. Found in a directory it is skipped; named
/// on the command line it is a one-line error.
#[test]
fn fifos_are_never_opened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "kernel.rs", BAD);
    mkfifo(&d.join("pipe.rs"));
    let run = run_in(d, &["$DIR"]);
    assert_eq!(
        (run.code, summary(&run)),
        (1, "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other")
    );
    for args in [
        &["$DIR/pipe.rs"][..],
        &["model", "$DIR/pipe.rs"],
        &["derive", "$DIR/pipe.rs"],
    ] {
        let run = run_in(d, args);
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (
                2,
                "visa-lint: $DIR/pipe.rs: is a named pipe (FIFO), not a regular file\n"
            ),
            "{args:?}"
        );
    }
    let run = run_in(d, &["model", "$DIR"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (2, "visa-lint: $DIR: is a directory\n")
    );
}

/// Unreadable inputs are reported with exit status 2, never skipped silently; the readable
/// files are still checked.
#[test]
fn unreadable_inputs_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "kernel.rs", BAD);
    std::fs::write(d.join("latin1.rs"), b"// caf\xe9\ntype E = m![A];\n").expect("write");
    std::os::unix::fs::symlink("nowhere.rs", d.join("dangling.rs")).expect("symlink");
    let run = run_in(d, &["$DIR", "$DIR/missing.rs"]);
    assert_eq!(run.code, 2);
    expect![[r#"
        visa-lint: $DIR/dangling.rs: IO error for operation on $DIR/dangling.rs: No such file or directory (os error 2)
        visa-lint: $DIR/missing.rs: no such file or directory
        visa-lint: $DIR/latin1.rs: not UTF-8 text
    "#]]
    .assert_eq(&run.stderr);
    assert_eq!(
        summary(&run),
        "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other"
    );
}

/// A directory without read permission. Root reads it anyway, so the outcome depends on who
/// runs the test: reported (exit 2) for anyone else, checked for root.
#[test]
fn unreadable_directory_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "locked/kernel.rs", BAD);
    let locked = d.join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let readable = std::fs::read_dir(&locked).is_ok();
    let run = run_in(d, &["$DIR"]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    if readable {
        assert_eq!((run.code, run.stderr.as_str()), (1, ""));
    } else {
        assert_eq!(
            (run.code, run.stderr.as_str()),
            (2, "visa-lint: $DIR/locked: permission denied\n")
        );
    }
}

#[test]
fn standard_input_with_a_file_name() {
    let run = run_cli_io(
        &["-", "--stdin-filename", "kernels/k.rs", "--format", "json"],
        BAD,
    );
    assert_eq!(run.code, 1);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["files"], 1);
    assert_eq!(v["diagnostics"][0]["file"], "kernels/k.rs");
    assert_eq!(v["diagnostics"][0]["line"], 3);
    let run = run_cli_io(&["-"], CLEAN);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            0,
            "visa-lint: 1 file checked: 0 errors, 0 warnings, 0 other\n"
        )
    );
}

#[test]
fn exit_status_0_clean_1_errors_2_usage() {
    let clean = run_cli_io(&["-"], CLEAN);
    let errors = run_cli_io(&["-"], BAD);
    // BNK-001 (the 64-access rule) is a warning by default.
    let warnings = run_cli_io(&["fixtures/rules/BNK-001.rs"], "");
    let denied = run_cli_io(&["fixtures/rules/BNK-001.rs", "--deny", "warnings"], "");
    let usage = run_cli_io(&["-", "--deny", "XYZ-001"], BAD);
    assert_eq!(
        [
            clean.code,
            errors.code,
            warnings.code,
            denied.code,
            usage.code
        ],
        [0, 1, 0, 1, 2]
    );
    assert!(warnings.stdout.contains("1 warning"), "{}", warnings.stdout);
}

/// Every bad argument: exit status 2 and one line naming what is wrong.
#[test]
fn bad_arguments_have_one_line_messages() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "visa-lint: no paths given (try `visa-lint fixtures/` or `visa-lint --help`)\n",
        ),
        (
            &["-", "--deny", "XYZ-001"],
            "visa-lint: --deny XYZ-001: no such rule, rule name or family (see `visa-lint --list-rules`)\n",
        ),
        (
            &["-", "--allow", "nope"],
            "visa-lint: --allow nope: no such rule, rule name or family (see `visa-lint --list-rules`)\n",
        ),
        (
            &["-", "--warn", "MAP-999"],
            "visa-lint: --warn MAP-999: no such rule, rule name or family (see `visa-lint --list-rules`)\n",
        ),
        (
            &["fixtures/ok", "--stdin-filename", "k.rs"],
            "visa-lint: --stdin-filename names standard input, which is read only when `-` is given\n",
        ),
        (
            &["-", "-"],
            "visa-lint: `-` (standard input) given more than once\n",
        ),
        (
            &["-", "--fix"],
            "visa-lint: --fix cannot write back to standard input (use --diff to see the fixes)\n",
        ),
        (
            &["-", "--unsafe-fixes"],
            "visa-lint: --unsafe-fixes applies only with --fix or --diff\n",
        ),
        (
            &["-", "--jobs", "0"],
            "visa-lint: --jobs 0: at least one thread is needed\n",
        ),
        (
            &["--explain", "NOPE-001"],
            "visa-lint: --explain NOPE-001: no such rule (see `visa-lint --list-rules`)\n",
        ),
        (
            &["eval", "m![A]", "--format", "sarif"],
            "visa-lint: --format sarif: only linting reports in this format (use human or json)\n",
        ),
        (
            &["--list-rules", "--format", "github"],
            "visa-lint: --format github: only linting reports in this format (use human or json)\n",
        ),
        (
            &["model", "fixtures/nope.rs"],
            "visa-lint: fixtures/nope.rs: no such file or directory\n",
        ),
        (
            &["derive", "fixtures"],
            "visa-lint: fixtures: is a directory\n",
        ),
    ];
    for (args, message) in cases {
        let run = run_cli_io(args, "");
        assert_eq!(
            (run.code, run.stderr.as_str(), run.stdout.as_str()),
            (2, *message, ""),
            "{args:?}"
        );
    }
}

/// A missing input is reported and the run goes on (here with nothing left to check).
#[test]
fn missing_input_is_one_line_and_exit_2() {
    let run = run_cli_io(&["fixtures/nope.rs"], "");
    assert_eq!(
        (run.code, run.stderr.as_str(), run.stdout.as_str()),
        (
            2,
            "visa-lint: fixtures/nope.rs: no such file or directory\n",
            "visa-lint: 0 files checked: 0 errors, 0 warnings, 0 other\n"
        )
    );
}

/// Arguments clap rejects (unknown flags, values outside a choice) exit 2 with its message.
#[test]
fn unparsable_arguments_exit_2() {
    for args in [
        &["visa-lint", "--format", "xml", "f.rs"][..],
        &["visa-lint", "--color", "sometimes", "f.rs"],
        &["visa-lint", "--frobnicate"],
        &["visa-lint", "--jobs", "many", "f.rs"],
    ] {
        let e = Cli::try_parse_from(args).expect_err("rejected");
        assert_eq!(e.exit_code(), 2, "{args:?}");
        let text = e.to_string();
        assert!(text.starts_with("error: "), "{text}");
    }
}

/// A panic inside one file's analysis is an internal-error diagnostic naming the file; the
/// other files are checked as usual.
#[test]
fn a_panicking_analysis_is_reported_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(
        d,
        "a_boom.rs",
        "use furiosa_visa_std::prelude::*; // BOOM\n",
    );
    write(d, "b_kernel.rs", BAD);
    let analyse =
        |config: &visa_analysis::Config, file: &visa_server::lint::FileCtx, text: &str| {
            if text.contains("BOOM") {
                panic!("the analysis met BOOM");
            }
            visa_server::lint::analyse(config, file, text)
        };
    let path = d.display().to_string();
    let run = run_cli_analysing(&[&path, "--format", "json"], "", &analyse);
    assert_eq!(run.code, 1);
    let v: serde_json::Value =
        serde_json::from_str(&run.stdout.replace(&path, "$DIR")).expect("JSON");
    let codes: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap_or(""),
                d["code"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("$DIR/a_boom.rs", "VL-000"),
            ("$DIR/b_kernel.rs", "MAP-001")
        ]
    );
    assert_eq!(
        v["diagnostics"][0]["message"],
        "internal error while checking $DIR/a_boom.rs: the analysis met BOOM (the other files are checked; please report this with the file)"
    );
    assert_eq!(v["diagnostics"][0]["name"], "internal-error");
}

/// Files are checked on several threads; the report is the same, in the same order.
#[test]
fn parallel_checking_is_deterministic() {
    let one = run_cli_io(&["fixtures", "--format", "json", "--jobs", "1"], "");
    let many = run_cli_io(&["fixtures", "--format", "json", "--jobs", "4"], "");
    assert_eq!(one.code, 1);
    assert_eq!(one.stdout, many.stdout);
}

/// `visa-lint.toml` in the file's directory or an ancestor sets rule levels; the command
/// line's `--allow/--warn/--deny` override it.
#[test]
fn configuration_is_discovered_and_overridden_by_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(
        d,
        "visa-lint.toml",
        "[rules]\nstride-must-divide = \"warn\"\n",
    );
    write(d, "kernels/deep/k.rs", BAD);
    let run = run_in(d, &["$DIR/kernels"]);
    assert_eq!(
        (run.code, summary(&run)),
        (0, "visa-lint: 1 file checked: 0 errors, 1 warning, 0 other")
    );
    let run = run_in(d, &["$DIR/kernels", "--deny", "MAP"]);
    assert_eq!(
        (run.code, summary(&run)),
        (1, "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other")
    );
    // Standard input takes the configuration of the directory of its file name.
    let name = d.join("kernels/k.rs").display().to_string();
    let run = run_cli_io(&["-", "--stdin-filename", &name], BAD);
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// The `[package.metadata.visa-lint]` table of a `Cargo.toml` is a configuration too.
#[test]
fn cargo_metadata_configures_a_package() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(
        d,
        "Cargo.toml",
        "[package]\nname = \"kernels\"\n\n[package.metadata.visa-lint.rules]\nMAP-001 = \"allow\"\n",
    );
    write(d, "src/k.rs", BAD);
    let run = run_in(d, &["$DIR/src"]);
    assert_eq!(
        (run.code, summary(&run)),
        (
            0,
            "visa-lint: 1 file checked: 0 errors, 0 warnings, 0 other"
        )
    );
}

/// An invalid configuration is one line naming the file and the key, and exit status 2.
#[test]
fn invalid_configuration_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    write(d, "visa-lint.toml", "traget = \"rngd\"\n");
    write(d, "k.rs", BAD);
    let run = run_in(d, &["$DIR"]);
    assert_eq!(
        (run.code, run.stderr.as_str(), run.stdout.as_str()),
        (
            2,
            "visa-lint: invalid configuration: $DIR/visa-lint.toml: unknown key `traget` (expected target, library, strict-bank-rule, perf-severity, inlay-hints, rules-doc-url or rules)\n",
            ""
        )
    );
    write(d, "visa-lint.toml", "[rules]\nXYZ = \"deny\"\n");
    let run = run_in(d, &["$DIR/k.rs"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "visa-lint: invalid configuration: $DIR/visa-lint.toml: `rules.XYZ`: `XYZ` is no rule code, rule name or family (see `visa-lint --list-rules`)\n"
    );
}

/// The configuration names no files, so it cannot send visa-lint out of the workspace: keys
/// that look like paths are unknown keys (exit 2, nothing read), and the search for a
/// configuration stops at the repository root, so a `visa-lint.toml` above it is not read.
#[test]
fn configuration_paths_never_leave_the_workspace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    // Something outside the repository that a path trick would try to reach.
    write(d, "secret/visa-lint.toml", "[rules]\nMAP = \"allow\"\n");
    write(d, "visa-lint.toml", "[rules]\nMAP = \"allow\"\n");
    std::fs::create_dir_all(d.join("repo/.git")).expect("mkdir .git");
    write(d, "repo/k.rs", BAD);
    // No configuration in the repository: the one above `.git` is not read, MAP-001 stands.
    let run = run_in(d, &["$DIR/repo"]);
    assert_eq!(
        (run.code, summary(&run)),
        (1, "visa-lint: 1 file checked: 1 error, 0 warnings, 0 other")
    );
    for trick in [
        "include = \"../secret/visa-lint.toml\"\n",
        "extends = \"/etc/passwd\"\n",
        "config = \"../../..\"\n",
        "[rules]\n\"../secret\" = \"allow\"\n",
    ] {
        write(d, "repo/visa-lint.toml", trick);
        let run = run_in(d, &["$DIR/repo"]);
        assert_eq!(run.code, 2, "{trick}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with("visa-lint: invalid configuration: $DIR/repo/visa-lint.toml:"),
            "{trick}: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "", "{trick}: nothing is checked");
    }
}

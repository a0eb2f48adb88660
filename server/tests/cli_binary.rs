//! The robustness classes against the built `visa-lint` binary itself (its own main thread,
//! stack and output), not the in-process harness: input that once aborted the process (exit
//! status 134), hung it or flooded the terminal ends with a diagnostic and a normal exit status.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_visa-lint");

struct Out {
    code: Option<i32>,
    stdout: String,
}

/// Runs the binary with a time bound (a hang fails the test instead of stalling the suite).
fn run(args: &[&str]) -> Out {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn visa-lint");
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("visa-lint {args:?} ran for more than 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Out {
        code: status.code(),
        stdout: reader.join().unwrap_or_default(),
    }
}

fn file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

/// The shapes that overflowed the stack, each far past where it did (issue: braces 7,500,
/// parentheses 9,400, chains 5,600, `1 + 1` 26,000, `Vec<Vec<..>>` 5,300, `m![[[..]]]` 8,400,
/// `m![A # 4 # 4 ..]` 15,000): one VL-005, exit status 1, never a signal.
#[test]
fn deep_nesting_is_a_diagnostic_not_an_abort() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let n = 30_000;
    let shapes = [
        (
            "braces",
            format!("fn f() {{ {}{} }}", "{".repeat(n), "}".repeat(n)),
        ),
        (
            "parens",
            format!("fn f() {{ let x = {}1{}; }}", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "chain",
            format!("fn f() {{ let x = a{}; }}", ".b()".repeat(n)),
        ),
        (
            "sum",
            format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(n)),
        ),
        (
            "vec",
            format!("type T = {}u8{};", "Vec<".repeat(n), ">".repeat(n)),
        ),
        (
            "brackets",
            format!(
                "axes![A = 4];\ntype T = m![{}A{}];",
                "[".repeat(n),
                "]".repeat(n)
            ),
        ),
        (
            "pads",
            format!("axes![A = 4];\ntype T = m![A{}];", " # 4".repeat(n)),
        ),
    ];
    for (name, text) in shapes {
        let path = file(d, &format!("{name}.rs"), &text);
        let out = run(&[&path]);
        assert_eq!(out.code, Some(1), "{name}: {}", out.stdout);
        assert!(out.stdout.contains("VL-005"), "{name}: {}", out.stdout);
    }
    // The same through `eval`.
    let deep = format!("m![{}A{}]", "[".repeat(n), "]".repeat(n));
    let out = run(&["eval", "--axes", "A = 4", &deep]);
    assert_eq!(out.code, Some(1));
    assert!(out.stdout.contains("VL-005"), "{}", out.stdout);
}

/// A 245 KB one-line file once printed 332 MB: long lines are cut around the span and the
/// report per file is bounded.
#[test]
fn one_long_line_does_not_flood_the_output() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kernel = "type Blocks = m![K / 8]; ";
    let text = format!("axes![K = 63]; {}", kernel.repeat(10_000));
    let path = file(dir.path(), "long.rs", &text);
    let out = run(&[&path]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stdout.len() < 2 * text.len(),
        "{} bytes of output for a {}-byte file",
        out.stdout.len(),
        text.len()
    );
}

/// `m![$(A: 2, B: 2, C: 2)]` over axes of 65,536 ran for minutes at `--index 65535`.
#[test]
fn eval_of_a_large_linear_combination_answers_at_once() {
    let out = run(&[
        "eval",
        "--axes",
        "A = 65536, B = 65536, C = 65536",
        "m![$(A: 2, B: 2, C: 2)]",
        "--index",
        "65535",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, Some(0), "{}", out.stdout);
    assert!(out.stdout.contains("\"65535\""), "{}", out.stdout);
}

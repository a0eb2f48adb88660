//! Shared helpers for the integration tests: the fixture expectation format (DESIGN.md §5).
//!
//! Under the offending line, a comment with carets under the primary span and the code:
//!
//! ```text
//! type E = m![A / 8];
//! //          ^^^^^ MAP-001
//! ```
//!
//! Several annotation lines may follow one source line. Carets count Unicode scalar values.

use std::fmt;

/// An expected (or actual) diagnostic: 1-based line, 1-based start column, end column
/// (exclusive) on that line, and the code.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expectation {
    pub line: u32,
    pub start: u32,
    pub end: u32,
    pub code: String,
    /// `^^^ CODE (warning)`: the severity the diagnostic must have; `None` when the annotation
    /// does not say (any severity matches).
    pub severity: Option<String>,
}

impl Expectation {
    /// Whether `got` (an actual diagnostic) meets this expectation.
    pub fn matches(&self, got: &Expectation) -> bool {
        (self.line, self.start, self.end, &self.code) == (got.line, got.start, got.end, &got.code)
            && self
                .severity
                .as_ref()
                .is_none_or(|s| got.severity.as_ref() == Some(s))
    }
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}-{} {}", self.line, self.start, self.end, self.code)?;
        match &self.severity {
            Some(s) => write!(f, " ({s})"),
            None => Ok(()),
        }
    }
}

/// Parses `//   ^^^ CODE` annotation lines; returns the expectations.
pub fn expectations(text: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    let mut target: Option<u32> = None;
    for (k, line) in text.lines().enumerate() {
        let line_no = k as u32 + 1;
        match parse_annotation(line) {
            Some((start, end, code, severity)) => {
                if let Some(t) = target {
                    out.push(Expectation {
                        line: t,
                        start,
                        end,
                        code,
                        severity,
                    });
                }
            }
            None => target = Some(line_no),
        }
    }
    out
}

/// `//    ^^^^ MAP-001` -> (start column, end column, code, None);
/// `//    ^^^^ MAP-010 (warning)` -> (.., Some("warning")).
fn parse_annotation(line: &str) -> Option<(u32, u32, String, Option<String>)> {
    let trimmed = line.trim_start();
    let rest = trimmed.strip_prefix("//")?;
    let chars: Vec<char> = line.chars().collect();
    let caret = chars.iter().position(|&c| c == '^')?;
    // Only whitespace between `//` and the carets.
    let slashes = line.chars().count() - trimmed.chars().count() + 2;
    if chars[slashes..caret].iter().any(|c| !c.is_whitespace()) {
        return None;
    }
    let mut end = caret;
    while end < chars.len() && chars[end] == '^' {
        end += 1;
    }
    let tail: String = chars[end..].iter().collect::<String>().trim().to_string();
    let (code, severity) = match tail.split_once(' ') {
        Some((code, sev)) => {
            let sev = sev.trim().strip_prefix('(')?.strip_suffix(')')?;
            if !["error", "warning", "perf", "info"].contains(&sev) {
                return None;
            }
            (code.to_string(), Some(sev.to_string()))
        }
        None => (tail, None),
    };
    let valid = code.split_once('-').is_some_and(|(f, n)| {
        !f.is_empty()
            && f.chars().all(|c| c.is_ascii_uppercase())
            && n.len() == 3
            && n.chars().all(|c| c.is_ascii_digit())
    });
    let _ = rest;
    valid.then_some((caret as u32 + 1, end as u32 + 1, code, severity))
}

/// Each rule says which library generations it applies to (issue 29): a kernel written
/// against `library` never gets a diagnostic of a rule for the other only. One line per
/// diagnostic that does.
pub fn misapplied(
    path: &std::path::Path,
    library: visa_analysis::library::Generation,
    diags: &[visa_analysis::Diagnostic],
) -> Vec<String> {
    diags
        .iter()
        .filter(|d| !d.rule.generations.applies_to(library))
        .map(|d| {
            format!(
                "{}: {} is reported on a {library} kernel, yet its rule applies to {}",
                path.display(),
                d.rule.code,
                d.rule.generations
            )
        })
        .collect()
}

/// Converts a diagnostic's primary span to the annotation form (a multi-line span is cut at
/// the end of its first line).
pub fn actual(text: &str, d: &visa_analysis::Diagnostic) -> Expectation {
    let idx = visa_analysis::LineIndex::new(text);
    let s = idx.line_col(text, d.span.start);
    let e = idx.line_col(text, d.span.end);
    let end = if e.line == s.line {
        e.column.max(s.column + 1)
    } else {
        let line = text.lines().nth(s.line as usize - 1).unwrap_or("");
        line.chars().count() as u32 + 1
    };
    Expectation {
        line: s.line,
        start: s.column,
        end,
        code: d.code().to_string(),
        severity: Some(d.severity.as_str().to_string()),
    }
}

/// `visa-lint ARGS...` parsed, with arguments starting with `fixtures` made absolute.
fn parse_cli(args: &[&str]) -> visa_server::cli::Cli {
    use clap::Parser;
    let root = env!("CARGO_MANIFEST_DIR");
    let argv = std::iter::once("visa-lint".to_string()).chain(args.iter().map(|a| {
        if a.starts_with("fixtures") {
            format!("{root}/{a}")
        } else {
            (*a).to_string()
        }
    }));
    visa_server::cli::Cli::try_parse_from(argv).expect("arguments parse")
}

/// Runs `visa-lint ARGS...` in-process from the repository root; returns (exit status, stdout).
/// Arguments starting with `fixtures` are paths relative to the repository root, and the root
/// is stripped from the output so snapshots do not depend on where the checkout lives.
pub fn run_cli(args: &[&str]) -> (u8, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let cli = parse_cli(args);
    let mut out = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
    let code = visa_server::cli::run_with(&cli, &mut out);
    let text = String::from_utf8(out.into_inner())
        .expect("UTF-8 output")
        .replace(&format!("{root}/"), "");
    (code, text)
}

/// What an in-process `visa-lint` run produced.
#[derive(Debug)]
pub struct Run {
    pub code: u8,
    pub stdout: String,
    pub stderr: String,
}

/// Like [`run_cli`], with `stdin` as standard input and stderr captured. Arguments starting
/// with `fixtures` are made absolute, and the repository root is stripped from both outputs.
pub fn run_cli_io(args: &[&str], stdin: &str) -> Run {
    run_cli_analysing(args, stdin, &visa_server::lint::analyse)
}

/// Like [`run_cli_io`], with the analysis of each text given (to test the CLI's own handling
/// of, for example, an analysis that panics).
pub fn run_cli_analysing(
    args: &[&str],
    stdin: &str,
    analyse: &(
         dyn Fn(
        &visa_analysis::Config,
        &visa_server::lint::FileCtx,
        &str,
    ) -> Vec<visa_analysis::Diagnostic>
             + Sync
     ),
) -> Run {
    let root = env!("CARGO_MANIFEST_DIR");
    let cli = parse_cli(args);
    let mut out = codespan_reporting::term::termcolor::NoColor::new(Vec::new());
    let mut err = Vec::new();
    let code = visa_server::cli::run_streams(
        &cli,
        visa_server::cli::Streams {
            out: &mut out,
            err: &mut err,
            stdin: &mut stdin.as_bytes(),
        },
        analyse,
    );
    let strip = |bytes: Vec<u8>| {
        String::from_utf8(bytes)
            .expect("UTF-8 output")
            .replace(&format!("{root}/"), "")
    };
    Run {
        code,
        stdout: strip(out.into_inner()),
        stderr: strip(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_attach_to_the_line_above() {
        let text = "type E = m![A / 8];\n//          ^^^^^ MAP-001\n//       ^ VL-001 (warning)\nlet x = 1;\n";
        assert_eq!(
            expectations(text),
            vec![
                Expectation {
                    line: 1,
                    start: 13,
                    end: 18,
                    code: "MAP-001".into(),
                    severity: None,
                },
                Expectation {
                    line: 1,
                    start: 10,
                    end: 11,
                    code: "VL-001".into(),
                    severity: Some("warning".into()),
                },
            ]
        );
    }

    #[test]
    fn a_stated_severity_must_match() {
        let e = &expectations("x\n// ^ MAP-010 (warning)\n")[0];
        let mut got = e.clone();
        got.severity = Some("error".into());
        assert!(!e.matches(&got));
        got.severity = Some("warning".into());
        assert!(e.matches(&got));
        assert!(expectations("x\n// ^ MAP-010 (fatal)\n").is_empty());
    }

    #[test]
    fn ordinary_comments_are_not_annotations() {
        assert!(expectations("// a ^ b\n// ^^ not a code\n").is_empty());
    }
}

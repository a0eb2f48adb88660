//! Suppression comments (DESIGN.md §4):
//!
//! - `// visa-lint: allow(CODE, ...)` at the end of a line silences those rules on that line;
//!   alone on its line, on that line and the next one;
//! - `// visa-lint: allow-file(CODE, ...)` anywhere silences them in the whole file.
//!
//! CODE is a rule code (`BNK-001`), a rule name (`bank-64-access-rule`) or a family (`BNK`).
//! A suppression that silences nothing, or names no rule, is reported itself (VL-006), with a
//! fix that removes it.

use crate::config::selects;
use crate::diagnostic::{Diagnostic, Span};
use crate::rules::tool::VL_006;

/// One `visa-lint:` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// The whole comment, `//` to the end of the line.
    pub comment: Span,
    /// The rules it names, each with where it is written.
    pub codes: Vec<(String, Span)>,
    pub file_level: bool,
    /// The comment is the only thing on its line (it then also covers the next line).
    pub own_line: bool,
    /// The bytes of the lines it covers (its own, and the next when it is alone on its line),
    /// each line with its end: a finding that starts there is on a covered line.
    pub covers: std::ops::Range<usize>,
}

/// Finds the suppression comments of a text. Only lines that mention `visa-lint:` are looked
/// at (found by a substring search), so the scan costs next to nothing on files without any.
pub fn scan(text: &str) -> Vec<Suppression> {
    let mut out = Vec::new();
    let mut last_line = None;
    for at in memchr::memmem::find_iter(text.as_bytes(), "visa-lint:") {
        let line_start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |i| i + 1);
        if last_line == Some(line_start) {
            continue; // the line was read at its first mention
        }
        last_line = Some(line_start);
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = &text[line_start..line_end];
        let Some(slash) = comment_start(line) else {
            continue;
        };
        let comment = &line[slash..];
        let body = comment.trim_start_matches('/').trim_start();
        let Some(rest) = body.strip_prefix("visa-lint:") else {
            continue;
        };
        let rest = rest.trim_start();
        let (file_level, args) = if let Some(a) = rest.strip_prefix("allow-file") {
            (true, a)
        } else if let Some(a) = rest.strip_prefix("allow") {
            (false, a)
        } else {
            continue;
        };
        let args = args.trim_start();
        let Some(inner) = args.strip_prefix('(') else {
            continue;
        };
        let inner = inner.split(')').next().unwrap_or("");
        // `inner` is a slice of `line`: its offset in the line is the pointer difference.
        let inner_at = line_start + (inner.as_ptr() as usize - line.as_ptr() as usize);
        let mut codes = Vec::new();
        let mut offset = 0usize;
        for part in inner.split(',') {
            let trimmed = part.trim();
            if !trimmed.is_empty() {
                let lead = part.len() - part.trim_start().len();
                let at = inner_at + offset + lead;
                codes.push((trimmed.to_string(), Span::new(at, at + trimmed.len())));
            }
            offset += part.len() + 1;
        }
        let end = line.trim_end_matches('\r').len();
        let own_line = line[..slash].trim().is_empty();
        // Through this line's end (the newline itself belongs to it), or the next line's.
        let next_end = || {
            memchr::memchr(
                b'\n',
                text.as_bytes().get(line_end + 1..).unwrap_or_default(),
            )
            .map_or(text.len(), |i| line_end + 1 + i)
        };
        let covered_end = if own_line && line_end < text.len() {
            next_end()
        } else {
            line_end
        };
        out.push(Suppression {
            comment: Span::new(line_start + slash, line_start + end),
            codes,
            file_level,
            own_line,
            covers: line_start..covered_end + 1,
        });
    }
    out
}

/// Where a `//` comment starts on a line, skipping `//` inside string and char literals.
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'/' if !in_str && bytes.get(i + 1) == Some(&b'/') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Drops the diagnostics the comments of `text` suppress and reports the suppressions (or the
/// codes of one) that silenced nothing.
pub fn apply(text: &str, diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let sups = scan(text);
    if sups.is_empty() {
        return diags;
    }
    let mut used: Vec<Vec<bool>> = sups.iter().map(|s| vec![false; s.codes.len()]).collect();
    let mut kept = Vec::with_capacity(diags.len());
    for d in diags {
        let mut silenced = false;
        for (s, used) in sups.iter().zip(used.iter_mut()) {
            let covers = s.file_level || s.covers.contains(&(d.span.start as usize));
            if !covers {
                continue;
            }
            for ((sel, _), u) in s.codes.iter().zip(used.iter_mut()) {
                if selects(sel, d.rule) {
                    *u = true;
                    silenced = true;
                }
            }
        }
        if !silenced {
            kept.push(d);
        }
    }
    for (s, used) in sups.iter().zip(&used) {
        if s.codes.is_empty() {
            kept.push(Diagnostic::new(
                &VL_006,
                s.comment,
                "this `visa-lint: allow` names no rule",
            ));
            continue;
        }
        let all_unused = used.iter().all(|u| !u);
        for ((sel, span), u) in s.codes.iter().zip(used) {
            if *u {
                continue;
            }
            let known = crate::config::check_selector(sel).is_ok();
            let message = if known {
                format!(
                    "`{sel}` is allowed here but nothing {} reports it",
                    if s.file_level {
                        "in this file"
                    } else {
                        "on this line"
                    }
                )
            } else {
                format!("`{sel}` is no rule code, rule name or family")
            };
            let mut d = Diagnostic::new(&VL_006, *span, message);
            if all_unused && s.codes.len() == 1 {
                // Remove the comment; alone on its line, the whole line.
                let remove = if s.own_line {
                    let start = text[..s.comment.start as usize]
                        .rfind('\n')
                        .map_or(0, |i| i + 1);
                    let end = text[s.comment.end as usize..]
                        .find('\n')
                        .map_or(text.len(), |i| s.comment.end as usize + i + 1);
                    Span::new(start, end)
                } else {
                    let before = text[..s.comment.start as usize].trim_end().len();
                    Span::new(before, s.comment.end as usize)
                };
                d = d.with_edit("remove the unused suppression", true, remove, "");
            }
            kept.push(d);
        }
    }
    kept.sort_by_key(|d| (d.span, d.code()));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 0-based line of a byte position.
    fn line_of(text: &str, at: u32) -> usize {
        text[..at as usize].matches('\n').count()
    }

    #[test]
    fn scans_codes_with_their_spans() {
        let text = "fn k() {\n    x.fetch(); // visa-lint: allow(FET-004, MAP)\n    // visa-lint: allow-file(BNK-001)\n    let s = \"// visa-lint: allow(X)\";\n}\n";
        let sups = scan(text);
        assert_eq!(sups.len(), 2, "{sups:?}");
        let codes: Vec<&str> = sups[0]
            .codes
            .iter()
            .map(|(_, s)| &text[s.range()])
            .collect();
        assert_eq!(codes, ["FET-004", "MAP"]);
        assert!(!sups[0].own_line && !sups[0].file_level);
        assert_eq!(line_of(text, sups[0].comment.start), 1);
        assert!(sups[1].own_line && sups[1].file_level);
        assert_eq!(
            &text[sups[1].comment.range()],
            "// visa-lint: allow-file(BNK-001)"
        );
    }

    /// A finding is silenced when it starts on the comment's line, or on the next line for a
    /// comment alone on its line: `covers` says so by bytes, for every position of the text
    /// (the newline ending a line belongs to that line; the end of the text to the last line).
    #[test]
    fn covered_bytes_are_the_covered_lines() {
        let texts = [
            "a; // visa-lint: allow(X)\nb;\nc;\n",
            "a;\n// visa-lint: allow(X)\nb;\nc;",
            "a;\n    // visa-lint: allow(X)\nlast",
            "a;\n// visa-lint: allow(X)",
            "x // visa-lint: allow(X)",
            "a;\r\n// visa-lint: allow(X)\r\nb;\r\nc;\r\n",
            "// visa-lint: allow(X)\n\n\nd;",
        ];
        for text in texts {
            let sups = scan(text);
            assert_eq!(sups.len(), 1, "{text:?}");
            let s = &sups[0];
            for at in 0..=text.len() {
                let line = line_of(text, at as u32);
                let own = line_of(text, s.comment.start);
                let by_line = line == own || (s.own_line && line == own + 1);
                assert_eq!(s.covers.contains(&at), by_line, "{text:?} at {at}");
            }
        }
    }
}

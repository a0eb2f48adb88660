//! Rendering diagnostics for people (codespan-reporting) and for tools (JSON, DESIGN.md §4),
//! and the one rule the surfaces report themselves ([`INTERNAL_ERROR`]).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::WriteColor};
use serde_json::{Value, json};
use std::path::PathBuf;
use visa_analysis::library::Library;
use visa_analysis::rules::registry::{Generations, Rule, Status};
use visa_analysis::{Diagnostic, LineIndex, Severity, Span};

/// The diagnostic reported when the analysis of one file fails inside visa-lint itself: the
/// surfaces' own rule, beside the registry's (the SARIF driver lists it too).
pub static INTERNAL_ERROR: Rule = Rule {
    code: "VL-000",
    name: "internal-error",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "visa-lint failed while checking this file",
    docs: "The analysis of the file stopped on a bug in visa-lint. The file is reported with \
           this diagnostic and the other files are checked as usual. Please report it with the \
           file (or the smallest part of it that still fails).",
    bad: "",
    good: "",
    manual: "",
    generations: Generations::Both,
};

/// One checked text: its name as given and its contents.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
    /// The other files its fixes edit: (absolute path, name as reported, text).
    pub others: &'a [(PathBuf, String, String)],
}

fn cs_severity(s: Severity) -> CsSeverity {
    match s {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Perf => CsSeverity::Note,
        Severity::Info => CsSeverity::Help,
    }
}

/// Source lines longer than this many bytes are cut around the labels, as rustc does.
pub const MAX_LINE: usize = 160;
/// Bytes of context kept on each side of the labels of a cut line.
const CONTEXT: usize = 40;
/// Human output shows at most this many diagnostics per file, then a count of the rest.
pub const MAX_SHOWN_PER_FILE: usize = 200;

/// Writes diagnostics the way rustc does, with the source lines and carets. Long lines are cut
/// around the labels and at most [`MAX_SHOWN_PER_FILE`] diagnostics are shown, so the output
/// stays proportional to what is reported, not to the size of the file.
pub fn emit_human(
    out: &mut dyn WriteColor,
    src: &Source<'_>,
    diags: &[Diagnostic],
) -> std::io::Result<()> {
    let files = SimpleFile::new(src.name, src.text);
    let config = term::Config::default();
    let mut line_starts: Option<Vec<usize>> = None;
    for d in diags.iter().take(MAX_SHOWN_PER_FILE) {
        let mut labels = vec![(clamp(d.span, src.text), None)];
        for r in &d.related {
            labels.push((clamp(r.span, src.text), Some(r.message.clone())));
        }
        let mut notes = Vec::new();
        for f in &d.fixes {
            notes.push(format!(
                "fix{}: {}",
                if f.safe { "" } else { " (review)" },
                f.title
            ));
        }
        notes.push(format!(
            "{}: {} (`visa-lint --explain {}`)",
            d.rule.name,
            d.rule.summary,
            d.code()
        ));
        let cs = CsDiagnostic::new(cs_severity(d.severity))
            .with_message(match d.severity {
                // codespan prints errors and warnings as such; say which the others are.
                Severity::Perf | Severity::Info => {
                    format!("{} [{}]", d.message, d.severity.as_str())
                }
                Severity::Error | Severity::Warning => d.message.clone(),
            })
            .with_code(d.code())
            .with_notes(notes);
        let starts = line_starts.get_or_insert_with(|| line_starts_of(src.text));
        let long = labels.iter().any(|(r, _)| {
            [r.start, r.end].iter().any(|&b| {
                let line = starts.partition_point(|&s| s <= b) - 1;
                line_end(src.text, starts, line) - starts[line] > MAX_LINE
            })
        });
        let to_labels = |map: &dyn Fn(&std::ops::Range<usize>) -> std::ops::Range<usize>| {
            labels
                .iter()
                .enumerate()
                .map(|(i, (r, msg))| {
                    let l = if i == 0 {
                        Label::primary((), map(r))
                    } else {
                        Label::secondary((), map(r))
                    };
                    match msg {
                        Some(m) => l.with_message(m.clone()),
                        None => l,
                    }
                })
                .collect::<Vec<_>>()
        };
        if long {
            let ranges: Vec<_> = labels.iter().map(|(r, _)| r.clone()).collect();
            let ex = Excerpt::new(src, starts, &ranges);
            let cs = cs.with_labels(to_labels(&|r| ex.map(r)));
            term::emit(out, &config, &ex, &cs).map_err(std::io::Error::other)?;
        } else {
            let cs = cs.with_labels(to_labels(&|r| r.clone()));
            term::emit(out, &config, &files, &cs).map_err(std::io::Error::other)?;
        }
    }
    if diags.len() > MAX_SHOWN_PER_FILE {
        writeln!(
            out,
            "{}: {} more diagnostics not shown (all are in `--format json`; `--statistics` counts them)\n",
            src.name,
            diags.len() - MAX_SHOWN_PER_FILE
        )?;
    }
    Ok(())
}

fn line_starts_of(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    starts
}

/// The end of a line's content (before its `\n`).
fn line_end(text: &str, starts: &[usize], line: usize) -> usize {
    match starts.get(line + 1) {
        Some(&next) => next - 1,
        None => text.len(),
    }
}

/// The lines a diagnostic shows, each cut to a window around its labels when long, with the
/// maps between the excerpt's offsets and the file's (for the labels and for the `file:line:col`
/// header, which keeps the file's own numbers).
struct Excerpt<'a> {
    name: &'a str,
    file: &'a str,
    file_starts: &'a [usize],
    /// The file's line index of the excerpt's first line.
    first: usize,
    text: String,
    starts: Vec<usize>,
    /// Per excerpt line: the file's byte window shown, and the length of the `...` before it.
    windows: Vec<(usize, usize, usize)>,
}

impl<'a> Excerpt<'a> {
    fn new(src: &Source<'a>, file_starts: &'a [usize], labels: &[std::ops::Range<usize>]) -> Self {
        let file = src.text;
        let line_of = |b: usize| file_starts.partition_point(|&s| s <= b) - 1;
        let first = labels.iter().map(|r| line_of(r.start)).min().unwrap_or(0);
        let last = labels.iter().map(|r| line_of(r.end)).max().unwrap_or(first);
        let mut text = String::new();
        let mut starts = Vec::new();
        let mut windows = Vec::new();
        for line in first..=last {
            let (ls, le) = (file_starts[line], line_end(file, file_starts, line));
            let parts = labels
                .iter()
                .filter(|r| r.start <= le && r.end >= ls)
                .map(|r| (r.start.max(ls), r.end.min(le)));
            let lo = parts.clone().map(|p| p.0).min().unwrap_or(ls);
            let hi = parts.map(|p| p.1).max().unwrap_or(ls);
            let (mut ws, mut we) = if le - ls <= MAX_LINE {
                (ls, le)
            } else {
                let ws = lo.saturating_sub(CONTEXT).max(ls);
                (ws, (hi + CONTEXT).min(le).min(ws + MAX_LINE).max(ws))
            };
            while !file.is_char_boundary(ws) {
                ws -= 1;
            }
            while !file.is_char_boundary(we) {
                we += 1;
            }
            if line > first {
                text.push('\n');
            }
            starts.push(text.len());
            let prefix = if ws > ls { "..." } else { "" };
            text.push_str(prefix);
            text.push_str(&file[ws..we]);
            if we < le {
                text.push_str("...");
            }
            windows.push((ws, we, prefix.len()));
        }
        Excerpt {
            name: src.name,
            file,
            file_starts,
            first,
            text,
            starts,
            windows,
        }
    }

    /// A file range as an excerpt range (clamped to the shown windows).
    fn map(&self, r: &std::ops::Range<usize>) -> std::ops::Range<usize> {
        let at = |b: usize| {
            let line = self.file_starts.partition_point(|&s| s <= b) - 1;
            let k = line.saturating_sub(self.first).min(self.windows.len() - 1);
            let (ws, we, prefix) = self.windows[k];
            self.starts[k] + prefix + (b.clamp(ws, we) - ws)
        };
        let start = at(r.start);
        start..at(r.end).max(start)
    }

    fn excerpt_line(&self, b: usize) -> usize {
        self.starts.partition_point(|&s| s <= b).saturating_sub(1)
    }
}

impl<'a> codespan_reporting::files::Files<'a> for Excerpt<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), b: usize) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.excerpt_line(b))
    }

    fn line_number(&'a self, (): (), k: usize) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.first + k + 1)
    }

    fn line_range(
        &'a self,
        (): (),
        k: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        let start = *self
            .starts
            .get(k)
            .ok_or(codespan_reporting::files::Error::LineTooLarge {
                given: k,
                max: self.starts.len().saturating_sub(1),
            })?;
        let end = self.starts.get(k + 1).copied().unwrap_or(self.text.len());
        Ok(start..end)
    }

    /// The file's own line and column of an excerpt offset.
    fn location(
        &'a self,
        (): (),
        b: usize,
    ) -> Result<codespan_reporting::files::Location, codespan_reporting::files::Error> {
        let k = self.excerpt_line(b);
        let (ws, we, prefix) = self.windows[k];
        let in_file = (ws + b.saturating_sub(self.starts[k] + prefix)).min(we);
        let line = self.first + k;
        let column = self.file[self.file_starts[line]..in_file].chars().count() + 1;
        Ok(codespan_reporting::files::Location {
            line_number: line + 1,
            column_number: column,
        })
    }
}

fn clamp(span: Span, text: &str) -> std::ops::Range<usize> {
    let mut start = (span.start as usize).min(text.len());
    let mut end = (span.end as usize).min(text.len()).max(start);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

/// Line/column fields for a span (1-based, columns in Unicode scalar values).
fn position(idx: &LineIndex, text: &str, span: Span) -> [(&'static str, u32); 4] {
    let s = idx.line_col(text, span.start);
    let e = idx.line_col(text, span.end);
    [
        ("line", s.line),
        ("column", s.column),
        ("end_line", e.line),
        ("end_column", e.column),
    ]
}

fn insert_position(
    obj: &mut serde_json::Map<String, Value>,
    idx: &LineIndex,
    text: &str,
    span: Span,
) {
    for (k, v) in position(idx, text, span) {
        obj.insert(k.into(), v.into());
    }
}

/// A fix's edits in other files, each file as `{"file", "edits"}` with positions in its text
/// (a file whose text the run does not hold is left out).
fn other_files_json(src: &Source<'_>, f: &visa_analysis::Fix) -> Vec<Value> {
    f.other_files
        .iter()
        .filter_map(|o| {
            let (_, name, text) = src.others.iter().find(|(p, _, _)| *p == o.path)?;
            let idx = LineIndex::new(text);
            let edits: Vec<Value> = o
                .edits
                .iter()
                .map(|e| {
                    let mut obj = serde_json::Map::new();
                    insert_position(&mut obj, &idx, text, e.span);
                    obj.insert("new_text".into(), e.new_text.clone().into());
                    Value::Object(obj)
                })
                .collect();
            Some(json!({"file": name, "edits": edits}))
        })
        .collect()
}

/// One diagnostic as DESIGN.md §4's JSON object.
pub fn diagnostic_json(src: &Source<'_>, idx: &LineIndex, d: &Diagnostic) -> Value {
    let mut obj = serde_json::Map::new();
    obj.insert("code".into(), d.code().into());
    obj.insert("name".into(), d.rule.name.into());
    obj.insert("severity".into(), d.severity.as_str().into());
    obj.insert("file".into(), src.name.into());
    insert_position(&mut obj, idx, src.text, d.span);
    obj.insert("message".into(), d.message.clone().into());
    let fixes: Vec<Value> = d
        .fixes
        .iter()
        .map(|f| {
            let edits: Vec<Value> = f
                .edits
                .iter()
                .map(|e| {
                    let mut o = serde_json::Map::new();
                    insert_position(&mut o, idx, src.text, e.span);
                    o.insert("new_text".into(), e.new_text.clone().into());
                    Value::Object(o)
                })
                .collect();
            let mut fix = json!({"title": f.title, "safe": f.safe, "edits": edits});
            if !f.other_files.is_empty() {
                fix["other_files"] = other_files_json(src, f).into();
            }
            fix
        })
        .collect();
    obj.insert("fixes".into(), fixes.into());
    let related: Vec<Value> = d
        .related
        .iter()
        .map(|r| {
            let mut o = serde_json::Map::new();
            insert_position(&mut o, idx, src.text, r.span);
            o.insert("message".into(), r.message.clone().into());
            Value::Object(o)
        })
        .collect();
    obj.insert("related".into(), related.into());
    Value::Object(obj)
}

/// The whole `--format json` document: the files checked, the library each crate was checked
/// against, and the diagnostics.
pub fn report_json(
    files: usize,
    diagnostics: Vec<Value>,
    libraries: &std::collections::BTreeMap<&str, Library>,
) -> Value {
    let libraries: Vec<Value> = libraries
        .iter()
        .map(|(krate, l)| {
            json!({
                "crate": krate,
                "library": l.generation.package_name(),
                "version": l.version.map(|v| v.to_string()),
                "checked_as": l.generation.modelled_version().to_string(),
                "from": l.evidence.key(),
            })
        })
        .collect();
    json!({"version": 1, "files": files, "libraries": libraries, "diagnostics": diagnostics})
}

/// Escapes a workflow-command message (`%`, CR, LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `--format github`: one workflow command per diagnostic, which GitHub Actions shows as an
/// annotation on the pull request (`error`, `warning`, and `notice` for perf and info).
pub fn emit_github(
    out: &mut dyn WriteColor,
    src: &Source<'_>,
    idx: &LineIndex,
    diags: &[Diagnostic],
) -> std::io::Result<()> {
    for d in diags {
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Perf | Severity::Info => "notice",
        };
        let s = idx.line_col(src.text, d.span.start);
        let e = idx.line_col(src.text, d.span.end);
        writeln!(
            out,
            "::{kind} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(src.name),
            s.line,
            s.column,
            e.line,
            e.column,
            escape_property(&format!("{} ({})", d.code(), d.rule.name)),
            escape_data(&format!("{} [{}]", d.message, d.code())),
        )?;
    }
    Ok(())
}

/// One line of `--statistics`: a rule, how often it was reported, and how many of those
/// reports carry a fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCount {
    pub code: &'static str,
    pub name: &'static str,
    pub count: usize,
    pub fixable: usize,
}

/// Counts per rule, most frequent first (ties by code).
pub fn statistics<'d>(diags: impl IntoIterator<Item = &'d Diagnostic>) -> Vec<RuleCount> {
    let mut counts: Vec<RuleCount> = Vec::new();
    for d in diags {
        let fixable = usize::from(!d.fixes.is_empty());
        match counts.iter_mut().find(|c| c.code == d.code()) {
            Some(c) => {
                c.count += 1;
                c.fixable += fixable;
            }
            None => counts.push(RuleCount {
                code: d.code(),
                name: d.rule.name,
                count: 1,
                fixable,
            }),
        }
    }
    counts.sort_by(|a, b| b.count.cmp(&a.count).then(a.code.cmp(b.code)));
    counts
}

/// `--statistics` as text: `count  CODE  [*] name`, `[*]` when every report has a fix.
pub fn emit_statistics(out: &mut dyn WriteColor, counts: &[RuleCount]) -> std::io::Result<()> {
    let width = counts
        .iter()
        .map(|c| c.count.to_string().len())
        .max()
        .unwrap_or(1);
    for c in counts {
        let mark = if c.fixable == c.count {
            "[*]"
        } else if c.fixable > 0 {
            "[-]"
        } else {
            "   "
        };
        writeln!(out, "{:>width$}  {:<8} {mark} {}", c.count, c.code, c.name)?;
    }
    Ok(())
}

/// `--statistics --format json`: `[{code, name, count, fixable}]`.
pub fn statistics_json(counts: &[RuleCount]) -> Value {
    counts
        .iter()
        .map(|c| json!({"code": c.code, "name": c.name, "count": c.count, "fixable": c.fixable}))
        .collect()
}

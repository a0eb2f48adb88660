//! Every fix checked before it is offered: applied to the crate in a host of its own and
//! analysed again.
//!
//! A fix that leaves its diagnostic in place is not offered. A fix that clears it but adds an
//! error anywhere in the crate (a padded alias another tensor needed unpadded, a mapping
//! inlined where its axes are not in scope) is offered as unsafe, its title naming what it
//! breaks, after the fixes that break nothing, when every error it adds has a fix of its own
//! (`--fix` then reaches a clean fixed point: a rounded address that the next rule asks to
//! round further). One that adds an error no fix repairs is a dead end and is not offered,
//! even when it edits an alias's definition. An unsafe fix that clears its diagnostic and adds no error is offered as safe
//! when it is only unsafe for what it might break elsewhere (the edit of an alias's
//! definition), and it comes first: padding the alias is then the fix.
//!
//! Each check analyses the file again, so the checks of one file are budgeted
//! ([`CHECKED_BYTES`] of its text in all, at least [`MIN_CHECKS`]): a file of concatenated
//! kernels with hundreds of fixes took minutes and gigabytes in `--format json`. A fix past
//! the budget is offered unchecked, as unsafe, and its title says so.

use crate::api::{Analysis, AnalysisHost, Cancellable, FileId};
use crate::diagnostic::{Diagnostic, Edit, Fix, Severity, Span, applied};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Diagnostics with their fixes checked, and the texts of the other files the fixes edit.
#[derive(Clone, Debug, Default)]
pub struct CheckedFixes {
    pub diagnostics: Vec<Diagnostic>,
    pub texts: HashMap<PathBuf, Arc<str>>,
}

/// The diagnostics of `file` whose primary span meets `range`, with every fix checked on a
/// host forked from `analysis` (see [`Analysis::fork`]), and the texts of the other files
/// their fixes edit (to place those edits).
pub fn checked_fixes(analysis: &Analysis, file: FileId, range: Span) -> Cancellable<CheckedFixes> {
    let under: Vec<Diagnostic> = analysis
        .diagnostics(file)?
        .iter()
        .filter(|d| d.span.start <= range.end && range.start <= d.span.end)
        .cloned()
        .collect();
    checked_diagnostics(analysis, file, under)
}

/// `diags` (diagnostics of `file` in `analysis`) with every fix checked, as
/// [`checked_fixes`] does for the diagnostics of a range.
pub fn checked_diagnostics(
    analysis: &Analysis,
    file: FileId,
    diags: Vec<Diagnostic>,
) -> Cancellable<CheckedFixes> {
    let forked = if diags.iter().any(|d| !d.fixes.is_empty()) {
        analysis.fork(file)?
    } else {
        None
    };
    let Some((mut host, id)) = forked else {
        return Ok(CheckedFixes {
            diagnostics: diags,
            texts: HashMap::new(),
        });
    };
    let diagnostics = check_fixes(&mut host, id, &diags);
    let snapshot = host.snapshot();
    let mut texts = HashMap::new();
    for path in diagnostics
        .iter()
        .flat_map(|d| d.fixes.iter())
        .flat_map(|f| f.other_files.iter().map(|o| &o.path))
    {
        if let Some(other) = host.file_id(path) {
            texts.insert(path.clone(), snapshot.text(other)?);
        }
    }
    Ok(CheckedFixes { diagnostics, texts })
}

/// The errors of every file of a host, by file, as (rule, message) with their count and
/// whether one of them has no fix: what a fix must not add to.
type Errors = HashMap<PathBuf, HashMap<(&'static str, String), Count>>;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Count {
    n: usize,
    /// One of them has no fix.
    unfixed: bool,
}

/// The errors a fix adds: a phrase naming them, and whether one of them has no fix.
struct Added {
    what: String,
    dead_end: bool,
}

/// `diags` (diagnostics of `file` in `host`) with their fixes checked: dropped, made unsafe or
/// promoted as the module's documentation says. The host's texts are restored afterwards.
pub fn check_fixes(host: &mut AnalysisHost, file: FileId, diags: &[Diagnostic]) -> Vec<Diagnostic> {
    if diags.iter().all(|d| d.fixes.is_empty()) {
        return diags.to_vec();
    }
    let before = errors(host);
    // Each check analyses the file again: past the budget, a fix is offered unchecked.
    let bytes = host.snapshot().text(file).map_or(0, |t| t.len()).max(1);
    let mut left = (CHECKED_BYTES / bytes).max(MIN_CHECKS);
    diags
        .iter()
        .map(|d| {
            let mut d = d.clone();
            let fixes = std::mem::take(&mut d.fixes);
            d.fixes = if left >= fixes.len() {
                left -= fixes.len();
                checked(host, file, &d, fixes, &before)
            } else {
                left = 0;
                fixes.into_iter().map(unchecked).collect()
            };
            d
        })
        .collect()
}

/// How many bytes of its file the fixes of one file may analyse again in all (a check analyses
/// the whole file): 32 fixes of a 256 KB file, hundreds of a kernel file. A file of
/// concatenated kernels with hundreds of fixes would otherwise take minutes.
const CHECKED_BYTES: usize = 8 * 1024 * 1024;

/// The fixes of a file that are always checked, however large it is.
const MIN_CHECKS: usize = 4;

/// A fix past the budget: offered, but not as safe (`--fix` leaves it to `--unsafe-fixes`),
/// its title saying it was not checked.
fn unchecked(mut fix: Fix) -> Fix {
    fix.safe = false;
    fix.title = format!(
        "{} (not checked: this file has more fixes than visa-lint checks in one run)",
        fix.title
    );
    fix
}

fn checked(
    host: &mut AnalysisHost,
    file: FileId,
    d: &Diagnostic,
    fixes: Vec<Fix>,
    before: &Errors,
) -> Vec<Fix> {
    let mut out: Vec<Fix> = Vec::new();
    let mut breaking: Vec<Fix> = Vec::new();
    for mut fix in fixes {
        match verdict(host, file, d, &fix, before) {
            Verdict::Leaves => {}
            // An error no fix repairs: `--fix` would end with it, whatever the fix edits.
            Verdict::Breaks(added) if added.dead_end => {}
            // A helper's text is every call's: a fix of it that breaks another call is none.
            Verdict::Breaks(_) if fix.edits_helper => {}
            // A note (a cost, a suggestion) is not worth an error: its fix must be clean.
            Verdict::Breaks(_) if d.severity < Severity::Warning => {}
            Verdict::Breaks(added) => {
                fix.safe = false;
                fix.title = format!("{} (adds {})", fix.title, added.what);
                breaking.push(fix);
            }
            Verdict::Clean if fix.edits_definition => {
                fix.safe = true;
                out.insert(0, fix);
            }
            Verdict::Clean => out.push(fix),
        }
    }
    // A copy of a helper for one call is the fallback when the helper's text cannot be fixed
    // for every call.
    if out.iter().any(|f| !f.copies_helper) {
        out.retain(|f| !f.copies_helper);
    }
    out.append(&mut breaking);
    out
}

enum Verdict {
    /// The diagnostic is still reported where the fix applied.
    Leaves,
    /// It is gone, and these errors are new.
    Breaks(Added),
    Clean,
}

fn verdict(
    host: &mut AnalysisHost,
    file: FileId,
    d: &Diagnostic,
    fix: &Fix,
    before: &Errors,
) -> Verdict {
    let Some(path) = host.path(file).map(PathBuf::from) else {
        return Verdict::Leaves;
    };
    let Some(originals) = apply(host, &changes_of(&path, fix)) else {
        return Verdict::Leaves;
    };
    let left = still_reported(host, file, d, fix).unwrap_or(false);
    let mut chased = Vec::new();
    let verdict = if left {
        Verdict::Leaves
    } else {
        let after = errors(host);
        let added = match fix.copies_helper {
            true => errors_not_copied(before, &after),
            false => new_errors(before, &after),
        };
        match added {
            Some(mut what) => {
                // Each error it adds has a fix, but fixing them may add others: `--fix`
                // must reach a fixed point with nothing new, or this fix is a dead end.
                if !what.dead_end {
                    let settled;
                    (settled, chased) = settles(host, before);
                    what.dead_end = !settled;
                }
                Verdict::Breaks(what)
            }
            None => Verdict::Clean,
        }
    };
    host.set_files(chased);
    host.set_files(originals);
    verdict
}

/// How many rounds of fixing the errors a fix adds are tried before the fix is a dead end.
const CHASE_ROUNDS: usize = 4;

/// Whether fixing, one at a time, the errors the host has beyond `before` ends with none left
/// within [`CHASE_ROUNDS`]; and the texts of the files it edited as they were before, to
/// restore. Each error is fixed by its first fix that would pass its own check (see
/// [`passes_own_check`]), as the fix `--fix --unsafe-fixes` then offers and applies: a
/// follow-on fix that would be dropped does not make the fix before it safe.
fn settles(host: &mut AnalysisHost, before: &Errors) -> (bool, Vec<(PathBuf, String)>) {
    let mut restore: Vec<(PathBuf, String)> = Vec::new();
    for _ in 0..CHASE_ROUNDS {
        let Some((path, error)) = first_new_error(host, before) else {
            break;
        };
        let Some(originals) = error
            .fixes
            .iter()
            .find_map(|fix| passes_own_check(host, &path, &error, fix))
        else {
            break; // no fix of it would be offered: `--fix` ends with it
        };
        for (p, text) in originals {
            if !restore.iter().any(|(q, _)| *q == p) {
                restore.push((p, text));
            }
        }
    }
    (new_errors(before, &errors(host)).is_none(), restore)
}

/// Applies `fix` of `error` (an error of the file at `path`) when it would pass its own check:
/// it clears its error, and every error it adds has a fix and is not made by a helper's edit.
/// The texts it replaced, or `None` with the host left as it was.
fn passes_own_check(
    host: &mut AnalysisHost,
    path: &std::path::Path,
    error: &Diagnostic,
    fix: &Fix,
) -> Option<Vec<(PathBuf, String)>> {
    let file = host.file_id(path)?;
    let now = errors(host);
    let originals = apply(host, &changes_of(path, fix))?;
    let left = still_reported(host, file, error, fix).unwrap_or(true);
    let refused = left
        || new_errors(&now, &errors(host)).is_some_and(|added| added.dead_end || fix.edits_helper);
    if refused {
        host.set_files(originals);
        return None;
    }
    Some(originals)
}

/// Whether `d` (of `file`) is still reported where `fix`, applied to the host, moved it;
/// `None` when the file could not be analysed.
fn still_reported(host: &AnalysisHost, file: FileId, d: &Diagnostic, fix: &Fix) -> Option<bool> {
    let at = moved(d.span, &fix.edits);
    let after = host.snapshot().diagnostics(file).ok()?;
    Some(
        after
            .iter()
            .any(|a| a.code() == d.code() && a.span.start <= at.end && at.start <= a.span.end),
    )
}

/// The first error the host has beyond `before` that has a fix, with the path of its file.
fn first_new_error(host: &AnalysisHost, before: &Errors) -> Option<(PathBuf, Diagnostic)> {
    let analysis = host.snapshot();
    let mut paths = host.paths();
    paths.sort();
    for path in paths {
        let Some(id) = host.file_id(&path) else {
            continue;
        };
        let mut seen: HashMap<(&'static str, String), usize> = HashMap::new();
        for d in analysis.diagnostics(id).ok()?.iter() {
            if d.severity != Severity::Error {
                continue;
            }
            let key = (d.code(), comparable(&d.message));
            let had = before
                .get(&path)
                .and_then(|c| c.get(&key))
                .map_or(0, |c| c.n);
            let n = seen.entry(key).or_default();
            *n += 1;
            if *n > had && !d.fixes.is_empty() {
                return Some((path, d.clone()));
            }
        }
    }
    None
}

/// The edits of `fix` (of a diagnostic of the file at `path`) by file.
fn changes_of<'f>(path: &std::path::Path, fix: &'f Fix) -> Vec<(PathBuf, &'f [Edit])> {
    let mut changes: Vec<(PathBuf, &[Edit])> = vec![(path.to_path_buf(), &fix.edits)];
    for other in &fix.other_files {
        changes.push((other.path.clone(), &other.edits));
    }
    changes
}

/// Sets each file's text with its edits applied; the original texts, or `None` (nothing
/// changed) when an edit does not fit its file.
fn apply(
    host: &mut AnalysisHost,
    changes: &[(PathBuf, &[Edit])],
) -> Option<Vec<(PathBuf, String)>> {
    let snapshot = host.snapshot();
    let mut originals = Vec::new();
    let mut edited = Vec::new();
    for (path, edits) in changes {
        if edits.is_empty() {
            continue;
        }
        let id = host.file_id(path)?;
        let text = snapshot.text(id).ok()?;
        edited.push((path.clone(), applied(&text, edits)?));
        originals.push((path.clone(), text.to_string()));
    }
    drop(snapshot);
    host.set_files(edited);
    Some(originals)
}

/// Where `span` is after `edits`: moved by the edits before it, and covering an edit that
/// replaces it.
fn moved(span: Span, edits: &[Edit]) -> Span {
    let mut start = i64::from(span.start);
    let mut end = i64::from(span.end);
    for e in edits {
        let delta = e.new_text.len() as i64 - (i64::from(e.span.end) - i64::from(e.span.start));
        if e.span.end <= span.start {
            start += delta;
            end += delta;
        } else if e.span.start < span.end {
            end += delta.max(-(end - start));
        }
    }
    Span::new(start.max(0) as usize, end.max(start).max(0) as usize)
}

fn errors(host: &AnalysisHost) -> Errors {
    let analysis = host.snapshot();
    let mut out: Errors = HashMap::new();
    for path in host.paths() {
        let Some(id) = host.file_id(&path) else {
            continue;
        };
        let counts = out.entry(path).or_default();
        for d in analysis.diagnostics(id).iter().flat_map(|ds| ds.iter()) {
            if d.severity == Severity::Error {
                let count = counts
                    .entry((d.code(), comparable(&d.message)))
                    .or_default();
                count.n += 1;
                count.unfixed |= d.fixes.is_empty();
            }
        }
    }
    out
}

/// A message as errors before and after a fix are compared: without the addresses its trail
/// of calls says tensors are placed at, and without the padding of the mappings it writes. A
/// fix that moves a tensor changes where the trail says it is, and one that pads a mapping
/// changes how another error writes it (`slice `W / 4`` → `slice `W / 4 # 256``), not the
/// error.
fn comparable(message: &str) -> String {
    without_padding(&without_placements(message))
}

/// `message` with each padding of a mapping it writes (` # 256`, ` #{!} 32`) left out.
fn without_padding(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" #") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        // `#{kind}` names the padding's kind.
        let after = match after.strip_prefix('{').and_then(|a| a.split_once('}')) {
            Some((_, tail)) => tail,
            None => after,
        };
        let digits = after.trim_start_matches(' ');
        let size = digits.trim_start_matches(|c: char| c.is_ascii_digit());
        if size.len() == digits.len() || !after.starts_with(' ') {
            // Not a padding: kept as written.
            out.push_str(" #");
            rest = &rest[at + 2..];
        } else {
            rest = size;
        }
    }
    out.push_str(rest);
    out
}

fn without_placements(message: &str) -> String {
    let Some((finding, trail)) = message.split_once(" (in `") else {
        return message.to_string();
    };
    let mut out = format!("{finding} (in `");
    let mut rest = trail;
    while let Some(at) = rest.find(" placed at 0x") {
        let (head, tail) = rest.split_at(at + " placed at ".len());
        out.push_str(head);
        out.push('_');
        rest = tail.trim_start_matches(|c: char| c == 'x' || c == '0' || c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

/// The errors of `after` that `before` has nowhere, with the trail of calls its message ends
/// with left out: a copy of a helper for one call ([`crate::own_copy`]) has the helper's other
/// findings too, the same mistakes in a second place, which are not new to the crate.
fn errors_not_copied(before: &Errors, after: &Errors) -> Option<Added> {
    let head = |m: &str| m.split(" (in `").next().unwrap_or(m).to_string();
    let had: std::collections::HashSet<(&str, String)> = before
        .values()
        .flat_map(|c| c.keys())
        .map(|(code, m)| (*code, head(m)))
        .collect();
    let after: Errors = after
        .iter()
        .map(|(path, counts)| {
            let new = counts
                .iter()
                .filter(|((code, m), _)| !had.contains(&(*code, head(m))))
                .map(|(k, c)| (k.clone(), *c));
            (path.clone(), new.collect())
        })
        .collect();
    new_errors(&Errors::new(), &after)
}

/// The errors `after` has beyond `before`, as a short phrase (`2 errors: CAP-003 in
/// layouts.rs, ...`), or `None`.
fn new_errors(before: &Errors, after: &Errors) -> Option<Added> {
    let mut added: Vec<String> = Vec::new();
    let mut dead_end = false;
    for (path, counts) in after {
        for ((code, message), count) in counts {
            let had = before
                .get(path)
                .and_then(|c| c.get(&(*code, message.clone())))
                .map_or(0, |c| c.n);
            let n = count.n;
            dead_end |= n > had && count.unfixed;
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            added.extend(std::iter::repeat_n(
                format!("{code} in {name}"),
                n.saturating_sub(had),
            ));
        }
    }
    if added.is_empty() {
        return None;
    }
    added.sort();
    let n = added.len();
    added.dedup();
    let what = format!(
        "{n} error{}: {}",
        if n == 1 { "" } else { "s" },
        added.join(", ")
    );
    Some(Added { what, dead_end })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: usize, end: usize, new_text: &str) -> Edit {
        Edit::replace(start, end, new_text)
    }

    #[test]
    fn errors_are_compared_without_the_padding_of_the_mappings_they_write() {
        assert_eq!(
            comparable("the VRF operand has slice `W / 4 # 256`, the stream `W / 4, F / 32`"),
            comparable("the VRF operand has slice `W / 4`, the stream `W / 4, F / 32`")
        );
        assert_eq!(
            without_padding("m![1 #{!} 32, A] and #3 # x"),
            "m![1, A] and #3 # x"
        );
    }

    #[test]
    fn a_replaced_span_covers_its_replacement_and_later_spans_move() {
        // `Slice` (5 bytes) at 10 replaced by `m![A / 8 # 256]` (15 bytes).
        let e = [edit(10, 15, "m![A / 8 # 256]")];
        assert_eq!(moved(Span::new(10, 15), &e), Span::new(10, 25));
        assert_eq!(moved(Span::new(20, 22), &e), Span::new(30, 32));
        assert_eq!(moved(Span::new(0, 4), &e), Span::new(0, 4));
    }

    /// A file past the budget has its first fixes checked and the rest offered unchecked, as
    /// unsafe: six MAP-001 in a file of about 3 MB, of which 8 MB buys the minimum, 4 checks.
    #[test]
    fn fixes_past_the_budget_are_offered_unchecked() {
        let mut text = String::from("use furiosa_visa_std::prelude::*;\naxes![A = 8];\n");
        for k in 0..6 {
            text.push_str(&format!("type T{k} = m![A / 3];\n"));
        }
        text.push_str(&format!("// {}\n", "x".repeat(3 * 1024 * 1024)));
        let mut host = AnalysisHost::new();
        let path = PathBuf::from("/w/big.rs");
        host.set_files([(path.clone(), text)]);
        let file = host.file_id(&path).expect("a file");
        let diags = host
            .snapshot()
            .diagnostics(file)
            .expect("diagnostics")
            .to_vec();
        let checked = check_fixes(&mut host, file, &diags);
        let map: Vec<&Diagnostic> = checked.iter().filter(|d| d.code() == "MAP-001").collect();
        assert_eq!(map.len(), 6, "{checked:#?}");
        assert!(map.iter().all(|d| d.fixes.len() == 1));
        let unchecked: Vec<&Fix> = map
            .iter()
            .map(|d| &d.fixes[0])
            .filter(|f| f.title.contains("not checked"))
            .collect();
        assert_eq!(unchecked.len(), 2, "{map:#?}");
        assert!(unchecked.iter().all(|f| !f.safe));
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_are_refused() {
        let text = "type S = m![A];";
        assert_eq!(
            applied(text, &[edit(9, 14, "m![A # 8]")]).as_deref(),
            Some("type S = m![A # 8];")
        );
        assert_eq!(applied(text, &[edit(0, 4, "x"), edit(2, 6, "y")]), None);
        assert_eq!(applied(text, &[edit(9, 99, "m![]")]), None);
    }

    #[test]
    fn new_errors_are_counted_per_file_and_named() {
        let key = |code: &'static str| (code, "message".to_string());
        let mut before: Errors = HashMap::new();
        before
            .entry(PathBuf::from("/c/src/k.rs"))
            .or_default()
            .insert(
                key("CAP-003"),
                Count {
                    n: 1,
                    unfixed: true,
                },
            );
        let mut after = before.clone();
        assert!(new_errors(&before, &after).is_none());
        let k = PathBuf::from("/c/src/k.rs");
        let count = |n, unfixed| Count { n, unfixed };
        after
            .entry(k.clone())
            .or_default()
            .insert(key("CAP-001"), count(2, false));
        let added = new_errors(&before, &after).expect("two new errors");
        assert_eq!(added.what, "2 errors: CAP-001 in k.rs");
        assert!(!added.dead_end, "each has a fix");
        // A new error without a fix of its own makes the fix a dead end.
        after
            .entry(k)
            .or_default()
            .insert(key("SEQ-004"), count(1, true));
        assert!(new_errors(&before, &after).expect("new errors").dead_end);
    }
}

//! `--fix`, `--unsafe-fixes` and `--diff`: applying the diagnostics' fixes to a text.
//!
//! One pass applies, for each diagnostic, its first fix allowed by the safety setting, skipping
//! any fix whose edits overlap (or touch at the same insertion point) an edit already taken;
//! the text is then analysed again and the next pass applies what the new diagnostics offer,
//! until nothing changes or [`MAX_PASSES`] is reached.

use visa_analysis::{Diagnostic, Edit};

/// The bound on analyse-and-fix passes.
pub const MAX_PASSES: usize = 10;

/// Which fixes may be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applicability {
    /// Only fixes marked safe (`--fix`).
    Safe,
    /// Every fix (`--fix --unsafe-fixes`).
    All,
}

/// One pass: the text with the non-overlapping fixes applied, and how many fixes that was
/// (0: the text is returned unchanged).
pub fn apply_once(text: &str, diags: &[Diagnostic], which: Applicability) -> (String, usize) {
    let mut taken: Vec<&Edit> = Vec::new();
    let mut count = 0;
    for d in diags {
        let candidate = d
            .fixes
            .iter()
            // A fix that edits other files too waits for a crate-wide pass (not yet made).
            .find(|f| {
                !f.edits.is_empty()
                    && f.other_files.is_empty()
                    && (f.safe || which == Applicability::All)
            });
        let Some(fix) = candidate else {
            continue;
        };
        let valid = fix.edits.iter().all(|e| {
            let r = e.span.range();
            r.start <= r.end
                && r.end <= text.len()
                && text.is_char_boundary(r.start)
                && text.is_char_boundary(r.end)
        });
        let clash = |a: &Edit, b: &Edit| {
            let (a, b) = (a.span.range(), b.span.range());
            // Overlapping ranges, or two edits at one point (their order would be a guess).
            a.start < b.end && b.start < a.end || a.start == b.start || a.end == b.end
        };
        let self_clash = fix
            .edits
            .iter()
            .enumerate()
            .any(|(i, a)| fix.edits[i + 1..].iter().any(|b| clash(a, b)));
        if !valid || self_clash || fix.edits.iter().any(|e| taken.iter().any(|t| clash(e, t))) {
            continue;
        }
        taken.extend(fix.edits.iter());
        count += 1;
    }
    if count == 0 {
        return (text.to_string(), 0);
    }
    taken.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in taken {
        let r = e.span.range();
        out.push_str(&text[at..r.start]);
        out.push_str(&e.new_text);
        at = r.end;
    }
    out.push_str(&text[at..]);
    (out, count)
}

/// The outcome of fixing one text to its fixed point.
pub struct Fixed {
    pub text: String,
    /// Fixes applied over all passes.
    pub applied: usize,
    /// The diagnostics of the final text.
    pub remaining: Vec<Diagnostic>,
}

/// Analyses and fixes `text` until no allowed fix applies (at most [`MAX_PASSES`] passes).
/// `analyse` returns the diagnostics of a text as the run reports them (levels applied).
pub fn to_fixed_point(
    text: &str,
    which: Applicability,
    analyse: &dyn Fn(&str) -> Vec<Diagnostic>,
) -> Fixed {
    let mut current = text.to_string();
    let mut diags = analyse(&current);
    let mut applied = 0;
    for _ in 0..MAX_PASSES {
        let (next, n) = apply_once(&current, &diags, which);
        if n == 0 || next == current {
            break;
        }
        applied += n;
        current = next;
        diags = analyse(&current);
    }
    Fixed {
        text: current,
        applied,
        remaining: diags,
    }
}

/// A unified diff of a file's fixes: `--- a/NAME` / `+++ b/NAME` for a relative name (as git
/// writes them, for `git apply`), the name itself for an absolute one.
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    let (a, b) = if name.starts_with('/') {
        (name.to_string(), name.to_string())
    } else {
        (format!("a/{name}"), format!("b/{name}"))
    };
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

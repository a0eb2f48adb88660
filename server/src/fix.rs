//! `--fix`, `--unsafe-fixes` and `--diff`: applying the diagnostics' fixes to a text.
//!
//! One pass applies, for each diagnostic, its first fix allowed by the safety setting, skipping
//! any fix whose edits overlap (or touch at the same insertion point) an edit already taken;
//! the text is then analysed again and the next pass applies what the new diagnostics offer,
//! until nothing changes or [`MAX_PASSES`] is reached. Within a crate the passes run over all
//! its files at once ([`crate_to_fixed_point`]): a fix may edit another file (an alias padded
//! where it is defined), and the fixes of two files may edit the same third one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use visa_analysis::{Diagnostic, Edit, Fix};

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

/// The texts a crate-wide pass reads and edits, by path.
pub type Texts = BTreeMap<PathBuf, String>;

/// One pass over one text: the text with the non-overlapping fixes applied, and how many fixes
/// that was (0: the text is returned unchanged). A fix that edits another file is not taken.
pub fn apply_once(text: &str, diags: &[Diagnostic], which: Applicability) -> (String, usize) {
    let here = PathBuf::new();
    let texts = Texts::from([(here.clone(), text.to_string())]);
    let (mut changed, counts) = apply_pass(&texts, [(here.as_path(), diags)], which);
    let count = counts.values().sum();
    (
        changed.remove(&here).unwrap_or_else(|| text.to_string()),
        count,
    )
}

/// One pass over the files of a crate: for each diagnostic (with the file it lies in), its
/// first fix allowed by `which` whose files are all in `texts` is taken whole when none of its
/// edits clashes with an edit already taken; returns the texts that changed and the number
/// of fixes taken for each file's diagnostics.
pub fn apply_pass<'d>(
    texts: &Texts,
    diags: impl IntoIterator<Item = (&'d Path, &'d [Diagnostic])>,
    which: Applicability,
) -> (Texts, BTreeMap<PathBuf, usize>) {
    let mut plan = Plan::default();
    for (file, file_diags) in diags {
        for d in file_diags {
            let candidate = d.fixes.iter().find(|f| {
                (!f.edits.is_empty() || f.other_files.iter().any(|o| !o.edits.is_empty()))
                    && (f.safe || which == Applicability::All)
                    && f.other_files.iter().all(|o| texts.contains_key(&o.path))
            });
            if let Some(fix) = candidate {
                plan.take(texts, file, fix);
            }
        }
    }
    plan.apply(texts)
}

/// The edits a pass has taken, by file; a fix is taken whole or not at all.
#[derive(Default)]
struct Plan<'d> {
    taken: BTreeMap<&'d Path, Vec<&'d Edit>>,
    /// The fixes taken, by the file of their diagnostic.
    fixes: BTreeMap<&'d Path, usize>,
}

impl<'d> Plan<'d> {
    /// Takes `fix` (of a diagnostic in `file`) unless an edit of it lies outside its text or
    /// clashes with another of its edits or with one already taken.
    fn take(&mut self, texts: &Texts, file: &'d Path, fix: &'d Fix) {
        let mut parts: BTreeMap<&Path, Vec<&Edit>> = BTreeMap::new();
        parts.entry(file).or_default().extend(&fix.edits);
        for o in &fix.other_files {
            parts.entry(o.path.as_path()).or_default().extend(&o.edits);
        }
        let fits = parts.iter().all(|(path, edits)| {
            let Some(text) = texts.get(*path) else {
                return false;
            };
            let taken = self.taken.get(path).map_or(&[][..], Vec::as_slice);
            edits.iter().enumerate().all(|(i, e)| {
                within(text, e)
                    && !edits[i + 1..].iter().any(|b| clash(e, b))
                    && !taken.iter().any(|t| clash(e, t))
            })
        });
        if fits {
            for (path, edits) in parts {
                self.taken.entry(path).or_default().extend(edits);
            }
            *self.fixes.entry(file).or_default() += 1;
        }
    }

    /// The texts the taken edits change, and the number of fixes taken by diagnostic file.
    fn apply(self, texts: &Texts) -> (Texts, BTreeMap<PathBuf, usize>) {
        let mut changed = Texts::new();
        for (path, mut edits) in self.taken {
            let Some(text) = texts.get(path) else {
                continue;
            };
            edits.sort_by_key(|e| (e.span.start, e.span.end));
            let mut out = String::with_capacity(text.len());
            let mut at = 0;
            for e in edits {
                let r = e.span.range();
                out.push_str(&text[at..r.start]);
                out.push_str(&e.new_text);
                at = r.end;
            }
            out.push_str(&text[at..]);
            changed.insert(path.to_path_buf(), out);
        }
        let fixes = self.fixes.into_iter().map(|(p, n)| (p.to_path_buf(), n));
        (changed, fixes.collect())
    }
}

/// Whether `e` replaces a range of `text` that starts and ends on character boundaries.
fn within(text: &str, e: &Edit) -> bool {
    let r = e.span.range();
    r.start <= r.end
        && r.end <= text.len()
        && text.is_char_boundary(r.start)
        && text.is_char_boundary(r.end)
}

/// Overlapping ranges, or two edits at one point (their order would be a guess).
fn clash(a: &Edit, b: &Edit) -> bool {
    let (a, b) = (a.span.range(), b.span.range());
    a.start < b.end && b.start < a.end || a.start == b.start || a.end == b.end
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

/// The outcome of fixing the files of a crate to their fixed point.
pub struct CrateFixed {
    /// Every text of the crate, edited.
    pub texts: Texts,
    /// Fixes applied over all passes, by the target whose diagnostic they fixed.
    pub applied: BTreeMap<PathBuf, usize>,
    /// The diagnostics of each target in the final texts.
    pub remaining: BTreeMap<PathBuf, Vec<Diagnostic>>,
}

/// Analyses the `targets` among `texts` (a crate's files) and applies their fixes, in their
/// own files and in the others they edit, until no allowed fix applies (at most
/// [`MAX_PASSES`] passes). `analyse` returns the diagnostics of one target as the run reports
/// them, read within the crate's current texts.
pub fn crate_to_fixed_point(
    mut texts: Texts,
    targets: &[PathBuf],
    which: Applicability,
    analyse: &dyn Fn(&Texts, &Path) -> Vec<Diagnostic>,
) -> CrateFixed {
    let analyse_all = |texts: &Texts| -> BTreeMap<PathBuf, Vec<Diagnostic>> {
        targets
            .iter()
            .map(|t| (t.clone(), analyse(texts, t)))
            .collect()
    };
    let mut diags = analyse_all(&texts);
    let mut applied: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for _ in 0..MAX_PASSES {
        let by_file = diags.iter().map(|(p, d)| (p.as_path(), d.as_slice()));
        let (changed, counts) = apply_pass(&texts, by_file, which);
        let changed: Texts = changed
            .into_iter()
            .filter(|(p, t)| texts.get(p) != Some(t))
            .collect();
        if changed.is_empty() {
            break;
        }
        for (p, n) in counts {
            *applied.entry(p).or_default() += n;
        }
        texts.extend(changed);
        diags = analyse_all(&texts);
    }
    CrateFixed {
        texts,
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

#[cfg(test)]
mod tests {
    use super::*;
    use visa_analysis::{FileEdits, Span, rules::mapping::MAP_001};

    fn edit(start: usize, end: usize, new_text: &str) -> Edit {
        Edit::replace(start, end, new_text)
    }

    /// A diagnostic whose one safe fix makes `own` edits in its file and `other` in `path`.
    fn fixing(own: Vec<Edit>, path: &str, other: Vec<Edit>) -> Diagnostic {
        let mut d = Diagnostic::new(&MAP_001, Span::new(0, 1), "m");
        d.fixes.push(Fix {
            title: "t".into(),
            safe: true,
            edits: own,
            other_files: vec![FileEdits {
                path: PathBuf::from(path),
                edits: other,
            }],
            edits_definition: true,
            edits_helper: false,
            copies_helper: false,
            edits_attribute: false,
            alias_pad: Vec::new(),
        });
        d
    }

    #[test]
    fn a_pass_takes_fixes_whole_across_files_and_skips_one_that_clashes_in_a_third() {
        let texts = Texts::from([
            (PathBuf::from("/a.rs"), "aaaa".to_string()),
            (PathBuf::from("/b.rs"), "bbbb".to_string()),
            (PathBuf::from("/l.rs"), "llll".to_string()),
        ]);
        let a = [fixing(
            vec![edit(0, 1, "A")],
            "/l.rs",
            vec![edit(1, 2, "L")],
        )];
        // b's fix edits the same place of l.rs: it is not taken, not even its edit of b.rs.
        let b = [fixing(
            vec![edit(0, 1, "B")],
            "/l.rs",
            vec![edit(1, 2, "M")],
        )];
        let diags = [(Path::new("/a.rs"), &a[..]), (Path::new("/b.rs"), &b[..])];
        let (changed, counts) = apply_pass(&texts, diags, Applicability::Safe);
        assert_eq!(
            changed.get(Path::new("/a.rs")).map(String::as_str),
            Some("Aaaa")
        );
        assert_eq!(
            changed.get(Path::new("/l.rs")).map(String::as_str),
            Some("lLll")
        );
        assert_eq!(changed.get(Path::new("/b.rs")), None);
        assert_eq!(counts.get(Path::new("/a.rs")), Some(&1));
        assert_eq!(counts.get(Path::new("/b.rs")), None);
    }

    #[test]
    fn a_fix_that_only_edits_another_file_is_applied_and_one_of_an_unknown_file_is_passed_over() {
        let texts = Texts::from([
            (PathBuf::from("/k.rs"), "kkkk".to_string()),
            (PathBuf::from("/l.rs"), "llll".to_string()),
        ]);
        let only_other = [fixing(Vec::new(), "/l.rs", vec![edit(0, 4, "L")])];
        let (changed, _) = apply_pass(
            &texts,
            [(Path::new("/k.rs"), &only_other[..])],
            Applicability::Safe,
        );
        assert_eq!(
            changed.get(Path::new("/l.rs")).map(String::as_str),
            Some("L")
        );

        // A file outside the texts: the next fix allowed is taken instead.
        let mut d = fixing(
            vec![edit(0, 1, "X")],
            "/elsewhere.rs",
            vec![edit(0, 1, "Y")],
        );
        d = d.with_fix("inline", true, vec![edit(1, 2, "Z")]);
        let (changed, _) = apply_pass(
            &texts,
            [(Path::new("/k.rs"), &[d][..])],
            Applicability::Safe,
        );
        assert_eq!(
            changed.get(Path::new("/k.rs")).map(String::as_str),
            Some("kZkk")
        );
    }

    #[test]
    fn a_crate_reaches_its_fixed_point_and_counts_fixes_by_the_file_they_fixed() {
        // The analysis reports one fix in k.rs editing l.rs until l.rs reads "done".
        let analyse = |texts: &Texts, _: &Path| -> Vec<Diagnostic> {
            match texts.get(Path::new("/l.rs")).map(String::as_str) {
                Some("done") => Vec::new(),
                _ => vec![fixing(Vec::new(), "/l.rs", vec![edit(0, 4, "done")])],
            }
        };
        let texts = Texts::from([
            (PathBuf::from("/k.rs"), "kkkk".to_string()),
            (PathBuf::from("/l.rs"), "llll".to_string()),
        ]);
        let out = crate_to_fixed_point(
            texts,
            &[PathBuf::from("/k.rs")],
            Applicability::Safe,
            &analyse,
        );
        assert_eq!(
            out.texts.get(Path::new("/l.rs")).map(String::as_str),
            Some("done")
        );
        assert_eq!(out.applied.get(Path::new("/k.rs")), Some(&1));
        assert!(out.remaining.values().all(Vec::is_empty));
    }
}

//! Where a diagnostic points (ARCHITECTURE.md, "Where a diagnostic points"): a diagnostic that
//! offers a fix points where that fix acts. Checked on every kernel of `fixtures/` (file by file)
//! and `examples/`: each fix has an edit inside the primary span (an insertion may sit at
//! either end of it) or an edit that covers the primary span whole (a deletion of the
//! offending text).

use std::path::{Path, PathBuf};
use visa_analysis::diagnostic::{Diagnostic, Span};

fn kernel_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("fixtures"), &mut out);
    walk(&root.join("examples"), &mut out);
    out
}

/// Whether `edit` acts on `primary`: it lies inside it (an insertion at either end included),
/// or it covers it whole.
fn touches(primary: Span, edit: Span) -> bool {
    (primary.start <= edit.start && edit.end <= primary.end)
        || (edit.start <= primary.start && primary.end <= edit.end)
}

/// The fixes of `d` none of whose edits touch its primary span, by title.
fn misplaced(d: &Diagnostic) -> Vec<&str> {
    d.fixes
        .iter()
        // Padding an alias where it is defined edits the definition, fixing a helper's own
        // text (for every call) edits the helper, and running a kernel on other chips edits
        // its attribute, by design.
        .filter(|f| {
            !f.edits_definition
                && !f.edits_helper
                && !f.edits_attribute
                && !f.edits.iter().any(|e| touches(d.span, e.span))
        })
        .map(|f| f.title.as_str())
        .collect()
}

#[test]
fn a_fix_edits_where_its_diagnostic_points() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in kernel_files() {
        let text = std::fs::read_to_string(&path).expect("kernel files are UTF-8");
        let index = visa_analysis::diagnostic::LineIndex::new(&text);
        for d in visa_analysis::check_text(&text) {
            if d.fixes.is_empty() {
                continue;
            }
            checked += 1;
            let bad = misplaced(&d);
            if bad.is_empty() {
                continue;
            }
            let at = index.line_col(&text, d.span.start);
            failures.push(format!(
                "{}:{}:{} {}: the primary span `{}` is not where these fixes edit: {bad:?}",
                path.strip_prefix(root).unwrap_or(&path).display(),
                at.line,
                at.column,
                d.code(),
                text.get(d.span.range()).unwrap_or("?"),
            ));
        }
    }
    assert!(checked > 50, "only {checked} diagnostics with a fix");
    assert!(
        failures.is_empty(),
        "{} diagnostic(s) point away from their fix:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The invariant itself, on spans: replacing part of the primary span, inserting at its end, and
/// deleting a comment around it act on it; editing a mapping elsewhere does not.
#[test]
fn touches_is_inside_or_around() {
    let p = Span::new(10, 20);
    assert!(touches(p, Span::new(12, 15)));
    assert!(touches(p, Span::new(10, 10)));
    assert!(touches(p, Span::new(20, 20)));
    assert!(touches(p, Span::new(5, 30)));
    assert!(!touches(p, Span::new(21, 25)));
    assert!(!touches(p, Span::new(15, 25)));
    assert!(!touches(p, Span::new(9, 9)));
}

/// The other place is a related span: a mapping written away from its call (a `let`
/// annotation, a return type, another call's turbofish) is the primary span with the call
/// related; a rule about a call points at the offending call with the later one related.
#[test]
fn the_other_place_is_related() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = [
        // The packet written in the binding's type; the collect infers it.
        (
            "fixtures/rules/COL-001-annotation.rs",
            "COL-001",
            "m![A % 16]",
            "collect",
        ),
        // The packet written in the helper's return type; the fetch infers it.
        (
            "fixtures/manual/1763_fetch_contiguity.rs",
            "FET-003",
            "m![W]",
            "fetch",
        ),
        // The fix widens the fetch; the stream enters the Vector Engine later.
        (
            "fixtures/rules/VEC-001.rs",
            "VEC-001",
            "bf16",
            "vector_init",
        ),
        // The sub context cannot commit after the cast: the cast, not the commit.
        ("fixtures/rules/KRN-006.rs", "KRN-006", "cast", "commit"),
        // The split cuts in front of the call; the conflicting op argument is related.
        (
            "fixtures/rules/VEC-004.rs",
            "VEC-015",
            "vector_fxp",
            "FxpBinaryOp::SubFxp",
        ),
    ];
    for (file, code, primary, related) in cases {
        let text = std::fs::read_to_string(root.join(file)).expect("fixture");
        let diags = visa_analysis::check_text(&text);
        let d = diags
            .iter()
            .find(|d| d.code() == code)
            .unwrap_or_else(|| panic!("{file}: no {code} in {diags:?}"));
        assert_eq!(text.get(d.span.range()), Some(primary), "{file}: {code}");
        let rel: Vec<&str> = d
            .related
            .iter()
            .filter_map(|r| text.get(r.span.range()))
            .collect();
        assert!(rel.contains(&related), "{file}: {code} related {rel:?}");
    }
}

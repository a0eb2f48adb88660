//! Test support for the families' fixes: apply a diagnostic's fix to a source text and check
//! that it clears the diagnostic without introducing another error.

use crate::diagnostic::{Diagnostic, Severity};

/// The text after applying the `k`th fix of the first `code` diagnostic of `text` that has one.
pub fn apply(text: &str, code: &str, k: usize) -> Option<String> {
    let diags = crate::check_text(text);
    let fix = diags
        .iter()
        .find(|d| d.code() == code && !d.fixes.is_empty())?
        .fixes
        .get(k)?;
    let mut out = text.to_string();
    let mut edits = fix.edits.clone();
    edits.sort_by_key(|e| std::cmp::Reverse(e.span));
    for e in edits {
        out.replace_range(e.span.range(), &e.new_text);
    }
    Some(out)
}

fn count(diags: &[Diagnostic], code: &str) -> usize {
    diags.iter().filter(|d| d.code() == code).count()
}

/// Applies the first fix of the first `code` diagnostic of `text` and checks that one `code`
/// diagnostic is gone and that no error the text did not have appears; the fixed text.
pub fn assert_fix_clears(text: &str, code: &str) -> String {
    let before = crate::check_text(text);
    let Some(after_text) = apply(text, code, 0) else {
        panic!("{code}: no fix offered in {before:#?}");
    };
    let after = crate::check_text(&after_text);
    assert!(
        count(&after, code) < count(&before, code),
        "{code} still reported after its fix:\n{after_text}\n{after:#?}"
    );
    let new_errors: Vec<&Diagnostic> = after
        .iter()
        .filter(|d| {
            d.severity == Severity::Error && count(&before, d.code()) < count(&after, d.code())
        })
        .collect();
    assert!(
        new_errors.is_empty(),
        "the {code} fix introduced errors:\n{after_text}\n{new_errors:#?}"
    );
    after_text
}

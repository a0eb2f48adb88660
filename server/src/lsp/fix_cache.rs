//! The checked fixes of the diagnostics code actions were asked about, kept for one revision
//! of the host: checking a fix analyses the crate with it applied, so a diagnostic's fixes are
//! checked once per revision, however often the editor asks (a cursor resting on a line, a
//! lightbulb redrawn), and a request over many diagnostics checks a few more each time.

use super::engine::{CheckedFixes, Snapshot};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use visa_analysis::{Cancellable, Diagnostic, FileId, Fix, Span};

/// How many diagnostics with fixes one code-action request checks; the others it covers are
/// offered with their fixes as the engine made them, until a later request checks them.
pub const MAX_CHECKED_PER_REQUEST: usize = 4;

/// A diagnostic as the cache knows it.
type Key = (FileId, Span, &'static str, String);

fn key(file: FileId, d: &Diagnostic) -> Key {
    (file, d.span, d.code(), d.message.clone())
}

#[derive(Default)]
pub struct FixCache {
    revision: u64,
    fixes: HashMap<Key, Vec<Fix>>,
    /// The texts of the other files the cached fixes edit, as they were checked against.
    texts: HashMap<PathBuf, Arc<str>>,
}

impl FixCache {
    /// Forgets what an older revision checked.
    fn at(&mut self, revision: u64) -> &mut FixCache {
        if self.revision != revision {
            *self = FixCache {
                revision,
                ..FixCache::default()
            };
        }
        self
    }
}

/// `under` (diagnostics of `file`) with their fixes checked: from `cache` when this revision
/// checked them already, else checked now, at most [`MAX_CHECKED_PER_REQUEST`] of them (the
/// rest keep the engine's fixes). The cache is locked only to read and to store.
pub fn checked(
    cache: &std::sync::Mutex<FixCache>,
    snap: &Snapshot,
    file: FileId,
    under: Vec<Diagnostic>,
) -> Cancellable<CheckedFixes> {
    let revision = snap.revision();
    let known: Vec<Option<Vec<Fix>>> = {
        let mut c = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let c = c.at(revision);
        under
            .iter()
            .map(|d| c.fixes.get(&key(file, d)).cloned())
            .collect()
    };
    let to_check: Vec<Diagnostic> = under
        .iter()
        .zip(&known)
        .filter(|(d, k)| k.is_none() && !d.fixes.is_empty())
        .take(MAX_CHECKED_PER_REQUEST)
        .map(|(d, _)| d.clone())
        .collect();
    let fresh = visa_analysis::checked_diagnostics(snap, file, to_check)?;
    let mut c = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let c = c.at(revision);
    for d in &fresh.diagnostics {
        c.fixes.insert(key(file, d), d.fixes.clone());
    }
    c.texts.extend(fresh.texts);
    let diagnostics = under
        .into_iter()
        .map(|mut d| {
            if let Some(fixes) = c.fixes.get(&key(file, &d)) {
                d.fixes = fixes.clone();
            }
            d
        })
        .collect();
    Ok(CheckedFixes {
        diagnostics,
        texts: c.texts.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::engine::Host;
    use std::path::Path;
    use std::sync::Mutex;

    /// Six aliases that divide an axis of 63 by 8: six MAP-001 errors, each with a fix.
    fn six_fixable() -> String {
        let mut text = "use furiosa_visa_std::prelude::*;\naxes![A = 63];\n".to_string();
        for i in 0..6 {
            text.push_str(&format!("type E{i} = m![A / 8];\n"));
        }
        text
    }

    #[test]
    fn a_request_checks_a_few_more_fixes_each_time_and_an_edit_starts_over() {
        let mut host = Host::new();
        let path = Path::new("/k.rs");
        let file = host.set_file(path, six_fixable());
        let cache = Mutex::new(FixCache::default());
        let all = |host: &Host| -> Vec<Diagnostic> {
            host.snapshot()
                .diagnostics(file)
                .map(|d| d.to_vec())
                .unwrap_or_default()
        };
        let cached = |cache: &Mutex<FixCache>| cache.lock().map(|c| c.fixes.len()).unwrap_or(0);
        assert_eq!(all(&host).iter().filter(|d| !d.fixes.is_empty()).count(), 6);

        let first = checked(&cache, &host.snapshot(), file, all(&host)).expect("not cancelled");
        assert_eq!(first.diagnostics.len(), 6);
        assert_eq!(cached(&cache), MAX_CHECKED_PER_REQUEST);
        checked(&cache, &host.snapshot(), file, all(&host)).expect("not cancelled");
        assert_eq!(cached(&cache), 6, "the second request checks the rest");
        checked(&cache, &host.snapshot(), file, all(&host)).expect("not cancelled");
        assert_eq!(cached(&cache), 6, "nothing is checked twice");

        host.set_file(path, six_fixable() + "\n");
        checked(&cache, &host.snapshot(), file, all(&host)).expect("not cancelled");
        assert_eq!(
            cached(&cache),
            MAX_CHECKED_PER_REQUEST,
            "an edit forgets the old checks"
        );
    }
}

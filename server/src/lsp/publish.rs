//! Which open documents still owe the client their diagnostics.
//!
//! The guarantee: every open document ends with the diagnostics of its latest version, on the
//! latest inputs, whatever was cancelled on the way. Anything that may change a document's
//! diagnostics *marks* it (its own edit; an edit of a file of its package; a configuration or
//! watched-file change). A mark is cleared only by publishing an analysis that started after
//! it; an analysis that was cancelled or superseded leaves the mark, and the publishing
//! worker takes the document again. One analysis per document at a time (a *claim*), so a
//! later publish is never older than an earlier one.

use std::collections::{HashMap, HashSet};
use tower_lsp_server::ls_types::Uri;

/// When a document was marked: a counter over all marks.
pub type Epoch = u64;

#[derive(Debug, Default)]
pub struct Queue {
    last: Epoch,
    /// Documents whose published diagnostics may be stale, with their latest mark.
    marked: HashMap<Uri, Epoch>,
    /// Documents being analysed for publishing.
    claimed: HashSet<Uri>,
}

impl Queue {
    /// Marks `uri`: its diagnostics must be published again.
    pub fn mark(&mut self, uri: &Uri) {
        self.last += 1;
        self.marked.insert(uri.clone(), self.last);
    }

    /// A closed document owes nothing.
    pub fn forget(&mut self, uri: &Uri) {
        self.marked.remove(uri);
    }

    /// Claims `uri` if it is marked and nobody is analysing it: the mark it is analysed for.
    pub fn claim(&mut self, uri: &Uri) -> Option<Epoch> {
        let epoch = *self.marked.get(uri)?;
        self.claimed.insert(uri.clone()).then_some(epoch)
    }

    /// Claims the most recently marked document nobody is analysing (the one being typed in
    /// goes first).
    pub fn claim_next(&mut self) -> Option<(Uri, Epoch)> {
        let (uri, epoch) = self
            .marked
            .iter()
            .filter(|(u, _)| !self.claimed.contains(*u))
            .max_by_key(|(_, e)| **e)
            .map(|(u, e)| (u.clone(), *e))?;
        self.claimed.insert(uri.clone());
        Some((uri, epoch))
    }

    /// Ends a claim made at `epoch`: when its analysis was published and nothing marked the
    /// document since, the document is done.
    pub fn finish(&mut self, uri: &Uri, epoch: Epoch, published: bool) {
        self.claimed.remove(uri);
        if published && self.marked.get(uri) == Some(&epoch) {
            self.marked.remove(uri);
        }
    }

    /// How many documents still owe their diagnostics.
    pub fn owed(&self) -> usize {
        self.marked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(name: &str) -> Uri {
        format!("file:///{name}").parse().expect("uri")
    }

    #[test]
    fn a_cancelled_analysis_leaves_its_document_owed() {
        let mut q = Queue::default();
        let a = uri("a.rs");
        q.mark(&a);
        let (claimed, epoch) = q.claim_next().expect("owed");
        assert_eq!(claimed, a);
        q.finish(&a, epoch, false);
        assert_eq!(q.claim_next().map(|(u, _)| u), Some(a.clone()));
    }

    #[test]
    fn a_mark_during_an_analysis_survives_its_publish() {
        let mut q = Queue::default();
        let a = uri("a.rs");
        q.mark(&a);
        let epoch = q.claim(&a).expect("claimed");
        q.mark(&a); // a crate mate changed while `a` was analysed
        assert_eq!(q.claim(&a), None, "one analysis per document");
        q.finish(&a, epoch, true);
        assert_eq!(q.owed(), 1);
        let again = q.claim(&a).expect("owed again");
        q.finish(&a, again, true);
        assert_eq!(q.owed(), 0);
    }

    #[test]
    fn the_latest_mark_goes_first_and_claimed_documents_are_skipped() {
        let mut q = Queue::default();
        let (a, b, c) = (uri("a.rs"), uri("b.rs"), uri("c.rs"));
        for u in [&a, &b, &c] {
            q.mark(u);
        }
        assert!(q.claim(&c).is_some());
        assert_eq!(q.claim_next().map(|(u, _)| u), Some(b));
        assert_eq!(q.claim_next().map(|(u, _)| u), Some(a));
        assert_eq!(q.claim_next(), None);
        q.forget(&c);
        assert_eq!(q.owed(), 2);
    }
}

//! visa-analysis: the engine behind visa-lint. No I/O, no async, no LSP types.
//!
//! Today it holds the mapping engine (`m!`, `axes!`, `i!`: grammar, symbolic semantics,
//! canonical normal form, MAP-* diagnostics) and the rule registry.

pub mod alias_fix;
pub mod api;
pub mod body_macros;
pub mod call_writes;
pub mod callers;
pub mod calls;
pub mod config;
pub mod db;
pub mod derive;
pub mod diagnostic;
pub mod dtype;
pub mod file_diagnostics;
pub mod fix_check;
pub mod library;
pub mod line_index;
pub mod mapping;
pub mod model;
pub mod own_copy;
pub mod project;
pub mod resolve;
pub mod rule;
pub mod rules;
pub mod sim;
pub mod suppress;
pub mod syntax;
pub mod target;

pub use api::{
    Analysis, AnalysisHost, Cancellable, CostHint, Evaluation, FileId, Hover, HoverContent,
    evaluate,
};
pub use config::{Config, ConfigError};
pub use diagnostic::{Diagnostic, Edit, FileEdits, Fix, LineIndex, Severity, Span};
pub use fix_check::{CheckedFixes, check_fixes, checked_diagnostics, checked_fixes};
pub use line_index::{Encoding, Position};

/// Checks one file's text with every implemented rule under the default configuration,
/// suppression comments applied; diagnostics sorted by position.
pub fn check_text(text: &str) -> Vec<Diagnostic> {
    let mut host = AnalysisHost::new();
    let file = host.set_file(std::path::Path::new("<text>"), text.to_string());
    host.snapshot()
        .diagnostics(file)
        .map(|d| d.to_vec())
        .unwrap_or_default()
}

/// The stack [`run_with_stack`] gives the analysis: room for files nested up to the limits of
/// `docs/robustness.md` (checked on 8 MiB) with eight times that to spare.
pub const ANALYSIS_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a thread with an [`ANALYSIS_STACK_BYTES`] stack and returns its result. Entry
/// points (the command line, a language server's workers) run analyses through it so that the
/// stack a file may use does not depend on the thread that happened to receive it. A panic in
/// `f` is resumed on the caller's thread; if no thread can be spawned, `f` runs on the caller's.
pub fn run_with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut f = Some(f);
    let spawned = std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("visa-analysis".into())
            .stack_size(ANALYSIS_STACK_BYTES)
            .spawn_scoped(s, || f.take().map(|f| f()));
        worker.map(|h| h.join())
    });
    match spawned {
        Ok(Ok(Some(v))) => v,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // Spawning failed before `f` was taken: run it here.
        Ok(Ok(None)) | Err(_) => match f.take() {
            Some(f) => f(),
            None => unreachable_after_spawn(),
        },
    }
}

#[cold]
fn unreachable_after_spawn() -> ! {
    panic!("the analysis thread neither returned nor panicked")
}

//! VL-010: a crate on a furiosa-opt-std older than 0.6 is checked as 0.6, the nearest
//! generation visa-lint models, and this note says so once per crate.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Library;
use crate::rule::{Generations, Rule, Status};

pub const VL_010: Rule = Rule {
    code: "VL-010",
    name: "library-version-checked-as-nearest",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "The crate asks for a furiosa-opt-std older than 0.6; it is checked as 0.6, the nearest generation visa-lint models",
    docs: "visa-lint models two generations of the vendor's kernel library: `furiosa_visa_std` \
           0.1, the library the manual documents, and `furiosa-opt-std` 0.6. It reads which one a \
           crate uses from the configuration (`library = \"furiosa-opt-std\"` in \
           `visa-lint.toml`), the dependency in the package's `Cargo.toml`, or the crate's `use` \
           paths. `furiosa-opt-std` 0.2 to 0.5 sit between the two (0.2 and 0.3 still take \
           addresses and `fetch::<D, Time, Packet>`; 0.4 and 0.5 keep the `*_at` forms): their \
           kernels are checked as 0.6, so a method that 0.6 removed is reported as unknown and a \
           rule 0.6 changed is checked as 0.6 checks it. This note says so once per crate, on \
           its root file. Upgrade the dependency to 0.6, or set `library` in `visa-lint.toml` to \
           silence it.",
    bad: "# Cargo.toml\n[dependencies]\nfuriosa-opt-std = \"0.4\"",
    good: "# Cargo.toml\n[dependencies]\nfuriosa-opt-std = \"0.6\"",
    manual: "(the tool's own rule; library-v06.md §6, the vendor's CHANGES.md)",
    generations: Generations::OptStdOnly(
        "it reports a crate asking for a furiosa-opt-std older than the 0.6 visa-lint models; \
         0.2 to 0.5 sit between the two libraries (library-v06.md §6; CHANGES.md:93-173)",
    ),
};

/// VL-010 for a crate whose library is an older `furiosa-opt-std` than the one modelled, at
/// `span` (where the crate root names the library, or its start).
pub fn library_checked_as_nearest(library: &Library, span: Span) -> Option<Diagnostic> {
    let asked = library.older_than_modelled()?;
    let modelled = library.generation.modelled_version();
    Some(Diagnostic::new(
        &VL_010,
        span,
        format!(
            "this crate uses {} {asked} (from {}); visa-lint models {modelled} and checks it as \
             {modelled}: a method or rule that changed since {asked} is checked as {modelled} \
             has it",
            library.generation, library.evidence
        ),
    ))
}

//! The vendor library a kernel crate is written against, and how visa-lint tells which.
//!
//! Two generations exist (`library-v06.md` §6):
//! - `furiosa_visa_std` 0.1 (April 2026), the library the manual documents;
//! - `furiosa-opt-std` 0.2 to 0.6 (May to August 2026), what kernel writers use today. Its
//!   0.6 surface is the one visa-lint models; 0.2 to 0.5 are checked as 0.6, with one note.
//!
//! The generation is decided per crate, cheapest evidence first: the configuration
//! (`library = "furiosa-opt-std"` in `visa-lint.toml`), the dependency in the package's
//! `Cargo.toml`, then the `use` paths of the file and of its crate roots. Without any, a
//! kernel is read as the manual's.
//!
//! What each generation's API converts, stage by stage, is [`conversions`].

use std::fmt;

pub mod conversions;

pub use conversions::{Conversions, Stage, ZeroPointRange};

/// A generation of the vendor's kernel library.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// `furiosa_visa_std` 0.1: the manual's library (`fetch::<D, Time, Packet>`,
    /// `commit(address)`, `align → contract → accumulate`).
    #[default]
    VisaStd,
    /// `furiosa-opt-std` 0.6: address-free, `fetch::<Time, Packet>` with `fetch_cast`,
    /// `commit_trim`, `contract_outer → contract_packet → contract_time → contract_lane`.
    OptStd,
}

impl Generation {
    /// The crate name as a `use` path spells it.
    pub fn crate_name(self) -> &'static str {
        match self {
            Generation::VisaStd => "furiosa_visa_std",
            Generation::OptStd => "furiosa_opt_std",
        }
    }

    /// The package name as `Cargo.toml` spells it.
    pub fn package_name(self) -> &'static str {
        match self {
            Generation::VisaStd => "furiosa-visa-std",
            Generation::OptStd => "furiosa-opt-std",
        }
    }

    /// The version visa-lint models for this generation.
    pub fn modelled_version(self) -> Version {
        match self {
            Generation::VisaStd => Version { major: 0, minor: 1 },
            Generation::OptStd => Version { major: 0, minor: 6 },
        }
    }

    /// Whether a tiling axis (an OutTime factor of the contraction that the collected stream
    /// lacks) must be held by the TRF Element. The manual's library asserts "tiling axes must
    /// be present in TRF" in `align` (dadf9ca; the manual reuses TRF data over them, L4083); furiosa-opt-std 0.6's stream adapter only
    /// asks that they be OutTime's innermost factors (`verify/engine/contraction/outer/
    /// stream_adapter.rs:62-70` at ebb846a), and its example `valid_tiling_not_in_trf`
    /// (`contract_outer_assertions.rs:275`) compiles.
    pub fn tiling_axes_must_be_in_trf(self) -> bool {
        self == Generation::VisaStd
    }

    /// The generation a package or crate name names (`-` and `_` alike).
    pub fn from_crate_name(name: &str) -> Option<Generation> {
        match name.replace('_', "-").as_str() {
            "furiosa-visa-std" => Some(Generation::VisaStd),
            "furiosa-opt-std" => Some(Generation::OptStd),
            _ => None,
        }
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.package_name())
    }
}

/// A `major.minor` library version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    /// The first `major.minor` of a Cargo version requirement (`"0.6"`, `"^0.5.1"`,
    /// `"=0.4.0"`, `">=0.3, <0.7"`); `None` when it names none.
    pub fn from_requirement(req: &str) -> Option<Version> {
        let start = req.find(|c: char| c.is_ascii_digit())?;
        let mut parts = req[start..]
            .split(|c: char| !c.is_ascii_digit())
            .map(str::parse::<u32>);
        let major = parts.next()?.ok()?;
        let minor = parts.next().and_then(Result::ok).unwrap_or(0);
        Some(Version { major, minor })
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Whether `name` is a tensor or stream type of either generation's library: every one is
/// named `…Tensor`, `…TensorView`, `…TensorViewMut`, `…TensorPair` or `AlignedPair`
/// (`model::types::Kind::from_name` reads each). A crate's `impl Trait for DmTensor<..>`
/// extends one of them.
pub fn is_tensor_type(name: &str) -> bool {
    ["Tensor", "TensorView", "TensorViewMut", "TensorPair"]
        .iter()
        .any(|s| name.ends_with(s) && name.len() > s.len())
        || name == "AlignedPair"
}

/// Where the generation was read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Evidence {
    /// `library = "..."` in the configuration.
    Config,
    /// The package's `Cargo.toml` dependency.
    Manifest,
    /// A `use` path (or `extern crate`) in the file or its crate root.
    UsePath,
    /// Nothing named a library: the manual's is assumed.
    #[default]
    Default,
}

impl Evidence {
    /// A one-word name for machine-readable output.
    pub fn key(self) -> &'static str {
        match self {
            Evidence::Config => "config",
            Evidence::Manifest => "manifest",
            Evidence::UsePath => "use-path",
            Evidence::Default => "default",
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Evidence::Config => "the configuration's `library`",
            Evidence::Manifest => "the dependency in Cargo.toml",
            Evidence::UsePath => "the crate's `use` paths",
            Evidence::Default => "no library named (the manual's is assumed)",
        })
    }
}

/// The library a crate is written against: its generation, the version asked for when one
/// is known, and where that was read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Library {
    pub generation: Generation,
    pub version: Option<Version>,
    pub evidence: Evidence,
}

impl Library {
    /// A version of `furiosa-opt-std` older than the one modelled (0.2 to 0.5), which is
    /// checked as 0.6: the version, to say so once.
    pub fn older_than_modelled(&self) -> Option<Version> {
        let v = self.version?;
        (self.generation == Generation::OptStd && v < self.generation.modelled_version())
            .then_some(v)
    }

    /// Parses a configured `library`: a package or crate name, optionally followed by a
    /// version (`"furiosa-opt-std"`, `"furiosa-opt-std 0.5"`, `"furiosa_visa_std@0.1"`).
    pub fn from_config(text: &str) -> Option<Library> {
        let text = text.trim();
        let (name, version) = match text.split_once(|c: char| c == '@' || c.is_whitespace()) {
            Some((name, v)) => (name, Some(Version::from_requirement(v)?)),
            None => (text, None),
        };
        Some(Library {
            generation: Generation::from_crate_name(name)?,
            version,
            evidence: Evidence::Config,
        })
    }

    /// The library a package's `Cargo.toml` depends on (`[dependencies]`, also a target's
    /// or the workspace's dependency tables), with the version it asks for.
    pub fn from_manifest(manifest: &toml::Table) -> Option<Library> {
        let mut tables = Vec::new();
        tables.extend(manifest.get("dependencies"));
        tables.extend(
            manifest
                .get("workspace")
                .and_then(|w| w.get("dependencies")),
        );
        if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
            tables.extend(targets.values().filter_map(|t| t.get("dependencies")));
        }
        tables.iter().filter_map(|t| t.as_table()).find_map(|deps| {
            deps.iter().find_map(|(name, spec)| {
                // A renamed dependency (`std = { package = "furiosa-opt-std" }`) names its
                // package in the table.
                let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(name);
                let generation = Generation::from_crate_name(package)?;
                let req = spec
                    .as_str()
                    .or_else(|| spec.get("version").and_then(|v| v.as_str()));
                Some(Library {
                    generation,
                    version: req.and_then(Version::from_requirement),
                    evidence: Evidence::Manifest,
                })
            })
        })
    }

    /// The library a source text names in a path (`use furiosa_opt_std::prelude::*`,
    /// `extern crate furiosa_visa_std;`), the first one it names; `None` when it names none.
    pub fn from_source(text: &str) -> Option<Library> {
        let at = |g: Generation| text.find(g.crate_name());
        let generation = match (at(Generation::VisaStd), at(Generation::OptStd)) {
            (Some(v), Some(o)) => {
                if o < v {
                    Generation::OptStd
                } else {
                    Generation::VisaStd
                }
            }
            (Some(_), None) => Generation::VisaStd,
            (None, Some(_)) => Generation::OptStd,
            (None, None) => return None,
        };
        Some(Library {
            generation,
            version: None,
            evidence: Evidence::UsePath,
        })
    }
}

/// The library of a crate: the configured one, else the package's dependency, else the first
/// library the texts name (the file's, then its crate roots'), else the manual's.
pub fn detect<'a>(
    configured: Option<Library>,
    dependency: Option<Library>,
    texts: impl IntoIterator<Item = &'a str>,
) -> Library {
    configured
        .or(dependency)
        .or_else(|| texts.into_iter().find_map(Library::from_source))
        .unwrap_or_default()
}

impl fmt::Display for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            Some(v) => write!(f, "{} {v}", self.generation)?,
            None => write!(f, "{}", self.generation)?,
        }
        write!(f, " (from {})", self.evidence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Option<Library> {
        Library::from_manifest(&text.parse::<toml::Table>().unwrap())
    }

    #[test]
    fn a_manifest_names_the_generation_and_version() {
        let lib = manifest("[dependencies]\nfuriosa-opt-std = \"0.6\"\n").unwrap();
        assert_eq!(lib.generation, Generation::OptStd);
        assert_eq!(lib.version, Some(Version { major: 0, minor: 6 }));
        assert_eq!(lib.older_than_modelled(), None);
        let lib = manifest(
            "[dependencies]\nfuriosa-opt-std = { path = \"../std\", version = \"^0.4.1\" }\n",
        )
        .unwrap();
        assert_eq!(
            lib.older_than_modelled(),
            Some(Version { major: 0, minor: 4 })
        );
        let lib = manifest("[dependencies]\nfuriosa-visa-std = { path = \"x\" }\n").unwrap();
        assert_eq!((lib.generation, lib.version), (Generation::VisaStd, None));
        let renamed =
            "[dependencies]\nstd2 = { package = \"furiosa-opt-std\", version = \"0.5\" }\n";
        assert_eq!(manifest(renamed).unwrap().generation, Generation::OptStd);
        assert_eq!(manifest("[dependencies]\nserde = \"1\"\n"), None);
    }

    #[test]
    fn a_source_names_the_generation_by_its_first_path() {
        let lib = Library::from_source("use furiosa_opt_std::prelude::*;").unwrap();
        assert_eq!(lib.generation, Generation::OptStd);
        assert_eq!(Library::from_source("fn main() {}"), None);
    }

    #[test]
    fn a_configured_library_takes_an_optional_version() {
        let lib = Library::from_config("furiosa-opt-std 0.5").unwrap();
        assert_eq!(lib.version, Some(Version { major: 0, minor: 5 }));
        assert_eq!(
            Library::from_config("furiosa_visa_std").unwrap().generation,
            Generation::VisaStd
        );
        assert_eq!(Library::from_config("tcp-std"), None);
        assert_eq!(Library::from_config("furiosa-opt-std latest"), None);
    }
}

//! The one place the language server touches the engine: a host that owns the salsa database
//! (inputs are set here), and snapshots that answer queries on a cloned handle.
//!
//! Every query returns [`Cancellable`]: setting an input cancels the queries running on other
//! handles, and the caller answers `ContentModified` or drops a stale publish.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use visa_analysis::db::{Database, SourceFile, file_analysis};
use visa_analysis::rules::registry::{self, Rule};
use visa_analysis::{Diagnostic, Severity};

pub type Cancellable<T> = Result<T, salsa::Cancelled>;

/// A file known to the host.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId(SourceFile);

/// What a rule selection does (`visa-lint.toml`'s `[rules]`, the client's `rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Allow,
    Warn,
    Deny,
}

/// The engine's configuration: rule levels by code, name or family, in order (later wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineConfig {
    pub levels: Vec<(String, Level)>,
}

impl EngineConfig {
    /// Whether `sel` names the rule, its kebab-case name or its family.
    pub fn selects(sel: &str, r: &Rule) -> bool {
        sel.eq_ignore_ascii_case(r.code)
            || sel == r.name
            || r.code
                .split_once('-')
                .is_some_and(|(family, _)| sel.eq_ignore_ascii_case(family))
    }

    fn level(&self, r: &Rule) -> Option<Level> {
        self.levels
            .iter()
            .rev()
            .find(|(sel, _)| EngineConfig::selects(sel, r))
            .map(|(_, l)| *l)
    }
}

pub struct Host {
    db: Database,
    files: HashMap<PathBuf, SourceFile>,
    config: Arc<EngineConfig>,
}

impl Default for Host {
    fn default() -> Host {
        Host::new()
    }
}

impl Host {
    pub fn new() -> Host {
        Host {
            db: Database::default(),
            files: HashMap::new(),
            config: Arc::new(EngineConfig::default()),
        }
    }

    pub fn set_config(&mut self, config: EngineConfig) {
        self.config = Arc::new(config);
    }

    /// Adds or replaces a file's text (cancelling the queries of every snapshot).
    pub fn set_file(&mut self, path: &Path, text: String) -> FileId {
        use salsa::Setter;
        if let Some(&file) = self.files.get(path) {
            file.set_text(&mut self.db).to(text);
            return FileId(file);
        }
        let file = SourceFile::new(&self.db, text);
        self.files.insert(path.to_path_buf(), file);
        FileId(file)
    }

    /// Forgets a file (its text is released; salsa inputs live as long as the database).
    pub fn remove_file(&mut self, file: FileId) {
        use salsa::Setter;
        self.files.retain(|_, f| *f != file.0);
        file.0.set_text(&mut self.db).to(String::new());
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            db: self.db.clone(),
            config: self.config.clone(),
        }
    }
}

/// A cheap handle on the database, for one query on a blocking thread.
pub struct Snapshot {
    db: Database,
    config: Arc<EngineConfig>,
}

impl Snapshot {
    /// The file's diagnostics with rule levels and suppression comments applied.
    pub fn diagnostics(&self, file: FileId) -> Cancellable<Arc<[Diagnostic]>> {
        salsa::Cancelled::catch(|| {
            let analysis = file_analysis(&self.db, file.0).clone();
            let text = file.0.text(&self.db);
            let allows = Allows::of(text);
            analysis
                .diagnostics
                .iter()
                .filter(|d| !allows.suppresses(text, d))
                .filter_map(|d| {
                    let mut d = d.clone();
                    match self.config.level(d.rule) {
                        Some(Level::Allow) => return None,
                        Some(Level::Deny) => d.severity = Severity::Error,
                        Some(Level::Warn) => d.severity = Severity::Warning,
                        None => {}
                    }
                    Some(d)
                })
                .collect()
        })
    }
}

/// The suppression comments of a file: `// visa-lint: allow(CODE, ...)` (its own line and the
/// next) and `// visa-lint: allow-file(CODE, ...)`.
struct Allows {
    /// (0-based line, selection)
    lines: Vec<(usize, String)>,
    file: Vec<String>,
}

impl Allows {
    fn of(text: &str) -> Allows {
        let mut allows = Allows {
            lines: Vec::new(),
            file: Vec::new(),
        };
        for (n, line) in text.lines().enumerate() {
            let Some((_, rest)) = line.split_once("// visa-lint:") else {
                continue;
            };
            let rest = rest.trim_start();
            let (file, rest) = match rest.strip_prefix("allow-file(") {
                Some(r) => (true, r),
                None => match rest.strip_prefix("allow(") {
                    Some(r) => (false, r),
                    None => continue,
                },
            };
            let Some((list, _)) = rest.split_once(')') else {
                continue;
            };
            for sel in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if file {
                    allows.file.push(sel.to_string());
                } else {
                    allows.lines.push((n, sel.to_string()));
                }
            }
        }
        allows
    }

    fn suppresses(&self, text: &str, d: &Diagnostic) -> bool {
        let line = text
            .get(..d.span.start as usize)
            .map_or(0, |t| t.matches('\n').count());
        self.file.iter().any(|s| EngineConfig::selects(s, d.rule))
            || self
                .lines
                .iter()
                .any(|(l, s)| (*l == line || *l + 1 == line) && EngineConfig::selects(s, d.rule))
    }
}

/// Every registered rule (for hovers and completion of suppression comments).
pub fn rules() -> impl Iterator<Item = &'static Rule> {
    registry::all()
}

pub fn rule(code: &str) -> Option<&'static Rule> {
    registry::rule(code)
}

//! `visa-lint PATHS...`: collecting the files, checking them in parallel, fixing them, and
//! reporting in every output format.

use crate::args::{Cli, Format};
use crate::fix::{self, Applicability, Texts};
use crate::output::{self, INTERNAL_ERROR, Source};
use crate::sarif;
use crate::walk;
use codespan_reporting::term::termcolor::WriteColor;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use visa_analysis::config::{Level, check_selector};
use visa_analysis::db::FileAnalysis;
use visa_analysis::library::Library;
use visa_analysis::project::{self, Package, absolute};
use visa_analysis::{AnalysisHost, Config, Diagnostic, LineIndex, Severity, Span};

/// How one text is analysed under a configuration: [`analyse`] in production, anything in
/// tests of the CLI itself.
pub type Analyse<'a> = &'a (dyn Fn(&Config, &FileCtx, &str) -> Vec<Diagnostic> + Sync);

/// Where a text comes from: its path and the Cargo package it lies in (read once per run), so
/// it is analysed within its crate.
#[derive(Clone, Debug, Default)]
pub struct FileCtx {
    pub path: Option<PathBuf>,
    pub package: Option<Arc<LoadedPackage>>,
    /// Whether the fixes are checked against the crate analysed with each applied (see
    /// [`visa_analysis::fix_check`]): when they are applied (`--fix`, `--diff`) or handed to
    /// tools that may apply them (JSON, SARIF).
    pub check_fixes: bool,
    /// Files of the package whose texts a `--fix` pass changed, read in place of the disk's.
    pub edited: Arc<Texts>,
}

/// A package's files as the run read them, and one analysis host over them shared by the
/// package's files (built by the first file checked, for its configuration).
pub struct LoadedPackage {
    pub package: Package,
    pub files: Vec<(PathBuf, String)>,
    host: Mutex<Option<(Config, AnalysisHost)>>,
}

impl std::fmt::Debug for LoadedPackage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPackage")
            .field("package", &self.package)
            .field("files", &self.files.len())
            .finish()
    }
}

/// The raw analysis of `path` (its text `text`) within its crate, as `visa-lint PATH` reads
/// it: the package around it is read from disk (what `model`, `derive` and `cost` print).
pub fn analysis_in_crate(path: &Path, text: &str) -> Arc<FileAnalysis> {
    let path = absolute(path);
    let host = match project::discover(&path) {
        Some(package) => {
            LoadedPackage::read(package).host_with(&Config::default(), &Texts::new(), &path, text)
        }
        None => {
            let mut host = AnalysisHost::new();
            host.set_file(&path, text.to_string());
            host
        }
    };
    let analysis = host
        .file_id(&path)
        .map(|id| host.snapshot().file_analysis(id));
    match analysis {
        Some(Ok(a)) => a,
        // Nothing else sets an input: no query is cancelled.
        _ => visa_analysis::db::analyse_text(text),
    }
}

/// The crate of a text (its package's directory, or the file alone) and the library it is
/// checked against, detected as the engine detects it.
fn library_of(config: &Config, ctx: &FileCtx, name: &str, text: &str) -> (String, Library) {
    let Some(pkg) = &ctx.package else {
        let library = visa_analysis::library::detect(config.library, None, [text]);
        return (name.to_string(), library);
    };
    let roots = pkg
        .files
        .iter()
        .filter(|(p, _)| pkg.package.roots.contains(p))
        .map(|(_, t)| t.as_str());
    let texts = std::iter::once(text).chain(roots);
    let library = visa_analysis::library::detect(config.library, pkg.package.library, texts);
    (shown_dir(&pkg.package.dir), library)
}

/// A package's directory as the report names files: relative to the working directory when
/// it lies under it (`.` for the working directory itself).
fn shown_dir(dir: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    match cwd.as_deref().and_then(|c| dir.strip_prefix(c).ok()) {
        Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Some(rel) => rel.display().to_string(),
        None => dir.display().to_string(),
    }
}

impl LoadedPackage {
    pub fn read(package: Package) -> LoadedPackage {
        let files = project::load(&package);
        LoadedPackage {
            package,
            files,
            host: Mutex::new(None),
        }
    }

    /// A host over the package's files, `edited` read in place of the disk's texts and `text`
    /// as `path`'s.
    fn host_with(&self, config: &Config, edited: &Texts, path: &Path, text: &str) -> AnalysisHost {
        let mut host = AnalysisHost::new();
        host.set_config(config.clone());
        host.set_packages(vec![self.package.clone()]);
        host.set_files(self.files.iter().map(|(p, t)| {
            let t = match edited.get(p) {
                _ if p == path => text,
                Some(e) => e.as_str(),
                None => t.as_str(),
            };
            (p.clone(), t.to_string())
        }));
        host.set_file(path, text.to_string());
        host
    }

    /// The package's texts as read from disk.
    fn texts(&self) -> Texts {
        self.files.iter().cloned().collect()
    }

    /// The diagnostics of `path` with `text`: from the shared host when the text is the one
    /// read from disk, from a host of its own otherwise (a `--fix` pass, standard input).
    /// With `check`, the fixes are checked on a host of the file's own (only when it has
    /// fixes: the check edits that host's texts, which the shared host's readers must not see).
    fn diagnostics(
        &self,
        config: &Config,
        file: &FileCtx,
        path: &Path,
        text: &str,
    ) -> Vec<Diagnostic> {
        let diags = self.shown(config, &file.edited, path, text);
        if !file.check_fixes || diags.iter().all(|d| d.fixes.is_empty()) {
            return diags;
        }
        let mut host = self.host_with(config, &file.edited, path, text);
        match host.file_id(path) {
            Some(file) => visa_analysis::check_fixes(&mut host, file, &diags),
            None => diags,
        }
    }

    fn shown(&self, config: &Config, edited: &Texts, path: &Path, text: &str) -> Vec<Diagnostic> {
        let on_disk = edited.is_empty() && self.files.iter().any(|(p, t)| p == path && t == text);
        let snapshot = on_disk
            .then(|| {
                let mut slot = self.host.lock().ok()?;
                if slot.is_none() {
                    *slot = Some((config.clone(), self.host_with(config, edited, path, text)));
                }
                let (c, host) = slot.as_ref()?;
                (c == config).then(|| (host.snapshot(), host.file_id(path)))
            })
            .flatten();
        let (analysis, file) = match snapshot {
            Some((a, Some(f))) => (a, f),
            _ => {
                let host = self.host_with(config, edited, path, text);
                let Some(f) = host.file_id(path) else {
                    return Vec::new();
                };
                (host.snapshot(), f)
            }
        };
        analysis
            .diagnostics(file)
            .map(|d| d.to_vec())
            .unwrap_or_default()
    }
}

/// The engine's diagnostics of a text under a configuration (suppression comments and rule
/// levels applied), within its crate when it lies in a package.
pub fn analyse(config: &Config, file: &FileCtx, text: &str) -> Vec<Diagnostic> {
    if let (Some(path), Some(pkg)) = (&file.path, &file.package) {
        return pkg.diagnostics(config, file, &absolute(path), text);
    }
    let path = file.path.clone().unwrap_or_else(|| PathBuf::from("<text>"));
    LONE_HOST.with_borrow_mut(|lone| {
        // A fresh host after `LONE_FILES_PER_HOST` files, or when the last file's analysis
        // did not finish (an internal error caught by the caller left it in the host).
        if lone.served == LONE_FILES_PER_HOST || lone.busy {
            *lone = LoneHost::default();
        }
        lone.served += 1;
        lone.busy = true;
        let host = &mut lone.host;
        host.set_config(config.clone());
        let id = host.set_file(&path, text.to_string());
        let mut diagnostics = host
            .snapshot()
            .diagnostics(id)
            .map(|d| d.to_vec())
            .unwrap_or_default();
        if file.check_fixes {
            diagnostics = visa_analysis::check_fixes(host, id, &diagnostics);
        }
        // The next file is a crate of its own: this one must not be among its neighbours.
        host.remove_file(id);
        lone.busy = false;
        diagnostics
    })
}

/// The host that checks files outside any package, one at a time, on one thread.
#[derive(Default)]
struct LoneHost {
    host: AnalysisHost,
    /// Files it has checked.
    served: usize,
    /// A file is in it (an analysis under way, or one that panicked).
    busy: bool,
}

/// How many files outside any package one host serves before a fresh one replaces it: a
/// database per file cost more than a small file's analysis, and a host kept for good would
/// hold what every file checked before interned.
const LONE_FILES_PER_HOST: usize = 64;

thread_local! {
    static LONE_HOST: std::cell::RefCell<LoneHost> = std::cell::RefCell::new(LoneHost::default());
}

/// Finds and reads the package of every file, once per package.
fn packages_of(paths: &[Option<PathBuf>]) -> Vec<Option<Arc<LoadedPackage>>> {
    let mut by_dir: HashMap<PathBuf, Option<Package>> = HashMap::new();
    let mut loaded: HashMap<PathBuf, Arc<LoadedPackage>> = HashMap::new();
    paths
        .iter()
        .map(|p| {
            let dir = absolute(p.as_ref()?).parent()?.to_path_buf();
            let pkg = by_dir
                .entry(dir)
                .or_insert_with_key(|dir| project::discover(&dir.join("_")))
                .clone()?;
            Some(
                loaded
                    .entry(pkg.dir.clone())
                    .or_insert_with(|| Arc::new(LoadedPackage::read(pkg)))
                    .clone(),
            )
        })
        .collect()
}

/// Progress is drawn on a terminal when more than this many files are checked.
pub const PROGRESS_THRESHOLD: usize = 300;

/// The `--allow` / `--warn` / `--deny` selections of the command line, as configuration
/// entries that override the file's: warn, then deny, then allow, so that `--allow` wins over
/// `--deny` and `--deny` over `--warn` whatever their order.
pub fn level_overrides(cli: &Cli) -> Result<Vec<(String, Level)>, String> {
    let mut out = Vec::new();
    for (flag, sels, level) in [
        ("warn", &cli.warn, Level::Warn),
        ("deny", &cli.deny, Level::Deny),
        ("allow", &cli.allow, Level::Allow),
    ] {
        for s in sels {
            if flag == "deny" && s == "warnings" {
                continue;
            }
            if check_selector(s).is_err() {
                return Err(format!(
                    "--{flag} {s}: no such rule, rule name or family (see `visa-lint --list-rules`)"
                ));
            }
            out.push((s.clone(), level));
        }
    }
    Ok(out)
}

/// Where a checked text came from.
enum Origin {
    File {
        path: PathBuf,
        walked: bool,
    },
    /// Standard input, read before the workers start: its name and its bytes.
    Stdin(String, Vec<u8>),
}

/// What checking one input produced.
struct Checked {
    name: String,
    /// The file to write fixes back to (none for standard input).
    path: Option<PathBuf>,
    /// The text as read, and the text after fixing (equal when nothing was fixed).
    original: String,
    text: String,
    diags: Vec<Diagnostic>,
    /// The other files its diagnostics' fixes edit: (absolute path, name as reported, text).
    others: Vec<(PathBuf, String, String)>,
    fixed: usize,
    /// A one-line problem (unreadable file, not UTF-8): exit status 2.
    problem: Option<String>,
    /// Found in a directory and not using the Virtual ISA: not checked.
    skipped: bool,
    /// The crate it belongs to (its package's directory, or the file itself) and the library
    /// that crate is checked against.
    library: Option<(String, Library)>,
    /// Not an input: another file of an input's package that the input's fixes changed.
    edited_only: bool,
}

impl Checked {
    /// `text` as read and kept: nothing analysed, nothing fixed.
    fn unchanged(name: String, path: Option<PathBuf>, text: String) -> Checked {
        Checked {
            name,
            path,
            original: text.clone(),
            text,
            diags: Vec::new(),
            others: Vec::new(),
            fixed: 0,
            problem: None,
            skipped: false,
            library: None,
            edited_only: false,
        }
    }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// The diagnostic reported in place of a file's analysis when it panicked.
fn internal_error(name: &str, message: &str) -> Diagnostic {
    Diagnostic {
        rule: &INTERNAL_ERROR,
        severity: Severity::Error,
        message: format!(
            "internal error while checking {name}: {message} (the other files are checked; please report this with the file)"
        ),
        span: Span::default(),
        related: Vec::new(),
        fixes: Vec::new(),
    }
}

fn read_text(origin: &Origin) -> Result<(String, String), String> {
    match origin {
        Origin::Stdin(name, bytes) => String::from_utf8(bytes.clone())
            .map(|t| (name.clone(), t))
            .map_err(|_| format!("{name}: not UTF-8 text")),
        Origin::File { path, .. } => {
            let name = path.display().to_string();
            // Checked again here: the walk saw a regular file, but it may have been replaced.
            walk::check_regular_file(path)?;
            let bytes = std::fs::read(path).map_err(|e| walk::io_message(path, &e))?;
            String::from_utf8(bytes)
                .map(|t| (name.clone(), t))
                .map_err(|_| format!("{name}: not UTF-8 text"))
        }
    }
}

/// An input read, or the result that stops it there (unreadable, or not using the ISA).
enum Input {
    Read {
        name: String,
        path: Option<PathBuf>,
        text: String,
    },
    Done(Box<Checked>),
}

fn read_input(origin: &Origin) -> Input {
    let (fallback_name, path) = match origin {
        Origin::Stdin(name, _) => (name.clone(), None),
        Origin::File { path, .. } => (path.display().to_string(), Some(path.clone())),
    };
    let (name, text) = match read_text(origin) {
        Ok(t) => t,
        Err(problem) => {
            let mut c = Checked::unchanged(fallback_name, path, String::new());
            c.problem = Some(problem);
            return Input::Done(Box::new(c));
        }
    };
    if matches!(origin, Origin::File { walked: true, .. }) && !walk::uses_visa(&text) {
        let mut c = Checked::unchanged(name, path, String::new());
        c.skipped = true;
        return Input::Done(Box::new(c));
    }
    Input::Read { name, path, text }
}

fn check_one(
    origin: &Origin,
    config: &Config,
    ctx: &FileCtx,
    analyse: Analyse<'_>,
    fixing: Option<Applicability>,
) -> Checked {
    let (name, path, text) = match read_input(origin) {
        Input::Read { name, path, text } => (name, path, text),
        Input::Done(c) => return *c,
    };
    let run = || {
        let analyse_levelled = |t: &str| analyse(config, ctx, t);
        match fixing {
            None => (text.clone(), analyse_levelled(&text), 0),
            Some(which) => {
                let f = fix::to_fixed_point(&text, which, &analyse_levelled);
                (f.text, f.remaining, f.applied)
            }
        }
    };
    let (fixed_text, diags, fixed) =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r,
            Err(payload) => (
                text.clone(),
                vec![internal_error(&name, &panic_message(payload.as_ref()))],
                0,
            ),
        };
    let library = Some(library_of(config, ctx, &name, &text));
    let others = other_texts(ctx, &diags);
    Checked {
        text: fixed_text,
        diags,
        others,
        fixed,
        library,
        ..Checked::unchanged(name, path, text)
    }
}

/// Fixes the inputs `unit` of one package together, to a fixed point over the package's
/// files (a fix may edit another file, and two inputs' fixes the same one): each input's
/// result, then a result for each other file of the package the fixes changed.
fn check_crate(
    unit: &[usize],
    origins: &[Origin],
    config: &Config,
    ctxs: &[FileCtx],
    analyse: Analyse<'_>,
    which: Applicability,
) -> Vec<(usize, Checked)> {
    let Some(pkg) = unit.first().and_then(|&i| ctxs.get(i)?.package.clone()) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    let mut targets: Vec<(usize, String, PathBuf)> = Vec::new();
    let mut texts = pkg.texts();
    for &i in unit {
        match origins.get(i).map(read_input) {
            Some(Input::Read {
                name,
                path: Some(path),
                text,
            }) => {
                let key = absolute(&path);
                texts.insert(key.clone(), text);
                targets.push((i, name, key));
            }
            Some(Input::Read { .. }) | None => {}
            Some(Input::Done(c)) => done.push((i, *c)),
        }
    }
    let read = texts.clone();
    let disk = pkg.texts();
    let analyse_in = |texts: &Texts, path: &Path| {
        let edited: Texts = texts
            .iter()
            .filter(|(p, t)| p.as_path() != path && disk.get(*p) != Some(*t))
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        let ctx = FileCtx {
            path: Some(path.to_path_buf()),
            package: Some(pkg.clone()),
            check_fixes: true,
            edited: Arc::new(edited),
        };
        analyse(config, &ctx, texts.get(path).map_or("", String::as_str))
    };
    let paths: Vec<PathBuf> = targets.iter().map(|(_, _, p)| p.clone()).collect();
    let run = || fix::crate_to_fixed_point(texts, &paths, which, &analyse_in);
    let fixed = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(f) => f,
        Err(payload) => fix::CrateFixed {
            texts: read.clone(),
            applied: BTreeMap::new(),
            remaining: targets
                .iter()
                .map(|(_, name, p)| {
                    let d = internal_error(name, &panic_message(payload.as_ref()));
                    (p.clone(), vec![d])
                })
                .collect(),
        },
    };
    for (i, name, path) in &targets {
        let original = read.get(path).cloned().unwrap_or_default();
        let ctx = FileCtx {
            edited: Arc::new(fixed.texts.clone()),
            ..ctxs.get(*i).cloned().unwrap_or_default()
        };
        let diags = fixed.remaining.get(path).cloned().unwrap_or_default();
        let input_path = match origins.get(*i) {
            Some(Origin::File { path, .. }) => Some(path.clone()),
            _ => None,
        };
        done.push((
            *i,
            Checked {
                text: fixed.texts.get(path).cloned().unwrap_or_default(),
                others: other_texts(&ctx, &diags),
                fixed: fixed.applied.get(path).copied().unwrap_or(0),
                library: Some(library_of(config, &ctx, name, &original)),
                diags,
                ..Checked::unchanged(name.clone(), input_path, original)
            },
        ));
    }
    let last = unit.iter().copied().max().unwrap_or(0);
    for (path, text) in &fixed.texts {
        let original = disk.get(path);
        if targets.iter().any(|(_, _, p)| p == path) || original.is_none_or(|o| o == text) {
            continue;
        }
        let mut c = Checked::unchanged(
            shown_dir(path),
            Some(path.clone()),
            original.cloned().unwrap_or_default(),
        );
        c.text = text.clone();
        c.edited_only = true;
        done.push((last, c));
    }
    done
}

/// The texts of the other files that `diags`' fixes edit, from the file's package as the run
/// read it, each with its name as the report gives it.
fn other_texts(ctx: &FileCtx, diags: &[Diagnostic]) -> Vec<(PathBuf, String, String)> {
    let Some(pkg) = &ctx.package else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String, String)> = Vec::new();
    for o in diags
        .iter()
        .flat_map(|d| &d.fixes)
        .flat_map(|f| &f.other_files)
    {
        if out.iter().any(|(p, _, _)| *p == o.path) {
            continue;
        }
        if let Some(text) = ctx.edited.get(&o.path) {
            out.push((o.path.clone(), shown_dir(&o.path), text.clone()));
        } else if let Some((path, text)) = pkg.files.iter().find(|(p, _)| *p == o.path) {
            out.push((path.clone(), shown_dir(path), text.clone()));
        }
    }
    out
}

/// Checks every input on `jobs` threads; results in input order.
fn check_all(
    origins: &[Origin],
    configs: &[Arc<Config>],
    ctxs: &[FileCtx],
    analyse: Analyse<'_>,
    fixing: Option<Applicability>,
    jobs: usize,
) -> Vec<Checked> {
    let progress = (origins.len() > PROGRESS_THRESHOLD
        && std::io::IsTerminal::is_terminal(&std::io::stderr()))
    .then(|| {
        let bar = indicatif::ProgressBar::new(origins.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "visa-lint {bar:40} {pos}/{len} files {elapsed}",
        ) {
            bar.set_style(style);
        }
        bar
    });
    let units = units_of(origins, configs, ctxs, fixing);
    let next = AtomicUsize::new(0);
    let jobs = jobs.clamp(1, units.len().max(1));
    let mut results: Vec<(usize, Checked)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let u = next.fetch_add(1, Ordering::Relaxed);
                        let Some(unit) = units.get(u) else {
                            break;
                        };
                        let first = unit.first().copied().unwrap_or(0);
                        let config = configs.get(first).cloned().unwrap_or_default();
                        match (fixing, unit.as_slice()) {
                            (Some(which), _) if is_crate_unit(unit, origins, ctxs) => mine
                                .extend(check_crate(unit, origins, &config, ctxs, analyse, which)),
                            (_, [i]) => {
                                let ctx = ctxs.get(*i).cloned().unwrap_or_default();
                                if let Some(origin) = origins.get(*i) {
                                    let c = check_one(origin, &config, &ctx, analyse, fixing);
                                    mine.push((*i, c));
                                }
                            }
                            _ => {}
                        }
                        if let Some(bar) = &progress {
                            bar.inc(unit.len() as u64);
                        }
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            // A worker only panics outside `catch_unwind` on a bug in this module.
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    // Stable: the other files a crate's fixes changed stay after its inputs.
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, c)| c).collect()
}

/// The inputs checked together, in input order: each file alone, except that when fixing,
/// the files of one package under one configuration are one unit (their fixes may edit each
/// other's files, so they reach one fixed point together).
fn units_of(
    origins: &[Origin],
    configs: &[Arc<Config>],
    ctxs: &[FileCtx],
    fixing: Option<Applicability>,
) -> Vec<Vec<usize>> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut by_crate: HashMap<(PathBuf, *const Config), usize> = HashMap::new();
    for (i, origin) in origins.iter().enumerate() {
        let package = ctxs.get(i).and_then(|c| c.package.as_ref());
        let key = match (fixing, origin, package, configs.get(i)) {
            (Some(_), Origin::File { .. }, Some(pkg), Some(config)) => {
                Some((pkg.package.dir.clone(), Arc::as_ptr(config)))
            }
            _ => None,
        };
        match key.as_ref().and_then(|k| by_crate.get(k)) {
            Some(&u) => units[u].push(i),
            None => {
                if let Some(k) = key {
                    by_crate.insert(k, units.len());
                }
                units.push(vec![i]);
            }
        }
    }
    units
}

/// Whether `unit` is fixed as a crate: its files lie in a package and were not read from
/// standard input.
fn is_crate_unit(unit: &[usize], origins: &[Origin], ctxs: &[FileCtx]) -> bool {
    unit.first().is_some_and(|&i| {
        matches!(origins.get(i), Some(Origin::File { .. }))
            && ctxs.get(i).is_some_and(|c| c.package.is_some())
    })
}

/// The number of threads to check files on.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Reports a bad invocation: exit status 2.
fn usage(say: &mut dyn FnMut(&str), message: &str) -> std::io::Result<u8> {
    say(message);
    Ok(2)
}

/// Runs a lint invocation; returns the exit status.
pub fn lint(
    out: &mut dyn WriteColor,
    say: &mut dyn FnMut(&str),
    stdin: &mut dyn Read,
    cli: &Cli,
    analyse: Analyse<'_>,
) -> std::io::Result<u8> {
    let overrides = match level_overrides(cli) {
        Ok(l) => l,
        Err(e) => return usage(say, &e),
    };
    let exclude = match walk::excludes(&cli.exclude) {
        Ok(set) => set,
        Err(e) => return usage(say, &e),
    };
    let stdin_uses = cli.paths.iter().filter(|p| p.as_os_str() == "-").count();
    if stdin_uses > 1 {
        return usage(say, "`-` (standard input) given more than once");
    }
    if cli.stdin_filename.is_some() && stdin_uses == 0 {
        return usage(
            say,
            "--stdin-filename names standard input, which is read only when `-` is given",
        );
    }
    if stdin_uses == 1 && cli.fix && !cli.diff {
        return usage(
            say,
            "--fix cannot write back to standard input (use --diff to see the fixes)",
        );
    }
    if cli.unsafe_fixes && !cli.fix && !cli.diff {
        return usage(say, "--unsafe-fixes applies only with --fix or --diff");
    }
    if cli.jobs == Some(0) {
        return usage(say, "--jobs 0: at least one thread is needed");
    }
    let fixing = (cli.fix || cli.diff).then_some(if cli.unsafe_fixes {
        Applicability::All
    } else {
        Applicability::Safe
    });
    let deny_warnings = cli.deny.iter().any(|d| d == "warnings");

    let file_paths: Vec<PathBuf> = cli
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    let inputs = walk::collect(
        &file_paths,
        &walk::WalkOptions {
            no_ignore: cli.no_ignore,
            exclude: &exclude,
        },
    );
    let mut problems = inputs.problems;
    let mut origins: Vec<Origin> = inputs
        .files
        .into_iter()
        .zip(inputs.walked)
        .map(|(path, walked)| Origin::File { path, walked })
        .collect();
    if stdin_uses == 1 {
        let name = cli
            .stdin_filename
            .as_ref()
            .map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
        let mut bytes = Vec::new();
        if let Err(e) = stdin.read_to_end(&mut bytes) {
            return usage(say, &format!("standard input: {e}"));
        }
        // Reported first, wherever `-` stands among the paths.
        origins.insert(0, Origin::Stdin(name, bytes));
    }

    // Each file's configuration, with the command line's levels over it.
    let mut discovery = crate::config::Discovery::default();
    let mut merged: std::collections::HashMap<Option<PathBuf>, Arc<Config>> = Default::default();
    let mut configs = Vec::with_capacity(origins.len());
    for origin in &origins {
        let path = match origin {
            Origin::File { path, .. } => path.clone(),
            Origin::Stdin(name, _) => PathBuf::from(name),
        };
        let found = match discovery.for_file(&path) {
            Ok(f) => f,
            Err(e) => return usage(say, &format!("invalid configuration: {e}")),
        };
        let config = merged.entry(found.source).or_insert_with(|| {
            let mut c = (*found.config).clone();
            c.levels.extend(overrides.iter().cloned());
            Arc::new(c)
        });
        configs.push(config.clone());
    }

    // Each file is analysed within its crate: the packages around the files, read once.
    let paths: Vec<Option<PathBuf>> = origins
        .iter()
        .map(|o| match o {
            Origin::File { path, .. } => Some(path.clone()),
            Origin::Stdin(..) => cli.stdin_filename.clone(),
        })
        .collect();
    let ctxs: Vec<FileCtx> = packages_of(&paths)
        .into_iter()
        .zip(paths)
        .map(|(package, path)| FileCtx {
            path,
            package,
            check_fixes: fixing.is_some() || matches!(cli.format, Format::Json | Format::Sarif),
            edited: Arc::default(),
        })
        .collect();

    let checked = check_all(
        &origins,
        &configs,
        &ctxs,
        analyse,
        fixing,
        cli.jobs.unwrap_or_else(default_jobs),
    );

    let mut failed = false;
    let (mut errors, mut warnings, mut others) = (0usize, 0usize, 0usize);
    let (mut files, mut skipped, mut fixed, mut fixed_files) = (0usize, 0usize, 0usize, 0usize);
    let mut json_diags = Vec::new();
    let mut sarif_results = Vec::new();
    let mut all_diags: Vec<Diagnostic> = Vec::new();
    let mut libraries: BTreeMap<&str, Library> = BTreeMap::new();
    for c in &checked {
        if let Some((krate, library)) = &c.library {
            libraries.entry(krate).or_insert(*library);
        }
        if let Some(p) = &c.problem {
            problems.push(p.clone());
            continue;
        }
        if c.skipped {
            skipped += 1;
            continue;
        }
        if !c.edited_only {
            files += 1;
            fixed += c.fixed;
        }
        // Files changed: the inputs fixed, and the other files of their crates the fixes edit.
        fixed_files += usize::from(c.text != c.original);
        if cli.diff {
            if c.text != c.original {
                write!(out, "{}", fix::unified_diff(&c.name, &c.original, &c.text))?;
            }
            continue;
        }
        if cli.fix
            && c.text != c.original
            && let Some(path) = &c.path
            && let Err(e) = std::fs::write(path, &c.text)
        {
            problems.push(walk::io_message(path, &e));
        }
        if c.edited_only {
            continue;
        }
        for d in &c.diags {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
                _ => others += 1,
            }
        }
        failed |= c.diags.iter().any(|d| {
            d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
        });
        let src = Source {
            name: &c.name,
            text: &c.text,
            others: &c.others,
        };
        if cli.statistics {
            all_diags.extend(c.diags.iter().cloned());
            continue;
        }
        match cli.format {
            Format::Human => output::emit_human(out, &src, &c.diags)?,
            Format::Json => {
                let idx = LineIndex::new(&c.text);
                json_diags.extend(
                    c.diags
                        .iter()
                        .map(|d| output::diagnostic_json(&src, &idx, d)),
                );
            }
            Format::Sarif => {
                let idx = LineIndex::new(&c.text);
                sarif_results.extend(sarif::results(&src, &idx, &c.diags));
            }
            Format::Github => {
                let idx = LineIndex::new(&c.text);
                output::emit_github(out, &src, &idx, &c.diags)?;
            }
        }
    }
    for p in &problems {
        say(p);
    }
    if cli.verbose {
        for (krate, library) in &libraries {
            say(&format!("{krate}: checked against {library}"));
        }
    }
    if cli.diff {
        say(&format!(
            "{fixed} fix{} would be applied to {fixed_files} file{}",
            if fixed == 1 { "" } else { "es" },
            if fixed_files == 1 { "" } else { "s" },
        ));
        return Ok(if !problems.is_empty() {
            2
        } else {
            u8::from(fixed > 0)
        });
    }
    let summary = match (cli.statistics, cli.format) {
        (true, Format::Json) => {
            let counts = output::statistics(&all_diags);
            serde_json::to_writer(&mut *out, &output::statistics_json(&counts))?;
            writeln!(out)?;
            false
        }
        (true, _) => {
            output::emit_statistics(out, &output::statistics(&all_diags))?;
            true
        }
        (false, Format::Json) => {
            let report = output::report_json(files, json_diags, &libraries);
            serde_json::to_writer(&mut *out, &report)?;
            writeln!(out)?;
            false
        }
        (false, Format::Sarif) => {
            serde_json::to_writer_pretty(&mut *out, &sarif::document(sarif_results))?;
            writeln!(out)?;
            false
        }
        (false, Format::Human | Format::Github) => true,
    };
    if summary {
        let mut line = format!(
            "visa-lint: {} file{} checked: {errors} error{}, {warnings} warning{}, {others} other",
            files,
            if files == 1 { "" } else { "s" },
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" },
        );
        if cli.fix {
            line.push_str(&format!(
                "; {fixed} fix{} applied to {fixed_files} file{}",
                if fixed == 1 { "" } else { "es" },
                if fixed_files == 1 { "" } else { "s" },
            ));
        }
        if skipped > 0 {
            line.push_str(&format!(
                " ({skipped} file{} without furiosa_visa_std skipped)",
                if skipped == 1 { "" } else { "s" }
            ));
        }
        writeln!(out, "{line}")?;
    }
    Ok(if !problems.is_empty() {
        2
    } else if failed {
        1
    } else {
        0
    })
}

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
        Self::read_with(package, &[])
    }

    /// The package's files and `inputs` of it that lie outside the directories a package's
    /// files are read from (read through the same gate: nothing outside the package).
    fn read_with(package: Package, inputs: &[PathBuf]) -> LoadedPackage {
        let mut files = project::load(&package);
        let gate = project::Gate::new([&package.dir]);
        for path in inputs {
            if package.contains(path)
                && !files.iter().any(|(p, _)| p == path)
                && let Ok(text) = gate.read(path)
            {
                files.push((path.clone(), text));
            }
        }
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
        let Some((analysis, id)) = self.analysis(config, &file.edited, path, text) else {
            return Vec::new();
        };
        let diags = analysis
            .diagnostics(id)
            .map(|d| d.to_vec())
            .unwrap_or_default();
        if !file.check_fixes || diags.iter().all(|d| d.fixes.is_empty()) {
            return diags;
        }
        // Checked on a fork of the file's crate (its package; the file alone when no crate
        // of the package holds it).
        let unchecked = diags.clone();
        visa_analysis::checked_diagnostics(&analysis, id, diags)
            .map_or(unchecked, |c| c.diagnostics)
    }

    /// An analysis of the package with `path` reading `text`, and the file's id in it: the
    /// shared host's when the text is the one read from disk, a host of its own otherwise.
    fn analysis(
        &self,
        config: &Config,
        edited: &Texts,
        path: &Path,
        text: &str,
    ) -> Option<(visa_analysis::Analysis, visa_analysis::FileId)> {
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
        match snapshot {
            Some((a, Some(f))) => Some((a, f)),
            _ => {
                let host = self.host_with(config, edited, path, text);
                let f = host.file_id(path)?;
                Some((host.snapshot(), f))
            }
        }
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

/// Finds and reads the package of every file, once per package. An input of a package that
/// lies outside its `src/`, `tests/`, `examples/` and `benches/` (a kernel kept in
/// `kernels/`) is read with it: one host then serves every input of the package, rather
/// than a host of its own each (which resolved the package's crates anew, per file).
fn packages_of(paths: &[Option<PathBuf>]) -> Vec<Option<Arc<LoadedPackage>>> {
    let mut by_dir: HashMap<PathBuf, Option<Package>> = HashMap::new();
    let packages: Vec<Option<(PathBuf, Package)>> = paths
        .iter()
        .map(|p| {
            let path = absolute(p.as_ref()?);
            let dir = path.parent()?.to_path_buf();
            let pkg = by_dir
                .entry(dir)
                .or_insert_with_key(|dir| project::discover(&dir.join("_")))
                .clone()?;
            Some((path, pkg))
        })
        .collect();
    let mut inputs: HashMap<&Path, Vec<PathBuf>> = HashMap::new();
    for (path, pkg) in packages.iter().flatten() {
        inputs.entry(&pkg.dir).or_default().push(path.clone());
    }
    let mut loaded: HashMap<PathBuf, Arc<LoadedPackage>> = HashMap::new();
    packages
        .iter()
        .map(|found| {
            let (_, pkg) = found.as_ref()?;
            let with = inputs.get(pkg.dir.as_path()).map_or(&[][..], Vec::as_slice);
            Some(
                loaded
                    .entry(pkg.dir.clone())
                    .or_insert_with(|| Arc::new(LoadedPackage::read_with(pkg.clone(), with)))
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
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
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

/// The text of an input, or why it is not checked: unreadable, or a file found by walking a
/// directory that neither names the library nor belongs to a package that depends on it (a
/// package's file with only macro invocations is still one of its kernels' files).
fn read_input(origin: &Origin, ctx: &FileCtx) -> Input {
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
    let in_kernel_package = ctx
        .package
        .as_ref()
        .is_some_and(|p| p.package.library.is_some());
    if matches!(origin, Origin::File { walked: true, .. })
        && !in_kernel_package
        && !walk::uses_visa(&text)
    {
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
    let (name, path, text) = match read_input(origin, ctx) {
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
        match origins
            .get(i)
            .zip(ctxs.get(i))
            .map(|(o, c)| read_input(o, c))
        {
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
        let (origin, ctx) = (origins.get(*i), ctxs.get(*i));
        done.push((
            *i,
            fixed_input(name, path, origin, ctx, config, &read, &fixed),
        ));
    }
    let last = unit.iter().copied().max().unwrap_or(0);
    let inputs: Vec<&PathBuf> = targets.iter().map(|(_, _, p)| p).collect();
    done.extend(edited_only(&fixed, &inputs, &disk).map(|c| (last, c)));
    done
}

/// One input of a package after its fixes: its text, what is left of its diagnostics, how
/// many fixes were applied to it, and the other files its remaining fixes would edit.
fn fixed_input(
    name: &str,
    path: &PathBuf,
    origin: Option<&Origin>,
    ctx: Option<&FileCtx>,
    config: &Config,
    read: &Texts,
    fixed: &fix::CrateFixed,
) -> Checked {
    let original = read.get(path).cloned().unwrap_or_default();
    let ctx = FileCtx {
        edited: Arc::new(fixed.texts.clone()),
        ..ctx.cloned().unwrap_or_default()
    };
    let diags = fixed.remaining.get(path).cloned().unwrap_or_default();
    let input_path = match origin {
        Some(Origin::File { path, .. }) => Some(path.clone()),
        _ => None,
    };
    Checked {
        text: fixed.texts.get(path).cloned().unwrap_or_default(),
        others: other_texts(&ctx, &diags),
        fixed: fixed.applied.get(path).copied().unwrap_or(0),
        library: Some(library_of(config, &ctx, name, &original)),
        diags,
        ..Checked::unchanged(name.to_string(), input_path, original)
    }
}

/// The files of a package, other than its inputs, that the inputs' fixes changed.
fn edited_only<'f>(
    fixed: &'f fix::CrateFixed,
    inputs: &'f [&PathBuf],
    disk: &'f Texts,
) -> impl Iterator<Item = Checked> + 'f {
    fixed.texts.iter().filter_map(move |(path, text)| {
        let original = disk.get(path);
        if inputs.contains(&path) || original.is_none_or(|o| o == text) {
            return None;
        }
        let mut c = Checked::unchanged(
            shown_dir(path),
            Some(path.clone()),
            original.cloned().unwrap_or_default(),
        );
        c.text = text.clone();
        c.edited_only = true;
        Some(c)
    })
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
    let invocation = match Invocation::read(cli) {
        Ok(i) => i,
        Err(e) => return usage(say, &e),
    };
    let (origins, mut problems) = match inputs(cli, &invocation, stdin) {
        Ok(found) => found,
        Err(e) => return usage(say, &e),
    };
    let configs = match configs_of(&origins, &invocation.overrides) {
        Ok(c) => c,
        Err(e) => return usage(say, &format!("invalid configuration: {e}")),
    };
    let ctxs = contexts_of(&origins, cli, invocation.fixing);
    let jobs = cli.jobs.unwrap_or_else(default_jobs);
    let checked = check_all(&origins, &configs, &ctxs, analyse, invocation.fixing, jobs);
    let mut report = Report::default();
    for c in &checked {
        report.add(out, cli, c, &mut problems)?;
    }
    for p in &problems {
        say(p);
    }
    if cli.verbose {
        for (krate, library) in &report.libraries {
            say(&format!("{krate}: checked against {library}"));
        }
    }
    if cli.diff {
        say(&format!(
            "{} fix{} would be applied to {} file{}",
            report.fixed,
            plural(report.fixed, "es"),
            report.fixed_files,
            plural(report.fixed_files, "s"),
        ));
        return Ok(if !problems.is_empty() {
            2
        } else {
            u8::from(report.fixed > 0)
        });
    }
    let failed = report.failed;
    report.finish(out, cli)?;
    Ok(if !problems.is_empty() {
        2
    } else if failed {
        1
    } else {
        0
    })
}

/// `suffix` unless `n` is one.
fn plural(n: usize, suffix: &str) -> &str {
    if n == 1 { "" } else { suffix }
}

/// What the command line asks, checked: the levels it sets, the paths it excludes, whether
/// it reads standard input, and which fixes it applies.
struct Invocation {
    overrides: Vec<(String, Level)>,
    exclude: globset::GlobSet,
    reads_stdin: bool,
    fixing: Option<Applicability>,
}

impl Invocation {
    /// The invocation `cli` asks for, or why it is a bad one (exit status 2).
    fn read(cli: &Cli) -> Result<Invocation, String> {
        let overrides = level_overrides(cli)?;
        let exclude = walk::excludes(&cli.exclude)?;
        let stdin_uses = cli.paths.iter().filter(|p| p.as_os_str() == "-").count();
        if stdin_uses > 1 {
            return Err("`-` (standard input) given more than once".into());
        }
        if cli.stdin_filename.is_some() && stdin_uses == 0 {
            return Err(
                "--stdin-filename names standard input, which is read only when `-` is given"
                    .into(),
            );
        }
        if stdin_uses == 1 && cli.fix && !cli.diff {
            return Err(
                "--fix cannot write back to standard input (use --diff to see the fixes)".into(),
            );
        }
        if cli.unsafe_fixes && !cli.fix && !cli.diff {
            return Err("--unsafe-fixes applies only with --fix or --diff".into());
        }
        if cli.jobs == Some(0) {
            return Err("--jobs 0: at least one thread is needed".into());
        }
        let fixing = (cli.fix || cli.diff).then_some(if cli.unsafe_fixes {
            Applicability::All
        } else {
            Applicability::Safe
        });
        Ok(Invocation {
            overrides,
            exclude,
            reads_stdin: stdin_uses == 1,
            fixing,
        })
    }
}

/// The texts to check (the files the paths name, walked, and standard input first when `-`
/// is given) and the problems met finding them; or why standard input cannot be read.
fn inputs(
    cli: &Cli,
    invocation: &Invocation,
    stdin: &mut dyn Read,
) -> Result<(Vec<Origin>, Vec<String>), String> {
    let file_paths: Vec<PathBuf> = cli
        .paths
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    let options = walk::WalkOptions {
        no_ignore: cli.no_ignore,
        exclude: &invocation.exclude,
    };
    let inputs = walk::collect(&file_paths, &options);
    let mut origins: Vec<Origin> = inputs
        .files
        .into_iter()
        .zip(inputs.walked)
        .map(|(path, walked)| Origin::File { path, walked })
        .collect();
    if invocation.reads_stdin {
        let name = cli
            .stdin_filename
            .as_ref()
            .map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
        let mut bytes = Vec::new();
        if let Err(e) = stdin.read_to_end(&mut bytes) {
            return Err(format!("standard input: {e}"));
        }
        // Reported first, wherever `-` stands among the paths.
        origins.insert(0, Origin::Stdin(name, bytes));
    }
    Ok((origins, inputs.problems))
}

/// Each text's configuration (the file found for it), with the command line's levels over it.
fn configs_of(
    origins: &[Origin],
    overrides: &[(String, Level)],
) -> Result<Vec<Arc<Config>>, String> {
    let mut discovery = crate::config::Discovery::default();
    let mut merged: HashMap<Option<PathBuf>, Arc<Config>> = HashMap::new();
    let mut configs = Vec::with_capacity(origins.len());
    for origin in origins {
        let path = match origin {
            Origin::File { path, .. } => path.clone(),
            Origin::Stdin(name, _) => PathBuf::from(name),
        };
        let found = discovery.for_file(&path).map_err(|e| e.to_string())?;
        let config = merged.entry(found.source).or_insert_with(|| {
            let mut c = (*found.config).clone();
            c.levels.extend(overrides.iter().cloned());
            Arc::new(c)
        });
        configs.push(config.clone());
    }
    Ok(configs)
}

/// Each text's place: its path and the package around it (the packages read once), so it
/// is analysed within its crate.
fn contexts_of(origins: &[Origin], cli: &Cli, fixing: Option<Applicability>) -> Vec<FileCtx> {
    let paths: Vec<Option<PathBuf>> = origins
        .iter()
        .map(|o| match o {
            Origin::File { path, .. } => Some(path.clone()),
            Origin::Stdin(..) => cli.stdin_filename.clone(),
        })
        .collect();
    let check_fixes = fixing.is_some() || matches!(cli.format, Format::Json | Format::Sarif);
    packages_of(&paths)
        .into_iter()
        .zip(paths)
        .map(|(package, path)| FileCtx {
            path,
            package,
            check_fixes,
            edited: Arc::default(),
        })
        .collect()
}

/// What the checked files add up to, and the diagnostics the chosen format writes at the end.
#[derive(Default)]
struct Report<'c> {
    failed: bool,
    errors: usize,
    warnings: usize,
    others: usize,
    files: usize,
    skipped: usize,
    fixed: usize,
    fixed_files: usize,
    json_diags: Vec<serde_json::Value>,
    sarif_results: Vec<serde_json::Value>,
    all_diags: Vec<Diagnostic>,
    libraries: BTreeMap<&'c str, Library>,
}

impl<'c> Report<'c> {
    /// One checked text: its problem, its fixes written back (or shown as a diff), its
    /// diagnostics counted and written (human and GitHub output) or kept for the end.
    fn add(
        &mut self,
        out: &mut dyn WriteColor,
        cli: &Cli,
        c: &'c Checked,
        problems: &mut Vec<String>,
    ) -> std::io::Result<()> {
        if let Some((krate, library)) = &c.library {
            self.libraries.entry(krate).or_insert(*library);
        }
        if let Some(p) = &c.problem {
            problems.push(p.clone());
            return Ok(());
        }
        if c.skipped {
            self.skipped += 1;
            return Ok(());
        }
        if !c.edited_only {
            self.files += 1;
            self.fixed += c.fixed;
        }
        // Files changed: the inputs fixed, and the other files of their crates the fixes edit.
        self.fixed_files += usize::from(c.text != c.original);
        if cli.diff {
            if c.text != c.original {
                write!(out, "{}", fix::unified_diff(&c.name, &c.original, &c.text))?;
            }
            return Ok(());
        }
        if cli.fix
            && c.text != c.original
            && let Some(path) = &c.path
            && let Err(e) = std::fs::write(path, &c.text)
        {
            problems.push(walk::io_message(path, &e));
        }
        if c.edited_only {
            return Ok(());
        }
        self.count(cli, &c.diags);
        self.write(out, cli, c)
    }

    /// Counts `diags` by severity; an error (or a warning, under `--deny warnings`) fails.
    fn count(&mut self, cli: &Cli, diags: &[Diagnostic]) {
        for d in diags {
            match d.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                _ => self.others += 1,
            }
        }
        let deny_warnings = cli.deny.iter().any(|d| d == "warnings");
        self.failed |= diags.iter().any(|d| {
            d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
        });
    }

    /// Writes `c`'s diagnostics in the chosen format, or keeps them for the end.
    fn write(&mut self, out: &mut dyn WriteColor, cli: &Cli, c: &Checked) -> std::io::Result<()> {
        let src = Source {
            name: &c.name,
            text: &c.text,
            others: &c.others,
        };
        if cli.statistics {
            self.all_diags.extend(c.diags.iter().cloned());
            return Ok(());
        }
        match cli.format {
            Format::Human => output::emit_human(out, &src, &c.diags)?,
            Format::Json => {
                let idx = LineIndex::new(&c.text);
                let json = c
                    .diags
                    .iter()
                    .map(|d| output::diagnostic_json(&src, &idx, d));
                self.json_diags.extend(json);
            }
            Format::Sarif => {
                let idx = LineIndex::new(&c.text);
                self.sarif_results
                    .extend(sarif::results(&src, &idx, &c.diags));
            }
            Format::Github => {
                let idx = LineIndex::new(&c.text);
                output::emit_github(out, &src, &idx, &c.diags)?;
            }
        }
        Ok(())
    }

    /// Writes what the chosen format writes at the end: statistics, the JSON report, the SARIF
    /// log, or the summary line.
    fn finish(self, out: &mut dyn WriteColor, cli: &Cli) -> std::io::Result<()> {
        let summary = match (cli.statistics, cli.format) {
            (true, Format::Json) => {
                let counts = output::statistics(&self.all_diags);
                serde_json::to_writer(&mut *out, &output::statistics_json(&counts))?;
                writeln!(out)?;
                false
            }
            (true, _) => {
                output::emit_statistics(out, &output::statistics(&self.all_diags))?;
                true
            }
            (false, Format::Json) => {
                let report = output::report_json(self.files, self.json_diags, &self.libraries);
                serde_json::to_writer(&mut *out, &report)?;
                writeln!(out)?;
                false
            }
            (false, Format::Sarif) => {
                serde_json::to_writer_pretty(&mut *out, &sarif::document(self.sarif_results))?;
                writeln!(out)?;
                false
            }
            (false, Format::Human | Format::Github) => true,
        };
        if !summary {
            return Ok(());
        }
        let (files, errors, warnings) = (self.files, self.errors, self.warnings);
        let mut line = format!(
            "visa-lint: {files} file{} checked: {errors} error{}, {warnings} warning{}, {} other",
            plural(files, "s"),
            plural(errors, "s"),
            plural(warnings, "s"),
            self.others,
        );
        if cli.fix {
            line.push_str(&format!(
                "; {} fix{} applied to {} file{}",
                self.fixed,
                plural(self.fixed, "es"),
                self.fixed_files,
                plural(self.fixed_files, "s"),
            ));
        }
        if self.skipped > 0 {
            line.push_str(&format!(
                " ({} file{} without furiosa_visa_std skipped)",
                self.skipped,
                plural(self.skipped, "s")
            ));
        }
        writeln!(out, "{line}")
    }
}

//! Which files a lint run checks: the paths given, directories walked with the `ignore` crate
//! (`.gitignore`, `.ignore` and hidden entries honoured unless `--no-ignore`), `--exclude`
//! globs, and only regular files, each once by canonical path.

use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The result of collecting the inputs: files to check, in a stable order, and the problems
/// (one line each, exit status 2) met on the way.
#[derive(Debug, Default)]
pub struct Inputs {
    pub files: Vec<PathBuf>,
    /// Files found in a directory walk, which are checked only if they use the Virtual ISA
    /// (files named explicitly are always checked). Same length as `files`.
    pub walked: Vec<bool>,
    pub problems: Vec<String>,
}

/// Builds the `--exclude` matcher. A glob without a `/` matches a file or directory name at
/// any depth (`gen_*.rs`, `vendor`); one with a `/` matches the path as walked.
pub fn excludes(globs: &[String]) -> Result<GlobSet, String> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        let glob =
            Glob::new(g).map_err(|e| format!("--exclude {g}: invalid glob: {}", e.kind()))?;
        b.add(glob);
        if !g.contains('/') {
            // `name` also matches `dir/name` at any depth.
            let deep = Glob::new(&format!("**/{g}"))
                .map_err(|e| format!("--exclude {g}: invalid glob: {}", e.kind()))?;
            b.add(deep);
        }
    }
    b.build().map_err(|e| format!("--exclude: {e}"))
}

fn excluded(set: &GlobSet, path: &Path) -> bool {
    if set.is_empty() {
        return false;
    }
    let shown = path.to_string_lossy();
    let trimmed = shown.strip_prefix("./").unwrap_or(&shown);
    set.is_match(trimmed) || path.file_name().is_some_and(|n| set.is_match(n))
}

/// What kind of file system entry a path names, for the one-line error of a path given on the
/// command line that cannot be checked.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() || t.is_dir() {
        None
    } else if t.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_block_device() || t.is_char_device() {
        Some("a device")
    } else {
        Some("not a regular file")
    }
}

/// Checks that a path given to `model`/`derive` (or to the linter) names a readable regular
/// file, without opening it (opening a FIFO blocks until a writer comes).
pub fn check_regular_file(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| io_message(path, &e))?;
    if meta.is_dir() {
        return Err(format!("{}: is a directory", path.display()));
    }
    if let Some(kind) = not_regular(&meta) {
        return Err(format!("{}: is {kind}, not a regular file", path.display()));
    }
    Ok(())
}

/// `path: message` for an I/O error, without the `(os error N)` suffix.
pub fn io_message(path: &Path, e: &std::io::Error) -> String {
    let text = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    };
    format!("{}: {text}", path.display())
}

/// Options of the walk.
pub struct WalkOptions<'a> {
    pub no_ignore: bool,
    pub exclude: &'a GlobSet,
}

/// Collects every file to check under `paths`.
pub fn collect(paths: &[PathBuf], opts: &WalkOptions<'_>) -> Inputs {
    let mut inputs = Inputs::default();
    let mut seen = HashSet::new();
    let mut push = |inputs: &mut Inputs, path: PathBuf, walked: bool| {
        // Each file once, whichever link or spelling reached it.
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if seen.insert(key) {
            inputs.files.push(path);
            inputs.walked.push(walked);
        }
    };
    for p in paths {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                inputs.problems.push(io_message(p, &e));
                continue;
            }
        };
        if meta.is_file() {
            push(&mut inputs, p.clone(), false);
            continue;
        }
        if let Some(kind) = not_regular(&meta) {
            inputs
                .problems
                .push(format!("{}: is {kind}, not a regular file", p.display()));
            continue;
        }
        let mut found = Vec::new();
        let exclude = opts.exclude.clone();
        let walker = ignore::WalkBuilder::new(p)
            .standard_filters(!opts.no_ignore)
            .hidden(!opts.no_ignore)
            .require_git(false)
            .follow_links(true)
            .filter_entry(move |e| {
                // Build output is never a kernel; the root itself is always walked.
                let name = e.file_name();
                let skip_dir = e.depth() > 0
                    && e.file_type().is_some_and(|t| t.is_dir())
                    && (name == "target" || name == "node_modules");
                !skip_dir && (e.depth() == 0 || !excluded(&exclude, e.path()))
            })
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    let is_rs = e.path().extension().is_some_and(|x| x == "rs");
                    match e.file_type() {
                        // FIFOs, sockets and devices named `*.rs` are not opened.
                        Some(t) if t.is_file() && is_rs => found.push(e.into_path()),
                        _ => {}
                    }
                }
                Err(err) => {
                    if let Some(problem) = walk_problem(&err) {
                        inputs.problems.push(problem);
                    }
                }
            }
        }
        found.sort();
        for f in found {
            push(&mut inputs, f, true);
        }
    }
    inputs
}

/// The one-line report of a walk error, or `None` for a symbolic-link loop (each file is
/// reached once anyway).
fn walk_problem(err: &ignore::Error) -> Option<String> {
    match err {
        ignore::Error::Loop { .. } => None,
        ignore::Error::WithPath { path, err } => match err.as_ref() {
            ignore::Error::Io(io) => Some(io_message(path, io)),
            ignore::Error::Loop { .. } => None,
            other => Some(format!("{}: {other}", path.display())),
        },
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_problem(err)
        }
        other => Some(other.to_string()),
    }
}

/// Whether a text uses the Virtual ISA at all; others are skipped without parsing.
pub fn uses_visa(text: &str) -> bool {
    const MARKERS: [&str; 6] = [
        "furiosa_visa_std",
        "furiosa_opt_std",
        "m![",
        "axes![",
        "Tensor<",
        "i![",
    ];
    MARKERS.iter().any(|m| text.contains(m))
}

/// The text of a file given to `model` or `derive`: a regular file (a FIFO would block).
pub fn read_kernel(file: &Path) -> Result<String, String> {
    check_regular_file(file)?;
    let bytes = std::fs::read(file).map_err(|e| io_message(file, &e))?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", file.display()))
}

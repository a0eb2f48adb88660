//! Where a file's crate is: the Cargo package around it, its crate roots and its files. The
//! only part of the engine that reads the file system; the surfaces call it and hand the
//! texts to [`crate::AnalysisHost`] (queries never do I/O). The package is read from its
//! `Cargo.toml` only: no cargo, no build scripts. Every file is read through one [`Gate`].

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest file read (a source file, a manifest, a configuration file).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Why a file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// It does not exist or cannot be reached (the I/O error's text).
    Io(String),
    /// Its real path (links and `..` resolved) is outside every root the gate admits.
    Outside(PathBuf),
    /// A directory, FIFO, socket or device.
    NotRegular(&'static str),
    TooLarge(u64),
    NotUtf8,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::Outside(real) => write!(
                f,
                "its real path {} is outside the workspace and the packages",
                real.display()
            ),
            ReadError::NotRegular(kind) => write!(f, "is {kind}, not a regular file"),
            ReadError::TooLarge(n) => {
                write!(f, "is {n} bytes, over the limit of {MAX_FILE_BYTES}")
            }
            ReadError::NotUtf8 => write!(f, "is not UTF-8 text"),
        }
    }
}

/// The one way files are read: regular files only, at most [`MAX_FILE_BYTES`], whose real
/// path (every link and `..` resolved) lies under one of the gate's roots; opened without
/// blocking, so a FIFO put in a file's place is refused rather than waited on.
#[derive(Clone, Debug, Default)]
pub struct Gate {
    roots: Vec<PathBuf>,
}

impl Gate {
    /// A gate admitting what lies under `roots` (each resolved to its real path; a root that
    /// does not exist admits nothing).
    pub fn new<P: AsRef<Path>>(roots: impl IntoIterator<Item = P>) -> Gate {
        Gate {
            roots: roots
                .into_iter()
                .filter_map(|r| std::fs::canonicalize(r.as_ref()).ok())
                .collect(),
        }
    }

    /// Whether `path`'s real path lies under a root (`false` when it does not exist).
    pub fn admits(&self, path: &Path) -> bool {
        std::fs::canonicalize(path).is_ok_and(|real| self.roots.iter().any(|r| real.starts_with(r)))
    }

    /// The text of `path`.
    pub fn read(&self, path: &Path) -> Result<String, ReadError> {
        let io = |e: std::io::Error| ReadError::Io(e.to_string());
        let real = std::fs::canonicalize(path).map_err(io)?;
        if !self.roots.iter().any(|r| real.starts_with(r)) {
            return Err(ReadError::Outside(real));
        }
        check_kind(&std::fs::metadata(&real).map_err(io)?)?;
        let file = open_nonblocking(&real).map_err(io)?;
        // Checked again on the open file: the path may have been replaced in between.
        let meta = file.metadata().map_err(io)?;
        check_kind(&meta)?;
        let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES) as usize);
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(ReadError::TooLarge(bytes.len() as u64));
        }
        String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
    }
}

fn check_kind(meta: &std::fs::Metadata) -> Result<(), ReadError> {
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta)));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    Ok(())
}

/// What a file system entry is, in words.
pub fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if meta.is_dir() {
        "a directory"
    } else if meta.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// A Cargo package: its directory, its library's crate name and its crate roots (the library
/// first, then binaries, tests, examples and benches).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Package {
    pub dir: PathBuf,
    /// The library's crate name (`my-kernels` -> `my_kernels`), if it has a library.
    pub lib_name: Option<String>,
    pub roots: Vec<PathBuf>,
    /// The kernel library its `Cargo.toml` depends on, if any.
    pub library: Option<crate::library::Library>,
}

impl Package {
    /// The crate name of a root (the library's for the library, the file stem otherwise).
    pub fn crate_name(&self, root: &Path) -> String {
        match &self.lib_name {
            Some(lib) if root == self.dir.join("src").join("lib.rs") => lib.clone(),
            _ => root
                .file_stem()
                .map(|s| s.to_string_lossy().replace('-', "_"))
                .unwrap_or_default(),
        }
    }

    /// Whether `path` lies in the package (under its directory).
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.dir)
    }
}

/// The package whose directory holds `file`: the nearest `Cargo.toml` upwards with a
/// `[package]` table (a virtual workspace manifest is not a package). `None` for a file
/// outside any package, which is then its own crate.
pub fn discover(file: &Path) -> Option<Package> {
    discover_under(file, None)
}

/// [`discover`], looking no higher than `ceiling` when one is given (a language server's
/// workspace folder: nothing above it is read).
pub fn discover_under(file: &Path, ceiling: Option<&Path>) -> Option<Package> {
    let file = absolute(file);
    let mut dir = file.parent();
    while let Some(d) = dir {
        if ceiling.is_some_and(|c| !d.starts_with(c)) {
            return None;
        }
        let manifest = d.join("Cargo.toml");
        if manifest.is_file() {
            let text = Gate::new([d]).read(&manifest).ok()?;
            return package_from_manifest(d, &text);
        }
        dir = d.parent();
    }
    None
}

/// `p` made absolute against the working directory (no file-system access).
pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The package a manifest describes (`None` without a `[package]` table).
pub fn package_from_manifest(dir: &Path, manifest: &str) -> Option<Package> {
    let value: toml::Table = toml::from_str(manifest).ok()?;
    let name = value.get("package")?.get("name")?.as_str()?.to_string();
    let lib_root = value
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .map(|p| dir.join(p))
        .unwrap_or_else(|| dir.join("src").join("lib.rs"));
    let lib_name = value
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| name.replace('-', "_"));
    let mut roots = Vec::new();
    let has_lib = lib_root.is_file();
    if has_lib {
        roots.push(lib_root);
    }
    let main = dir.join("src").join("main.rs");
    if main.is_file() {
        roots.push(main);
    }
    for sub in ["src/bin", "tests", "examples", "benches"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter_map(|p| {
                if p.is_dir() {
                    Some(p.join("main.rs")).filter(|m| m.is_file())
                } else {
                    (p.extension().is_some_and(|e| e == "rs")).then_some(p)
                }
            })
            .collect();
        found.sort();
        roots.extend(found);
    }
    Some(Package {
        dir: dir.to_path_buf(),
        lib_name: has_lib.then_some(lib_name),
        roots,
        library: crate::library::Library::from_manifest(&value),
    })
}

/// The most files read from one package (a generated tree stops here).
pub const MAX_PACKAGE_FILES: usize = 20_000;

/// The `.rs` files of a package: `src/`, `tests/`, `examples/` and `benches/`, never `target/`
/// or hidden directories.
pub fn package_files(pkg: &Package) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["src", "tests", "examples", "benches"] {
        walk(&pkg.dir.join(sub), &mut out, 0);
    }
    out.sort();
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 32 || out.len() >= MAX_PACKAGE_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.') || n == "target");
        if hidden {
            continue;
        }
        // Symbolic links are not followed (a loop would never end).
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            walk(&p, out, depth + 1);
        } else if meta.is_file() && p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Reads a package's files through a [`Gate`] admitting the package (those that are UTF-8
/// text; the others are skipped).
pub fn load(pkg: &Package) -> Vec<(PathBuf, String)> {
    let gate = Gate::new([&pkg.dir]);
    package_files(pkg)
        .into_iter()
        .filter_map(|p| gate.read(&p).ok().map(|t| (p, t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_without_a_package_table_is_no_package() {
        let dir = Path::new("/nonexistent");
        assert_eq!(
            package_from_manifest(dir, "[workspace]\nmembers = []"),
            None
        );
        assert_eq!(package_from_manifest(dir, "not toml ["), None);
    }

    #[test]
    fn the_gate_reads_regular_files_under_its_roots_only() {
        let dir = std::env::temp_dir().join(format!("visa-gate-{}", std::process::id()));
        let (inside, outside) = (dir.join("ws"), dir.join("elsewhere"));
        for d in [&inside, &outside] {
            std::fs::create_dir_all(d).expect("temp dir");
        }
        std::fs::write(inside.join("a.rs"), "fn a() {}").expect("write");
        std::fs::write(outside.join("secret.rs"), "secret").expect("write");
        let gate = Gate::new([&inside]);
        assert_eq!(gate.read(&inside.join("a.rs")), Ok("fn a() {}".to_string()));
        // `..` and links are resolved before the check.
        let dotted = inside.join("../elsewhere/secret.rs");
        assert!(matches!(gate.read(&dotted), Err(ReadError::Outside(_))));
        #[cfg(unix)]
        {
            let link = inside.join("link.rs");
            std::os::unix::fs::symlink(outside.join("secret.rs"), &link).expect("symlink");
            assert!(matches!(gate.read(&link), Err(ReadError::Outside(_))));
            let zero = inside.join("zero.rs");
            std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
            assert!(matches!(gate.read(&zero), Err(ReadError::Outside(_))));
            let open = Gate::new(["/"]);
            assert_eq!(open.read(&zero), Err(ReadError::NotRegular("a device")));
            let fifo = inside.join("pipe.rs");
            let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            assert_eq!(
                gate.read(&fifo),
                Err(ReadError::NotRegular("a named pipe (FIFO)"))
            );
        }
        assert_eq!(
            gate.read(&inside),
            Err(ReadError::NotRegular("a directory"))
        );
        assert!(matches!(
            gate.read(&inside.join("missing.rs")),
            Err(ReadError::Io(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn crate_names_follow_cargo() {
        let pkg = Package {
            library: None,
            dir: PathBuf::from("/p"),
            lib_name: Some("my_kernels".into()),
            roots: vec![],
        };
        assert_eq!(pkg.crate_name(Path::new("/p/src/lib.rs")), "my_kernels");
        assert_eq!(pkg.crate_name(Path::new("/p/tests/run-all.rs")), "run_all");
    }
}

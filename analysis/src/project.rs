//! Where a file's crate is: the Cargo package around it, its crate roots and its files. The
//! only part of the engine that reads the file system; the surfaces call it and hand the
//! texts to [`crate::AnalysisHost`] (queries never do I/O). The package is read from its
//! `Cargo.toml` only: no cargo, no build scripts.

use std::path::{Path, PathBuf};

/// A Cargo package: its directory, its library's crate name and its crate roots (the library
/// first, then binaries, tests, examples and benches).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Package {
    pub dir: PathBuf,
    /// The library's crate name (`my-kernels` -> `my_kernels`), if it has a library.
    pub lib_name: Option<String>,
    pub roots: Vec<PathBuf>,
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
    let file = absolute(file);
    let mut dir = file.parent();
    while let Some(d) = dir {
        let manifest = d.join("Cargo.toml");
        if manifest.is_file() {
            let text = std::fs::read_to_string(&manifest).ok()?;
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

/// Reads a package's files (those that are UTF-8 text; the others are skipped).
pub fn load(pkg: &Package) -> Vec<(PathBuf, String)> {
    package_files(pkg)
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
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
    fn crate_names_follow_cargo() {
        let pkg = Package {
            dir: PathBuf::from("/p"),
            lib_name: Some("my_kernels".into()),
            roots: vec![],
        };
        assert_eq!(pkg.crate_name(Path::new("/p/src/lib.rs")), "my_kernels");
        assert_eq!(pkg.crate_name(Path::new("/p/tests/run-all.rs")), "run_all");
    }
}

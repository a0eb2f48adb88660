//! Finding a file's configuration: `visa-lint.toml` in its directory or the nearest ancestor,
//! or the `[workspace.metadata.visa-lint]` / `[package.metadata.visa-lint]` table of a
//! `Cargo.toml` on the way, stopping at the workspace root (a `Cargo.toml` with
//! `[workspace]`) or the repository root (`.git`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use visa_analysis::Config;

/// Where a configuration came from and what it says.
#[derive(Clone, Debug)]
pub struct Found {
    pub config: Arc<Config>,
    /// The file it was read from (`None`: the defaults).
    pub source: Option<PathBuf>,
}

/// Configuration lookups, cached per directory.
#[derive(Default)]
pub struct Discovery {
    cache: HashMap<PathBuf, Result<Found, String>>,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| crate::walk::io_message(path, &e))
}

impl Discovery {
    /// The configuration that applies to a file (or, for standard input, to a file named so).
    pub fn for_file(&mut self, file: &Path) -> Result<Found, String> {
        let dir = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        self.for_dir(&dir)
    }

    fn for_dir(&mut self, dir: &Path) -> Result<Found, String> {
        if let Some(found) = self.cache.get(dir) {
            return found.clone();
        }
        let found = self.look(dir);
        self.cache.insert(dir.to_path_buf(), found.clone());
        found
    }

    fn look(&mut self, dir: &Path) -> Result<Found, String> {
        let toml = dir.join("visa-lint.toml");
        if toml.is_file() {
            let config =
                Config::from_toml(&read(&toml)?).map_err(|e| format!("{}: {e}", toml.display()))?;
            return Ok(Found {
                config: Arc::new(config),
                source: Some(toml),
            });
        }
        let cargo = dir.join("Cargo.toml");
        let mut workspace_root = false;
        if cargo.is_file() {
            let text = read(&cargo)?;
            let config =
                Config::from_cargo_toml(&text).map_err(|e| format!("{}: {e}", cargo.display()))?;
            if let Some(config) = config {
                return Ok(Found {
                    config: Arc::new(config),
                    source: Some(cargo),
                });
            }
            workspace_root = text.lines().any(|l| l.trim() == "[workspace]");
        }
        let defaults = || Found {
            config: Arc::new(Config::default()),
            source: None,
        };
        if workspace_root || dir.join(".git").exists() {
            return Ok(defaults());
        }
        match dir.parent() {
            Some(parent) => self.for_dir(parent),
            None => Ok(defaults()),
        }
    }
}

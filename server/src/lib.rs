//! visa-server: the `visa-lint` command line (and, later, the `visa-lsp` language server)
//! over the `visa-analysis` engine.

pub mod args;
pub mod cli;
pub mod config;
pub mod cost;
pub mod dump;
pub mod fix;
pub mod lint;
pub mod lsp;
pub mod output;
pub mod sarif;
pub mod walk;

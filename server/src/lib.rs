//! visa-server: the `visa-lint` command line (and, later, the `visa-lsp` language server)
//! over the `visa-analysis` engine.

pub mod cli;
pub mod cost;
pub mod dump;
pub mod output;

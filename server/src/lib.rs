//! visa-server: the `visa-lint` command line (and, later, the `visa-lsp` language server)
//! over the `visa-analysis` engine.

pub mod cli;
pub mod dump;
pub mod lsp;
pub mod output;

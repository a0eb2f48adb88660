//! `visa-lsp`: visa-lint's language server, over stdin and stdout.
//!
//! It reads only what the client sends and the workspace's `visa-lint.toml`; it never runs
//! cargo, build scripts or proc macros.

#[tokio::main]
async fn main() {
    visa_server::lsp::run_stdio().await;
    // The runtime would wait for the thread blocked reading stdin; the session is over.
    std::process::exit(0);
}

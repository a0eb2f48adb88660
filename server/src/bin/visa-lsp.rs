//! `visa-lsp`: visa-lint's language server, over stdin and stdout.
//!
//! It reads only what the client sends and the files of the workspace and of the open
//! documents' packages; it never runs cargo, build scripts or proc macros.

fn main() {
    // Every worker and blocking thread gets the analysis stack (docs/robustness.md): a file
    // nested up to the limits must not depend on which thread received it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(visa_analysis::ANALYSIS_STACK_BYTES)
        .build();
    let code = match runtime {
        Ok(rt) => rt.block_on(visa_server::lsp::run_stdio()),
        Err(e) => {
            eprintln!("visa-lsp: cannot start the runtime: {e}");
            2
        }
    };
    // The runtime would wait for the thread blocked reading stdin; the session is over.
    std::process::exit(code);
}

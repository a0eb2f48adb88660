use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = visa_server::cli::Cli::parse();
    // Analysis runs on a thread with the documented stack (docs/robustness.md), not on
    // whatever the platform gives the main thread.
    visa_analysis::run_with_stack(move || visa_server::cli::run(cli))
}

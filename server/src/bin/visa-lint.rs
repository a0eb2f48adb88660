use clap::Parser;

fn main() -> std::process::ExitCode {
    visa_server::cli::run(visa_server::cli::Cli::parse())
}

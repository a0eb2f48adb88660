//! The command line as parsed: [`Cli`], its subcommands, and the report [`Format`]. The
//! modules that run a command (`lint`, `cost`) read it from here; `cli` dispatches on it.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "visa-lint",
    version,
    about = "Checks TCP Virtual ISA kernels (furiosa_visa_std) against the hardware rules",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Kernel files or directories (searched recursively for `.rs` files, honouring
    /// `.gitignore`); `-` reads standard input.
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human, global = true)]
    pub format: Format,
    /// `--deny warnings`: exit with status 1 on warnings too. `--deny RULE`: report a rule as
    /// an error (a code `BNK-001`, a name `bank-starvation`, or a family `BNK`).
    #[arg(long, value_name = "warnings|RULE")]
    pub deny: Vec<String>,
    /// Report a rule (code, name or family) as a warning.
    #[arg(long, value_name = "RULE")]
    pub warn: Vec<String>,
    /// Do not report a rule (code, name or family).
    #[arg(long, value_name = "RULE")]
    pub allow: Vec<String>,
    /// List every rule with its status.
    #[arg(long)]
    pub list_rules: bool,
    /// Print the documentation of a rule (`MAP-001` or `stride-must-divide`).
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// Colors in human output.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Print how often each rule was reported instead of the reports.
    #[arg(long)]
    pub statistics: bool,
    /// Also say, for each crate checked, which vendor library it is checked against and why.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Apply the safe fixes in place, re-checking until nothing changes; report what remains.
    #[arg(long)]
    pub fix: bool,
    /// With `--fix` or `--diff`: apply the fixes that need review too.
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff instead of writing them (exit status 1 if any).
    #[arg(long)]
    pub diff: bool,
    /// Do not honour `.gitignore`, `.ignore` files or skip hidden entries.
    #[arg(long)]
    pub no_ignore: bool,
    /// Skip files and directories matching a glob (`gen_*.rs`, `vendor`, `tests/**`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// The file name reported for standard input (`-`).
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<PathBuf>,
    /// Threads checking files (default: one per core).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Evaluate one mapping expression: its size, normal form, layout and chosen positions.
    Eval {
        /// The axes in scope, e.g. `A = 8, B = 512` (an `axes![...]` wrapper is accepted).
        #[arg(long, default_value = "")]
        axes: String,
        /// The mapping, e.g. `m![B / 64, B % 64]` (the `m![...]` wrapper is optional).
        mapping: String,
        /// Buffer positions to map to tensor indices (repeatable).
        #[arg(long = "index", value_name = "POSITION")]
        indices: Vec<u64>,
    },
    /// Print the kernel model of a file: per function, its tensors and its engine chains with
    /// the type visa-lint resolved at every step.
    Model {
        /// The kernel file.
        file: PathBuf,
    },
    /// Print the sequencer configuration visa-lint derives for every fetch, commit and
    /// `BufTensor` read/write of a file, in the manual's notation `[8 : 32, 8 : 256, 16 : 1] : 16`.
    Derive {
        /// The kernel file.
        file: PathBuf,
    },
    /// What each engine operation and each kernel of a file costs in cycles, why, and what to
    /// change; `--timeline out.svg` also draws the schedule.
    Cost {
        /// The kernel file.
        file: PathBuf,
        /// Write the schedule as an SVG Gantt chart to this file.
        #[arg(long, value_name = "SVG")]
        timeline: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style reports with source lines and carets.
    Human,
    /// The JSON report `{"version": 1, "files": N, "diagnostics": [...]}`.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

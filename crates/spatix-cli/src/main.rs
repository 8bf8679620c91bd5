//! The `spatix` command.
//!
//! For now it answers `--help` and `--version`; run without arguments, it prints its help.

use clap::{CommandFactory, Parser};

/// 2D spatial indexes for collision detection and proximity queries.
#[derive(Debug, Parser)]
#[command(name = "spatix", version)]
struct Cli {}

fn main() -> std::io::Result<()> {
    // Parsing answers --help and --version and rejects anything else (exit code 2).
    let Cli {} = Cli::parse();
    Cli::command().print_help()
}

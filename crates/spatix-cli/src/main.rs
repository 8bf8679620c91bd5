//! The `spatix` command: the agents simulation (with pictures), and batch spatial joins over
//! CSV files or the indexes `spatix build` saves from them. Run without arguments, it prints
//! its help.
//!
//! Exit codes: 0 success; 2 bad input or usage (`FILE:LINE: reason` on standard error, and no
//! output file left behind); 1 any other failure (e.g. writing the output).

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

mod batch;
mod csv;
mod failure;
mod index_kind;
mod input;
mod output;
mod progress;
mod render;
mod saved;
mod sim;
mod stats;
mod view;

use failure::Failure;

/// 2D spatial indexes for collision detection and proximity queries.
#[derive(Debug, Parser)]
#[command(name = "spatix", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Agents move and bounce off each other; prints frame times, pairs and memory.
    Sim(sim::SimArgs),
    /// Every pair of intersecting boxes: CSV a,b (a < b).
    Pairs(batch::PairsArgs),
    /// The boxes intersecting each query box: CSV query_id,id.
    Query(batch::QueryArgs),
    /// The k points nearest to each query point: CSV query_id,rank,id,distance.
    Knn(batch::KnnArgs),
    /// Saves the index pairs, query or knn would build from a CSV file, for them to load.
    Build(batch::BuildArgs),
    /// Serves a page on loopback that shows a structure at work: moving agents (or a file's
    /// elements), the structure's regions, k nearest, window and ray queries beside brute
    /// force.
    View(view::ViewArgs),
}

fn main() -> ExitCode {
    // Parsing answers --help and --version and rejects bad usage (exit code 2).
    let cli = Cli::parse();
    // Ctrl-C (or SIGTERM) removes the temporary file of an output in progress, then ends the
    // process as the signal would have (exit code 130). Without a handler the command still
    // ends, only leaving the temporary file, so a failure to install one is not fatal.
    let _ = ctrlc::set_handler(|| {
        output::remove_temporaries();
        std::process::exit(130);
    });
    let checked = match &cli.command {
        Some(Command::Sim(args)) => args.validate().map_err(|e| ("sim", e)),
        Some(Command::Pairs(args)) => args.validate().map_err(|e| ("pairs", e)),
        Some(Command::Query(args)) => args.validate().map_err(|e| ("query", e)),
        Some(Command::Build(_) | Command::Knn(_) | Command::View(_)) | None => Ok(()),
    };
    if let Err((name, message)) = checked {
        // Built, so that the subcommand's usage reads `spatix NAME ...`.
        let mut cli = Cli::command();
        cli.build();
        match cli.find_subcommand_mut(name) {
            Some(command) => command.error(ErrorKind::ValueValidation, message).exit(),
            None => cli.error(ErrorKind::ValueValidation, message).exit(),
        }
    }
    let result = match &cli.command {
        None => Cli::command()
            .print_help()
            .map_err(|e| Failure::io("printing the help", e)),
        Some(Command::Sim(args)) => sim::run(args),
        Some(Command::Pairs(args)) => batch::pairs(args),
        Some(Command::Query(args)) => batch::query(args),
        Some(Command::Knn(args)) => batch::knn(args),
        Some(Command::Build(args)) => batch::build(args),
        Some(Command::View(args)) => view::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) if failure.is_broken_pipe() => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("{failure}");
            failure.exit_code()
        }
    }
}

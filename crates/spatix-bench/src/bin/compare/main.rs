//! `compare`: spatix side by side with the crates people use today, on the same seeded
//! workloads in the same run, every answer checked against the others.
//!
//! ```text
//! cargo run --release -p spatix-bench --bin compare -- [--quick] [--write] [--json FILE]
//!     [--threads N [--serial-fraction]] [--runs N] [--only TEXT] [--structures TEXT]
//!     [--sizes N,N,...]
//! ```
//!
//! * `--quick`: N = 10k and 100k only (a few minutes); the full run is 10k, 100k and 1M.
//! * `--write`: write docs/BENCHMARKS.md, the plots under docs/benchmarks/ and the headline
//!   rows of README.md (otherwise the Markdown goes to standard output only).
//! * `--json FILE`: the same data, machine-readable.
//! * `--threads N`: let the structures with a parallel mode use N threads (default 1): builds,
//!   the agents frame, and the query workloads (spatix's `ParallelQuery` batches, kiddo's own
//!   batch queries, rayon over the queries for the other crates whose query takes `&self`).
//! * `--serial-fraction` (with `--threads N`, N > 1): run the agents frame and the query
//!   workloads again on a pool of one thread (the same code); report the frame's speed-up of N
//!   threads and Amdahl's serial fraction, per phase and in total, and each query workload's
//!   median on one thread and on N threads with the speed-up.
//! * `--runs N`: measured runs per structure and N (at least 5, the default).
//! * `--only TEXT`: only the workloads whose name contains TEXT (e.g. `frame`, `nearest`).
//! * `--structures TEXT`: only the structures whose name contains TEXT (e.g. `spatix`, for a
//!   profile); the answers are then checked against the first of those.
//! * `--sizes N,N,...`: only these element counts (e.g. `1000000` for the largest rows alone).
//!
//! Any answer that differs from the others is printed and makes the run exit with status 1,
//! writing nothing.

mod check;
mod machine;
mod measure;
mod peers;
mod phases;
mod plot;
mod report;
mod units;
mod workloads;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::machine::Machine;
use crate::workloads::Settings;

/// What the options do (`compare --help`).
const HELP: &str = "  --quick              N = 10k and 100k only; a full run is 10k, 100k and 1M
  --write              write docs/BENCHMARKS.md, docs/benchmarks/*.svg and README.md's headline rows
  --json FILE          the same data, machine-readable
  --threads N          let the structures with a parallel mode use N threads (default 1): builds,
                       the agents frame, and the query workloads (spatix's ParallelQuery batches,
                       kiddo's batch queries, rayon over the queries for the other crates that
                       answer a query through &self; broccoli's queries stay serial)
  --serial-fraction    with --threads N (N > 1): run the agents frame and the query workloads again
                       on a rayon pool of one thread; report the speed-up (and the frame's serial
                       fraction)
  --runs N             measured runs per structure and N (at least 5, the default)
  --only TEXT          only the workloads whose name contains TEXT (the names are below)
  --structures TEXT    only the structures whose name contains TEXT
  --sizes N,N,...      only these element counts";

/// The element counts of a full run.
const FULL_SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// The element counts of `--quick`.
const QUICK_SIZES: [usize; 2] = [10_000, 100_000];

/// The fewest measured runs a median is taken over.
const MIN_RUNS: usize = 5;

/// The command line.
#[derive(Debug, PartialEq)]
struct Options {
    quick: bool,
    write: bool,
    json: Option<PathBuf>,
    threads: usize,
    serial_fraction: bool,
    runs: usize,
    only: Option<String>,
    structures: String,
    /// The element counts asked for (`None`: those of `--quick` or of the full run).
    sizes: Option<Vec<usize>>,
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        write: false,
        json: None,
        threads: 1,
        serial_fraction: false,
        runs: MIN_RUNS,
        only: None,
        structures: String::new(),
        sizes: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--write" => options.write = true,
            "--json" => options.json = Some(PathBuf::from(value("--json")?)),
            "--threads" => {
                options.threads = value("--threads")?
                    .parse()
                    .ok()
                    .filter(|&t| t >= 1)
                    .ok_or("--threads needs a whole number of at least 1")?;
            }
            "--serial-fraction" => options.serial_fraction = true,
            "--runs" => {
                options.runs = value("--runs")?
                    .parse()
                    .ok()
                    .filter(|&r| r >= MIN_RUNS)
                    .ok_or(format!(
                        "--runs needs a whole number of at least {MIN_RUNS}"
                    ))?;
            }
            "--only" => options.only = Some(value("--only")?),
            "--structures" => options.structures = value("--structures")?,
            "--sizes" => {
                let sizes: Option<Vec<usize>> = value("--sizes")?
                    .split(',')
                    .map(|n| n.trim().parse().ok().filter(|&n| n > 0))
                    .collect();
                options.sizes =
                    Some(sizes.ok_or("--sizes needs positive whole numbers, comma-separated")?);
            }
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.write && options.sizes.is_some() {
        return Err("--write needs every size: it rewrites the whole report".into());
    }
    if options.serial_fraction && options.threads < 2 {
        return Err("--serial-fraction needs --threads N with N of at least 2".into());
    }
    Ok(options)
}

/// The workspace root (two levels above this crate).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("compare: {message}");
            }
            eprintln!(
                "usage: compare [--quick] [--write] [--json FILE] [--threads N [--serial-fraction]] [--runs N] [--only TEXT] [--structures TEXT] [--sizes N,N,...]\n\n{HELP}\n\nworkloads: {}",
                workloads::all()
                    .iter()
                    .map(|w| w.slug.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return ExitCode::from(2);
        }
    };
    if options.threads > 1
        && let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build_global()
    {
        eprintln!("compare: cannot start {} threads: {e}", options.threads);
        return ExitCode::from(2);
    }
    let load_at_start = machine::load_average();
    let settings = Settings {
        sizes: match &options.sizes {
            Some(sizes) => sizes.clone(),
            None if options.quick => QUICK_SIZES.to_vec(),
            None => FULL_SIZES.to_vec(),
        },
        runs: options.runs,
        threads: options.threads,
        serial_fraction: options.serial_fraction,
        structures: options.structures.clone(),
    };
    let mut mismatches = Vec::new();
    let mut tables = Vec::new();
    for workload in workloads::all() {
        if options
            .only
            .as_ref()
            .is_some_and(|only| !workload.slug.contains(only.as_str()))
        {
            continue;
        }
        eprintln!("{}", workload.title);
        tables.push(workloads::run(&workload, &settings, &mut mismatches));
    }
    if !mismatches.is_empty() {
        eprintln!(
            "\n{} MISMATCH(ES): no structure may be faster by being wrong.",
            mismatches.len()
        );
        for m in &mismatches {
            eprintln!("  {m}");
        }
        return ExitCode::FAILURE;
    }
    let machine = Machine::describe(load_at_start);
    match finish(&options, &tables, &settings, &machine) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("compare: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints or writes the report, the plots and the JSON.
fn finish(
    options: &Options,
    tables: &[workloads::Table],
    settings: &Settings,
    machine: &Machine,
) -> Result<(), Box<dyn std::error::Error>> {
    const PLOTS: &str = "benchmarks";
    let markdown = report::markdown(tables, settings, machine, PLOTS);
    if options.write {
        let docs = workspace_root().join("docs");
        std::fs::create_dir_all(docs.join(PLOTS))?;
        let old = std::fs::read_to_string(docs.join("BENCHMARKS.md")).unwrap_or_default();
        std::fs::write(
            docs.join("BENCHMARKS.md"),
            report::keep_python_section(&markdown, &old),
        )?;
        for table in tables {
            plot::plot(table, &docs.join(PLOTS))?;
        }
        let readme_path = workspace_root().join("README.md");
        let readme = std::fs::read_to_string(&readme_path)?;
        let headline = format!(
            "One run on {} ({}; {} thread{}), largest N; the full tables, plots and how each crate is used: [docs/BENCHMARKS.md](docs/BENCHMARKS.md).\n\n{}",
            machine.date,
            machine.description,
            settings.threads,
            if settings.threads == 1 { "" } else { "s" },
            report::summary(tables, true)
        );
        let updated = report::replace_headline(&readme, &headline)
            .ok_or("README.md has no <!-- compare:begin --> / <!-- compare:end --> markers")?;
        std::fs::write(&readme_path, updated)?;
        eprintln!("wrote docs/BENCHMARKS.md, docs/{PLOTS}/*.svg and README.md's headline rows");
    } else {
        println!("{markdown}");
    }
    if let Some(path) = &options.json {
        std::fs::write(
            path,
            serde_json::to_string_pretty(&report::json(tables, settings, machine))?,
        )?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn parses_every_option() {
        let o = parse(args(
            "--quick --json out.json --threads 2 --serial-fraction --runs 7 --only frame --structures rstar --sizes 10,20",
        ))
        .unwrap();
        assert_eq!(
            o,
            Options {
                quick: true,
                write: false,
                json: Some(PathBuf::from("out.json")),
                threads: 2,
                serial_fraction: true,
                runs: 7,
                only: Some("frame".into()),
                structures: "rstar".into(),
                sizes: Some(vec![10, 20]),
            }
        );
        assert!(parse(args("--write")).unwrap().write);
        assert!(parse(args("--write --sizes 10")).is_err());
        let defaults = parse(args("")).unwrap();
        assert_eq!(
            (
                defaults.threads,
                defaults.runs,
                defaults.quick,
                defaults.serial_fraction
            ),
            (1, MIN_RUNS, false, false)
        );
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse(args("--runs 3")).is_err());
        assert!(parse(args("--threads 0")).is_err());
        assert!(parse(args("--json")).is_err());
        assert!(parse(args("--fast")).is_err());
        assert!(parse(args("--sizes 10,x")).is_err());
        assert!(parse(args("--sizes 0")).is_err());
        assert!(parse(args("--write --sizes 10")).is_err());
        assert!(parse(args("--serial-fraction")).is_err());
        assert!(parse(args("--threads 1 --serial-fraction")).is_err());
        assert!(parse(args("--serial-fraction --threads 4")).is_ok());
    }
}

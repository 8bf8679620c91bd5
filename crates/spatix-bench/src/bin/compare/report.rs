//! The results as Markdown (docs/BENCHMARKS.md, the README's headline rows) and JSON.

use core::fmt::Write as _;

use serde_json::{Value, json};

use crate::check::DISTANCE_TOLERANCE;
use crate::machine::Machine;
use crate::peers::{self, Moves};
use crate::phases::{self, FrameRuns};
use crate::units::{duration, n_label};
use crate::workloads::{BUILD_CHECK_QUERIES, Entry, Settings, Table};

/// The N of a table, ascending.
fn sizes(table: &Table) -> Vec<usize> {
    let mut sizes: Vec<usize> = table.entries.iter().map(|e| e.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The structures of a table, in measuring order.
fn structures(table: &Table) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for e in &table.entries {
        if !names.contains(&e.structure.as_str()) {
            names.push(&e.structure);
        }
    }
    names
}

fn entry<'t>(table: &'t Table, structure: &str, n: usize) -> Option<&'t Entry> {
    table
        .entries
        .iter()
        .find(|e| e.structure == structure && e.n == n)
}

/// The fastest median at `n` among the entries that pass `filter`.
fn fastest(table: &Table, n: usize, filter: impl Fn(&Entry) -> bool) -> Option<&Entry> {
    table
        .entries
        .iter()
        .filter(|e| e.n == n && filter(e))
        .min_by(|a, b| a.median().total_cmp(&b.median()))
}

/// A table's heading rows: structure, what a frame does (agents frame), one column per N.
fn header(out: &mut String, sizes: &[usize], frame: bool) {
    let mut head = String::from("| structure |");
    let mut rule = String::from("| --- |");
    if frame {
        head.push_str(" frame does |");
        rule.push_str(" --- |");
    }
    for &n in sizes {
        let _ = write!(head, " N = {} |", n_label(n));
        rule.push_str(" ---: |");
    }
    let _ = writeln!(out, "{head}\n{rule}");
}

/// One workload's section: plot, time table (ratio to the fastest at each N), the agents
/// frame's phases on `threads` threads, a query workload's speed-up over one thread where one
/// thread ran too, memory table where measured, and the answers every structure agreed on.
fn section(out: &mut String, table: &Table, threads: usize, plots: &str) {
    let sizes = sizes(table);
    let names = structures(table);
    let frame = table.entries.iter().any(|e| e.moves.is_some());
    let _ = writeln!(out, "## {}\n", table.workload.title);
    let _ = writeln!(
        out,
        "![time versus N]({plots}/{}.svg)\n",
        table.workload.slug
    );
    header(out, &sizes, frame);
    for name in &names {
        let mut row = format!("| {name} |");
        if frame {
            let moves = table
                .entries
                .iter()
                .find(|e| e.structure == *name)
                .and_then(|e| e.moves);
            row.push_str(match moves {
                Some(Moves::Update) => " updates |",
                Some(Moves::UpdateAll) => " update_all |",
                Some(Moves::Rebuild) => " rebuilds |",
                None => " |",
            });
        }
        for &n in &sizes {
            let best = fastest(table, n, |_| true).map_or(f64::NAN, Entry::median);
            match entry(table, name, n) {
                Some(e) if e.median() <= best => {
                    let _ = write!(row, " **{}** |", duration(e.median()));
                }
                Some(e) => {
                    let _ = write!(
                        row,
                        " {} ({:.2}×) |",
                        duration(e.median()),
                        e.median() / best
                    );
                }
                None => row.push_str(" — |"),
            }
        }
        let _ = writeln!(out, "{row}");
    }
    phase_tables(out, table, threads, &sizes, &names);
    query_scaling(out, table, threads, &sizes, &names);
    if table.entries.iter().any(|e| e.bytes_per_element.is_some()) {
        let _ = writeln!(out, "\nHeap held after building, bytes per element:\n");
        header(out, &sizes, false);
        for name in &names {
            let mut row = format!("| {name} |");
            for &n in &sizes {
                match entry(table, name, n).and_then(|e| e.bytes_per_element) {
                    Some(b) => {
                        let _ = write!(row, " {b:.1} |");
                    }
                    None => row.push_str(" — |"),
                }
            }
            let _ = writeln!(out, "{row}");
        }
    }
    let _ = writeln!(out, "\nEvery structure's answer agreed:");
    for &n in &sizes {
        if let Some(e) = table.entries.iter().find(|e| e.n == n) {
            let _ = writeln!(out, "N = {}: {}.", n_label(n), e.answer);
        }
    }
    out.push('\n');
}

/// The agents frame's phases: each one's median, and where one thread ran too, the speed-up
/// of the run's threads and the serial fraction, per phase and in total.
fn phase_tables(out: &mut String, table: &Table, threads: usize, sizes: &[usize], names: &[&str]) {
    let runs = |name: &str, n: usize| entry(table, name, n).and_then(|e| e.frame.as_ref());
    if !table.entries.iter().any(|e| e.frame.is_some()) {
        return;
    }
    let _ = writeln!(
        out,
        "\nMedian of each phase: stepping the agents and updating (or rebuilding) + `maintain` \
         (— where the structure has none) + pairs:\n"
    );
    header(out, sizes, false);
    for name in names {
        let mut row = format!("| {name} |");
        for &n in sizes {
            match runs(name, n) {
                Some(frame) => {
                    let [step, maintain, pairs, _] = phases::medians(&frame.phases);
                    let show = |s: Option<f64>| s.map_or("—".to_string(), duration);
                    let _ = write!(
                        row,
                        " {} + {} + {} |",
                        show(step),
                        show(maintain),
                        show(pairs)
                    );
                }
                None => row.push_str(" — |"),
            }
        }
        let _ = writeln!(out, "{row}");
    }
    if !table
        .entries
        .iter()
        .any(|e| e.frame.as_ref().is_some_and(|f| f.one_thread.is_some()))
    {
        return;
    }
    let _ = writeln!(
        out,
        "\nOn {threads} threads against one (the same code on a rayon pool of one thread): \
         speed-up S and Amdahl's serial fraction s = (N/S − 1)/(N − 1) with N = {threads}, per \
         phase and for the whole frame:\n"
    );
    let mut head = String::from("| structure | phase |");
    let mut rule = String::from("| --- | --- |");
    for &n in sizes {
        let _ = write!(head, " N = {} |", n_label(n));
        rule.push_str(" ---: |");
    }
    let _ = writeln!(out, "{head}\n{rule}");
    for name in names {
        for (i, phase) in phases::NAMES.iter().enumerate() {
            let cells: Vec<Option<phases::Scaling>> = sizes
                .iter()
                .map(|&n| runs(name, n).and_then(|f| phases::scaling(threads, f)?[i]))
                .collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut row = format!("| {name} | {phase} |");
            for cell in cells {
                match cell {
                    Some(s) => {
                        let _ = write!(row, " {:.2}× (s {:.2}) |", s.speedup, s.serial_fraction);
                    }
                    None => row.push_str(" — |"),
                }
            }
            let _ = writeln!(out, "{row}");
        }
    }
}

/// A query workload run on one thread too (`--serial-fraction`): per structure and N, the
/// median on one thread, on `threads` threads, and the speed-up.
fn query_scaling(out: &mut String, table: &Table, threads: usize, sizes: &[usize], names: &[&str]) {
    if !table.entries.iter().any(|e| e.one_thread.is_some()) {
        return;
    }
    let _ = writeln!(
        out,
        "\nOn {threads} threads against one (the same code on a rayon pool of one thread): the \
         median on one thread → on {threads} threads (speed-up S):\n"
    );
    header(out, sizes, false);
    for name in names {
        let mut row = format!("| {name} |");
        for &n in sizes {
            let cell = entry(table, name, n).and_then(|e| {
                Some(format!(
                    " {} → {} ({:.2}×) |",
                    duration(e.one_thread_median()?),
                    duration(e.median()),
                    e.query_scaling(threads)?.speedup
                ))
            });
            row.push_str(cell.as_deref().unwrap_or(" — |"));
        }
        let _ = writeln!(out, "{row}");
    }
}

/// The summary rows: for each table (or only the headline ones), spatix's best and the
/// fastest other crate at the table's largest N.
pub(crate) fn summary(tables: &[Table], headline_only: bool) -> String {
    let mut out = String::from(
        "| workload | N | best spatix structure | fastest other crate | spatix time ÷ other's |\n\
         | --- | ---: | --- | --- | ---: |\n",
    );
    for table in tables
        .iter()
        .filter(|t| t.workload.headline || !headline_only)
    {
        let Some(&n) = sizes(table).last() else {
            continue;
        };
        let ours = fastest(table, n, |e| peers::is_spatix(&e.structure));
        let theirs = fastest(table, n, |e| !peers::is_spatix(&e.structure));
        let show = |e: Option<&Entry>| {
            e.map_or("—".to_string(), |e| {
                format!("{} {}", e.structure, duration(e.median()))
            })
        };
        let ratio = match (ours, theirs) {
            (Some(a), Some(b)) => format!("{:.2}", a.median() / b.median()),
            _ => "—".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {ratio} |",
            table.workload.title,
            n_label(n),
            show(ours),
            show(theirs)
        );
    }
    out
}

/// The whole of docs/BENCHMARKS.md. `plots` is the plots' directory relative to it.
pub(crate) fn markdown(
    tables: &[Table],
    settings: &Settings,
    machine: &Machine,
    plots: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Benchmarks: spatix side by side with other crates\n\n\
         <!-- Written by `cargo run --release -p spatix-bench --bin compare -- --write`: do not edit. -->\n"
    );
    let _ = writeln!(
        out,
        "One run of the `compare` binary (`crates/spatix-bench/src/bin/compare/`) on {}: {}. \
         {} thread{}. {}\n",
        machine.date,
        machine.description,
        settings.threads,
        if settings.threads == 1 { "" } else { "s" },
        machine.load
    );
    let _ = writeln!(
        out,
        "Method: every structure runs every workload it can on the same seeded data \
         (`spatix_workload`: agents of half-size 1–3, or 1% of 20–100 for \"mixed sizes\", in a \
         square world of side `1000·sqrt(N/10k)`, moving by 0.5–2 per frame; \"sparse\" is \
         hshg's sparse setting, agents of half-size 7 moving by up to 0.5 per axis in a world of \
         side `32,768·sqrt(N/500k)`; f32 coordinates; element `i` has value `i`). Times are \
         medians of {} measured runs after one warm-up run (for the agents frame: {} \
         consecutive frames after one); a ratio is the time over the fastest structure's at that \
         N, the fastest in bold. The agents frame is timed phase by phase, its time their sum: \
         stepping the agents and following the moves (`update` of every element, stepping \
         inside `update_all`, or the rebuild), then `maintain` where the structure has one, then \
         the pair pass. Memory is the heap a structure holds after building \
         (what building allocated less what it freed, counted by a global allocator; for \
         structures that update it includes the handles kept for updating).\n",
        settings.runs, settings.runs
    );
    let _ = writeln!(
        out,
        "Checking: each answer is compared with the first structure's, and any difference fails \
         the run. Pairs and rectangle or radius hits: the count and an order-independent checksum \
         of the pairs or elements found, per frame for the agents frame. k-nearest: for each \
         query, the number of neighbours and the sum of their squared distances, computed by the \
         harness in f64 from the returned points, equal within a relative {DISTANCE_TOLERANCE:e} \
         (a crate's f32 distances may tie two points one bit apart and return either). Builds: \
         {BUILD_CHECK_QUERIES} rectangle (boxes) or radius (points) queries on the built \
         structure.\n"
    );
    let _ = writeln!(
        out,
        "Threads: at one thread (`--threads 1`, the default) every structure answers the query \
         workloads one query at a time on the calling thread, the serial baseline. With \
         `--threads N` (N > 1) every structure uses its parallel mode where it has one, on a \
         rayon pool of N threads: for builds and the agents frame as each crate's row below \
         says, and for the query workloads (rectangle, k-nearest and radius queries) every \
         spatix structure answers through `ParallelQuery` (`query_batch`, `nearest_batch`, \
         `within_batch`, into `BatchBuffers` kept between runs, each found handle's value read \
         with `get`), kiddo through its own batch queries (`query_batch`), and rstar, parry2d, \
         flat_spatial, static_aabb2d_index and geo-index, which have none but answer a query \
         through a shared reference, through the harness's rayon over the queries (consecutive \
         chunks of the queries, about eight per thread, each answered by one thread into a \
         list or tally of its own, merged in input order); broccoli's rectangle query needs its \
         tree by mutable reference, so its queries stay serial. With `--serial-fraction` the \
         agents frame and the query workloads run again, the same code, on a rayon pool of one \
         thread: the frame's tables then show the speed-up and Amdahl's serial fraction per \
         phase, and each query table the median on one thread, on N threads and the speed-up; \
         the one-thread answers are checked like the others.\n"
    );
    let _ = writeln!(out, "## Summary\n");
    out.push_str(&summary(tables, false));
    let _ = writeln!(out, "\n## The crates and how each is used\n");
    let _ = writeln!(out, "| crate | version | how |\n| --- | --- | --- |");
    for c in peers::CRATES {
        let _ = writeln!(out, "| {} | {} | {} |", c.name, c.version, c.how);
    }
    out.push('\n');
    for table in tables {
        section(&mut out, table, settings.threads, plots);
    }
    out
}

/// The same data, machine-readable.
pub(crate) fn json(tables: &[Table], settings: &Settings, machine: &Machine) -> Value {
    json!({
        "date": machine.date,
        "machine": machine.description,
        "load": machine.load,
        "threads": settings.threads,
        "serial_fraction": settings.serial_fraction,
        "runs": settings.runs,
        "sizes": settings.sizes,
        "crates": peers::CRATES.iter().map(|c| json!({"name": c.name, "version": c.version})).collect::<Vec<_>>(),
        "workloads": tables.iter().map(|t| json!({
            "slug": t.workload.slug,
            "title": t.workload.title,
            "results": t.entries.iter().map(|e| json!({
                "structure": e.structure,
                "n": e.n,
                "median_seconds": e.median(),
                "runs_seconds": e.runs,
                "bytes_per_element": e.bytes_per_element,
                "moves": e.moves.map(|m| match m { Moves::Update => "update", Moves::UpdateAll => "update_all", Moves::Rebuild => "rebuild" }),
                "phases_median_seconds": e.frame.as_ref().map(|f| by_phase(phases::medians(&f.phases))),
                "one_thread": match &e.frame {
                    Some(f) => one_thread_json(f, settings.threads),
                    None => one_thread_query_json(e, settings.threads),
                },
                "answer": e.answer,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// One value per phase and for the whole frame, keyed by [`phases::NAMES`] (null where the
/// structure has no such phase).
fn by_phase(values: [Option<f64>; 4]) -> Value {
    let map: serde_json::Map<String, Value> = phases::NAMES
        .iter()
        .zip(values)
        .map(|(name, v)| (name.to_string(), json!(v)))
        .collect();
    Value::Object(map)
}

/// The one-thread frames of an entry: their medians per phase, and the speed-up of the run's
/// threads and the serial fraction per phase; `None` where one thread did not run.
fn one_thread_json(frame: &FrameRuns, threads: usize) -> Option<Value> {
    let one = frame.one_thread.as_ref()?;
    let scaling = phases::scaling(threads, frame)?;
    Some(json!({
        "phases_median_seconds": by_phase(phases::medians(one)),
        "speedup": by_phase(scaling.map(|s| s.map(|s| s.speedup))),
        "serial_fraction": by_phase(scaling.map(|s| s.map(|s| s.serial_fraction))),
    }))
}

/// The one-thread runs of a query workload's entry: their seconds and median, and the
/// speed-up of the run's threads and the serial fraction; `None` where one thread did not run.
fn one_thread_query_json(e: &Entry, threads: usize) -> Option<Value> {
    let scaling = e.query_scaling(threads)?;
    Some(json!({
        "median_seconds": e.one_thread_median(),
        "runs_seconds": e.one_thread,
        "speedup": scaling.speedup,
        "serial_fraction": scaling.serial_fraction,
    }))
}

/// `readme` with the text between the headline markers replaced by `headline`; `None` if the
/// markers are missing.
pub(crate) fn replace_headline(readme: &str, headline: &str) -> Option<String> {
    const BEGIN: &str = "<!-- compare:begin -->\n";
    const END: &str = "<!-- compare:end -->";
    let start = readme.find(BEGIN)? + BEGIN.len();
    let end = start + readme[start..].find(END)?;
    Some(format!("{}{headline}{}", &readme[..start], &readme[end..]))
}

/// The heading from which docs/BENCHMARKS.md is not this binary's (the Python and Dask
/// sections, whose blocks their scripts write, and the History): a rewrite keeps it all.
pub(crate) const PYTHON_SECTION: &str = "## From Python";

/// `markdown` (a new docs/BENCHMARKS.md) followed by the Python section of `old` (the file it
/// replaces), if `old` has one.
pub(crate) fn keep_python_section(markdown: &str, old: &str) -> String {
    match old.find(&format!("\n{PYTHON_SECTION}\n")) {
        Some(at) => format!("{}\n{}", markdown.trim_end(), &old[at..]),
        None => markdown.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_replaced_between_markers_only() {
        let readme = "a\n<!-- compare:begin -->\nold\n<!-- compare:end -->\nb\n";
        assert_eq!(
            replace_headline(readme, "new\n").unwrap(),
            "a\n<!-- compare:begin -->\nnew\n<!-- compare:end -->\nb\n"
        );
        assert!(replace_headline("no markers", "x").is_none());
    }

    #[test]
    fn the_python_section_survives_a_rewrite() {
        let old = "# old\nrows\n\n## From Python\n\npython rows\n";
        assert_eq!(
            keep_python_section("# new\nrows\n", old),
            "# new\nrows\n\n## From Python\n\npython rows\n"
        );
        assert_eq!(keep_python_section("# new\n", "# old\n"), "# new\n");
    }
}

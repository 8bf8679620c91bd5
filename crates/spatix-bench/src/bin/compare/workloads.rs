//! The workloads, and running one: every structure that does it, at every N, each result
//! checked against the first structure's.

use spatix::{Aabb, Point};
use spatix_bench::Mix;
use spatix_bench::{
    AGENTS_SEED, QUERIES_SEED, QUERY_COUNT, QUERY_SIDE, query_points, query_squares,
};
use spatix_workload::{Agents, Layout, Sizes};

use crate::check::{Answer, Mismatch, Tally};
use crate::measure::{heap_growth, median, time};
use crate::peers::{self, BoxIndex, Moves, PointIndex};
use crate::phases::{self, FrameRuns, Phases, Scaling};
use crate::units::{duration, n_label};

/// Untimed runs before the measured ones (the first frame after a build, cold caches).
const WARMUP: usize = 1;

/// Seed of the query points of the k-nearest and radius workloads.
const POINT_QUERIES_SEED: u64 = 0x00A1_1CE5;

/// How far a query point lies from the data point it is drawn near, on each axis.
const POINT_QUERY_JITTER: f32 = 5.0;

/// Radius of the radius queries.
const RADIUS: f32 = 10.0;

/// Squares queried after each build, to check that the structure holds what it was given.
pub(crate) const BUILD_CHECK_QUERIES: usize = 1000;

/// What a workload does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// Move every agent, update (or rebuild) the index, find every pair.
    Frame(Mix),
    /// Build from N boxes.
    BuildBoxes,
    /// Build from N points.
    BuildPoints,
    /// [`QUERY_COUNT`] squares of side [`QUERY_SIDE`] on the agents at rest.
    Query,
    /// [`QUERY_COUNT`] k-nearest queries on N points.
    Nearest(Layout, usize),
    /// [`QUERY_COUNT`] radius queries on N points.
    Within(Layout),
}

/// One workload: one table, one plot.
#[derive(Clone, Debug)]
pub(crate) struct Workload {
    pub(crate) kind: Kind,
    /// File-name-safe name (plot file, JSON, `--only`).
    pub(crate) slug: String,
    /// Table heading.
    pub(crate) title: String,
    /// Whether the README's headline table shows it.
    pub(crate) headline: bool,
}

fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::Uniform => "uniform",
        Layout::Clustered => "clustered",
        Layout::Coincident => "coincident",
        Layout::OutOfWorld => "out-of-world",
    }
}

/// Every workload, in report order.
pub(crate) fn all() -> Vec<Workload> {
    let mut all = Vec::new();
    let mut add = |kind, slug: String, title: String, headline| {
        all.push(Workload {
            kind,
            slug,
            title,
            headline,
        })
    };
    for mix in Mix::ALL {
        let name = match mix {
            Mix::Mixed => "mixed sizes",
            Mix::Sparse => "sparse: half-size 7, side 32,768 at 500k",
            other => other.name(),
        };
        add(
            Kind::Frame(mix),
            format!("frame-{}", mix.name()),
            format!("Agents frame ({name}): step the agents, update or rebuild, all pairs"),
            true,
        );
    }
    add(
        Kind::BuildBoxes,
        "build-boxes".into(),
        "Build from N boxes".into(),
        true,
    );
    add(
        Kind::BuildPoints,
        "build-points".into(),
        "Build from N points".into(),
        true,
    );
    add(
        Kind::Query,
        "query".into(),
        format!(
            "{} rectangle queries ({QUERY_SIDE} × {QUERY_SIDE}), agents at rest",
            n_label(QUERY_COUNT)
        ),
        true,
    );
    for layout in [Layout::Uniform, Layout::Clustered] {
        for k in [1, 8, 64] {
            let name = layout_name(layout);
            add(
                Kind::Nearest(layout, k),
                format!("nearest-{name}-k{k}"),
                format!(
                    "{} nearest-neighbour queries, k = {k}, {name} points",
                    n_label(QUERY_COUNT)
                ),
                k == 8,
            );
        }
    }
    for layout in [Layout::Uniform, Layout::Clustered] {
        let name = layout_name(layout);
        add(
            Kind::Within(layout),
            format!("radius-{name}"),
            format!(
                "{} radius queries (r = {RADIUS}), {name} points",
                n_label(QUERY_COUNT)
            ),
            layout == Layout::Uniform,
        );
    }
    all
}

/// How a run is set up.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) sizes: Vec<usize>,
    /// Measured runs per structure and N (frames, for the agents frame).
    pub(crate) runs: usize,
    pub(crate) threads: usize,
    /// Whether the agents frame and the query workloads also run on a pool of one thread, for
    /// the speed-up of `threads` threads (and the frame's serial fraction).
    pub(crate) serial_fraction: bool,
    /// Only the structures whose name contains this (all for "").
    pub(crate) structures: String,
}

/// One structure at one N.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) structure: String,
    pub(crate) n: usize,
    /// Seconds of each measured run.
    pub(crate) runs: Vec<f64>,
    /// Heap bytes per element the built structure holds (build workloads).
    pub(crate) bytes_per_element: Option<f64>,
    /// How it follows moving boxes (agents frame).
    pub(crate) moves: Option<Moves>,
    /// Its runs phase by phase (agents frame); `runs` holds their totals.
    pub(crate) frame: Option<FrameRuns>,
    /// Seconds of each measured run on a pool of one thread (query workloads with
    /// `--serial-fraction`; the agents frame keeps its own in `frame`).
    pub(crate) one_thread: Option<Vec<f64>>,
    /// What it answered (the same for every structure at this N, or the run fails).
    pub(crate) answer: String,
}

impl Entry {
    pub(crate) fn median(&self) -> f64 {
        median(&self.runs)
    }

    /// The median of the runs on one thread (query workloads with `--serial-fraction`).
    pub(crate) fn one_thread_median(&self) -> Option<f64> {
        self.one_thread.as_deref().map(median)
    }

    /// The speed-up of the run's threads over one on a query workload, where one thread ran.
    pub(crate) fn query_scaling(&self, threads: usize) -> Option<Scaling> {
        Some(Scaling::new(
            threads,
            self.one_thread_median()?,
            self.median(),
        ))
    }
}

/// A workload's results.
#[derive(Clone, Debug)]
pub(crate) struct Table {
    pub(crate) workload: Workload,
    pub(crate) entries: Vec<Entry>,
}

/// One structure's runs before checking.
struct Outcome {
    runs: Vec<f64>,
    answer: Answer,
    bytes: Option<isize>,
    frame: Option<FrameRuns>,
    /// A query workload's measured runs and answer on a pool of one thread.
    one_thread: Option<(Vec<f64>, Answer)>,
}

/// Runs `workload` on every structure that does it at every N of `settings`; answers that
/// differ from the first structure's are appended to `mismatches`.
pub(crate) fn run(
    workload: &Workload,
    settings: &Settings,
    mismatches: &mut Vec<Mismatch>,
) -> Table {
    let mut entries = Vec::new();
    for &n in &settings.sizes {
        let mut reference: Option<(String, Answer)> = None;
        let names: Vec<String> = match workload.kind {
            Kind::Frame(..) | Kind::BuildBoxes | Kind::Query => {
                peers::box_indexes(1).iter().map(|i| i.name()).collect()
            }
            Kind::BuildPoints | Kind::Nearest(..) | Kind::Within(_) => {
                peers::point_indexes(1).iter().map(|i| i.name()).collect()
            }
        };
        for (j, name) in names.iter().enumerate() {
            if !name.contains(settings.structures.as_str()) {
                continue;
            }
            let Some((structure, moves, outcome)) = run_one(workload.kind, j, n, settings) else {
                continue;
            };
            eprintln!(
                "  {:<46} N={n:<8} median {:>10.3} ms   {}",
                structure,
                median(&outcome.runs) * 1e3,
                outcome.answer.summary()
            );
            if let Some(frame) = &outcome.frame {
                eprintln!("{}", phase_line(frame, settings.threads));
            }
            if let Some((runs, _)) = &outcome.one_thread {
                let (one, many) = (median(runs), median(&outcome.runs));
                eprintln!(
                    "  {:<46} one thread {:>10.3} ms   {:.2}x on {}",
                    "",
                    one * 1e3,
                    one / many,
                    settings.threads
                );
            }
            let (name, answer) =
                reference.get_or_insert_with(|| (structure.clone(), outcome.answer.clone()));
            let one_thread = outcome
                .one_thread
                .iter()
                .map(|(_, alone)| (format!("{structure} on one thread"), alone));
            for (label, found) in [(structure.clone(), &outcome.answer)]
                .into_iter()
                .chain(one_thread)
            {
                if let Err(detail) = found.compare(answer) {
                    let mismatch = Mismatch {
                        workload: workload.title.clone(),
                        n,
                        structure: label,
                        reference: name.clone(),
                        detail,
                    };
                    eprintln!("\n!!!!!!!! {mismatch}\n");
                    mismatches.push(mismatch);
                }
            }
            entries.push(Entry {
                structure,
                n,
                runs: outcome.runs,
                bytes_per_element: outcome.bytes.map(|b| b as f64 / n.max(1) as f64),
                moves,
                answer: outcome.answer.summary(),
                frame: outcome.frame,
                one_thread: outcome.one_thread.map(|(runs, _)| runs),
            });
        }
    }
    Table {
        workload: workload.clone(),
        entries,
    }
}

/// Structure `j` of its kind on `kind` at `n`: its name, how it moves boxes, what it did;
/// `None` if it does not do this workload or is not measured at this N.
fn run_one(
    kind: Kind,
    j: usize,
    n: usize,
    settings: &Settings,
) -> Option<(String, Option<Moves>, Outcome)> {
    let threads = settings.threads;
    let frame_mix = match kind {
        Kind::Frame(mix) => Some(mix),
        _ => None,
    };
    let box_index = || peers::box_indexes(threads).swap_remove(j);
    let point_index = || peers::point_indexes(threads).swap_remove(j);
    // A box or point structure's run, `None` if it is not measured at this N or does not do
    // the workload.
    let on_boxes = |run: &dyn Fn(&mut dyn BoxIndex) -> Option<Outcome>, frames: bool| {
        let mut index = box_index();
        let outcome = if index.runs_at(n) && index.does(frame_mix) {
            run(&mut *index)
        } else {
            None
        }?;
        Some((index.name(), frames.then(|| index.moves()), outcome))
    };
    let on_points = |run: &dyn Fn(&mut dyn PointIndex) -> Option<Outcome>| {
        let mut index = point_index();
        let outcome = if index.runs_at(n) {
            run(&mut *index)
        } else {
            None
        }?;
        Some((PointIndex::name(&*index), None, outcome))
    };
    match kind {
        Kind::Frame(mix) => on_boxes(&|index| Some(frame(index, n, mix, settings)), true),
        Kind::BuildBoxes => on_boxes(&|_| Some(build_boxes(box_index, n, settings)), false),
        Kind::Query => on_boxes(&|index| Some(query(index, n, settings)), false),
        Kind::BuildPoints => on_points(&|_| Some(build_points(point_index, n, settings))),
        Kind::Nearest(layout, k) => on_points(&|index| nearest(index, n, layout, k, settings)),
        Kind::Within(layout) => on_points(&|index| within(index, n, layout, settings)),
    }
}

/// The standard agents at rest and their boxes.
fn agents_at_rest(n: usize) -> (Agents<f32>, Vec<Aabb<f32>>) {
    let agents = spatix_bench::agents(n);
    let boxes = agents.boxes().collect();
    (agents, boxes)
}

/// `n` points (the centres of agents of `layout`) and the query points drawn near them.
fn points(n: usize, layout: Layout) -> (Aabb<f32>, Vec<Point<f32>>, Vec<Point<f32>>) {
    let agents = Agents::<f32>::new(n, layout, Sizes::Uniform, AGENTS_SEED);
    let queries = query_points(
        &agents.positions,
        QUERY_COUNT,
        POINT_QUERY_JITTER,
        POINT_QUERIES_SEED,
    );
    (agents.world, agents.positions, queries)
}

/// A rayon pool of one thread, on which `--serial-fraction` runs the same code again.
fn one_thread_pool() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread starts")
}

/// The agents frame on the run's threads and, with `--serial-fraction`, again from the same
/// start on a pool of one thread (the same code: a structure's parallel mode is chosen when
/// it is made). A one-thread run that answers differently makes an answer that cannot match.
fn frame(index: &mut dyn BoxIndex, n: usize, mix: Mix, settings: &Settings) -> Outcome {
    let (phases, answers) = frames(index, n, mix, settings);
    let one_thread = settings
        .serial_fraction
        .then(|| one_thread_pool().install(|| frames(index, n, mix, settings)));
    let answer = match &one_thread {
        Some((_, alone)) if *alone != answers => {
            Answer::Frames(answers.iter().chain(alone).copied().collect())
        }
        _ => Answer::Frames(answers),
    };
    Outcome {
        runs: phases.iter().map(Phases::total).collect(),
        answer,
        bytes: None,
        frame: Some(FrameRuns {
            phases,
            one_thread: one_thread.map(|(phases, _)| phases),
        }),
        one_thread: None,
    }
}

/// A query workload's outcome: `measure` (its measured runs and their answer, `None` for a
/// structure that does not do it) on the run's threads and, with `--serial-fraction`, again
/// on a pool of one thread. The same code runs on both (a structure's parallel query mode is
/// chosen when it is made), and both answers are checked against the reference.
fn queries(
    settings: &Settings,
    mut measure: impl FnMut() -> Option<(Vec<f64>, Answer)> + Send,
) -> Option<Outcome> {
    let (runs, answer) = measure()?;
    let one_thread = if settings.serial_fraction {
        Some(one_thread_pool().install(&mut measure)?)
    } else {
        None
    };
    Some(Outcome {
        runs,
        answer,
        bytes: None,
        frame: None,
        one_thread,
    })
}

/// Builds `index` on the mix's agents, then the warm-up and the measured frames, each timed
/// phase by phase: step and follow the moves, `maintain` where the structure has it, pairs.
fn frames(
    index: &mut dyn BoxIndex,
    n: usize,
    mix: Mix,
    settings: &Settings,
) -> (Vec<Phases>, Vec<Tally>) {
    let mut agents = mix.agents(n);
    let world = agents.world;
    let mut boxes: Vec<Aabb<f32>> = agents.boxes().collect();
    index.build_frame(&world, &agents, &boxes);
    repeat(settings, || {
        let mut tally = Tally::default();
        let (step, ()) = time(|| index.frame(&world, &mut agents, &mut boxes));
        let (maintain, has_maintain) = time(|| index.maintain());
        let (pairs, ()) = time(|| index.pairs(&mut tally));
        let phases = Phases {
            step,
            maintain: has_maintain.then_some(maintain),
            pairs,
        };
        Some((phases, tally))
    })
    .expect("every run answers")
}

/// The progress line under a frame's: each phase's median, and the speed-up and serial
/// fraction of the run's threads where one thread ran too.
fn phase_line(frame: &FrameRuns, threads: usize) -> String {
    let medians = phases::medians(&frame.phases);
    let scaling = phases::scaling(threads, frame);
    let mut parts = Vec::new();
    for (i, name) in phases::NAMES.iter().enumerate() {
        let Some(seconds) = medians[i] else {
            continue;
        };
        let mut part = format!("{name} {}", duration(seconds));
        if let Some(s) = scaling.and_then(|s| s[i]) {
            part.push_str(&format!(" ({:.2}x, s {:.2})", s.speedup, s.serial_fraction));
        }
        parts.push(part);
    }
    format!("  {:<46} {}", "", parts.join(", "))
}

/// Calls `once` for the warm-up and the measured runs; returns the measured runs' times
/// (seconds, or a frame's phases) and every run's answer, or `None` as soon as a run returns `None` (a structure that does
/// not do the workload).
fn repeat<T, R>(
    settings: &Settings,
    mut once: impl FnMut() -> Option<(T, R)>,
) -> Option<(Vec<T>, Vec<R>)> {
    let mut runs = Vec::with_capacity(settings.runs);
    let mut answers = Vec::with_capacity(WARMUP + settings.runs);
    for r in 0..WARMUP + settings.runs {
        let (seconds, answer) = once()?;
        if r >= WARMUP {
            runs.push(seconds);
        }
        answers.push(answer);
    }
    Some((runs, answers))
}

/// Builds a fresh structure per run (dropped outside the timing); the heap it holds is
/// measured on the warm-up build. Checked by querying the last one.
fn build_boxes(make: impl Fn() -> Box<dyn BoxIndex>, n: usize, settings: &Settings) -> Outcome {
    let (agents, boxes) = agents_at_rest(n);
    let squares = query_squares(&agents.world, BUILD_CHECK_QUERIES, QUERY_SIDE, QUERIES_SEED);
    let mut runs = Vec::with_capacity(settings.runs);
    let mut bytes = None;
    let mut tally = Tally::default();
    for r in 0..WARMUP + settings.runs {
        let mut index = make();
        if r == 0 {
            let (grown, ()) = heap_growth(|| index.build(&agents.world, &boxes));
            bytes = Some(grown);
        } else {
            let (seconds, ()) = time(|| index.build(&agents.world, &boxes));
            runs.push(seconds);
        }
        if r == WARMUP + settings.runs - 1 {
            index.query(&squares, &mut tally);
        }
    }
    Outcome {
        runs,
        answer: Answer::Found(tally),
        bytes,
        frame: None,
        one_thread: None,
    }
}

/// As [`build_boxes`], for points; checked with radius queries where the structure has them,
/// else k-nearest.
fn build_points(make: impl Fn() -> Box<dyn PointIndex>, n: usize, settings: &Settings) -> Outcome {
    let (world, points, queries) = points(n, Layout::Uniform);
    let checks = &queries[..BUILD_CHECK_QUERIES.min(queries.len())];
    let mut runs = Vec::with_capacity(settings.runs);
    let mut bytes = None;
    let mut tally = Tally::default();
    for r in 0..WARMUP + settings.runs {
        let mut index = make();
        if r == 0 {
            let (grown, ()) = heap_growth(|| index.build(&world, &points));
            bytes = Some(grown);
        } else {
            let (seconds, ()) = time(|| index.build(&world, &points));
            runs.push(seconds);
        }
        if r == WARMUP + settings.runs - 1 && !index.within(checks, RADIUS, &mut tally) {
            let mut found = Vec::new();
            index.nearest(checks, 1, &mut found);
            for v in found {
                tally.hit(v);
            }
        }
    }
    Outcome {
        runs,
        answer: Answer::Found(tally),
        bytes,
        frame: None,
        one_thread: None,
    }
}

fn query(index: &mut dyn BoxIndex, n: usize, settings: &Settings) -> Outcome {
    let (agents, boxes) = agents_at_rest(n);
    let squares = query_squares(&agents.world, QUERY_COUNT, QUERY_SIDE, QUERIES_SEED);
    index.build(&agents.world, &boxes);
    queries(settings, || {
        let (runs, answers) = repeat(settings, || {
            let mut tally = Tally::default();
            let (seconds, ()) = time(|| index.query(&squares, &mut tally));
            Some((seconds, tally))
        })?;
        Some((runs, same_every_run(answers)))
    })
    .expect("every run answers")
}

/// The one answer of every run, or (a structure that answers differently from one run to the
/// next) all of them, which then cannot match the reference.
fn same_every_run(answers: Vec<Tally>) -> Answer {
    if answers.windows(2).all(|w| w[0] == w[1]) {
        Answer::Found(answers[0])
    } else {
        Answer::Frames(answers)
    }
}

fn nearest(
    index: &mut dyn PointIndex,
    n: usize,
    layout: Layout,
    k: usize,
    settings: &Settings,
) -> Option<Outcome> {
    let (world, points, near) = points(n, layout);
    index.build(&world, &points);
    let mut found = Vec::with_capacity(near.len() * k);
    queries(settings, || {
        let (runs, _) = repeat(settings, || {
            found.clear();
            let (seconds, supported) = time(|| index.nearest(&near, k, &mut found));
            supported.then_some((seconds, ()))
        })?;
        Some((runs, nearest_answer(&points, &near, k, &found)))
    })
}

/// Per query: how many neighbours and the sum of their squared distances, in f64 from the
/// points' coordinates. A structure that returned the wrong total number of neighbours gets
/// an answer of that length, which cannot match.
fn nearest_answer(
    points: &[Point<f32>],
    queries: &[Point<f32>],
    k: usize,
    found: &[u32],
) -> Answer {
    let per_query = k.min(points.len());
    if found.len() != per_query * queries.len() || per_query == 0 {
        return Answer::Nearest(vec![(found.len() as u32, 0.0)]);
    }
    let distance_2 = |q: &Point<f32>, i: u32| {
        let p = points[i as usize];
        let dx = f64::from(p.x) - f64::from(q.x);
        let dy = f64::from(p.y) - f64::from(q.y);
        dx * dx + dy * dy
    };
    Answer::Nearest(
        queries
            .iter()
            .zip(found.chunks_exact(per_query))
            .map(|(q, near)| {
                (
                    near.len() as u32,
                    near.iter().map(|&i| distance_2(q, i)).sum(),
                )
            })
            .collect(),
    )
}

fn within(
    index: &mut dyn PointIndex,
    n: usize,
    layout: Layout,
    settings: &Settings,
) -> Option<Outcome> {
    let (world, points, near) = points(n, layout);
    index.build(&world, &points);
    queries(settings, || {
        let (runs, answers) = repeat(settings, || {
            let mut tally = Tally::default();
            let (seconds, supported) = time(|| index.within(&near, RADIUS, &mut tally));
            supported.then_some((seconds, tally))
        })?;
        Some((runs, same_every_run(answers)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_slugs_are_unique_and_file_safe() {
        let all = all();
        for (i, w) in all.iter().enumerate() {
            assert!(
                w.slug
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{}",
                w.slug
            );
            assert!(all[i + 1..].iter().all(|o| o.slug != w.slug), "{}", w.slug);
        }
    }

    #[test]
    fn nearest_answer_sums_per_query_and_rejects_a_wrong_total() {
        let points = [
            Point::new(0.0f32, 0.0),
            Point::new(3.0, 4.0),
            Point::new(6.0, 8.0),
        ];
        let queries = [Point::new(0.0f32, 0.0), Point::new(6.0, 8.0)];
        let answer = nearest_answer(&points, &queries, 2, &[0, 1, 2, 1]);
        assert_eq!(answer, Answer::Nearest(vec![(2, 25.0), (2, 25.0)]));
        let short = nearest_answer(&points, &queries, 2, &[0, 1, 2]);
        assert!(short.compare(&answer).is_err());
    }

    /// Every peer on every workload, in its parallel and serial modes: each runs every
    /// workload's full query set, minutes on two cores, so they are the deep tier's
    /// (`scripts/test-deep.sh`); every run of `compare` checks each answer against the
    /// reference anyway.
    mod deep {
        use super::*;

        #[test]
        fn parallel_modes_agree_and_one_thread_runs_beside_them() {
            let settings = Settings {
                sizes: vec![3000],
                runs: 1,
                threads: 2,
                serial_fraction: true,
                structures: String::new(),
            };
            let mut mismatches = Vec::new();
            for workload in all() {
                if matches!(workload.kind, Kind::BuildBoxes | Kind::BuildPoints) {
                    continue;
                }
                let table = run(&workload, &settings, &mut mismatches);
                for e in &table.entries {
                    if let Kind::Frame(_) = workload.kind {
                        let frame = e.frame.as_ref().expect("a frame entry has phases");
                        assert!(frame.one_thread.is_some(), "{}", e.structure);
                        assert_eq!(frame.phases.len(), e.runs.len(), "{}", e.structure);
                    } else {
                        let one = e
                            .one_thread
                            .as_ref()
                            .expect("a query entry ran on one thread");
                        assert_eq!(one.len(), e.runs.len(), "{}", e.structure);
                        assert!(e.query_scaling(2).is_some(), "{}", e.structure);
                    }
                }
            }
            assert!(
                mismatches.is_empty(),
                "{}",
                mismatches
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }

        #[test]
        fn parallel_queries_answer_exactly_as_the_serial_path() {
            let serial = Settings {
                sizes: vec![2000],
                runs: 1,
                threads: 1,
                serial_fraction: false,
                structures: String::new(),
            };
            let parallel = Settings {
                threads: 2,
                serial_fraction: true,
                ..serial.clone()
            };
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .expect("a pool of two threads starts");
            for workload in all() {
                let count = match workload.kind {
                    Kind::Query => peers::box_indexes(1).len(),
                    Kind::Nearest(..) | Kind::Within(_) => peers::point_indexes(1).len(),
                    _ => continue,
                };
                for j in 0..count {
                    let Some((name, _, alone)) = run_one(workload.kind, j, 2000, &serial) else {
                        continue;
                    };
                    let (_, _, together) = pool
                        .install(|| run_one(workload.kind, j, 2000, &parallel))
                        .expect("a structure that answers on one thread answers on two");
                    let (_, on_one) = together.one_thread.expect("one thread ran too");
                    for (mode, answer) in [("2 threads", &together.answer), ("1 of 2", &on_one)] {
                        assert!(
                            *answer == alone.answer,
                            "{} {name} on {mode}: {:?}",
                            workload.slug,
                            answer.compare(&alone.answer)
                        );
                    }
                }
            }
        }

        #[test]
        fn every_structure_agrees_on_every_workload_at_small_n() {
            let settings = Settings {
                sizes: vec![600],
                runs: 1,
                threads: 1,
                serial_fraction: false,
                structures: String::new(),
            };
            let mut mismatches = Vec::new();
            for workload in all() {
                let table = run(&workload, &settings, &mut mismatches);
                assert!(
                    table.entries.len() >= 3,
                    "{}: too few structures",
                    workload.slug
                );
            }
            assert!(
                mismatches.is_empty(),
                "{}",
                mismatches
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

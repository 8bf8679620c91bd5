//! `spatix pairs`, `query` and `knn`: spatial joins over CSV files, results as CSV; and
//! `spatix build`, which saves the index they would build, for them to load instead.
//!
//! Each command reads its files twice: once to check every line (all input errors are
//! reported before any output is written) and to size the index, once to stream the elements
//! into the index and the queries through it. Results stream to the output as they are found.
//! A summary goes to standard error. An index saved by `build` ([`saved`]) takes the place of
//! the data file: it is loaded instead of built, and answers the same.

use core::ops::ControlFlow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use spatix::prelude::*;
use spatix::{
    Aabb, BatchBuffers, KdTree, Neighbor, PackedIndex, ParallelQuery, Point, Scalar, Workspace,
};

use crate::failure::Failure;
use crate::index_kind::{BatchIndex, BoxIndex, Plan, StaticKind, Structure, UseIndex};
use crate::input::{self, Elements, Shape, Survey};
use crate::output::{self, Sink};
use crate::saved::{self, Saved};
use crate::stats::{count, number};

/// Where every batch command writes, and the precision of its index.
#[derive(Debug, Args)]
pub(crate) struct Common {
    /// Write the results to FILE instead of standard output (`-`). A regular file appears only
    /// once complete; a FIFO, a device or a symbolic link's target is written in place; an
    /// input file is refused.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    precision: Precision,
}

/// The coordinates' type in the index.
#[derive(Debug, Args)]
pub(crate) struct Precision {
    /// Hold coordinates as f32 rather than f64 (half the memory per coordinate): each is
    /// rounded to the nearest f32 (beyond f32's range, to its largest finite value), so
    /// answers within that rounding of an edge may differ from f64's. A saved index keeps
    /// the precision it was built with.
    #[arg(long)]
    f32: bool,
}

/// `spatix build`.
#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    /// Boxes, CSV with the header id,min_x,min_y,max_x,max_y (with --points: points, id,x,y).
    data: PathBuf,
    /// Write the index to FILE (it appears only once complete): `pairs`, `query` and `knn`
    /// take it in place of the CSV file, and answer as from it.
    #[arg(long, short, value_name = "FILE")]
    out: PathBuf,
    /// The structure to build, as `pairs`, `query` and `knn` would build it [default: packed,
    /// with --points kd-tree].
    #[arg(long, value_enum, value_name = "INDEX")]
    index: Option<BatchIndex>,
    /// The file holds points (id,x,y), as `knn` reads them; implied by --index kd-tree.
    #[arg(long)]
    points: bool,
    #[command(flatten)]
    precision: Precision,
}

impl BuildArgs {
    /// What the data file holds.
    fn shape(&self) -> Shape {
        if self.points || self.index == Some(BatchIndex::Static(StaticKind::KdTree)) {
            Shape::Points
        } else {
            Shape::Boxes
        }
    }
}

/// `spatix pairs`.
#[derive(Debug, Args)]
pub(crate) struct PairsArgs {
    /// Boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    boxes: PathBuf,
    /// The structure to use [default: packed]: built once from all the boxes, it finds the
    /// pairs of static data fastest. The dynamic structures are here to compare.
    #[arg(long, value_enum, value_name = "INDEX")]
    index: Option<BoxIndex>,
    /// Has no effect here: the pairs are found on one thread, in the structure's order (the
    /// option is taken for symmetry with the other batch commands) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    #[command(flatten)]
    common: Common,
}

/// Refuses the kd-tree for boxes (it holds points only).
fn validate_boxes(index: Option<BoxIndex>, command: &str) -> Result<(), String> {
    if index == Some(BoxIndex(BatchIndex::Static(StaticKind::KdTree))) {
        return Err(format!(
            "--index kd-tree holds points only: {command} takes boxes (try --index packed)"
        ));
    }
    Ok(())
}

impl PairsArgs {
    /// Arguments clap cannot check: the structure must hold boxes.
    pub(crate) fn validate(&self) -> Result<(), String> {
        validate_boxes(self.index, "pairs")
    }
}

/// `spatix query`.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// Boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    boxes: PathBuf,
    /// Query boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    queries: PathBuf,
    /// The structure to use [default: packed]: built once from all the boxes, it answers
    /// rectangle queries over static data fastest. The dynamic structures are here to compare.
    #[arg(long, value_enum, value_name = "INDEX")]
    index: Option<BoxIndex>,
    /// Answer the query boxes on N threads, a block of them at a time (the results are the
    /// same, in the same order) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    #[command(flatten)]
    common: Common,
}

impl QueryArgs {
    /// Arguments clap cannot check: the structure must hold boxes.
    pub(crate) fn validate(&self) -> Result<(), String> {
        validate_boxes(self.index, "query")
    }
}

/// `spatix knn`.
#[derive(Debug, Args)]
pub(crate) struct KnnArgs {
    /// Points, CSV with the header id,x,y; or boxes, with the header id,min_x,min_y,max_x,max_y
    /// (the distance to a box is to its nearest point, 0 inside), as a saved index of boxes
    /// answers.
    points: PathBuf,
    /// Query points, CSV with the header id,x,y.
    queries: PathBuf,
    /// Neighbours per query.
    #[arg(short, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    k: u32,
    /// The structure to use [default: kd-tree for points, packed for boxes]: built once from
    /// all the elements, it finds nearest neighbours in static data fastest. The dynamic
    /// structures are here to compare.
    #[arg(long, value_enum, value_name = "INDEX")]
    index: Option<BatchIndex>,
    /// Find the nearest points on N threads, for a block of queries at a time (the results
    /// are the same, in the same order) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    #[command(flatten)]
    common: Common,
}

/// The options `run` takes: the structure (its default when `None`), the threads, the
/// output, and whether coordinates are f32.
#[derive(Debug)]
struct Settings<'a> {
    index: Option<BatchIndex>,
    threads: Option<u32>,
    out: Option<&'a Path>,
    f32: bool,
}

/// What a batch command does once its elements are in the index.
#[derive(Debug)]
enum Work {
    /// Every intersecting pair.
    Pairs,
    /// Every element intersecting each query box.
    Query(PathBuf),
    /// The `k` nearest elements to each query point.
    Knn(PathBuf, usize),
    /// Write the index's byte form to the output.
    Save,
}

impl Work {
    /// The command's name.
    fn command(&self) -> &'static str {
        match self {
            Self::Pairs => "pairs",
            Self::Query(_) => "query",
            Self::Knn(..) => "knn",
            Self::Save => "build",
        }
    }
}

/// The structure a command builds when `--index` names none: a kd-tree for points (`knn`),
/// a packed tree for boxes (`pairs`, `query`).
fn default_index(shape: Shape) -> BatchIndex {
    BatchIndex::Static(match shape {
        Shape::Points => StaticKind::KdTree,
        Shape::Boxes => StaticKind::PackedIndex,
    })
}

/// `spatix pairs BOXES.csv`: CSV `a,b`, every intersecting pair once, `a < b`.
pub(crate) fn pairs(args: &PairsArgs) -> Result<(), Failure> {
    let settings = Settings {
        index: args.index.map(|BoxIndex(kind)| kind),
        threads: args.threads,
        out: args.common.out.as_deref(),
        f32: args.common.precision.f32,
    };
    run(&args.boxes, Shape::Boxes, Work::Pairs, &settings)
}

/// `spatix query BOXES.csv QUERIES.csv`: CSV `query_id,id`.
pub(crate) fn query(args: &QueryArgs) -> Result<(), Failure> {
    let work = Work::Query(args.queries.clone());
    let settings = Settings {
        index: args.index.map(|BoxIndex(kind)| kind),
        threads: args.threads,
        out: args.common.out.as_deref(),
        f32: args.common.precision.f32,
    };
    run(&args.boxes, Shape::Boxes, work, &settings)
}

/// `spatix knn POINTS.csv QUERIES.csv -k K`: CSV `query_id,rank,id,distance`.
pub(crate) fn knn(args: &KnnArgs) -> Result<(), Failure> {
    let work = Work::Knn(args.queries.clone(), args.k as usize);
    let settings = Settings {
        index: args.index,
        threads: args.threads,
        out: args.common.out.as_deref(),
        f32: args.common.precision.f32,
    };
    let shape = if input::holds_boxes(&args.points) {
        Shape::Boxes
    } else {
        Shape::Points
    };
    if shape == Shape::Boxes && args.index == Some(BatchIndex::Static(StaticKind::KdTree)) {
        return Err(Failure::file(
            &args.points.display().to_string(),
            "holds boxes (id,min_x,min_y,max_x,max_y): --index kd-tree holds points only \
             (try --index packed)",
        ));
    }
    run(&args.points, shape, work, &settings)
}

/// `spatix build DATA.csv --out INDEX`: the byte form of the index `pairs`, `query` or `knn`
/// would build from the file.
pub(crate) fn build(args: &BuildArgs) -> Result<(), Failure> {
    let settings = Settings {
        index: args.index,
        threads: None,
        out: Some(&args.out),
        f32: args.precision.f32,
    };
    run(&args.data, args.shape(), Work::Save, &settings)
}

/// The job handed to the chosen structure.
#[derive(Debug)]
struct Job {
    data: PathBuf,
    shape: Shape,
    work: Work,
    sink: Sink,
    /// The threads to answer the queries on (none: the calling thread).
    pool: Option<rayon::ThreadPool>,
}

/// What a job did, for the summary.
#[derive(Debug)]
struct Done {
    index: String,
    /// How many elements the index holds.
    elements: usize,
    /// How the index was made: `"build"` (from the data file) or `"load"` (a saved index).
    made: &'static str,
    build_s: f64,
    work_s: f64,
    /// Results written (for [`Work::Save`], bytes).
    results: u64,
    queries: Option<u64>,
    index_bytes: usize,
    output: String,
}

/// Where the elements come from: a CSV file, surveyed, or a saved index.
#[derive(Debug)]
enum Source {
    Csv(Survey),
    Saved(Saved),
}

fn run(data: &Path, shape: Shape, work: Work, settings: &Settings<'_>) -> Result<(), Failure> {
    let start = Instant::now();
    let queries = match &work {
        Work::Pairs | Work::Save => None,
        Work::Query(path) | Work::Knn(path, _) => Some(path.as_path()),
    };
    let inputs: Vec<&Path> = core::iter::once(data).chain(queries).collect();
    output::refuse_input_as_output(settings.out, &inputs)?;
    let command = work.command();
    let source = match Saved::read(data)? {
        Some(saved) => {
            saved.fits(command, shape, settings.index, settings.f32)?;
            Source::Saved(saved)
        }
        None => Source::Csv(input::survey(data, shape)?),
    };
    match &work {
        Work::Pairs | Work::Save => {}
        Work::Query(path) => drop(input::survey(path, Shape::Boxes)?),
        Work::Knn(path, _) => drop(input::survey(path, Shape::Points)?),
    }
    let check_s = start.elapsed().as_secs_f64();
    let threads = settings.threads.unwrap_or(1) as usize;
    let pool = (threads > 1)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| Failure::io("starting threads", io::Error::other(e)))
        })
        .transpose()?;
    let job = Job {
        data: data.to_owned(),
        shape,
        work,
        sink: Sink::open(settings.out)?,
        pool,
    };
    let index = settings.index.unwrap_or(default_index(shape));
    let holds = match &source {
        Source::Saved(saved) => saved.holds(),
        Source::Csv(_) => shape,
    };
    let done = match source {
        Source::Saved(saved) => saved.load(job)??,
        Source::Csv(survey) if settings.f32 => job.build::<f32>(index, survey)?,
        Source::Csv(survey) => job.build::<f64>(index, survey)?,
    };
    let among = match holds {
        Shape::Boxes => count(done.elements as u64, "box", "boxes"),
        Shape::Points => count(done.elements as u64, "point", "points"),
    };
    let (results, step) = match done.queries {
        _ if command == "build" => (format!("{among} in {} bytes", done.results), "save"),
        Some(q) => (
            format!(
                "{} for {} among {among}",
                count(done.results, "result", "results"),
                count(q, "query", "queries")
            ),
            command,
        ),
        None => (
            format!("{} among {among}", count(done.results, "pair", "pairs")),
            command,
        ),
    };
    eprintln!(
        "spatix {command}: {results}, in {:.3} s (check input {:.3} s, {} {:.3} s, \
         {step} {:.3} s); index: {}, {:.1} bytes per element; output: {}",
        start.elapsed().as_secs_f64(),
        check_s,
        done.made,
        done.build_s,
        done.work_s,
        done.index,
        done.index_bytes as f64 / done.elements.max(1) as f64,
        done.output,
    );
    Ok(())
}

/// The index's plan from the first pass: the world is where the bulk of the sampled elements
/// lies ([`Aabb::bulk_of`]), not the box around them all, so that a few stray elements far
/// away (filed in border cells and nodes) cost what others do instead of stretching every
/// cell or node over the distance.
fn plan<S: Scalar>(survey: Survey) -> Plan<S> {
    let origin = Point::new(0.0, 0.0);
    let world = Aabb::bulk_of(&survey.sample).unwrap_or(Aabb {
        min: origin,
        max: origin,
    });
    Plan {
        world: narrow(world),
        sample: survey.sample.into_iter().map(narrow).collect(),
        count: survey.count,
    }
}

/// The box in coordinates of `S`: each rounded to the nearest `S`, and beyond its range to
/// its largest finite value (for `f64`, the box itself).
fn narrow<S: Scalar>(b: Aabb<f64>) -> Aabb<S> {
    let max = S::MAX.to_f64();
    let c = |v: f64| S::from_f64(v.clamp(-max, max));
    Aabb {
        min: Point::new(c(b.min.x), c(b.min.y)),
        max: Point::new(c(b.max.x), c(b.max.y)),
    }
}

impl<S: Scalar> UseIndex<S, u64> for Job {
    type Output = Result<Done, Failure>;

    fn run<I: Structure<S, u64> + SpatialIndex<S, u64>>(
        self,
        mut index: I,
    ) -> Result<Done, Failure> {
        let start = Instant::now();
        let mut elements = Elements::open(&self.data, self.shape)?;
        while let Some((line, id, aabb)) = elements.next_element()? {
            index
                .insert(narrow(aabb), id)
                .map_err(|e| Failure::input(elements.file(), line, e.to_string()))?;
        }
        self.work(index, start.elapsed().as_secs_f64(), "build")
    }
}

impl saved::UseLoaded for Job {
    type Output = Result<Done, Failure>;

    fn run<S: Scalar, I: Structure<S, u64>>(self, index: I, load_s: f64) -> Result<Done, Failure> {
        self.work(index, load_s, "load")
    }
}

impl Job {
    /// Builds the structure `index` from the data file, in coordinates of `S`, and runs the job
    /// on it.
    fn build<S: Scalar>(self, index: BatchIndex, survey: Survey) -> Result<Done, Failure> {
        match index {
            BatchIndex::Dynamic(kind) => kind
                .with_index(plan::<S>(survey), self)
                .map_err(Failure::Index)?,
            BatchIndex::Static(kind) => self.run_static::<S>(kind),
        }
    }

    /// Reads every element, builds the static structure `kind` from them all, and runs the
    /// job on it.
    fn run_static<S: Scalar>(self, kind: StaticKind) -> Result<Done, Failure> {
        let start = Instant::now();
        let mut elements = Elements::open(&self.data, self.shape)?;
        let mut all = Vec::new();
        while let Some((_, id, aabb)) = elements.next_element()? {
            all.push((narrow::<S>(aabb), id));
        }
        let build_s = || start.elapsed().as_secs_f64();
        match kind {
            StaticKind::KdTree => {
                let points = all.into_iter().map(|(aabb, id)| (aabb.min, id));
                let tree = KdTree::build(points).map_err(Failure::Index)?;
                self.work(tree, build_s(), "build")
            }
            StaticKind::PackedIndex => {
                let index = PackedIndex::build(all).map_err(Failure::Index)?;
                self.work(index, build_s(), "build")
            }
        }
    }

    /// Runs the job's work on `index`, made (`"build"` or `"load"`) in `build_s` seconds.
    fn work<S: Scalar, I: Structure<S, u64>>(
        self,
        index: I,
        build_s: f64,
        made: &'static str,
    ) -> Result<Done, Failure> {
        let Self {
            work,
            mut sink,
            pool,
            ..
        } = self;
        let pool = pool.as_ref();
        let start = Instant::now();
        let output = sink.name();
        let write_error = |e: io::Error| Failure::io(format!("writing {output}"), e);
        let (results, queries) = match &work {
            Work::Pairs => (write_pairs(&index, &mut sink).map_err(write_error)?, None),
            Work::Query(path) => {
                let mut queries = Elements::open(path, Shape::Boxes)?;
                write_query(&index, &mut queries, pool, &mut sink)?
            }
            Work::Knn(path, k) => {
                let mut queries = Elements::open(path, Shape::Points)?;
                write_knn(&index, &mut queries, *k, pool, &mut sink)?
            }
            Work::Save => {
                let bytes = index.to_bytes();
                sink.write_all(&bytes).map_err(write_error)?;
                (bytes.len() as u64, None)
            }
        };
        let work_s = start.elapsed().as_secs_f64();
        sink.finish()?;
        Ok(Done {
            index: index.describe(),
            elements: index.len(),
            made,
            build_s,
            work_s,
            results,
            queries,
            index_bytes: index.memory_bytes(),
            output,
        })
    }
}

/// Writes `a,b` for every intersecting pair; returns how many.
fn write_pairs<S: Scalar, I: SpatialQuery<S, u64>>(index: &I, out: &mut Sink) -> io::Result<u64> {
    writeln!(out, "a,b")?;
    let mut count = 0u64;
    let mut failed = None;
    let _ = index.for_each_pair(|a, b| {
        let (a, b) = (*a.value.min(b.value), *a.value.max(b.value));
        match writeln!(out, "{a},{b}") {
            Ok(()) => {
                count += 1;
                ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    failed.map_or(Ok(count), Err)
}

/// Queries read and answered at a time when they are answered on several threads.
const BLOCK: usize = 4096;

/// Writes `header`, then reads the queries and has `answer` answer and write them (returning
/// how many results it wrote), in the queries' order: one query at a time on the calling
/// thread, or [`BLOCK`] at a time when `threaded` (for a batch on a pool). Returns the number
/// of results and of queries.
fn per_query(
    queries: &mut Elements,
    out: &mut Sink,
    header: &str,
    threaded: bool,
    mut answer: impl FnMut(&[(u64, Aabb<f64>)], &mut Sink) -> io::Result<u64>,
) -> Result<(u64, Option<u64>), Failure> {
    let name = out.name();
    let write_error = |e: io::Error| Failure::io(format!("writing {name}"), e);
    writeln!(out, "{header}").map_err(write_error)?;
    let (mut results, mut count) = (0u64, 0u64);
    let size = if threaded { BLOCK } else { 1 };
    let mut block = Vec::with_capacity(size);
    loop {
        block.clear();
        while block.len() < size {
            match queries.next_element()? {
                Some((_, id, query)) => block.push((id, query)),
                None => break,
            }
        }
        if block.is_empty() {
            break;
        }
        results += answer(&block, out).map_err(write_error)?;
        count += block.len() as u64;
    }
    Ok((results, Some(count)))
}

/// Writes `query_id,id` for every element intersecting each query (ids ascending within a
/// query); returns the number of results and of queries. With a `pool`, each block of
/// queries is one [`ParallelQuery::query_batch`] on it.
fn write_query<S: Scalar, I: SpatialQuery<S, u64> + Sync>(
    index: &I,
    queries: &mut Elements,
    pool: Option<&rayon::ThreadPool>,
    out: &mut Sink,
) -> Result<(u64, Option<u64>), Failure> {
    let mut found = Vec::new();
    let write = |query_id: u64, found: &mut Vec<u64>, out: &mut Sink| -> io::Result<u64> {
        found.sort_unstable();
        for id in &*found {
            writeln!(out, "{query_id},{id}")?;
        }
        Ok(found.len() as u64)
    };
    let header = "query_id,id";
    let Some(pool) = pool else {
        return per_query(queries, out, header, false, |block, out| {
            let mut results = 0;
            for (query_id, area) in block {
                found.clear();
                let _ = index.query(&narrow(*area), |item| {
                    found.push(*item.value);
                    ControlFlow::Continue(())
                });
                results += write(*query_id, &mut found, out)?;
            }
            Ok(results)
        });
    };
    let mut buffers = BatchBuffers::new();
    let mut areas = Vec::with_capacity(BLOCK);
    per_query(queries, out, header, true, |block, out| {
        areas.clear();
        areas.extend(block.iter().map(|(_, area)| narrow(*area)));
        let answers = pool.install(|| index.query_batch(&areas, &mut buffers));
        let mut results = 0;
        for ((query_id, _), handles) in block.iter().zip(answers.iter()) {
            found.clear();
            found.extend(handles.iter().filter_map(|&h| Some(*index.get(h)?.value)));
            results += write(*query_id, &mut found, out)?;
        }
        Ok(results)
    })
}

/// Writes `query_id,rank,id,distance` for the `k` nearest elements to each query point;
/// returns the number of results and of queries. With a `pool`, each block of queries is
/// answered by rounds of [`ParallelQuery::nearest_batch`] on it ([`NearestBlock`]).
fn write_knn<S: Scalar, I: SpatialQuery<S, u64> + Sync>(
    index: &I,
    queries: &mut Elements,
    k: usize,
    pool: Option<&rayon::ThreadPool>,
    out: &mut Sink,
) -> Result<(u64, Option<u64>), Failure> {
    let write = |query_id: u64, nearest: &[(f64, u64)], out: &mut Sink| -> io::Result<u64> {
        for (rank, (distance, id)) in nearest.iter().enumerate() {
            writeln!(out, "{query_id},{},{id},{}", rank + 1, number(*distance))?;
        }
        Ok(nearest.len() as u64)
    };
    let header = "query_id,rank,id,distance";
    let Some(pool) = pool else {
        let mut workspace = Workspace::new();
        let mut nearest = Vec::new();
        return per_query(queries, out, header, false, |block, out| {
            let mut results = 0;
            for (query_id, point) in block {
                nearest_ids(index, narrow(*point).min, k, &mut workspace, &mut nearest);
                results += write(*query_id, &nearest, out)?;
            }
            Ok(results)
        });
    };
    let mut block_knn = NearestBlock::default();
    per_query(queries, out, header, true, |block, out| {
        block_knn.answer(index, pool, block, k);
        let mut results = 0;
        for ((query_id, _), nearest) in block.iter().zip(&block_knn.rows) {
            results += write(*query_id, nearest, out)?;
        }
        Ok(results)
    })
}

/// How many neighbours to ask for first: one more than `k` (to see whether the `k`-th is
/// tied), at most the `len` elements there are.
fn first_want(k: usize, len: usize) -> usize {
    k.saturating_add(1).min(len)
}

/// Whether `found`, the `want` elements nearest to a point of an index of `len`, settles its
/// `k` nearest: all the elements were found, or the last is farther than the `k`-th, so that
/// every element as close as the `k`-th is among them.
fn settles<S: Scalar>(found: &[Neighbor<S>], want: usize, k: usize, len: usize) -> bool {
    found.len() < want || want == len || found[want - 1].distance > found[k - 1].distance
}

/// The `k` nearest of a settling `found` as `(distance, id)` into `out`: ascending, ties
/// broken by the smaller id.
fn ranked<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    found: &[Neighbor<S>],
    k: usize,
    out: &mut Vec<(f64, u64)>,
) {
    out.clear();
    out.extend(
        found
            .iter()
            .filter_map(|n| Some((n.distance.to_f64(), *index.get(n.handle)?.value))),
    );
    out.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    out.truncate(k);
}

/// The `k` elements nearest to `point` as `(distance, id)`, ascending, ties broken by
/// the smaller id, so that every structure gives the same answer. The index breaks ties at the
/// `want`-th distance arbitrarily, so until the neighbours found settle the `k` nearest
/// ([`settles`]), this asks for twice as many.
fn nearest_ids<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    point: Point<S>,
    k: usize,
    workspace: &mut Workspace<S>,
    out: &mut Vec<(f64, u64)>,
) {
    let len = index.len();
    let mut want = first_want(k, len);
    loop {
        let found = index.nearest(point, want, workspace);
        if settles(found, want, k, len) {
            ranked(index, found, k, out);
            return;
        }
        want = want.saturating_mul(2).min(len);
    }
}

/// [`nearest_ids`] for a block of queries on a pool, kept from block to block so that a
/// warm block allocates little: each round asks [`ParallelQuery::nearest_batch`] for the
/// points whose `k` nearest are not settled yet, twice as many neighbours as the last.
#[derive(Debug, Default)]
struct NearestBlock<S: Scalar> {
    /// The batches' memory.
    buffers: BatchBuffers<S>,
    /// The answer of each query of the block, in order.
    rows: Vec<Vec<(f64, u64)>>,
    /// The queries the round asks (positions in the block) and their points.
    pending: Vec<usize>,
    points: Vec<Point<S>>,
    /// The queries the round left unsettled.
    unsettled: Vec<usize>,
}

impl<S: Scalar> NearestBlock<S> {
    /// Fills `rows` with the `k` nearest of each point (box minimum) of `block`.
    fn answer<I: SpatialQuery<S, u64> + Sync>(
        &mut self,
        index: &I,
        pool: &rayon::ThreadPool,
        block: &[(u64, Aabb<f64>)],
        k: usize,
    ) {
        let len = index.len();
        self.rows.resize_with(block.len(), Vec::new);
        self.pending.clear();
        self.pending.extend(0..block.len());
        let mut want = first_want(k, len);
        while !self.pending.is_empty() {
            self.points.clear();
            self.points
                .extend(self.pending.iter().map(|&i| narrow(block[i].1).min));
            let (points, buffers) = (&self.points, &mut self.buffers);
            let answers = pool.install(|| index.nearest_batch(points, want, buffers));
            self.unsettled.clear();
            for (&i, found) in self.pending.iter().zip(answers.iter()) {
                if settles(found, want, k, len) {
                    ranked(index, found, k, &mut self.rows[i]);
                } else {
                    self.unsettled.push(i);
                }
            }
            core::mem::swap(&mut self.pending, &mut self.unsettled);
            want = want.saturating_mul(2).min(len);
        }
    }
}

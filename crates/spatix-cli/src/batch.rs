//! `spatix pairs`, `query` and `knn`: spatial joins over CSV files, results as CSV.
//!
//! Each command reads its files twice: once to check every line (all input errors are
//! reported before any output is written) and to size the index, once to stream the elements
//! into the index and the queries through it. Results stream to the output as they are found.
//! A summary goes to standard error.

use core::ops::ControlFlow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use spatix::prelude::*;
use spatix::{Aabb, Point, Workspace};

use crate::failure::Failure;
use crate::index_kind::{IndexKind, Plan, Structure, UseIndex};
use crate::input::{self, Elements, Shape, Survey};
use crate::output::{self, Sink};

/// Options every batch command takes.
#[derive(Debug, Args)]
pub(crate) struct Common {
    /// The structure to use.
    #[arg(long, value_enum, default_value_t)]
    index: IndexKind,
    /// Write the results to FILE instead of standard output (`-`). A regular file appears only
    /// once complete; a FIFO, a device or a symbolic link's target is written in place; an
    /// input file is refused.
    #[arg(long, short, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `spatix pairs`.
#[derive(Debug, Args)]
pub(crate) struct PairsArgs {
    /// Boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    boxes: PathBuf,
    #[command(flatten)]
    common: Common,
}

/// `spatix query`.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// Boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    boxes: PathBuf,
    /// Query boxes, CSV with the header id,min_x,min_y,max_x,max_y.
    queries: PathBuf,
    #[command(flatten)]
    common: Common,
}

/// `spatix knn`.
#[derive(Debug, Args)]
pub(crate) struct KnnArgs {
    /// Points, CSV with the header id,x,y.
    points: PathBuf,
    /// Query points, CSV with the header id,x,y.
    queries: PathBuf,
    /// Neighbours per query.
    #[arg(short, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    k: u32,
    #[command(flatten)]
    common: Common,
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
}

/// `spatix pairs BOXES.csv`: CSV `a,b`, every intersecting pair once, `a < b`.
pub(crate) fn pairs(args: &PairsArgs) -> Result<(), Failure> {
    run(&args.boxes, Shape::Boxes, Work::Pairs, &args.common)
}

/// `spatix query BOXES.csv QUERIES.csv`: CSV `query_id,id`.
pub(crate) fn query(args: &QueryArgs) -> Result<(), Failure> {
    let work = Work::Query(args.queries.clone());
    run(&args.boxes, Shape::Boxes, work, &args.common)
}

/// `spatix knn POINTS.csv QUERIES.csv -k K`: CSV `query_id,rank,id,distance`.
pub(crate) fn knn(args: &KnnArgs) -> Result<(), Failure> {
    let work = Work::Knn(args.queries.clone(), args.k as usize);
    run(&args.points, Shape::Points, work, &args.common)
}

/// The job handed to the chosen structure.
#[derive(Debug)]
struct Job {
    data: PathBuf,
    shape: Shape,
    work: Work,
    sink: Sink,
}

/// What a job did, for the summary.
#[derive(Debug)]
struct Done {
    index: String,
    build_s: f64,
    work_s: f64,
    results: u64,
    queries: Option<u64>,
    index_bytes: usize,
    output: String,
}

fn run(data: &Path, shape: Shape, work: Work, common: &Common) -> Result<(), Failure> {
    let start = Instant::now();
    let queries = match &work {
        Work::Pairs => None,
        Work::Query(path) | Work::Knn(path, _) => Some(path.as_path()),
    };
    let inputs: Vec<&Path> = core::iter::once(data).chain(queries).collect();
    output::refuse_input_as_output(common.out.as_deref(), &inputs)?;
    let survey = input::survey(data, shape)?;
    match &work {
        Work::Pairs => {}
        Work::Query(path) => drop(input::survey(path, Shape::Boxes)?),
        Work::Knn(path, _) => drop(input::survey(path, Shape::Points)?),
    }
    let check_s = start.elapsed().as_secs_f64();
    let elements = survey.count;
    let command = match work {
        Work::Pairs => "pairs",
        Work::Query(_) => "query",
        Work::Knn(..) => "knn",
    };
    let job = Job {
        data: data.to_owned(),
        shape,
        work,
        sink: Sink::open(common.out.as_deref())?,
    };
    let done = common
        .index
        .with_index(plan(survey), job)
        .map_err(Failure::Index)??;
    let what = match shape {
        Shape::Boxes => "boxes",
        Shape::Points => "points",
    };
    let results = match done.queries {
        Some(q) => format!("{} results for {q} queries", done.results),
        None => format!("{} pairs", done.results),
    };
    eprintln!(
        "spatix {command}: {results} among {elements} {what}, in {:.3} s (check input {:.3} s, \
         build {:.3} s, {command} {:.3} s); index: {}, {:.1} bytes per element; output: {}",
        start.elapsed().as_secs_f64(),
        check_s,
        done.build_s,
        done.work_s,
        done.index,
        done.index_bytes as f64 / elements.max(1) as f64,
        done.output,
    );
    Ok(())
}

/// The index's plan from the first pass: the world is where the bulk of the sampled elements
/// lies ([`Aabb::bulk_of`]), not the box around them all, so that a few stray elements far
/// away (filed in border cells and nodes) cost what others do instead of stretching every
/// cell or node over the distance.
fn plan(survey: Survey) -> Plan<f64> {
    let origin = Point::new(0.0, 0.0);
    Plan {
        world: Aabb::bulk_of(&survey.sample).unwrap_or(Aabb {
            min: origin,
            max: origin,
        }),
        sample: survey.sample,
        count: survey.count,
    }
}

impl UseIndex<f64, u64> for Job {
    type Output = Result<Done, Failure>;

    fn run<I: Structure<f64, u64>>(self, mut index: I) -> Result<Done, Failure> {
        let Self {
            data,
            shape,
            work,
            mut sink,
        } = self;
        let start = Instant::now();
        let mut elements = Elements::open(&data, shape)?;
        while let Some((line, id, aabb)) = elements.next_element()? {
            index
                .insert(aabb, id)
                .map_err(|e| Failure::input(elements.file(), line, e.to_string()))?;
        }
        let build_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let output = sink.name();
        let write_error = |e: io::Error| Failure::io(format!("writing {output}"), e);
        let (results, queries) = match &work {
            Work::Pairs => (write_pairs(&index, &mut sink).map_err(write_error)?, None),
            Work::Query(path) => {
                let mut queries = Elements::open(path, Shape::Boxes)?;
                write_query(&index, &mut queries, &mut sink)?
            }
            Work::Knn(path, k) => {
                let mut queries = Elements::open(path, Shape::Points)?;
                write_knn(&index, &mut queries, *k, &mut sink)?
            }
        };
        let work_s = start.elapsed().as_secs_f64();
        sink.finish()?;
        Ok(Done {
            index: index.describe(),
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
fn write_pairs<I: SpatialQuery<f64, u64>>(index: &I, out: &mut Sink) -> io::Result<u64> {
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

/// Writes `header`, then for each query what `answer` writes (returning how many results);
/// returns the number of results and of queries.
fn per_query<F>(
    queries: &mut Elements,
    out: &mut Sink,
    header: &str,
    mut answer: F,
) -> Result<(u64, Option<u64>), Failure>
where
    F: FnMut(u64, &Aabb<f64>, &mut Sink) -> io::Result<usize>,
{
    let name = out.name();
    let write_error = |e: io::Error| Failure::io(format!("writing {name}"), e);
    writeln!(out, "{header}").map_err(write_error)?;
    let (mut results, mut count) = (0u64, 0u64);
    while let Some((_, query_id, query)) = queries.next_element()? {
        results += answer(query_id, &query, out).map_err(write_error)? as u64;
        count += 1;
    }
    Ok((results, Some(count)))
}

/// Writes `query_id,id` for every element intersecting each query (ids ascending within a
/// query); returns the number of results and of queries.
fn write_query<I: SpatialQuery<f64, u64>>(
    index: &I,
    queries: &mut Elements,
    out: &mut Sink,
) -> Result<(u64, Option<u64>), Failure> {
    let mut found = Vec::new();
    per_query(queries, out, "query_id,id", |query_id, area, out| {
        found.clear();
        let _ = index.query(area, |item| {
            found.push(*item.value);
            ControlFlow::Continue(())
        });
        found.sort_unstable();
        for id in &found {
            writeln!(out, "{query_id},{id}")?;
        }
        Ok(found.len())
    })
}

/// Writes `query_id,rank,id,distance` for the `k` nearest elements to each query point;
/// returns the number of results and of queries.
fn write_knn<I: SpatialQuery<f64, u64>>(
    index: &I,
    queries: &mut Elements,
    k: usize,
    out: &mut Sink,
) -> Result<(u64, Option<u64>), Failure> {
    let mut workspace = Workspace::new();
    let mut nearest = Vec::new();
    let header = "query_id,rank,id,distance";
    per_query(queries, out, header, |query_id, point, out| {
        nearest_ids(index, point.min, k, &mut workspace, &mut nearest);
        for (rank, (distance, id)) in nearest.iter().enumerate() {
            writeln!(out, "{query_id},{},{id},{distance}", rank + 1)?;
        }
        Ok(nearest.len())
    })
}

/// The `k` elements nearest to `point` as `(distance, id)`, ascending, ties broken by
/// the smaller id, so that every structure gives the same answer. The index breaks ties at the
/// k-th distance arbitrarily, so while the last neighbour found is as close as the k-th, this
/// asks for twice as many.
fn nearest_ids<I: SpatialQuery<f64, u64>>(
    index: &I,
    point: Point<f64>,
    k: usize,
    workspace: &mut Workspace<f64>,
    out: &mut Vec<(f64, u64)>,
) {
    out.clear();
    let mut want = k.min(index.len());
    if want == 0 {
        return;
    }
    loop {
        let found = index.nearest(point, want, workspace);
        let complete = found.len() < want
            || want == index.len()
            || found[want - 1].distance > found[k - 1].distance;
        if complete {
            out.extend(
                found
                    .iter()
                    .filter_map(|n| Some((n.distance, *index.get(n.handle)?.value))),
            );
            break;
        }
        want = want.saturating_mul(2).min(index.len());
    }
    out.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    out.truncate(k);
}

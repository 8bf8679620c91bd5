//! Benchmark support for spatix: the standard seeded workload, the operations each benchmark
//! times, and a criterion harness generic over [`SpatialIndex`], shared by the `structures`
//! bench (`cargo bench -p spatix-bench`) and the side-by-side comparison.
//!
//! Every structure is measured at every N of its list, on each of the [`MIXES`] of agents
//! (`Agents::<f32>::new(N, layout, sizes, AGENTS_SEED)`: uniform, clustered, and mixed sizes
//! with 1% large ones), in four groups named `<group>/<structure>/<mix>/<N>`:
//!
//! | group | one iteration |
//! | --- | --- |
//! | `build` | [`insert_agents`]: every agent's box into an empty structure |
//! | `query` | [`count_query_hits`]: [`QUERY_COUNT`] squares of side [`QUERY_SIDE`] |
//! | `pairs` | [`count_pairs`]: one [`SpatialQuery::for_each_pair`] |
//! | `frame` | [`frame`]: move every agent, update it, find every pair, maintain |
//!
//! Criterion cannot report memory, so the harness prints one [`memory_line`] per structure
//! and N, the first time one of its benchmarks runs.
//!
//! `benches/structures.rs` calls [`Suite::bench`] for every dynamic structure of
//! `spatix::for_each_structure!`, and [`Suite::bench_static`] for every static one (built
//! once, [`SpatialQuery`] only), which measures `build` (the whole bulk build from the
//! agents' boxes), `query` and `pairs`: a new structure is benchmarked from its entry there.

use core::ops::ControlFlow;
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use spatix::{Aabb, Handle, Point, SpatialIndex, SpatialQuery};
use spatix_workload::{Agents, Layout, Rng, Scatter, Sizes};

/// The element counts a structure is normally measured at.
pub const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// Seed of the agents of every benchmark.
pub const AGENTS_SEED: u64 = 0x5EED;

/// Seed of the query squares.
pub const QUERIES_SEED: u64 = 0x9E41;

/// Number of queries in one iteration of a `query` benchmark.
pub const QUERY_COUNT: usize = 10_000;

/// Side of each query square.
pub const QUERY_SIDE: f32 = 50.0;

/// From this N on, criterion samples in flat mode (every sample the same iteration count),
/// which keeps slow iterations within the measurement time.
pub const FLAT_SAMPLING_FROM: usize = 100_000;

/// The kinds of agents every structure is measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Same-size agents spread uniformly.
    Uniform,
    /// Same-size agents in dense clusters.
    Clustered,
    /// Agents spread uniformly, 1% of them much larger ("dragons").
    Mixed,
    /// hshg's sparse setting ([`Scatter::sparse`]): larger, slower agents, farther apart.
    /// The `compare` binary measures it; the criterion suite does not.
    Sparse,
}

/// The mixes the criterion suite runs, in order: every [`Mix`] but [`Mix::Sparse`].
pub const MIXES: [Mix; 3] = [Mix::Uniform, Mix::Clustered, Mix::Mixed];

impl Mix {
    /// Every mix, in the order `compare` runs them.
    ///
    /// ```
    /// use spatix_bench::{Mix, MIXES};
    /// assert!(MIXES.iter().all(|m| Mix::ALL.contains(m)));
    /// assert!(Mix::ALL.contains(&Mix::Sparse));
    /// ```
    pub const ALL: [Mix; 4] = [Mix::Uniform, Mix::Clustered, Mix::Mixed, Mix::Sparse];

    /// `n` agents of this mix, from [`AGENTS_SEED`].
    ///
    /// ```
    /// use spatix_bench::Mix;
    /// let dragons = Mix::Mixed.agents(1000);
    /// assert!(dragons.half_extents.iter().any(|h| h.x > 10.0));
    /// ```
    pub fn agents(self, n: usize) -> Agents<f32> {
        let (layout, sizes) = match self {
            Self::Uniform => (Layout::Uniform, Sizes::Uniform),
            Self::Clustered => (Layout::Clustered, Sizes::Uniform),
            Self::Mixed => (Layout::Uniform, Sizes::Mixed),
            Self::Sparse => return Agents::scattered(n, Scatter::sparse(n), AGENTS_SEED),
        };
        Agents::new(n, layout, sizes, AGENTS_SEED)
    }

    /// Whether every agent of this mix has one size (so that a structure holding boxes
    /// under one bound, as `PointGrid`, holds them all): every mix but the mixed sizes.
    ///
    /// ```
    /// use spatix_bench::Mix;
    /// assert!(Mix::Sparse.same_size() && !Mix::Mixed.same_size());
    /// ```
    pub fn same_size(self) -> bool {
        !matches!(self, Self::Mixed)
    }

    /// The name used in benchmark ids.
    ///
    /// ```
    /// assert_eq!(spatix_bench::Mix::Clustered.name(), "clustered");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::Clustered => "clustered",
            Self::Mixed => "mixed",
            Self::Sparse => "sparse",
        }
    }
}

/// The standard workload: `n` agents of uniform size spread uniformly over their world,
/// from [`AGENTS_SEED`] ([`Mix::Uniform`]).
///
/// ```
/// let agents = spatix_bench::agents(10_000);
/// assert_eq!(agents.len(), 10_000);
/// assert_eq!(agents.world.max.x, 1000.0);
/// ```
pub fn agents(n: usize) -> Agents<f32> {
    Mix::Uniform.agents(n)
}

/// The centres of `n` agents of `layout` (from [`AGENTS_SEED`]): the point sets of the
/// kd-tree benchmarks.
///
/// ```
/// use spatix_workload::Layout;
/// let points = spatix_bench::points(1000, Layout::Clustered);
/// assert_eq!(points.len(), 1000);
/// assert_eq!(points, spatix_bench::points(1000, Layout::Clustered));
/// ```
pub fn points(n: usize, layout: Layout) -> Vec<Point<f32>> {
    Agents::<f32>::new(n, layout, Sizes::Uniform, AGENTS_SEED).positions
}

/// `count` query points that follow the distribution of `points`: randomly chosen ones (from
/// `seed`), each moved by up to 1 on each axis.
///
/// ```
/// use spatix_workload::Layout;
/// let points = spatix_bench::points(1000, Layout::Uniform);
/// let queries = spatix_bench::queries_near(&points, 50, 3);
/// assert_eq!(queries.len(), 50);
/// assert!(queries.iter().all(|q| points.iter().any(|p| (p.x - q.x).abs() <= 1.0 && (p.y - q.y).abs() <= 1.0)));
/// ```
///
/// # Panics
/// If `points` is empty.
pub fn queries_near(points: &[Point<f32>], count: usize, seed: u64) -> Vec<Point<f32>> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let p = points[rng.below(points.len())];
            Point::new(
                p.x + rng.range(-1.0, 1.0) as f32,
                p.y + rng.range(-1.0, 1.0) as f32,
            )
        })
        .collect()
}

/// `count` squares of the given `side`, placed uniformly at random (from `seed`) so that each
/// lies inside `world` (or starts at its lower-left corner when the world is smaller).
///
/// ```
/// use spatix::{Aabb, Point};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
/// let squares = spatix_bench::query_squares(&world, 100, 50.0, 1);
/// assert_eq!(squares.len(), 100);
/// assert!(squares.iter().all(|s| world.contains(s) && (s.size().x - 50.0).abs() < 1e-3));
/// # Ok::<(), spatix::Error>(())
/// ```
pub fn query_squares(world: &Aabb<f32>, count: usize, side: f32, seed: u64) -> Vec<Aabb<f32>> {
    let mut rng = Rng::new(seed);
    let span = |lo: f32, hi: f32| (f64::from(lo), f64::from((hi - side).max(lo)));
    let (x_lo, x_hi) = span(world.min.x, world.max.x);
    let (y_lo, y_hi) = span(world.min.y, world.max.y);
    (0..count)
        .map(|_| {
            // Rounding to f32 may land a hair past the upper limit; keep the square inside.
            let x = (rng.range(x_lo, x_hi) as f32).min(x_hi as f32);
            let y = (rng.range(y_lo, y_hi) as f32).min(y_hi as f32);
            Aabb {
                min: Point::new(x, y),
                max: Point::new(x + side, y + side),
            }
        })
        .collect()
}

/// `count` query points for point workloads (k-nearest, radius), so that queries follow the
/// data's distribution: each is one of `points`, chosen uniformly at random (from `seed`),
/// moved by up to `jitter` on each axis. None if there are no points.
///
/// ```
/// use spatix::Point;
/// let points = [Point::new(10.0f32, 10.0), Point::new(500.0, 500.0)];
/// let queries = spatix_bench::query_points(&points, 100, 5.0, 1);
/// assert_eq!(queries.len(), 100);
/// assert!(queries.iter().all(|q| points
///     .iter()
///     .any(|p| (q.x - p.x).abs() <= 5.0 && (q.y - p.y).abs() <= 5.0)));
/// assert!(spatix_bench::query_points(&[], 100, 5.0, 1).is_empty());
/// ```
pub fn query_points(
    points: &[Point<f32>],
    count: usize,
    jitter: f32,
    seed: u64,
) -> Vec<Point<f32>> {
    if points.is_empty() {
        return Vec::new();
    }
    let mut rng = Rng::new(seed);
    let jitter = f64::from(jitter);
    (0..count)
        .map(|_| {
            let p = points[rng.below(points.len())];
            let dx = rng.range(-jitter, jitter) as f32;
            let dy = rng.range(-jitter, jitter) as f32;
            Point::new(p.x + dx, p.y + dy)
        })
        .collect()
}

/// Inserts every agent's box into `index`, with the agent's number as its value, and appends
/// the handles to `handles` in agent order (reserve it beforehand to keep allocation out of a
/// measurement).
///
/// # Panics
/// If the index rejects a box (agent boxes are always valid).
///
/// ```
/// use spatix::BruteForce;
/// use spatix::prelude::*;
/// let agents = spatix_bench::agents(100);
/// let mut index = BruteForce::new();
/// let mut handles = Vec::new();
/// spatix_bench::insert_agents(&mut index, &agents, &mut handles);
/// assert_eq!((index.len(), handles.len()), (100, 100));
/// assert_eq!(*index.get(handles[7]).unwrap().value, 7);
/// ```
pub fn insert_agents<I: SpatialIndex<f32, u32>>(
    index: &mut I,
    agents: &Agents<f32>,
    handles: &mut Vec<Handle>,
) {
    for i in 0..agents.len() {
        let handle = index
            .insert(agents.aabb(i), i as u32)
            .expect("agent boxes are valid");
        handles.push(handle);
    }
}

/// Runs one [`SpatialQuery::query`] per area and returns the total number of hits.
///
/// ```
/// use spatix::BruteForce;
/// let agents = spatix_bench::agents(1000);
/// let mut index = BruteForce::new();
/// spatix_bench::insert_agents(&mut index, &agents, &mut Vec::new());
/// let hits = spatix_bench::count_query_hits(&index, &[agents.world, agents.world]);
/// assert_eq!(hits, 2000);
/// ```
pub fn count_query_hits<I: SpatialQuery<f32, u32>>(index: &I, areas: &[Aabb<f32>]) -> u64 {
    let mut hits = 0u64;
    for area in areas {
        let _ = index.query(black_box(area), |_| {
            hits += 1;
            ControlFlow::Continue(())
        });
    }
    hits
}

/// Runs one [`SpatialQuery::for_each_pair`] and returns the number of intersecting pairs.
///
/// ```
/// use spatix::{Aabb, BruteForce, Point, SpatialIndex};
/// let mut index = BruteForce::new();
/// for i in 0..3u32 {
///     index.insert(Aabb::point(Point::new(1.0f32, 1.0))?, i)?;
/// }
/// assert_eq!(spatix_bench::count_pairs(&index), 3);
/// # Ok::<(), spatix::Error>(())
/// ```
pub fn count_pairs<I: SpatialQuery<f32, u32>>(index: &I) -> u64 {
    let mut pairs = 0u64;
    let _ = index.for_each_pair(|_, _| {
        pairs += 1;
        ControlFlow::Continue(())
    });
    pairs
}

/// One frame of the agents simulation: [`Agents::step`], then [`SpatialIndex::update`] of
/// every agent, then [`count_pairs`], then [`SpatialIndex::maintain`]. Returns the number of
/// pairs. `handles[i]` must be agent `i`'s handle in `index`, as [`insert_agents`] leaves it.
///
/// # Panics
/// If a handle is stale.
///
/// ```
/// use spatix::BruteForce;
/// use spatix::prelude::*;
/// let mut agents = spatix_bench::agents(500);
/// let mut index = BruteForce::new();
/// let mut handles = Vec::new();
/// spatix_bench::insert_agents(&mut index, &agents, &mut handles);
/// let pairs = spatix_bench::frame(&mut index, &mut agents, &handles);
/// assert_eq!(pairs, spatix_bench::count_pairs(&index));
/// assert_eq!(index.get(handles[3]).unwrap().aabb, agents.aabb(3));
/// ```
pub fn frame<I: SpatialIndex<f32, u32>>(
    index: &mut I,
    agents: &mut Agents<f32>,
    handles: &[Handle],
) -> u64 {
    agents.step();
    for (i, &handle) in handles.iter().enumerate() {
        index
            .update(handle, agents.aabb(i))
            .expect("every agent's handle is live and its box valid");
    }
    let pairs = count_pairs(index);
    index.maintain();
    pairs
}

/// The memory report of a structure holding `n` elements in `bytes` bytes:
/// `memory <structure> N=<n>: <bytes / n> bytes/element (<that less 8> without the value)`:
/// the benchmarks store a `u32` per element, which the slot table keeps in an 8-byte
/// `Option<u32>`; the second figure is what the index itself costs.
///
/// ```
/// assert_eq!(
///     spatix_bench::memory_line("grid", 1000, 24_500),
///     "memory grid N=1000: 24.5 bytes/element (16.5 without the value)"
/// );
/// ```
pub fn memory_line(structure: &str, n: usize, bytes: usize) -> String {
    let per_element = bytes as f64 / n.max(1) as f64;
    let value = size_of::<Option<u32>>() as f64;
    format!(
        "memory {structure} N={n}: {per_element:.1} bytes/element ({:.1} without the value)",
        (per_element - value).max(0.0)
    )
}

/// Criterion with the suite's short settings: 10 samples, 1 s of warm-up, 2 s of measurement.
/// Chain `.configure_from_args()` to let the command line override them and filter.
///
/// ```
/// let _criterion = spatix_bench::criterion();
/// ```
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
}

/// One N's inputs: the agents at rest and the query squares over their world.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The agents, from [`agents`].
    pub agents: Agents<f32>,
    /// [`QUERY_COUNT`] squares of side [`QUERY_SIDE`] inside the agents' world, from
    /// [`QUERIES_SEED`].
    pub squares: Vec<Aabb<f32>>,
}

impl Workload {
    /// The workload of `n` agents of `mix`.
    ///
    /// ```
    /// use spatix_bench::{Mix, Workload};
    /// let workload = Workload::new(100, Mix::Clustered);
    /// assert_eq!(workload.agents.len(), 100);
    /// assert_eq!(workload.squares.len(), spatix_bench::QUERY_COUNT);
    /// ```
    pub fn new(n: usize, mix: Mix) -> Self {
        let agents = mix.agents(n);
        let squares = query_squares(&agents.world, QUERY_COUNT, QUERY_SIDE, QUERIES_SEED);
        Self { agents, squares }
    }
}

/// A structure built from a workload, kept across its benchmarks at one N.
struct Built<I> {
    index: I,
    handles: Vec<Handle>,
    /// The agents the `frame` benchmark moves, from one iteration to the next.
    moving: Agents<f32>,
}

impl<I: SpatialIndex<f32, u32>> Built<I> {
    /// Builds `index` from the workload, tidies it once as a program would after loading
    /// (`maintain`), and prints its memory line.
    fn new(name: &str, mix: Mix, mut index: I, workload: &Workload) -> Self {
        let mut handles = Vec::with_capacity(workload.agents.len());
        insert_agents(&mut index, &workload.agents, &mut handles);
        index.maintain();
        print_memory(name, mix, &index);
        Self {
            index,
            handles,
            moving: workload.agents.clone(),
        }
    }
}

/// Prints the [`memory_line`] of a structure built from `mix`'s agents.
fn print_memory<I: SpatialQuery<f32, u32>>(name: &str, mix: Mix, index: &I) {
    let label = format!("{name} {}", mix.name());
    println!("{}", memory_line(&label, index.len(), index.memory_bytes()));
}

/// The benchmark suite: runs the four groups for each structure and keeps the workloads, so
/// that every structure is measured on the same inputs.
#[derive(Debug, Default)]
pub struct Suite {
    workloads: Vec<((usize, Mix), Workload)>,
}

impl Suite {
    /// A suite with no workload made yet; each is made the first time an N is asked for.
    ///
    /// ```
    /// let _suite = spatix_bench::Suite::new();
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// The workload of `n` agents of `mix`, made on first use.
    ///
    /// ```
    /// let mut suite = spatix_bench::Suite::new();
    /// assert_eq!(suite.workload(50, spatix_bench::Mix::Mixed).agents.len(), 50);
    /// ```
    pub fn workload(&mut self, n: usize, mix: Mix) -> &Workload {
        let at = match self.workloads.iter().position(|(key, _)| *key == (n, mix)) {
            Some(at) => at,
            None => {
                self.workloads.push(((n, mix), Workload::new(n, mix)));
                self.workloads.len() - 1
            }
        };
        &self.workloads[at].1
    }

    /// Registers and runs `build/<name>/<mix>/<N>`, `query/<name>/<mix>/<N>`,
    /// `pairs/<name>/<mix>/<N>` and `frame/<name>/<mix>/<N>` for every [`Mix`] and every N in
    /// `sizes`. `make` returns an empty structure for the
    /// given agents (it may read their world or boxes); it is never timed.
    ///
    /// A structure is built (and its [`memory_line`] printed) only when one of its benchmarks
    /// at that N passes criterion's filter. `frame` runs last because it moves the agents.
    ///
    /// ```no_run
    /// use spatix::BruteForce;
    /// use spatix_bench::{Suite, criterion};
    /// let mut c = criterion().configure_from_args();
    /// Suite::new().bench(&mut c, "brute", &[10_000], |_| BruteForce::new());
    /// c.final_summary();
    /// ```
    pub fn bench<I, F>(&mut self, c: &mut Criterion, name: &str, sizes: &[usize], make: F)
    where
        I: SpatialIndex<f32, u32>,
        F: Fn(&Agents<f32>) -> I,
    {
        self.bench_mixes(c, name, &MIXES, sizes, make);
    }

    /// [`Suite::bench`] on the given mixes only: for structures that hold one size class
    /// (a point grid's bound would be the dragons' on [`Mix::Mixed`]).
    ///
    /// ```no_run
    /// use spatix::PointGrid;
    /// use spatix_bench::{Mix, Suite, criterion};
    /// let mut c = criterion().configure_from_args();
    /// Suite::new().bench_mixes(&mut c, "points", &[Mix::Uniform], &[10_000], |a| {
    ///     PointGrid::new(a.world, 3.0).unwrap()
    /// });
    /// c.final_summary();
    /// ```
    pub fn bench_mixes<I, F>(
        &mut self,
        c: &mut Criterion,
        name: &str,
        mixes: &[Mix],
        sizes: &[usize],
        make: F,
    ) where
        I: SpatialIndex<f32, u32>,
        F: Fn(&Agents<f32>) -> I,
    {
        for (mix, n) in cases(mixes, sizes) {
            let id = || BenchmarkId::new(mix.name(), n);
            let workload = self.workload(n, mix);
            let agents = &workload.agents;
            let mut slot: Option<Built<I>> = None;

            let mut group = new_group(c, "build", name, n, n);
            group.bench_function(id(), |b| {
                // Only for the memory line: this benchmark builds its own structures.
                built(&mut slot, name, mix, &make, workload);
                b.iter_batched(
                    || (make(agents), Vec::with_capacity(n)),
                    |(mut index, mut handles)| {
                        insert_agents(&mut index, agents, &mut handles);
                        (index, handles)
                    },
                    BatchSize::PerIteration,
                );
            });
            group.finish();

            let mut group = new_group(c, "query", name, n, QUERY_COUNT);
            group.bench_function(id(), |b| {
                let index = &built(&mut slot, name, mix, &make, workload).index;
                b.iter(|| black_box(count_query_hits(index, &workload.squares)));
            });
            group.finish();

            let mut group = new_group(c, "pairs", name, n, n);
            group.bench_function(id(), |b| {
                let index = &built(&mut slot, name, mix, &make, workload).index;
                b.iter(|| black_box(count_pairs(index)));
            });
            group.finish();

            let mut group = new_group(c, "frame", name, n, n);
            group.bench_function(id(), |b| {
                let Built {
                    index,
                    handles,
                    moving,
                } = built(&mut slot, name, mix, &make, workload);
                b.iter(|| black_box(frame(index, moving, handles)));
            });
            group.finish();
        }
    }

    /// Registers and runs `build/<name>/<mix>/<N>`, `query/<name>/<mix>/<N>` and
    /// `pairs/<name>/<mix>/<N>` for a static structure, for every [`Mix`] and every N in
    /// `sizes`. `build` makes the structure from the agents (from their boxes, each with
    /// its agent's number as value); the `build` benchmark times the whole call.
    ///
    /// ```no_run
    /// use spatix::PackedIndex;
    /// use spatix_bench::{Suite, criterion};
    /// let mut c = criterion().configure_from_args();
    /// Suite::new().bench_static(&mut c, "packed", &[10_000], |a| {
    ///     PackedIndex::build(a.boxes().zip(0..)).unwrap()
    /// });
    /// c.final_summary();
    /// ```
    pub fn bench_static<I, F>(&mut self, c: &mut Criterion, name: &str, sizes: &[usize], build: F)
    where
        I: SpatialQuery<f32, u32>,
        F: Fn(&Agents<f32>) -> I,
    {
        for (mix, n) in cases(&MIXES, sizes) {
            let id = || BenchmarkId::new(mix.name(), n);
            let workload = self.workload(n, mix);
            let agents = &workload.agents;
            let mut slot: Option<I> = None;

            let mut group = new_group(c, "build", name, n, n);
            group.bench_function(id(), |b| {
                // Only for the memory line: this benchmark builds its own structures.
                built_static(&mut slot, name, mix, &build, agents);
                b.iter(|| build(black_box(agents)));
            });
            group.finish();

            let mut group = new_group(c, "query", name, n, QUERY_COUNT);
            group.bench_function(id(), |b| {
                let index = built_static(&mut slot, name, mix, &build, agents);
                b.iter(|| black_box(count_query_hits(index, &workload.squares)));
            });
            group.finish();

            let mut group = new_group(c, "pairs", name, n, n);
            group.bench_function(id(), |b| {
                let index = built_static(&mut slot, name, mix, &build, agents);
                b.iter(|| black_box(count_pairs(index)));
            });
            group.finish();
        }
    }
}

/// Every mix at every N of `sizes`, mixes outermost: the order the suite runs them in.
fn cases<'a>(mixes: &'a [Mix], sizes: &'a [usize]) -> impl Iterator<Item = (Mix, usize)> + 'a {
    mixes
        .iter()
        .flat_map(move |&mix| sizes.iter().map(move |&n| (mix, n)))
}

/// The structure in `slot`, built by `make` from the workload (printing its memory line) if
/// this is the first benchmark at this N that runs.
fn built<'s, I, F>(
    slot: &'s mut Option<Built<I>>,
    name: &str,
    mix: Mix,
    make: &F,
    workload: &Workload,
) -> &'s mut Built<I>
where
    I: SpatialIndex<f32, u32>,
    F: Fn(&Agents<f32>) -> I,
{
    slot.get_or_insert_with(|| Built::new(name, mix, make(&workload.agents), workload))
}

/// The static structure in `slot`, built from the agents (printing its memory line) if this
/// is the first benchmark at this N that runs.
fn built_static<'s, I, F>(
    slot: &'s mut Option<I>,
    name: &str,
    mix: Mix,
    build: &F,
    agents: &Agents<f32>,
) -> &'s I
where
    I: SpatialQuery<f32, u32>,
    F: Fn(&Agents<f32>) -> I,
{
    slot.get_or_insert_with(|| {
        let index = build(agents);
        print_memory(name, mix, &index);
        index
    })
}

/// The group `<kind>/<name>` set up for size `n`, with `elements` elements per iteration.
fn new_group<'c>(
    c: &'c mut Criterion,
    kind: &str,
    name: &str,
    n: usize,
    elements: usize,
) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(format!("{kind}/{name}"));
    group.throughput(Throughput::Elements(elements as u64));
    if n >= FLAT_SAMPLING_FROM {
        group.sampling_mode(SamplingMode::Flat);
    }
    group
}

#[cfg(test)]
mod tests {
    use spatix::{BruteForce, SpatialQuery};

    use super::*;

    fn brute(agents: &Agents<f32>) -> (BruteForce<f32, u32>, Vec<Handle>) {
        let mut index = BruteForce::new();
        let mut handles = Vec::new();
        insert_agents(&mut index, agents, &mut handles);
        (index, handles)
    }

    fn pairs_by_hand(agents: &Agents<f32>) -> u64 {
        let boxes: Vec<_> = agents.boxes().collect();
        let mut pairs = 0;
        for (i, a) in boxes.iter().enumerate() {
            pairs += boxes[i + 1..].iter().filter(|b| a.intersects(b)).count() as u64;
        }
        pairs
    }

    #[test]
    fn query_squares_are_seeded_sized_and_inside_the_world() {
        let agents = agents(40_000);
        let squares = query_squares(&agents.world, 2000, QUERY_SIDE, 3);
        assert_eq!(squares, query_squares(&agents.world, 2000, QUERY_SIDE, 3));
        assert_ne!(squares, query_squares(&agents.world, 2000, QUERY_SIDE, 4));
        for s in &squares {
            assert!(agents.world.contains(s), "{s:?} leaves the world");
            let size = s.size();
            assert!((size.x - QUERY_SIDE).abs() < 1e-3 && (size.y - QUERY_SIDE).abs() < 1e-3);
        }
        let left = squares.iter().filter(|s| s.max.x < 1000.0).count();
        assert!(
            (800..1200).contains(&left),
            "{left} of 2000 in the left half"
        );
    }

    #[test]
    fn query_squares_in_a_world_smaller_than_a_square_start_at_its_corner() {
        let world = Aabb::new(Point::new(5.0, 5.0), Point::new(10.0, 10.0)).unwrap();
        for s in query_squares(&world, 10, QUERY_SIDE, 1) {
            assert_eq!(s.min, world.min);
        }
    }

    #[test]
    fn insert_agents_stores_every_box_with_its_number() {
        let agents = agents(300);
        let (index, handles) = brute(&agents);
        assert_eq!(index.len(), 300);
        for (i, &h) in handles.iter().enumerate() {
            let item = index.get(h).unwrap();
            assert_eq!((item.aabb, *item.value), (agents.aabb(i), i as u32));
        }
    }

    #[test]
    fn count_query_hits_counts_every_hit_of_every_area() {
        let agents = agents(2000);
        let (index, _) = brute(&agents);
        let squares = query_squares(&agents.world, 200, QUERY_SIDE, 9);
        let expected: u64 = squares
            .iter()
            .map(|s| agents.boxes().filter(|b| b.intersects(s)).count() as u64)
            .sum();
        assert!(expected > 0);
        assert_eq!(count_query_hits(&index, &squares), expected);
    }

    #[test]
    fn count_pairs_counts_each_intersecting_pair_once() {
        let agents = agents(3000);
        let (index, _) = brute(&agents);
        let expected = pairs_by_hand(&agents);
        assert!(expected > 0);
        assert_eq!(count_pairs(&index), expected);
    }

    #[test]
    fn frame_moves_every_agent_and_counts_the_new_pairs() {
        let mut agents = agents(3000);
        let start = agents.clone();
        let (mut index, handles) = brute(&agents);
        for _ in 0..3 {
            let pairs = frame(&mut index, &mut agents, &handles);
            assert_eq!(pairs, pairs_by_hand(&agents));
        }
        assert_ne!(agents.positions, start.positions);
        for (i, &h) in handles.iter().enumerate() {
            assert_eq!(index.get(h).unwrap().aabb, agents.aabb(i));
        }
        index.check_invariants().unwrap();
    }

    #[test]
    fn memory_line_divides_by_n_and_survives_zero() {
        assert_eq!(
            memory_line("quadtree", 4, 100),
            "memory quadtree N=4: 25.0 bytes/element (17.0 without the value)"
        );
        assert_eq!(
            memory_line("brute", 0, 0),
            "memory brute N=0: 0.0 bytes/element (0.0 without the value)"
        );
    }

    #[test]
    fn suite_makes_each_workload_once_and_keeps_it() {
        let mut suite = Suite::new();
        let first = suite.workload(100, Mix::Uniform).agents.positions.clone();
        assert_eq!(suite.workload(200, Mix::Uniform).agents.len(), 200);
        assert_eq!(suite.workload(100, Mix::Uniform).agents.positions, first);
        assert_ne!(suite.workload(100, Mix::Clustered).agents.positions, first);
        assert_eq!(suite.workloads.len(), 3);
    }
}

//! `spatix sim`: the agents demo. N agents move, bounce off the world's edges and off each
//! other; every frame the index is updated, asked for every colliding pair, the collisions are
//! resolved and the index tidied. Ends with a table of frame times, pairs and memory.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Args, ValueEnum};
use spatix::{Aabb, Handle, Item, Point, SpatialIndex};
use spatix_workload::{Agent, Agents, Layout, Sizes};

use crate::failure::Failure;
use crate::index_kind::{IndexKind, Plan, Structure, UseIndex};
use crate::progress::Progress;
use crate::render::{Recorder, Size, Target};
use crate::stats::{Halves, LastChange, Resident, Series, count, decimal, mib};

/// Options of `spatix sim`.
#[derive(Debug, Args)]
pub(crate) struct SimArgs {
    /// Number of agents.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    agents: u32,
    /// The structure to use.
    #[arg(long, value_enum, default_value_t)]
    index: IndexKind,
    /// Number of frames to simulate.
    #[arg(long, value_name = "F", default_value_t = 600,
          value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Agent sizes: uniform (half-size 1 to 3) or mixed (1% "dragons" of half-size 20 to 100).
    #[arg(long, value_enum, default_value_t = SizesArg::Uniform)]
    sizes: SizesArg,
    /// Where agents start: uniform over the world, or in Gaussian clusters.
    #[arg(long, value_enum, default_value_t = LayoutArg::Uniform)]
    layout: LayoutArg,
    /// Seed of the agents' positions, sizes and velocities; a run is reproducible from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Move the agents by one `update(handle, box)` per agent, in agent order, instead of
    /// the default `update_all` (each agent, the element's value, stepped where the index
    /// stores it, in storage order).
    #[arg(long)]
    per_handle: bool,
    /// Threads for the pair pass and the moves (`par_update_all`) of every structure but
    /// brute-force, which runs on one; the closing table says which phases ran on how many.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// Write a picture: FILE.png (the last frame) or FILE.gif (an animation).
    #[arg(long, value_name = "FILE")]
    render: Option<Target>,
    /// For a .gif: draw the first frame and every K-th after it [default: 4].
    #[arg(long, value_name = "K", requires = "render",
          value_parser = clap::value_parser!(u32).range(1..))]
    render_every: Option<u32>,
    /// Every K frames, check the index against a brute-force recount: the pairs of 1000
    /// sampled agents, and `len()` (for soak runs; the check is not in the frame times).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    verify_every: Option<u32>,
    /// Picture size in pixels.
    #[arg(
        long,
        value_name = "WxH",
        default_value = "800x800",
        requires = "render"
    )]
    size: Size,
}

/// `--sizes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SizesArg {
    Uniform,
    Mixed,
}

/// `--layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LayoutArg {
    Uniform,
    Clustered,
}

/// Most agents a run may have: what every structure holds (its slot table addresses 2^32 - 2
/// elements; [`spatix::Error::CapacityExceeded`] past that).
const MAX_AGENTS: u32 = u32::MAX - 1;

/// Bytes a run needs per agent, at least: its motion (24) as generated and in the table of
/// resolved collisions, its box in the structure's plan (16), its item while the structure is
/// built (44), its body as the element's value (28), and what the leanest structure keeps per
/// element besides (32).
const BYTES_PER_AGENT: u64 = 168;

/// Bytes a run needs per frame: the six series of the closing table, one `f64` each.
const BYTES_PER_FRAME: u64 = 48;

/// Bytes a picture needs per pixel: its RGBA pixels, and a GIF frame's palette indices.
const BYTES_PER_PIXEL: u64 = 5;

impl SimArgs {
    /// Checks what clap cannot: `--render-every` needs an animation, and the run must fit in
    /// what the structures hold and the memory the system will allocate (checked before
    /// anything is allocated, so that a size too large is refused rather than an abort).
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let (Some(Target::Png(_)), Some(_)) = (&self.render, self.render_every) {
            return Err(
                "--render-every applies to an animation: give --render a .gif file".to_owned(),
            );
        }
        if self.agents > MAX_AGENTS {
            return Err(format!(
                "--agents {}: a structure holds at most {MAX_AGENTS} elements",
                self.agents
            ));
        }
        let agents = u64::from(self.agents) * BYTES_PER_AGENT;
        let frames = u64::from(self.frames) * BYTES_PER_FRAME;
        let picture = match self.render {
            Some(_) => u64::from(self.size.width) * u64::from(self.size.height) * BYTES_PER_PIXEL,
            None => 0,
        };
        // Within u64: each term is below 2^32 times a small constant.
        let needed = agents + frames + picture;
        if allocatable(needed) {
            return Ok(());
        }
        let option = if frames > agents {
            format!("--frames {}", self.frames)
        } else {
            format!("--agents {}", self.agents)
        };
        Err(format!(
            "{option} needs about {} GB of memory, more than this system will allocate",
            decimal(needed as f64 / 1e9)
        ))
    }
}

/// Whether the system will allocate `bytes` at once: a reservation tried, then released
/// (untouched, it costs no memory).
fn allocatable(bytes: u64) -> bool {
    usize::try_from(bytes).is_ok_and(|bytes| Vec::<u8>::new().try_reserve_exact(bytes).is_ok())
}

/// Runs the simulation and prints its table on standard output.
pub(crate) fn run(args: &SimArgs) -> Result<(), Failure> {
    let layout = match args.layout {
        LayoutArg::Uniform => Layout::Uniform,
        LayoutArg::Clustered => Layout::Clustered,
    };
    let sizes = match args.sizes {
        SizesArg::Uniform => Sizes::Uniform,
        SizesArg::Mixed => Sizes::Mixed,
    };
    let agents = Agents::<f32>::new(args.agents as usize, layout, sizes, args.seed);
    let pool = match args.threads {
        1 => None,
        n => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build()
                .map_err(|e| Failure::io("starting threads", std::io::Error::other(e)))?,
        ),
    };
    let recorder = args
        .render
        .as_ref()
        .map(|target| {
            let every = args.render_every.unwrap_or(4) as usize;
            Recorder::new(
                target,
                agents.world,
                args.size,
                typical_side(&agents),
                every,
            )
        })
        .transpose()?;
    let plan = Plan {
        world: agents.world,
        sample: agents.boxes().collect(),
        count: agents.len(),
    };
    let world = agents.world;
    println!(
        "spatix sim: {} ({} layout, {} sizes, seed {}) in a {} x {} world, {}, {}",
        count(args.agents.into(), "agent", "agents"),
        value_name(&args.layout),
        value_name(&args.sizes),
        args.seed,
        decimal(f64::from(world.max.x - world.min.x)),
        decimal(f64::from(world.max.y - world.min.y)),
        count(args.frames.into(), "frame", "frames"),
        match args.threads {
            1 => "1 thread".to_owned(),
            n => format!("up to {n} threads"),
        },
    );
    let start = Instant::now();
    let items = (0..agents.len())
        .map(|i| {
            let agent = agents.agent(i);
            (
                agent.aabb(),
                Body {
                    agent,
                    id: i as u32,
                },
            )
        })
        .collect();
    let sim = Simulation {
        resolved: Resolved::new(&agents),
        arena: agents.arena,
        frames: args.frames as usize,
        pool,
        recorder,
        verify_every: args.verify_every.map_or(0, |k| k as usize),
        per_handle: args.per_handle,
        start,
    };
    drop(agents);
    let report = args
        .index
        .with_items(plan, items, sim)
        .map_err(Failure::Index)??;
    report.print(args.agents as usize, args.frames as usize, args.threads);
    Ok(())
}

/// The median of the agents' shorter sides (0 without agents).
fn typical_side(agents: &Agents<f32>) -> f64 {
    let mut sides: Vec<f32> = agents
        .half_extents
        .iter()
        .map(|h| 2.0 * h.x.min(h.y))
        .collect();
    if sides.is_empty() {
        return 0.0;
    }
    let middle = sides.len() / 2;
    f64::from(*sides.select_nth_unstable_by(middle, f32::total_cmp).1)
}

/// The name an option's value has on the command line.
fn value_name<E: ValueEnum>(value: &E) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// The simulation, handed to whichever structure `--index` chose, built holding every agent.
struct Simulation {
    /// The table collisions are resolved in.
    resolved: Resolved,
    /// Where agents bounce.
    arena: Aabb<f32>,
    frames: usize,
    pool: Option<rayon::ThreadPool>,
    recorder: Option<Recorder>,
    /// Check against a recount every this many frames (0: never).
    verify_every: usize,
    /// `--per-handle`.
    per_handle: bool,
    /// When the structure's build began.
    start: Instant,
}

/// An agent as the value of its element, so that `update_all` steps it where the index
/// stores it: its motion and its number (the order of the pairs and of the final state).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Body {
    pub(crate) agent: Agent<f32>,
    pub(crate) id: u32,
}

/// What a pair pass found: each pair as a [`pair_key`], and both agents of each pair with
/// their handles, as the index holds them (so an agent once per pair it is in, in about the
/// order the pass met them: the index's storage order, for the structures that walk it).
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) keys: Vec<u64>,
    pub(crate) bodies: Vec<(Handle, Body)>,
}

impl Found {
    /// Two threads' findings as one: the shorter appended to the longer.
    fn join(mut self, mut other: Self) -> Self {
        if self.keys.len() < other.keys.len() {
            core::mem::swap(&mut self, &mut other);
        }
        self.keys.append(&mut other.keys);
        self.bodies.append(&mut other.bodies);
        self
    }
}

/// The colliding agents of a frame, by number: taken from what the pair pass found,
/// resolved, and written back into their elements' values.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// By agent number; current where `colliding` says so.
    pub(crate) agents: Vec<Agent<f32>>,
    /// One bit per agent.
    pub(crate) colliding: Vec<u64>,
}

impl Resolved {
    fn new(agents: &Agents<f32>) -> Self {
        Self::of((0..agents.len()).map(|i| agents.agent(i)).collect())
    }

    /// The table of `agents`, by number, none colliding.
    pub(crate) fn of(agents: Vec<Agent<f32>>) -> Self {
        let colliding = vec![0; agents.len().div_ceil(64)];
        Self { agents, colliding }
    }

    /// Takes the agents of a pair pass as they were found, marked colliding (the last
    /// frame's forgotten).
    pub(crate) fn take(&mut self, bodies: &[(Handle, Body)]) {
        self.colliding.fill(0);
        for (_, body) in bodies {
            let id = body.id as usize;
            self.agents[id] = body.agent;
            self.colliding[id / 64] |= 1 << (id % 64);
        }
    }

    /// The colliding agents' numbers, ascending.
    fn ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.colliding.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            core::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let bit = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + bit
                })
            })
        })
    }

    /// Writes the colliding agents back into their elements' values for the next step: in
    /// the order the pair pass found them, so the index is written in about its storage order
    /// (an agent once per pair it is in).
    pub(crate) fn write_back<I: SpatialIndex<f32, Body>>(
        &self,
        index: &mut I,
        bodies: &[(Handle, Body)],
    ) -> Result<(), Failure> {
        for &(handle, body) in bodies {
            index.value_mut(handle).ok_or_else(stale)?.agent = self.agents[body.id as usize];
        }
        Ok(())
    }

    /// Whether each agent collided, by number.
    fn colliding(&self, out: &mut Vec<bool>) {
        out.clear();
        out.resize(self.agents.len(), false);
        for id in self.ids() {
            out[id] = true;
        }
    }
}

/// The error of a handle that no longer names its agent.
pub(crate) fn stale() -> Failure {
    Failure::Index(spatix::Error::InvariantViolated(
        "an agent's handle went stale".to_owned(),
    ))
}

/// Every agent as its element's value holds it, by number.
pub(crate) fn agents_of<I: Structure<f32, Body>>(index: &I, out: &mut Vec<Agent<f32>>) {
    let origin = Point::new(0.0, 0.0);
    let rest = Agent {
        position: origin,
        velocity: origin,
        half_extent: origin,
    };
    out.clear();
    out.resize(index.len(), rest);
    for item in index.iter() {
        out[item.value.id as usize] = item.value.agent;
    }
}

/// Which threads of a pool did a phase's work over the run.
#[derive(Debug)]
pub(crate) struct ThreadsSeen(Vec<AtomicBool>);

impl ThreadsSeen {
    fn new(threads: usize) -> Self {
        Self((0..threads).map(|_| AtomicBool::new(false)).collect())
    }

    /// Notes the calling thread, if it is one of rayon's.
    #[inline]
    fn mark(&self) {
        if let Some(seen) = rayon::current_thread_index().and_then(|i| self.0.get(i)) {
            if !seen.load(Ordering::Relaxed) {
                seen.store(true, Ordering::Relaxed);
            }
        }
    }

    /// How many threads were noted; 1 (the calling thread) if none was.
    fn count(&self) -> usize {
        self.0
            .iter()
            .filter(|seen| seen.load(Ordering::Relaxed))
            .count()
            .max(1)
    }
}

/// How a run moved its agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moves {
    /// `update(handle, box)` per agent.
    PerHandle,
    UpdateAll,
    ParUpdateAll,
}

/// What a run measured.
#[derive(Debug)]
struct Report {
    index: String,
    moves: Moves,
    /// Whether the structure has parallel passes (`ParallelPairs`).
    parallel: bool,
    build_ms: f64,
    update: Series,
    pairs: Series,
    resolve: Series,
    maintain: Series,
    frame: Series,
    pair_counts: Series,
    /// Threads that moved the agents, and that found the pairs.
    threads: (usize, usize),
    index_bytes: usize,
    /// The index's memory at the end of warm-up (the first half of the frames).
    index_warm_bytes: usize,
    /// How many frames after warm-up changed the index's memory.
    index_changes_after_warm: usize,
    index_changed: LastChange,
    /// The process's resident memory, over the warm-up half and the second half.
    resident: Option<Halves>,
    peak_resident: Option<u64>,
    checksum: u64,
    picture: Option<String>,
    /// Frames checked against a recount, and the pairs those checks compared.
    verified: (usize, usize),
}

impl UseIndex<f32, Body> for Simulation {
    type Output = Result<Report, Failure>;

    fn run<I: Structure<f32, Body> + SpatialIndex<f32, Body>>(
        self,
        mut index: I,
    ) -> Result<Report, Failure> {
        let Self {
            mut resolved,
            arena,
            frames,
            pool,
            mut recorder,
            verify_every,
            per_handle,
            start,
        } = self;
        let build_ms = start.elapsed().as_secs_f64() * 1e3;
        let n = resolved.agents.len();
        // `--per-handle`: each agent's handle, by number.
        let handles: Vec<Handle> = if per_handle {
            let mut by_id: Vec<(u32, Handle)> =
                index.iter().map(|i| (i.value.id, i.handle)).collect();
            by_id.sort_unstable_by_key(|&(id, _)| id);
            by_id.into_iter().map(|(_, h)| h).collect()
        } else {
            Vec::new()
        };
        // The pool, where this structure has parallel passes to run on it.
        let pool = pool.filter(|_| I::PARALLEL);
        let seen = pool.as_ref().map(|p| {
            (
                ThreadsSeen::new(p.current_num_threads()),
                ThreadsSeen::new(p.current_num_threads()),
            )
        });

        let series = || Series::with_capacity(frames);
        let mut report = Report {
            index: index.describe(),
            moves: match (per_handle, &pool) {
                (true, _) => Moves::PerHandle,
                (false, None) => Moves::UpdateAll,
                (false, Some(_)) => Moves::ParUpdateAll,
            },
            parallel: I::PARALLEL,
            build_ms,
            update: series(),
            pairs: series(),
            resolve: series(),
            maintain: series(),
            frame: series(),
            pair_counts: series(),
            threads: (1, 1),
            index_bytes: 0,
            index_warm_bytes: 0,
            index_changes_after_warm: 0,
            index_changed: LastChange::default(),
            resident: Resident::read().map(|_| Halves::new(frames / 2)),
            peak_resident: None,
            checksum: 0,
            picture: None,
            verified: (0, 0),
        };
        let mut found = Found::default();
        let mut settled = Vec::new();
        let mut colliding = Vec::new();
        let progress = Progress::new(frames);
        let mut verify_buffers = (Vec::new(), Vec::new(), Vec::new());

        for frame in 1..=frames {
            let t0 = Instant::now();
            let step = |_: Handle, body: &mut Body, _: &Aabb<f32>| {
                body.agent.step(&arena);
                body.agent.aabb()
            };
            match (&pool, &seen) {
                _ if per_handle => {
                    for &h in &handles {
                        let body = index.value_mut(h).ok_or_else(stale)?;
                        let aabb = step(h, body, &arena);
                        index.update(h, aabb).map_err(Failure::Index)?;
                    }
                }
                (Some(pool), Some((moved, _))) => index
                    .update_on_threads(pool, |h, body, old| {
                        moved.mark();
                        step(h, body, old)
                    })
                    .map_err(Failure::Index)?,
                _ => index.update_all(step).map_err(Failure::Index)?,
            }
            let t1 = Instant::now();
            find_pairs(
                &index,
                pool.as_ref(),
                seen.as_ref().map(|s| &s.1),
                &mut found,
            );
            let found_at = Instant::now();
            if verify_every > 0 && frame % verify_every == 0 {
                if index.len() != n {
                    return Err(Failure::Index(spatix::Error::InvariantViolated(format!(
                        "frame {frame}: the index holds {} agents, expected {n}",
                        index.len(),
                    ))));
                }
                report.verified.0 += 1;
                report.verified.1 += verify_pairs(&index, &found.keys, frame, &mut verify_buffers)?;
            }
            let checked = Instant::now();
            // A canonical order, so that the run does not depend on the structure or threads.
            found.keys.sort_unstable();
            resolved.take(&found.bodies);
            resolve(&mut resolved.agents, &found.keys);
            resolved.write_back(&mut index, &found.bodies)?;
            let t3 = Instant::now();
            index.maintain();
            let t4 = Instant::now();

            report.update.push_ms(t1 - t0);
            report.pairs.push_ms(found_at - t1);
            report.resolve.push_ms(t3 - checked);
            report.maintain.push_ms(t4 - t3);
            let frame_time = t4 - t0 - (checked - found_at);
            report.frame.push_ms(frame_time);
            report.pair_counts.push(found.keys.len() as f64);
            let index_bytes = index.memory_bytes();
            report.index_changed.record(frame, index_bytes as u64);
            if frame > frames / 2 && report.index_changed.frame == frame {
                report.index_changes_after_warm += 1;
            }
            if frame == frames / 2 {
                report.index_warm_bytes = index_bytes;
            }
            if let (Some(changed), Some(resident)) = (&mut report.resident, Resident::read()) {
                changed.record(frame, resident.now);
            }
            if let Some(recorder) = recorder.as_mut().filter(|r| r.wants(frame, frames)) {
                agents_of(&index, &mut settled);
                resolved.colliding(&mut colliding);
                recorder.record(&settled, &colliding, &index)?;
            }
            progress.frame(frame, frame_time.as_secs_f64() * 1e3, found.keys.len());
        }
        progress.finish();
        if let Some((moved, paired)) = &seen {
            report.threads = (moved.count(), paired.count());
        }
        report.index_bytes = index.memory_bytes();
        report.peak_resident = Resident::read().map(|r| r.peak);
        agents_of(&index, &mut settled);
        report.checksum = checksum(&settled);
        report.picture = recorder.map(Recorder::finish).transpose()?;
        Ok(report)
    }
}

/// (sampled agent, partner) pairs.
type Partners = Vec<(usize, usize)>;

/// The soak check: the partners of every 1000th-or-so agent, among the pairs the index
/// reported, equal a brute-force recount over all the agents' boxes in the index. Returns the
/// pairs compared.
///
/// `boxes`, `reported` and `recount` are the caller's buffers, reused so that a soak run's
/// memory stays flat.
fn verify_pairs<I: Structure<f32, Body>>(
    index: &I,
    pairs: &[u64],
    frame: usize,
    (boxes, reported, recount): &mut (Vec<Aabb<f32>>, Partners, Partners),
) -> Result<usize, Failure> {
    let n = index.len();
    let origin = Point::new(0.0, 0.0);
    boxes.clear();
    boxes.resize(
        n,
        Aabb {
            min: origin,
            max: origin,
        },
    );
    for item in index.iter() {
        boxes[item.value.id as usize] = item.aabb;
    }
    let stride = (n / 1000).max(1);
    reported.clear();
    recount.clear();
    for &key in pairs {
        let (a, b) = pair_of(key);
        for (s, other) in [(a, b), (b, a)] {
            if s % stride == 0 {
                reported.push((s, other));
            }
        }
    }
    for s in (0..n).step_by(stride) {
        let b = boxes[s];
        recount.extend(
            (0..n)
                .filter(|&j| j != s && b.intersects(&boxes[j]))
                .map(|j| (s, j)),
        );
    }
    reported.sort_unstable();
    recount.sort_unstable();
    if reported != recount {
        let missing = recount.iter().find(|p| reported.binary_search(p).is_err());
        let extra = reported.iter().find(|p| recount.binary_search(p).is_err());
        return Err(Failure::Index(spatix::Error::InvariantViolated(format!(
            "frame {frame}: pairs differ from a brute-force recount: {} reported, {} recounted \
             for the sampled agents (first missing {missing:?}, first extra {extra:?})",
            reported.len(),
            recount.len()
        ))));
    }
    Ok(recount.len())
}

/// Every colliding pair into `found`, replacing what it held: on the calling thread, or on
/// `pool` with findings per thread, joined afterwards (the threads that found pairs noted in
/// `seen`).
pub(crate) fn find_pairs<I: Structure<f32, Body>>(
    index: &I,
    pool: Option<&rayon::ThreadPool>,
    seen: Option<&ThreadsSeen>,
    found: &mut Found,
) {
    found.keys.clear();
    found.bodies.clear();
    let visit = |found: &mut Found, a: Item<'_, f32, Body>, b: Item<'_, f32, Body>| {
        found.keys.push(pair_key(a.value.id, b.value.id));
        found
            .bodies
            .extend([(a.handle, *a.value), (b.handle, *b.value)]);
    };
    let first = core::mem::take(found);
    *found = match (pool, seen) {
        (Some(pool), Some(seen)) => pool.install(|| {
            index.fold_pairs(
                true,
                first,
                || {
                    seen.mark();
                    Found::default()
                },
                visit,
                Found::join,
            )
        }),
        _ => index.fold_pairs(false, first, Found::default, visit, Found::join),
    };
}

/// A colliding pair of agents as one sortable number: the smaller index in the high half.
fn pair_key(a: u32, b: u32) -> u64 {
    (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
}

/// The agents of a [`pair_key`].
fn pair_of(key: u64) -> (usize, usize) {
    ((key >> 32) as usize, (key & 0xFFFF_FFFF) as usize)
}

/// Resolves the colliding pairs in order: along the axis of least overlap (the contact
/// normal), each agent moves away from the other by half the overlap, and an agent moving
/// towards the other has its velocity reflected. Pairs that earlier resolutions already
/// separated are skipped.
pub(crate) fn resolve(agents: &mut [Agent<f32>], pairs: &[u64]) {
    for &key in pairs {
        let (i, j) = pair_of(key);
        let (a, b) = (agents[i].aabb(), agents[j].aabb());
        let overlap_x = a.max.x.min(b.max.x) - a.min.x.max(b.min.x);
        let overlap_y = a.max.y.min(b.max.y) - a.min.y.max(b.min.y);
        if !(overlap_x > 0.0 && overlap_y > 0.0) {
            continue;
        }
        let (pi, pj) = (agents[i].position, agents[j].position);
        let (mut vi, mut vj) = (agents[i].velocity, agents[j].velocity);
        let (mut qi, mut qj) = (pi, pj);
        if overlap_x < overlap_y {
            separate(
                (&mut qi.x, &mut vi.x),
                (&mut qj.x, &mut vj.x),
                pj.x - pi.x,
                overlap_x,
            );
        } else {
            separate(
                (&mut qi.y, &mut vi.y),
                (&mut qj.y, &mut vj.y),
                pj.y - pi.y,
                overlap_y,
            );
        }
        (agents[i].position, agents[i].velocity) = (qi, vi);
        (agents[j].position, agents[j].velocity) = (qj, vj);
    }
}

/// One axis of [`resolve`]: `delta` is j's position minus i's (i goes first on a tie).
fn separate(i: (&mut f32, &mut f32), j: (&mut f32, &mut f32), delta: f32, overlap: f32) {
    let normal = if delta < 0.0 { -1.0 } else { 1.0 };
    let half = overlap * 0.5 * normal;
    *i.0 -= half;
    *j.0 += half;
    if *i.1 * normal > 0.0 {
        *i.1 = -*i.1;
    }
    if *j.1 * normal < 0.0 {
        *j.1 = -*j.1;
    }
}

/// A hash of every agent's position, then every agent's velocity, in agent order (FNV-1a
/// over their bits).
fn checksum(agents: &[Agent<f32>]) -> u64 {
    let words = agents
        .iter()
        .map(|a| a.position)
        .chain(agents.iter().map(|a| a.velocity))
        .flat_map(|p| [p.x.to_bits(), p.y.to_bits()]);
    words.fold(0xCBF2_9CE4_8422_2325, |hash, word| {
        (hash ^ u64::from(word)).wrapping_mul(0x0100_0000_01B3)
    })
}

impl Report {
    fn print(&self, agents: usize, frames: usize, threads: u32) {
        println!("index: {}, built in {:.1} ms", self.index, self.build_ms);
        println!();
        println!(
            "{:<20}{:>12}{:>12}{:>12}{:>9}",
            "per frame", "median", "p95", "max", "threads"
        );
        let (moved, paired) = self.threads;
        let moves = match self.moves {
            Moves::PerHandle => "move + update",
            Moves::UpdateAll => "move, update_all",
            Moves::ParUpdateAll => "move, par_update_all",
        };
        for (name, series, threads) in [
            (moves, &self.update, moved.to_string()),
            ("find pairs", &self.pairs, paired.to_string()),
            ("sort + resolve", &self.resolve, "1".to_owned()),
            ("maintain", &self.maintain, "1".to_owned()),
            ("whole frame", &self.frame, String::new()),
        ] {
            let s = series.summary();
            println!(
                "{name:<20}{:>9.3} ms{:>9.3} ms{:>9.3} ms{threads:>9}",
                s.median, s.p95, s.max
            );
        }
        let p = self.pair_counts.summary();
        println!("{:<20}{:>12}{:>12}{:>12}", "pairs", p.median, p.p95, p.max);
        println!();
        if threads > 1 {
            println!("{:<16}{}", "threads", self.threads_used(threads, moves));
        }
        println!(
            "{:<16}{:.1} bytes per agent ({:.1} MiB)",
            "index memory",
            self.index_bytes as f64 / agents.max(1) as f64,
            mib(self.index_bytes as u64)
        );
        match self.peak_resident {
            Some(peak) => println!("{:<16}{:.1} MiB", "peak resident", mib(peak)),
            None => println!("{:<16}n/a", "peak resident"),
        }
        println!("{:<16}{}", "memory", self.steadiness(frames));
        if self.verified.0 > 0 {
            println!(
                "{:<16}{} checked against a brute-force recount ({} of sampled agents), len() \
                 constant: all identical",
                "verified",
                count(self.verified.0 as u64, "frame", "frames"),
                count(self.verified.1 as u64, "pair", "pairs")
            );
        }
        println!(
            "{:<16}{:#018x} (a run's result: the same for every --index and --threads)",
            "final state", self.checksum
        );
        if let Some(picture) = &self.picture {
            println!(
                "{:<16}{picture} (drawing is not in the frame times)",
                "picture"
            );
        }
    }

    /// What `--threads` (above 1) did: which phases ran on how many threads (counted as the
    /// run went: the threads that did some of the phase's work), or that the structure has
    /// no parallel pass to give them.
    fn threads_used(&self, threads: u32, moves: &str) -> String {
        if !self.parallel {
            let name = self.index.split_whitespace().next().unwrap_or_default();
            return format!(
                "--threads {threads} unused: {name} has no parallel pair pass or \
                 par_update_all, so every phase ran on 1 thread"
            );
        }
        let on = |n: usize| count(n as u64, "thread", "threads");
        format!(
            "--threads {threads}: {moves} on {}, find pairs on {}; sort + resolve and maintain \
             on 1",
            on(self.threads.0),
            on(self.threads.1)
        )
    }

    /// Whether memory settled after warm-up: the index's `memory_bytes()` stopped changing
    /// in the first half of the frames, and the process's resident memory never exceeded
    /// over the second half the peak it reached in the first.
    fn steadiness(&self, frames: usize) -> String {
        let warm = frames / 2;
        if warm == 0 {
            return "n/a (fewer than 2 frames)".to_owned();
        }
        let index_mib = mib(self.index_bytes as u64);
        let last = self.index_changed.frame;
        let mut settled = last <= warm;
        let index = match last {
            0 => format!("index {index_mib:.1} MiB from the build on"),
            f if f <= warm => format!("index {index_mib:.1} MiB since frame {f}"),
            f => format!(
                "index changed after warm-up: {:.1} MiB at frame {warm}, {index_mib:.1} MiB \
                 from frame {f} on ({} after frame {warm}, none over the last {})",
                mib(self.index_warm_bytes as u64),
                count(self.index_changes_after_warm as u64, "change", "changes"),
                count((frames - f) as u64, "frame", "frames")
            ),
        };
        let resident = match &self.resident {
            Some(
                halves @ Halves {
                    first_peak,
                    second: Some((lo, hi)),
                    ..
                },
            ) => {
                let span = format!(
                    "{:.1}-{:.1} MiB over frames {}-{frames}",
                    mib(*lo),
                    mib(*hi),
                    warm + 1
                );
                if halves.flat() {
                    format!(
                        "resident memory stopped growing: {span}, no higher than its \
                         warm-up peak ({:.1} MiB)",
                        mib(*first_peak)
                    )
                } else {
                    settled = false;
                    format!(
                        "resident memory grew after warm-up: {span}, {} KiB above its warm-up \
                         peak ({:.1} MiB)",
                        hi.saturating_sub(*first_peak) / 1024,
                        mib(*first_peak)
                    )
                }
            }
            _ => "resident memory n/a".to_owned(),
        };
        let verdict = if settled { "settled" } else { "not settled" };
        format!("{verdict}: {index}; {resident}")
    }
}

//! `spatix sim`: the agents demo. N agents move, bounce off the world's edges and off each
//! other; every frame the index is updated, asked for every colliding pair, the collisions are
//! resolved and the index tidied. Ends with a table of frame times, pairs and memory.

use core::ops::ControlFlow;
use std::time::Instant;

use clap::{Args, ValueEnum};
use spatix::{Handle, Item, SpatialIndex};
use spatix_workload::{Agents, Layout, Sizes};

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
    /// the default `update_all` (each agent stepped where the index stores it).
    #[arg(long)]
    per_handle: bool,
    /// Threads for the pair pass (every structure but brute-force and layered, which find
    /// their pairs on one).
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
enum SizesArg {
    Uniform,
    Mixed,
}

/// `--layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LayoutArg {
    Uniform,
    Clustered,
}

/// Most agents a run may have: what every structure holds (its slot table addresses 2^32 - 2
/// elements; [`spatix::Error::CapacityExceeded`] past that).
const MAX_AGENTS: u32 = u32::MAX - 1;

/// Bytes a run needs per agent, at least: its position, velocity and half extents (24), its
/// box in the structure's plan (16) and its handle (8), and what the leanest structure keeps
/// per element (32).
const BYTES_PER_AGENT: u64 = 80;

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
            Recorder::new(target, agents.world, args.size, every)
        })
        .transpose()?;
    let plan = Plan {
        world: agents.world,
        sample: agents.boxes().collect(),
        count: agents.len(),
    };
    let world = agents.world;
    let sim = Simulation {
        agents,
        frames: args.frames as usize,
        pool,
        recorder,
        verify_every: args.verify_every.map_or(0, |k| k as usize),
        per_handle: args.per_handle,
    };
    println!(
        "spatix sim: {} ({} layout, {} sizes, seed {}) in a {} x {} world, {}, {}",
        count(args.agents.into(), "agent", "agents"),
        value_name(&args.layout),
        value_name(&args.sizes),
        args.seed,
        decimal(f64::from(world.max.x - world.min.x)),
        decimal(f64::from(world.max.y - world.min.y)),
        count(args.frames.into(), "frame", "frames"),
        count(args.threads.into(), "thread", "threads"),
    );
    let report = args.index.with_index(plan, sim).map_err(Failure::Index)??;
    report.print(args.agents as usize, args.frames as usize);
    Ok(())
}

/// The name an option's value has on the command line.
fn value_name<E: ValueEnum>(value: &E) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// The simulation, handed to whichever structure `--index` chose.
struct Simulation {
    agents: Agents<f32>,
    frames: usize,
    pool: Option<rayon::ThreadPool>,
    recorder: Option<Recorder>,
    /// Check against a recount every this many frames (0: never).
    verify_every: usize,
    /// `--per-handle`.
    per_handle: bool,
}

/// What a run measured.
#[derive(Debug)]
struct Report {
    index: String,
    /// `--per-handle`: the agents moved by `update`, not `update_all`.
    per_handle: bool,
    build_ms: f64,
    update: Series,
    pairs: Series,
    resolve: Series,
    maintain: Series,
    frame: Series,
    pair_counts: Series,
    index_bytes: usize,
    index_changed: LastChange,
    /// The process's resident memory, over the warm-up half and the second half.
    resident: Option<Halves>,
    peak_resident: Option<u64>,
    checksum: u64,
    picture: Option<String>,
    /// Frames checked against a recount, and the pairs those checks compared.
    verified: (usize, usize),
}

impl UseIndex<f32, u32> for Simulation {
    type Output = Result<Report, Failure>;

    fn run<I: Structure<f32, u32> + SpatialIndex<f32, u32>>(
        self,
        mut index: I,
    ) -> Result<Report, Failure> {
        let Self {
            mut agents,
            frames,
            pool,
            mut recorder,
            verify_every,
            per_handle,
        } = self;
        let start = Instant::now();
        let handles = (0..agents.len())
            .map(|i| index.insert(agents.aabb(i), i as u32))
            .collect::<Result<Vec<Handle>, _>>()
            .map_err(Failure::Index)?;
        let build_ms = start.elapsed().as_secs_f64() * 1e3;

        let series = || Series::with_capacity(frames);
        let mut report = Report {
            index: index.describe(),
            per_handle,
            build_ms,
            update: series(),
            pairs: series(),
            resolve: series(),
            maintain: series(),
            frame: series(),
            pair_counts: series(),
            index_bytes: 0,
            index_changed: LastChange::default(),
            resident: Resident::read().map(|_| Halves::new(frames / 2)),
            peak_resident: None,
            checksum: 0,
            picture: None,
            verified: (0, 0),
        };
        let mut pairs: Vec<u64> = Vec::new();
        let mut colliding = vec![false; if recorder.is_some() { agents.len() } else { 0 }];
        let progress = Progress::new(frames);
        let mut verify_buffers = (Vec::new(), Vec::new());

        for frame in 1..=frames {
            let t0 = Instant::now();
            if per_handle {
                agents.step();
                for (i, &h) in handles.iter().enumerate() {
                    index.update(h, agents.aabb(i)).map_err(Failure::Index)?;
                }
            } else {
                index
                    .update_all(|_, &mut i, _| {
                        agents.step_agent(i as usize);
                        agents.aabb(i as usize)
                    })
                    .map_err(Failure::Index)?;
            }
            let t1 = Instant::now();
            collect_pairs(&index, pool.as_ref(), &mut pairs);
            let found = Instant::now();
            if verify_every > 0 && frame % verify_every == 0 {
                if index.len() != handles.len() {
                    return Err(Failure::Index(spatix::Error::InvariantViolated(format!(
                        "frame {frame}: the index holds {} agents, expected {}",
                        index.len(),
                        handles.len()
                    ))));
                }
                report.verified.0 += 1;
                report.verified.1 += verify_pairs(&agents, &pairs, frame, &mut verify_buffers)?;
            }
            let checked = Instant::now();
            let t2 = found;
            // A canonical order, so that the run does not depend on the structure or threads.
            pairs.sort_unstable();
            resolve(&mut agents, &pairs);
            let t3 = Instant::now();
            index.maintain();
            let t4 = Instant::now();

            report.update.push_ms(t1 - t0);
            report.pairs.push_ms(t2 - t1);
            report.resolve.push_ms(t3 - checked);
            report.maintain.push_ms(t4 - t3);
            report.frame.push_ms(t4 - t0 - (checked - found));
            report.pair_counts.push(pairs.len() as f64);
            report
                .index_changed
                .record(frame, index.memory_bytes() as u64);
            if let (Some(changed), Some(resident)) = (&mut report.resident, Resident::read()) {
                changed.record(frame, resident.now);
            }
            if let Some(recorder) = recorder.as_mut().filter(|r| r.wants(frame, frames)) {
                colliding.fill(false);
                for &key in &pairs {
                    let (a, b) = pair_of(key);
                    colliding[a] = true;
                    colliding[b] = true;
                }
                recorder.record(&agents, &colliding, &index)?;
            }
            let frame_time = t4 - t0 - (checked - found);
            progress.frame(frame, frame_time.as_secs_f64() * 1e3, pairs.len());
        }
        progress.finish();
        report.index_bytes = index.memory_bytes();
        report.peak_resident = Resident::read().map(|r| r.peak);
        report.checksum = checksum(&agents);
        report.picture = recorder.map(Recorder::finish).transpose()?;
        Ok(report)
    }
}

/// (sampled agent, partner) pairs.
type Partners = Vec<(usize, usize)>;

/// The soak check: the partners of every 1000th-or-so agent, among the pairs the index
/// reported, equal a brute-force recount over all agents. Returns the pairs compared.
///
/// `reported` and `recount` are the caller's buffers, reused so that a soak run's memory stays
/// flat.
fn verify_pairs(
    agents: &Agents<f32>,
    pairs: &[u64],
    frame: usize,
    (reported, recount): &mut (Partners, Partners),
) -> Result<usize, Failure> {
    let n = agents.len();
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
        let b = agents.aabb(s);
        recount.extend(
            (0..n)
                .filter(|&j| j != s && b.intersects(&agents.aabb(j)))
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

/// Every colliding pair, as [`pair_key`]s into `pairs`: on the calling thread, or on `pool`
/// with a list per thread, the lists joined afterwards.
fn collect_pairs<I: Structure<f32, u32>>(
    index: &I,
    pool: Option<&rayon::ThreadPool>,
    pairs: &mut Vec<u64>,
) {
    pairs.clear();
    let key = |a: Item<'_, f32, u32>, b: Item<'_, f32, u32>| pair_key(*a.value, *b.value);
    match pool {
        Some(pool) => pool.install(|| index.pairs_parallel(key, pairs)),
        None => {
            let _ = index.for_each_pair(|a, b| {
                pairs.push(key(a, b));
                ControlFlow::Continue(())
            });
        }
    }
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
fn resolve(agents: &mut Agents<f32>, pairs: &[u64]) {
    for &key in pairs {
        let (i, j) = pair_of(key);
        let (a, b) = (agents.aabb(i), agents.aabb(j));
        let overlap_x = a.max.x.min(b.max.x) - a.min.x.max(b.min.x);
        let overlap_y = a.max.y.min(b.max.y) - a.min.y.max(b.min.y);
        if !(overlap_x > 0.0 && overlap_y > 0.0) {
            continue;
        }
        let (pi, pj) = (agents.positions[i], agents.positions[j]);
        let (mut vi, mut vj) = (agents.velocities[i], agents.velocities[j]);
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
        agents.positions[i] = qi;
        agents.positions[j] = qj;
        agents.velocities[i] = vi;
        agents.velocities[j] = vj;
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

/// A hash of every agent's position and velocity (FNV-1a over their bits).
fn checksum(agents: &Agents<f32>) -> u64 {
    let words = agents
        .positions
        .iter()
        .chain(&agents.velocities)
        .flat_map(|p| [p.x.to_bits(), p.y.to_bits()]);
    words.fold(0xCBF2_9CE4_8422_2325, |hash, word| {
        (hash ^ u64::from(word)).wrapping_mul(0x0100_0000_01B3)
    })
}

impl Report {
    fn print(&self, agents: usize, frames: usize) {
        println!("index: {}, built in {:.1} ms", self.index, self.build_ms);
        println!();
        println!(
            "{:<16}{:>12}{:>12}{:>12}",
            "per frame", "median", "p95", "max"
        );
        for (name, series) in [
            (
                if self.per_handle {
                    "move + update"
                } else {
                    "move, update_all"
                },
                &self.update,
            ),
            ("find pairs", &self.pairs),
            ("sort + resolve", &self.resolve),
            ("maintain", &self.maintain),
            ("whole frame", &self.frame),
        ] {
            let s = series.summary();
            println!(
                "{name:<16}{:>9.3} ms{:>9.3} ms{:>9.3} ms",
                s.median, s.p95, s.max
            );
        }
        let p = self.pair_counts.summary();
        println!("{:<16}{:>12}{:>12}{:>12}", "pairs", p.median, p.p95, p.max);
        println!();
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
        println!("{:<16}{}", "memory steady", self.steadiness(frames));
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

    /// Whether memory stopped growing after warm-up: the index's `memory_bytes()` is unchanged
    /// over the second half of the frames, and the process's resident memory never exceeds
    /// over it the peak it reached in the first half.
    fn steadiness(&self, frames: usize) -> String {
        let warm = frames / 2;
        if warm == 0 {
            return "n/a (fewer than 2 frames)".to_owned();
        }
        let index = self.index_changed.frame;
        let mut verdict = index <= warm;
        let mut detail = match index {
            0 => "index memory never changed".to_owned(),
            f => format!("index memory last changed at frame {f}"),
        };
        match &self.resident {
            Some(Halves {
                first_peak,
                second: Some((lo, hi)),
                ..
            }) => {
                verdict &= self.resident.is_some_and(|r| r.flat());
                detail += &format!(
                    ", resident memory {:.1}-{:.1} MiB after warm-up (peak {:.1} MiB before)",
                    mib(*lo),
                    mib(*hi),
                    mib(*first_peak)
                );
            }
            _ => detail += ", resident memory n/a",
        }
        let answer = if verdict { "yes" } else { "no" };
        format!(
            "{answer}: {detail} (steady = index memory unchanged and resident memory no higher \
             than its warm-up peak over frames {}-{frames})",
            warm + 1
        )
    }
}

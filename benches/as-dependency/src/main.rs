//! spatix as a user builds it: a small program of its own that depends on the library by path,
//! with no profile settings, so that `cargo build --release` cuts it (and the generic code of
//! spatix that it instantiates) into cargo's default 16 codegen units without LTO. Issue 47
//! found frames 35-40% slower this way than in the workspace's own builds, depending on how
//! code the frame never calls moved the caller's cut.
//!
//! ```text
//! spatix-as-dependency [--dense N] [--sparse N] [--points N] [--queries Q] [--frames F]
//!                      [--only TEXT] [--list]
//! ```
//!
//! Cases (names `kind setting structure`):
//! - `frame dense|sparse S`: the agents frame of every dynamic structure (each agent the
//!   element's value, stepped inside `update_all`; `maintain`; every colliding pair counted),
//!   made as `compare` makes it; `frame … PackedIndex` rebuilds the packed index each frame
//!   from the stepped agents, `build … SweepGrid` times the sweep grid's bulk build. Dense:
//!   the workload's uniform agents (half-sizes in [1, 3), speeds in [0.5, 2), world side
//!   `1000 · sqrt(N / 10k)`); sparse: hshg's setting (half-size 7, world side
//!   `32768 · sqrt(N / 500k)`, up to 0.5 per axis).
//! - `query uniform|clustered S`: the kd-tree's k-nearest (k = 1, 8, 64) and radius (10)
//!   queries, the packed index's rectangle and 8-nearest queries, `Q` (10k) of each.
//!
//! Each case prints `name<TAB>median ms<TAB>min ms<TAB>max ms<TAB>answer` over its `F`
//! measured runs (after one warm-up); the answer (pairs or results found) tells whether two
//! builds did the same work. Every measured run goes through [`measured`], the one function
//! `scripts/split-guard.sh` has callgrind collect in. The data is generated here (a
//! SplitMix64 of its own), so the program builds against any commit of spatix since
//! 2026-11-27, which `scripts/perf-ab.sh` relies on.

use std::hint::black_box;
use std::ops::ControlFlow;
use std::time::Instant;

use spatix::prelude::*;
use spatix::{
    Aabb, HierarchicalGrid, KdTree, Layered, LooseGrid, LooseQuadtree, MxCifQuadtree, PackedIndex,
    Point, PointGrid, Quadtree, SweepGrid, UniformGrid, Workspace,
};

/// One measured run: the only code `scripts/split-guard.sh` counts (by this name).
#[inline(never)]
fn measured(f: &mut dyn FnMut() -> u64) -> u64 {
    f()
}

/// SplitMix64: the same numbers on every machine and at every commit.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A moving box, kept as its element's value and stepped where the index stores it.
#[derive(Clone, Copy, Debug)]
struct Agent {
    position: Point<f32>,
    velocity: Point<f32>,
    half: Point<f32>,
}

impl Agent {
    /// Moves by the velocity, turning back on an axis whose edge of `arena` it crossed.
    #[inline]
    fn step(&mut self, arena: &Aabb<f32>) {
        let (p, v) = (&mut self.position, &mut self.velocity);
        p.x += v.x;
        p.y += v.y;
        if (p.x < arena.min.x && v.x < 0.0) || (p.x > arena.max.x && v.x > 0.0) {
            v.x = -v.x;
        }
        if (p.y < arena.min.y && v.y < 0.0) || (p.y > arena.max.y && v.y > 0.0) {
            v.y = -v.y;
        }
    }

    #[inline]
    fn aabb(&self) -> Aabb<f32> {
        Aabb {
            min: Point::new(self.position.x - self.half.x, self.position.y - self.half.y),
            max: Point::new(self.position.x + self.half.x, self.position.y + self.half.y),
        }
    }
}

/// The square `[0, side]²`.
fn square(side: f64) -> Aabb<f32> {
    Aabb {
        min: Point::new(0.0, 0.0),
        max: Point::new(side as f32, side as f32),
    }
}

/// A population of agents and the world they move in.
#[derive(Clone)]
struct Agents {
    world: Aabb<f32>,
    agents: Vec<Agent>,
}

impl Agents {
    /// The workload's uniform agents ("dense"): half-sizes in [1, 3), speeds in [0.5, 2).
    fn dense(n: usize) -> Self {
        let side = 1000.0 * (n as f64 / 10_000.0).sqrt();
        let mut rng = Rng(0x5eed_0001);
        let agents = (0..n)
            .map(|_| {
                let half = Point::new(rng.range(1.0, 3.0) as f32, rng.range(1.0, 3.0) as f32);
                let position = Point::new(rng.range(0.0, side) as f32, rng.range(0.0, side) as f32);
                let (speed, angle) = (rng.range(0.5, 2.0), rng.range(0.0, std::f64::consts::TAU));
                let velocity =
                    Point::new((speed * angle.cos()) as f32, (speed * angle.sin()) as f32);
                Agent {
                    position,
                    velocity,
                    half,
                }
            })
            .collect();
        Self {
            world: square(side),
            agents,
        }
    }

    /// hshg's sparse setting: half-size 7, up to 0.5 per axis, side 32768 at 500k.
    fn sparse(n: usize) -> Self {
        let side = (32_768.0 * (n as f64 / 500_000.0).sqrt()).max(10.0);
        let mut rng = Rng(0x5eed_0002);
        let agents = (0..n)
            .map(|_| {
                let position = Point::new(rng.range(0.0, side) as f32, rng.range(0.0, side) as f32);
                let velocity = Point::new(rng.range(-0.5, 0.5) as f32, rng.range(-0.5, 0.5) as f32);
                Agent {
                    position,
                    velocity,
                    half: Point::new(7.0, 7.0),
                }
            })
            .collect();
        Self {
            world: square(side),
            agents,
        }
    }

    fn boxes(&self) -> Vec<Aabb<f32>> {
        self.agents.iter().map(Agent::aabb).collect()
    }
}

/// The mean extent of the boxes, at least 1 (`compare`'s size for the quadtrees).
fn typical_size(boxes: &[Aabb<f32>]) -> f32 {
    let sum: f64 = boxes
        .iter()
        .map(|b| f64::from(b.size().x + b.size().y) * 0.5)
        .sum();
    (sum / boxes.len().max(1) as f64).max(1.0) as f32
}

/// The 95th percentile of the boxes' half-sizes (`compare`'s threshold for `Layered`).
fn layered_threshold(boxes: &[Aabb<f32>]) -> f32 {
    let mut halves: Vec<f32> = boxes
        .iter()
        .map(|b| b.size().x.max(b.size().y) * 0.5)
        .collect();
    halves.sort_unstable_by(f32::total_cmp);
    halves.get(halves.len() * 95 / 100).copied().unwrap_or(0.0)
}

/// Every colliding pair of `index`, counted.
fn pairs<I: SpatialQuery<f32, Agent>>(index: &I) -> u64 {
    let mut pairs = 0u64;
    let _ = index.for_each_pair(|_, _| {
        pairs += 1;
        ControlFlow::Continue(())
    });
    pairs
}

/// Runs `run` once uncounted, then `frames` times timed: (median, min, max) in ms, and the
/// last run's answer.
fn time(frames: usize, run: &mut dyn FnMut() -> u64) -> ([f64; 3], u64) {
    black_box(run());
    let mut answer = 0;
    let mut times: Vec<f64> = (0..frames)
        .map(|_| {
            let start = Instant::now();
            answer = measured(run);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (
        [times[times.len() / 2], times[0], times[times.len() - 1]],
        answer,
    )
}

/// The agents frame of a dynamic structure: every agent inserted into `make(world, boxes)`,
/// then [`frames`].
fn frame<I: SpatialIndex<f32, Agent>>(
    agents: &Agents,
    runs: usize,
    make: impl FnOnce(Aabb<f32>, &[Aabb<f32>]) -> I,
) -> ([f64; 3], u64) {
    let boxes = agents.boxes();
    let mut index = make(agents.world, &boxes);
    for agent in &agents.agents {
        index
            .insert(agent.aabb(), *agent)
            .expect("agents' boxes are valid");
    }
    index.maintain();
    frames(index, agents.world, runs)
}

/// The sweep grid's frame as `compare` runs it: built in one go (`build_auto`), then
/// [`frames`].
fn sweep_frame(agents: &Agents, runs: usize) -> ([f64; 3], u64) {
    let items = agents.agents.iter().map(|a| (a.aabb(), *a));
    let index = SweepGrid::build_auto(agents.world, items).expect("agents' boxes are valid");
    frames(index, agents.world, runs)
}

/// Each frame steps every agent inside `update_all`, `maintain`s and counts the pairs.
fn frames<I: SpatialIndex<f32, Agent>>(
    mut index: I,
    arena: Aabb<f32>,
    runs: usize,
) -> ([f64; 3], u64) {
    time(runs, &mut || {
        index
            .update_all(|_, agent, _| {
                agent.step(&arena);
                agent.aabb()
            })
            .expect("agents' boxes are valid");
        index.maintain();
        pairs(&index)
    })
}

/// The sweep grid's bulk build from every agent's box.
fn sweep_build(agents: &Agents, frames: usize) -> ([f64; 3], u64) {
    time(frames, &mut || {
        let items = agents.agents.iter().map(|a| (a.aabb(), *a));
        let index = SweepGrid::build_auto(agents.world, items).expect("agents' boxes are valid");
        index.len() as u64
    })
}

/// The packed index rebuilt every frame from the stepped agents, then its pairs.
fn packed_frame(agents: &Agents, frames: usize) -> ([f64; 3], u64) {
    let mut agents = agents.clone();
    let arena = agents.world;
    time(frames, &mut || {
        for agent in &mut agents.agents {
            agent.step(&arena);
        }
        let items = agents.agents.iter().map(|a| (a.aabb(), *a));
        let index = PackedIndex::build(items).expect("agents' boxes are valid");
        pairs(&index)
    })
}

/// `n` points uniform over `[0, side]²` (side `1000 · sqrt(data / 10k)`), or around the same
/// 64 cluster centres for every `seed`.
fn points(n: usize, data: usize, clustered: bool, seed: u64) -> Vec<Point<f32>> {
    let side = 1000.0 * (data as f64 / 10_000.0).sqrt();
    let mut centre = Rng(0x5eed_c0de);
    let centres: Vec<(f64, f64)> = (0..64)
        .map(|_| (centre.range(0.1, 0.9) * side, centre.range(0.1, 0.9) * side))
        .collect();
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            if clustered {
                // A sum of uniforms: close to normal, with sigma side / 40.
                let (cx, cy) = centres[(rng.next() % 64) as usize];
                let sigma = side / 40.0;
                let mut normal = || (0..4).map(|_| rng.range(-1.0, 1.0)).sum::<f64>() * 0.866;
                let (x, y) = (cx + sigma * normal(), cy + sigma * normal());
                Point::new(x.clamp(0.0, side) as f32, y.clamp(0.0, side) as f32)
            } else {
                Point::new(rng.range(0.0, side) as f32, rng.range(0.0, side) as f32)
            }
        })
        .collect()
}

/// The query cases over `n` points of one layout, `q` queries from the same layout.
fn query_cases(cases: &mut Vec<Case>, layout: &'static str, n: usize, q: usize) {
    let clustered = layout == "clustered";
    let make = move || {
        let data = points(n, n, clustered, 0x5eed_0003);
        let queries = points(q, n, clustered, 0x5eed_0004);
        (data, queries)
    };
    let kd = move || {
        let (data, queries) = make();
        let tree = KdTree::build(data.iter().map(|&p| (p, ()))).expect("points are finite");
        (tree, queries)
    };
    for k in [1usize, 8, 64] {
        cases.push(Case::new(
            format!("query {layout} KdTree-nearest-k{k}"),
            move |runs| {
                let (tree, queries) = kd();
                let mut workspace = Workspace::new();
                time(runs, &mut || {
                    let mut found = 0;
                    for &q in &queries {
                        found += tree.nearest(q, k, &mut workspace).len() as u64;
                    }
                    found
                })
            },
        ));
    }
    cases.push(Case::new(
        format!("query {layout} KdTree-within-r10"),
        move |runs| {
            let (tree, queries) = kd();
            time(runs, &mut || {
                let mut found = 0;
                for &q in &queries {
                    let _ = tree.within(q, 10.0, |_| {
                        found += 1;
                        ControlFlow::Continue(())
                    });
                }
                found
            })
        },
    ));
    let packed = move || {
        let (data, queries) = make();
        let boxes = data.iter().map(|&p| {
            (
                Aabb {
                    min: p,
                    max: Point::new(p.x + 4.0, p.y + 4.0),
                },
                (),
            )
        });
        let index = PackedIndex::build(boxes).expect("boxes are valid");
        (index, queries)
    };
    cases.push(Case::new(
        format!("query {layout} PackedIndex-query"),
        move |runs| {
            let (index, queries) = packed();
            time(runs, &mut || {
                let mut found = 0;
                for &q in &queries {
                    let area = Aabb {
                        min: q,
                        max: Point::new(q.x + 20.0, q.y + 20.0),
                    };
                    let _ = index.query(&area, |_| {
                        found += 1;
                        ControlFlow::Continue(())
                    });
                }
                found
            })
        },
    ));
    cases.push(Case::new(
        format!("query {layout} PackedIndex-nearest-k8"),
        move |runs| {
            let (index, queries) = packed();
            let mut workspace = Workspace::new();
            time(runs, &mut || {
                let mut found = 0;
                for &q in &queries {
                    found += index.nearest(q, 8, &mut workspace).len() as u64;
                }
                found
            })
        },
    ));
}

/// A named case: given the number of measured runs, its times and answer.
struct Case {
    name: String,
    run: Box<dyn Fn(usize) -> ([f64; 3], u64)>,
}

impl Case {
    fn new(name: String, run: impl Fn(usize) -> ([f64; 3], u64) + 'static) -> Self {
        Self {
            name,
            run: Box::new(run),
        }
    }
}

/// Pushes the frame cases of one setting.
fn frame_cases(cases: &mut Vec<Case>, setting: &'static str, n: usize) {
    let agents = move || {
        if setting == "dense" {
            Agents::dense(n)
        } else {
            Agents::sparse(n)
        }
    };
    macro_rules! dynamic {
        ($($ty:ident: $make:expr;)*) => {$(
            cases.push(Case::new(format!("frame {setting} {}", stringify!($ty)), move |runs| {
                frame(&agents(), runs, |world: Aabb<f32>, boxes: &[Aabb<f32>]| -> $ty<f32, Agent> {
                    #[allow(clippy::redundant_closure_call)]
                    ($make)(world, boxes)
                })
            }));
        )*};
    }
    dynamic! {
        Quadtree: |world, boxes: &[Aabb<f32>]| {
            let mut tree = Quadtree::for_element_size(world, typical_size(boxes)).expect("valid world");
            tree.reserve(boxes.len());
            tree
        };
        LooseQuadtree: |world, boxes: &[Aabb<f32>]| {
            let mut tree = LooseQuadtree::for_element_size(world, typical_size(boxes)).expect("valid world");
            tree.reserve(boxes.len());
            tree
        };
        MxCifQuadtree: |world, boxes: &[Aabb<f32>]| {
            let mut tree = MxCifQuadtree::for_element_size(world, typical_size(boxes)).expect("valid world");
            tree.reserve(boxes.len());
            tree
        };
        UniformGrid: |world, boxes: &[Aabb<f32>]| UniformGrid::auto(world, boxes).expect("valid world");
        LooseGrid: |world, boxes: &[Aabb<f32>]| LooseGrid::auto(world, boxes).expect("valid world");
        PointGrid: |world, boxes: &[Aabb<f32>]| PointGrid::auto(world, boxes).expect("valid world");
        HierarchicalGrid: |world, boxes: &[Aabb<f32>]| HierarchicalGrid::auto(world, boxes).expect("valid world");
        Layered: |world, boxes: &[Aabb<f32>]| Layered::new(world, layered_threshold(boxes)).expect("valid world");
    }
    cases.push(Case::new(
        format!("frame {setting} SweepGrid"),
        move |runs| sweep_frame(&agents(), runs),
    ));
    cases.push(Case::new(
        format!("frame {setting} PackedIndex"),
        move |runs| packed_frame(&agents(), runs),
    ));
    cases.push(Case::new(
        format!("build {setting} SweepGrid"),
        move |runs| sweep_build(&agents(), runs),
    ));
}

fn main() {
    let (mut dense, mut sparse, mut points, mut queries) = (1_000_000, 500_000, 1_000_000, 10_000);
    let mut frames = 5;
    let (mut only, mut list) = (String::new(), false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{arg} needs a value")))
        };
        let number = |text: String| {
            text.parse()
                .unwrap_or_else(|_| usage(&format!("not a number: {text}")))
        };
        match arg.as_str() {
            "--dense" => dense = number(value()),
            "--sparse" => sparse = number(value()),
            "--points" => points = number(value()),
            "--queries" => queries = number(value()),
            "--frames" => frames = number(value()).max(1),
            "--only" => only = value(),
            "--list" => list = true,
            _ => usage(&format!("unknown argument {arg}")),
        }
    }
    let mut cases = Vec::new();
    frame_cases(&mut cases, "dense", dense);
    frame_cases(&mut cases, "sparse", sparse);
    query_cases(&mut cases, "uniform", points, queries);
    query_cases(&mut cases, "clustered", points, queries);
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|part| name.contains(part));
    for case in cases.iter().filter(|case| wanted(&case.name)) {
        if list {
            println!("{}", case.name);
            continue;
        }
        let ([median, min, max], answer) = (case.run)(frames);
        println!("{}\t{median:.3}\t{min:.3}\t{max:.3}\t{answer}", case.name);
    }
}

fn usage(why: &str) -> ! {
    eprintln!("{why}\nusage: spatix-as-dependency [--dense N] [--sparse N] [--points N] [--queries Q] [--frames F] [--only TEXT] [--list]");
    std::process::exit(2)
}

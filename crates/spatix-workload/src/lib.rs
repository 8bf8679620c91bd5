//! The standard, seeded workloads shared by the tests, the benchmarks, the fuzz smoke run and
//! the `spatix` command: "agents" that move and bounce off the edges of a square world, the
//! adversarial sets, and the seeded generator behind both.
//!
//! Test and benchmark data, not part of the library: this crate is not published, and its
//! items may change with any commit. The library's own unit tests use only [`Rng`] from it
//! (through a dev-dependency): the other items are built on the library as a dependency, whose
//! types a unit test of the library sees as distinct types.
//!
//! World side: `1000 · sqrt(N / 10_000)` (10k agents in a 1000 × 1000 world, 1M in
//! 10_000 × 10_000); half-size uniform in `[1, 3)`; speed uniform in `[0.5, 2)` in a random
//! direction. [`Agents::scattered`] makes other settings of one size and speed, such as
//! [`Scatter::sparse`].
//!
//! ```
//! use spatix_workload::{Agents, Layout, Sizes};
//! let mut agents = Agents::<f32>::new(1000, Layout::Uniform, Sizes::Uniform, 7);
//! assert_eq!(agents.len(), 1000);
//! agents.step();
//! assert!(agents.aabb(0).is_valid());
//! ```

use spatix::{Aabb, Point, Scalar};

/// A small, fast, seeded pseudo-random generator (SplitMix64): reproducible everywhere, no
/// dependencies.
///
/// ```
/// use spatix_workload::Rng;
/// let (mut a, mut b) = (Rng::new(1), Rng::new(1));
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.range(2.0, 3.0);
/// assert!((2.0..3.0).contains(&x));
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    ///
    /// ```
    /// let _ = spatix_workload::Rng::new(42);
    /// ```
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let _ = spatix_workload::Rng::new(42).next_u64();
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    ///
    /// ```
    /// assert!(spatix_workload::Rng::new(3).unit() < 1.0);
    /// ```
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    ///
    /// ```
    /// assert!(spatix_workload::Rng::new(3).range(-1.0, 1.0) < 1.0);
    /// ```
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (`n > 0`).
    ///
    /// ```
    /// assert!(spatix_workload::Rng::new(3).below(10) < 10);
    /// ```
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Standard normal (Box–Muller).
    ///
    /// ```
    /// assert!(spatix_workload::Rng::new(3).normal().is_finite());
    /// ```
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit();
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (core::f64::consts::TAU * v).cos()
    }
}

/// Where agents start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Uniformly over the world.
    Uniform,
    /// In Gaussian clusters (one per 2,000 agents, at most 64, σ = side / 40).
    Clustered,
    /// All at the centre of the world, not moving: every pair collides.
    Coincident,
    /// Uniformly over a square twice the world's side centred on it, so about three in four
    /// agents start (and keep bouncing) outside the world the index is told about.
    OutOfWorld,
}

/// How big agents are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sizes {
    /// Half-size uniform in `[1, 3)` on each axis.
    Uniform,
    /// As `Uniform`, but 1% are "dragons" with half-size uniform in `[20, 100)`.
    Mixed,
}

/// A setting of same-size agents spread uniformly over a world of their own side: what
/// [`Agents::scattered`] makes, beside the standard [`Layout`] and [`Sizes`].
///
/// ```
/// use spatix_workload::Scatter;
/// let setting = Scatter { side: 100.0, half_size: 2.0, max_speed: 0.25 };
/// assert_eq!(setting, Scatter { side: 100.0, ..setting });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scatter {
    /// Side of the square world, `[0, side]²`.
    pub side: f64,
    /// Half width and half height of every agent.
    pub half_size: f64,
    /// The most an agent moves per step on each axis: each velocity component is uniform in
    /// `[-max_speed, max_speed)`.
    pub max_speed: f64,
}

impl Scatter {
    /// The sparse setting of hshg's benchmark: 500k agents of half-size 7 in a world of side
    /// 32,768, each moving by up to 0.5 per axis; for other `n` the side is scaled to keep
    /// the density (`32_768 · sqrt(n / 500_000)`, at least 10).
    ///
    /// ```
    /// use spatix_workload::Scatter;
    /// let full = Scatter::sparse(500_000);
    /// assert_eq!((full.side, full.half_size, full.max_speed), (32_768.0, 7.0, 0.5));
    /// assert_eq!(Scatter::sparse(125_000).side, 16_384.0);
    /// ```
    pub fn sparse(n: usize) -> Self {
        Self {
            side: (32_768.0 * (n as f64 / 500_000.0).sqrt()).max(10.0),
            half_size: 7.0,
            max_speed: 0.5,
        }
    }
}

/// One moving box: what a simulation keeps as the value of its index's element, so that
/// [`SpatialIndex::update_all`](spatix::SpatialIndex::update_all) steps it where the index
/// stores it.
///
/// ```
/// use spatix_workload::{Agent, Agents, Layout, Sizes};
/// let mut agents = Agents::<f32>::new(10, Layout::Uniform, Sizes::Uniform, 3);
/// let mut copy: Vec<Agent<f32>> = (0..10).map(|i| agents.agent(i)).collect();
/// agents.step();
/// copy.iter_mut().for_each(|a| a.step(&agents.arena));
/// assert!(copy.iter().enumerate().all(|(i, a)| a.aabb() == agents.aabb(i)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent<S> {
    /// Centre.
    pub position: Point<S>,
    /// Displacement per step.
    pub velocity: Point<S>,
    /// Half width and half height.
    pub half_extent: Point<S>,
}

impl<S: Scalar> Agent<S> {
    /// Moves by the velocity; turns back on an axis where the centre has crossed an edge of
    /// `arena` while heading out (what [`Agents::step`] does to every agent).
    #[inline]
    pub fn step(&mut self, arena: &Aabb<S>) {
        step(&mut self.position, &mut self.velocity, arena);
    }

    /// The agent's box.
    #[inline]
    pub fn aabb(&self) -> Aabb<S> {
        box_around(self.position, self.half_extent)
    }
}

/// The box of centre `p` and half extents `h`.
#[inline]
fn box_around<S: Scalar>(p: Point<S>, h: Point<S>) -> Aabb<S> {
    Aabb {
        min: Point::new(p.x - h.x, p.y - h.y),
        max: Point::new(p.x + h.x, p.y + h.y),
    }
}

/// One agent's step: see [`Agent::step`].
#[inline]
fn step<S: Scalar>(p: &mut Point<S>, v: &mut Point<S>, arena: &Aabb<S>) {
    p.x = p.x + v.x;
    p.y = p.y + v.y;
    if (p.x < arena.min.x && v.x < S::ZERO) || (p.x > arena.max.x && v.x > S::ZERO) {
        v.x = -v.x;
    }
    if (p.y < arena.min.y && v.y < S::ZERO) || (p.y > arena.max.y && v.y > S::ZERO) {
        v.y = -v.y;
    }
}

/// A population of moving boxes.
#[derive(Clone, Debug)]
pub struct Agents<S> {
    /// The square world to declare to a structure: `[0, side]²`.
    pub world: Aabb<S>,
    /// Where agents bounce: the world, or a larger square for [`Layout::OutOfWorld`].
    pub arena: Aabb<S>,
    /// Centres.
    pub positions: Vec<Point<S>>,
    /// Displacement per step.
    pub velocities: Vec<Point<S>>,
    /// Half width and half height.
    pub half_extents: Vec<Point<S>>,
}

impl<S: Scalar> Agents<S> {
    /// Side of the world for `n` agents: `1000 · sqrt(n / 10_000)`, at least 10.
    ///
    /// ```
    /// use spatix_workload::Agents;
    /// assert_eq!(Agents::<f64>::world_side(1_000_000), 10_000.0);
    /// ```
    pub fn world_side(n: usize) -> f64 {
        (1000.0 * (n as f64 / 10_000.0).sqrt()).max(10.0)
    }

    /// `n` agents, reproducibly from `seed`.
    ///
    /// ```
    /// use spatix_workload::{Agents, Layout, Sizes};
    /// let a = Agents::<f64>::new(100, Layout::Clustered, Sizes::Mixed, 1);
    /// let b = Agents::<f64>::new(100, Layout::Clustered, Sizes::Mixed, 1);
    /// assert_eq!(a.positions, b.positions);
    /// ```
    pub fn new(n: usize, layout: Layout, sizes: Sizes, seed: u64) -> Self {
        let side = Self::world_side(n);
        let mut rng = Rng::new(seed);
        let square = |lo: f64, hi: f64| Aabb {
            min: Point::new(S::from_f64(lo), S::from_f64(lo)),
            max: Point::new(S::from_f64(hi), S::from_f64(hi)),
        };
        let world = square(0.0, side);
        let arena = match layout {
            Layout::OutOfWorld => square(-side / 2.0, side * 1.5),
            _ => world,
        };
        let (lo, hi) = (arena.min.x.to_f64(), arena.max.x.to_f64());
        let clusters: Vec<(f64, f64)> = (0..(n / 2000).clamp(1, 64))
            .map(|_| (rng.range(0.1, 0.9) * side, rng.range(0.1, 0.9) * side))
            .collect();
        let mut agents = Self {
            world,
            arena,
            positions: Vec::with_capacity(n),
            velocities: Vec::with_capacity(n),
            half_extents: Vec::with_capacity(n),
        };
        for _ in 0..n {
            let dragon = sizes == Sizes::Mixed && rng.unit() < 0.01;
            let (h_lo, h_hi) = if dragon { (20.0, 100.0) } else { (1.0, 3.0) };
            let half = (rng.range(h_lo, h_hi), rng.range(h_lo, h_hi));
            let (x, y) = match layout {
                Layout::Uniform | Layout::OutOfWorld => (rng.range(lo, hi), rng.range(lo, hi)),
                Layout::Clustered => {
                    let (cx, cy) = clusters[rng.below(clusters.len())];
                    let sigma = side / 40.0;
                    (
                        (cx + sigma * rng.normal()).clamp(lo, hi),
                        (cy + sigma * rng.normal()).clamp(lo, hi),
                    )
                }
                Layout::Coincident => (side / 2.0, side / 2.0),
            };
            let (speed, angle) = match layout {
                Layout::Coincident => (0.0, 0.0),
                _ => (rng.range(0.5, 2.0), rng.range(0.0, core::f64::consts::TAU)),
            };
            agents
                .positions
                .push(Point::new(S::from_f64(x), S::from_f64(y)));
            agents.velocities.push(Point::new(
                S::from_f64(speed * angle.cos()),
                S::from_f64(speed * angle.sin()),
            ));
            agents
                .half_extents
                .push(Point::new(S::from_f64(half.0), S::from_f64(half.1)));
        }
        agents
    }

    /// `n` agents of the `setting`, reproducibly from `seed`: centres uniform over its world
    /// (which is also the arena), every agent of its half-size, velocities uniform up to its
    /// speed on each axis.
    ///
    /// ```
    /// use spatix_workload::{Agents, Scatter};
    /// let mut agents = Agents::<f32>::scattered(1000, Scatter::sparse(1000), 7);
    /// assert_eq!(agents.positions, Agents::<f32>::scattered(1000, Scatter::sparse(1000), 7).positions);
    /// assert!(agents.half_extents.iter().all(|h| h.x == 7.0 && h.y == 7.0));
    /// assert!(agents.velocities.iter().all(|v| v.x.abs() <= 0.5 && v.y.abs() <= 0.5));
    /// agents.step();
    /// assert!(agents.aabb(0).is_valid());
    /// ```
    pub fn scattered(n: usize, setting: Scatter, seed: u64) -> Self {
        let Scatter {
            side,
            half_size,
            max_speed,
        } = setting;
        let mut rng = Rng::new(seed);
        let world = Aabb {
            min: Point::new(S::ZERO, S::ZERO),
            max: Point::new(S::from_f64(side), S::from_f64(side)),
        };
        let mut point = |lo: f64, hi: f64| {
            let x = rng.range(lo, hi);
            Point::new(S::from_f64(x), S::from_f64(rng.range(lo, hi)))
        };
        let mut positions = Vec::with_capacity(n);
        let mut velocities = Vec::with_capacity(n);
        for _ in 0..n {
            positions.push(point(0.0, side));
            velocities.push(point(-max_speed, max_speed));
        }
        let half = Point::new(S::from_f64(half_size), S::from_f64(half_size));
        Self {
            world,
            arena: world,
            positions,
            velocities,
            half_extents: vec![half; n],
        }
    }

    /// Number of agents.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// assert!(Agents::<f32>::new(0, Layout::Uniform, Sizes::Uniform, 0).is_empty());
    /// ```
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no agents.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// assert!(!Agents::<f32>::new(5, Layout::Uniform, Sizes::Uniform, 0).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Agent `i`'s box.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// let a = Agents::<f32>::new(5, Layout::Uniform, Sizes::Uniform, 0);
    /// assert!(a.aabb(4).contains_point(a.positions[4]));
    /// ```
    #[inline]
    pub fn aabb(&self, i: usize) -> Aabb<S> {
        box_around(self.positions[i], self.half_extents[i])
    }

    /// Every agent's box, in order.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// let a = Agents::<f64>::new(5, Layout::Uniform, Sizes::Uniform, 0);
    /// assert_eq!(a.boxes().count(), 5);
    /// ```
    pub fn boxes(&self) -> impl ExactSizeIterator<Item = Aabb<S>> + '_ {
        (0..self.len()).map(|i| self.aabb(i))
    }

    /// Moves every agent by its velocity; an agent whose centre has crossed an arena edge
    /// while heading out turns back.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// let mut a = Agents::<f32>::new(100, Layout::Uniform, Sizes::Uniform, 0);
    /// for _ in 0..10_000 { a.step(); }
    /// assert!(a.positions.iter().all(|p| a.arena.contains_point(*p)
    ///     || (p.x - a.arena.min.x).abs() < 2.0 || (p.x - a.arena.max.x).abs() < 2.0
    ///     || (p.y - a.arena.min.y).abs() < 2.0 || (p.y - a.arena.max.y).abs() < 2.0));
    /// ```
    pub fn step(&mut self) {
        let arena = self.arena;
        for (p, v) in self.positions.iter_mut().zip(&mut self.velocities) {
            step(p, v, &arena);
        }
    }

    /// Moves agent `i` alone, as [`step`](Self::step) moves every agent.
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// let mut a = Agents::<f32>::new(3, Layout::Uniform, Sizes::Uniform, 0);
    /// let mut b = a.clone();
    /// a.step();
    /// (0..3).for_each(|i| b.step_agent(i));
    /// assert_eq!(a.positions, b.positions);
    /// ```
    #[inline]
    pub fn step_agent(&mut self, i: usize) {
        step(&mut self.positions[i], &mut self.velocities[i], &self.arena);
    }

    /// Agent `i` on its own (a copy).
    ///
    /// ```
    /// # use spatix_workload::{Agents, Layout, Sizes};
    /// let a = Agents::<f64>::new(5, Layout::Uniform, Sizes::Uniform, 0);
    /// assert_eq!(a.agent(2).aabb(), a.aabb(2));
    /// ```
    pub fn agent(&self, i: usize) -> Agent<S> {
        Agent {
            position: self.positions[i],
            velocity: self.velocities[i],
            half_extent: self.half_extents[i],
        }
    }
}

/// An adversarial data set: the worst case of one structure or another, for the conformance
/// suite and the benchmarks.
///
/// ```
/// use spatix_workload::Adversary;
/// let sets = Adversary::<f32>::all();
/// assert_eq!(sets.len(), 9);
/// assert!(sets.iter().all(|s| s.boxes.iter().all(|b| b.is_valid())));
/// ```
#[derive(Clone, Debug)]
pub struct Adversary<S> {
    /// What it is.
    pub name: String,
    /// The world to declare to a structure.
    pub world: Aabb<S>,
    /// The elements' boxes.
    pub boxes: Vec<Aabb<S>>,
    /// Later positions of the same elements, one `Vec` per frame (empty for still sets).
    pub frames: Vec<Vec<Aabb<S>>>,
    /// Whether every element intersects every other (n (n - 1) / 2 pairs: too many to list).
    pub quadratic: bool,
}

impl<S: Scalar> Adversary<S> {
    /// Every set at its full size ([`Adversary::sized`] with 100k).
    pub fn all() -> Vec<Self> {
        Self::sized(100_000)
    }

    /// Every set, `n` standing for 100k: `n` coincident points; a world-sized box among `n`
    /// tiny boxes; `n / 5` boxes with corners and edges on the 1/2^k lattice of the world
    /// (every quadtree node boundary and power-of-two grid line); `n / 5` boxes around 1e7
    /// with half-unit edges (f32's spacing there is 1.0); `n / 10` extremely thin boxes half
    /// a world long; `n / 10` agents jumping across the world's centre line every frame for
    /// 6 frames; `n` uniform boxes clean, the same with one stray box at 1e9, and with strays
    /// at -1e12, 1e30 and ±MAX (see [`Stray`]), each declared over the bulk of its data.
    /// The tests' fast tier runs them at a tenth of the full size ([`Tier`]).
    ///
    /// ```
    /// use spatix_workload::Adversary;
    /// let sets = Adversary::<f32>::sized(1000);
    /// assert_eq!(sets[0].boxes.len(), 1000);
    /// assert!(sets.iter().all(|s| s.boxes.len() >= 100));
    /// ```
    pub fn sized(n: usize) -> Vec<Self> {
        vec![
            coincident(n),
            world_box_and_dust(n),
            on_boundaries(n / 5),
            near_precision_limit(n / 5),
            thin(n / 10),
            crossing(n / 10),
            strays(format!("{n} boxes, clean"), n, &[]),
            strays(
                format!("{n} boxes and one stray at 1e9"),
                n,
                &[Stray::At1e9],
            ),
            strays(
                format!("{n} boxes and strays at -1e12, 1e30, ±MAX"),
                n,
                &Stray::FAR,
            ),
        ]
    }
}

/// Where a stray element of real data lies: a failed geocode, a sentinel value, a record in
/// the wrong projection. Each is a box of half-size 2 around its spot (a point, once the spot
/// is large enough that ±2 rounds away).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stray {
    /// At (1e6, 1e6).
    At1e6,
    /// At (1e9, 1e9).
    At1e9,
    /// At (1e30, 1e30).
    At1e30,
    /// At (-1e12, 0).
    AtMinus1e12,
    /// At (MAX, MAX) of the scalar type.
    AtMax,
    /// At (-MAX, -MAX) of the scalar type.
    AtMinusMax,
}

impl Stray {
    /// Every spot.
    pub const ALL: [Self; 6] = [
        Self::At1e6,
        Self::At1e9,
        Self::At1e30,
        Self::AtMinus1e12,
        Self::AtMax,
        Self::AtMinusMax,
    ];

    /// The far spots, to put together in one set.
    pub const FAR: [Self; 4] = [
        Self::AtMinus1e12,
        Self::At1e30,
        Self::AtMax,
        Self::AtMinusMax,
    ];

    /// The stray box, in `S`.
    ///
    /// ```
    /// use spatix_workload::Stray;
    /// assert_eq!(Stray::AtMax.aabb::<f32>().max.x, f32::MAX);
    /// assert!(Stray::ALL.iter().all(|s| s.aabb::<f64>().is_valid()));
    /// ```
    pub fn aabb<S: Scalar>(self) -> Aabb<S> {
        let max = S::MAX.to_f64();
        let (x, y) = match self {
            Self::At1e6 => (1e6, 1e6),
            Self::At1e9 => (1e9, 1e9),
            Self::At1e30 => (1e30, 1e30),
            Self::AtMinus1e12 => (-1e12, 0.0),
            Self::AtMax => (max, max),
            Self::AtMinusMax => (-max, -max),
        };
        let at = |v: f64, d: f64| S::from_f64((v + d).clamp(-max, max));
        Aabb {
            min: Point::new(at(x, -2.0), at(y, -2.0)),
            max: Point::new(at(x, 2.0), at(y, 2.0)),
        }
    }
}

/// `base` followed by one box at each of `strays`.
///
/// ```
/// use spatix_workload::{with_strays, Agents, Layout, Sizes, Stray};
/// let base: Vec<_> = Agents::<f64>::new(100, Layout::Uniform, Sizes::Uniform, 1).boxes().collect();
/// let all = with_strays(&base, &[Stray::At1e9]);
/// assert_eq!((all.len(), all[100].min.x), (101, 1e9 - 2.0));
/// ```
pub fn with_strays<S: Scalar>(base: &[Aabb<S>], strays: &[Stray]) -> Vec<Aabb<S>> {
    let mut boxes = base.to_vec();
    boxes.extend(strays.iter().map(|s| s.aabb()));
    boxes
}

/// 100k uniform agents' boxes (half-size 1 to 3 over a world of side 3162) and the given
/// strays, declared over the bulk of the data ([`Aabb::bulk_of`]), as a user would size a
/// structure from a file.
fn strays<S: Scalar>(name: String, n: usize, spots: &[Stray]) -> Adversary<S> {
    let agents = Agents::<S>::new(n, Layout::Uniform, Sizes::Uniform, 16);
    let base: Vec<Aabb<S>> = agents.boxes().collect();
    let boxes = with_strays(&base, spots);
    let world = Aabb::bulk_of(&boxes).expect("valid boxes");
    still(name, world, boxes)
}

fn sq<S: Scalar>(x0: f64, y0: f64, x1: f64, y1: f64) -> Aabb<S> {
    Aabb {
        min: Point::new(S::from_f64(x0), S::from_f64(y0)),
        max: Point::new(S::from_f64(x1), S::from_f64(y1)),
    }
}

/// A set that does not move, whose pairs are few enough to list.
fn still<S>(name: String, world: Aabb<S>, boxes: Vec<Aabb<S>>) -> Adversary<S> {
    Adversary {
        name,
        world,
        boxes,
        frames: Vec::new(),
        quadratic: false,
    }
}

fn coincident<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("{n} coincident points");
    Adversary {
        name,
        world: sq(0.0, 0.0, 1000.0, 1000.0),
        boxes: vec![sq(500.0, 500.0, 500.0, 500.0); n],
        frames: Vec::new(),
        quadratic: true,
    }
}

fn world_box_and_dust<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("a world-sized box among {n} tiny boxes");
    let mut rng = Rng::new(11);
    let mut boxes = vec![sq(0.0, 0.0, 1000.0, 1000.0)];
    boxes.extend((0..n).map(|_| {
        let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        sq(x, y, x + 0.01, y + 0.01)
    }));
    still(name, sq(0.0, 0.0, 1000.0, 1000.0), boxes)
}

/// Corners and edges on the lattice of 1/2^k of the world for k up to 10: every quadtree node
/// boundary and every cell boundary of power-of-two grids.
fn on_boundaries<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("{n} boxes on cell and node boundaries");
    let mut rng = Rng::new(12);
    let side = 1024.0;
    let boxes = (0..n)
        .map(|_| {
            let step = side / f64::from(1u32 << (1 + rng.below(10)));
            let cells = (side / step) as usize;
            let x = rng.below(cells + 1) as f64 * step;
            let y = rng.below(cells + 1) as f64 * step;
            let (w, h) = (rng.below(3) as f64 * step, rng.below(3) as f64 * step);
            sq(x, y, x + w.min(8.0), y + h.min(8.0))
        })
        .collect();
    still(name, sq(0.0, 0.0, side, side), boxes)
}

/// Boxes around 1e7 whose edges fall on half units: in f32 (24-bit mantissa) the spacing there
/// is 1.0, so every edge rounds, and cells of one unit are at the precision limit.
fn near_precision_limit<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("{n} boxes near 1e7 (the limit of f32's precision)");
    let mut rng = Rng::new(13);
    let base = 1e7;
    let boxes = (0..n)
        .map(|_| {
            let x = base + rng.below(1000) as f64 + [0.0, 0.5, -0.5][rng.below(3)];
            let y = base + rng.below(1000) as f64 + [0.0, 0.5, -0.5][rng.below(3)];
            sq(
                x,
                y,
                x + rng.below(3) as f64 * 0.5,
                y + rng.below(3) as f64 * 0.5,
            )
        })
        .collect();
    still(name, sq(base, base, base + 1000.0, base + 1000.0), boxes)
}

/// Zero-width and 1e-9-wide boxes half a world long, horizontal and vertical.
fn thin<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("{n} extremely thin boxes");
    let mut rng = Rng::new(14);
    let boxes = (0..n)
        .map(|i| {
            let (a, b) = (rng.range(0.0, 1000.0), rng.range(0.0, 500.0));
            let width = if i % 2 == 0 { 0.0 } else { 1e-9 * a };
            if i % 4 < 2 {
                sq(b, a, b + 500.0, a + width)
            } else {
                sq(a, b, a + width, b + 500.0)
            }
        })
        .collect();
    still(name, sq(0.0, 0.0, 1000.0, 1000.0), boxes)
}

/// 10k agents on either side of the world's centre line (the root split of every quadtree, a
/// cell boundary of every even grid), all jumping across it every frame.
fn crossing<S: Scalar>(n: usize) -> Adversary<S> {
    let name = format!("{n} agents crossing one boundary every frame");
    let mut rng = Rng::new(15);
    let spots: Vec<(f64, f64)> = (0..n)
        .map(|_| (rng.range(0.5, 4.0), rng.range(0.0, 1000.0)))
        .collect();
    let at = |flip: bool| -> Vec<Aabb<S>> {
        spots
            .iter()
            .enumerate()
            .map(|(i, &(d, y))| {
                let left = (i % 2 == 0) != flip;
                let x = if left { 500.0 - d } else { 500.0 + d };
                sq(x - 0.5, y - 0.5, x + 0.5, y + 0.5)
            })
            .collect()
    };
    Adversary {
        name,
        world: sq(0.0, 0.0, 1000.0, 1000.0),
        boxes: at(false),
        frames: (1..=6).map(|f| at(f % 2 == 1)).collect(),
        quadratic: false,
    }
}

/// How thorough a test run is: the fast tier (README's test command, and CI's) or the deep
/// tier (`scripts/test-deep.sh`, which sets `SPATIX_TESTS=deep`): more random cases per
/// property, the adversarial and bulk sets at full size. Both run every structure through
/// every property; the tiers differ only in how much data each test sees.
///
/// ```
/// use spatix_workload::Tier;
/// assert_eq!(Tier::Fast.pick(10, 100), 10);
/// assert_eq!(Tier::Deep.pick(10, 100), 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Every structure and property, with fewer cases and smaller sets: minutes.
    Fast,
    /// The same with more cases and the full-size sets: what a change to a structure quotes.
    Deep,
}

impl Tier {
    /// The tier that `SPATIX_TESTS` names (`fast`, the default, or `deep`).
    ///
    /// # Panics
    /// On any other value, so that a misspelt deep run cannot pass as a fast one.
    pub fn current() -> Self {
        match std::env::var("SPATIX_TESTS").as_deref() {
            Err(_) | Ok("" | "fast") => Self::Fast,
            Ok("deep") => Self::Deep,
            Ok(other) => panic!("SPATIX_TESTS={other:?}: expected \"fast\" or \"deep\""),
        }
    }

    /// `fast` in the fast tier, `deep` in the deep one.
    pub fn pick<T>(self, fast: T, deep: T) -> T {
        match self {
            Self::Fast => fast,
            Self::Deep => deep,
        }
    }
}

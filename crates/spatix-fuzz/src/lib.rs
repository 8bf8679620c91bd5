//! Differential fuzzing of every spatix structure against `BruteForce`.
//!
//! [`run`] decodes an arbitrary byte string into a structure (its first byte picks one of
//! [`TARGETS`]) and a sequence of operations — insert, remove, update, maintain, clear, query,
//! pairs, nearest, within, raycast, and stale-handle misuse — over coordinates that include NaN,
//! infinities, subnormals, ±MAX, values near the precision limit of f32 and inverted boxes.
//! Every operation is applied to the structure and to the oracle; results are compared
//! exactly, `check_invariants` runs after every step, and any difference panics with a
//! description (which is what the fuzzers catch, as they catch any other panic or a hang).
//!
//! Two drivers call it: the cargo-fuzz target in `fuzz/` (nightly, coverage-guided; see
//! `scripts/fuzz.sh`) and the `smoke` binary (stable: replays the committed corpus, then
//! mutates it at random for a fixed time), which CI runs.
//!
//! ```
//! // Insert a box, query it, list pairs: the grid and the oracle agree.
//! spatix_fuzz::run(&[2, 0, 10, 10, 20, 20, 5, 0, 0, 30, 30, 6]);
//! ```

use core::fmt::Debug;
use core::ops::ControlFlow;

use spatix::prelude::*;
use spatix::{
    Aabb, BruteForce, Handle, MxCifConfig, MxCifQuadtree, Point, Quadtree, QuadtreeConfig, Ray,
    Scalar, UniformGrid, Workspace,
};

/// The structures the fuzzer drives, by name; `run`'s first byte picks one (modulo the count).
pub const TARGETS: &[&str] = &[
    "quadtree-f32",
    "quadtree-f64-small-leaves",
    "grid-f32",
    "grid-f64-fine",
    "mxcif-f32",
    "mxcif-f64-threshold-one",
];

/// The world every fuzzed structure declares: elements outside it are legal and common.
const WORLD: f64 = 128.0;

/// Runs one input: decodes it and checks every operation against the oracle.
///
/// # Panics
/// On any difference from `BruteForce`, any broken invariant, or any panic inside spatix.
pub fn run(data: &[u8]) {
    let Some((&pick, ops)) = data.split_first() else {
        return;
    };
    let world_f32 = Aabb::new(
        Point::new(0.0f32, 0.0),
        Point::new(WORLD as f32, WORLD as f32),
    )
    .expect("valid world");
    let world_f64 =
        Aabb::new(Point::new(0.0f64, 0.0), Point::new(WORLD, WORLD)).expect("valid world");
    match usize::from(pick) % TARGETS.len() {
        0 => drive(
            Quadtree::with_config(world_f32, QuadtreeConfig::for_element_size(&world_f32, 4.0))
                .expect("valid quadtree"),
            ops,
        ),
        1 => drive(
            Quadtree::with_config(
                world_f64,
                QuadtreeConfig {
                    max_elements: 1,
                    max_depth: 5,
                },
            )
            .expect("valid quadtree"),
            ops,
        ),
        2 => drive(UniformGrid::new(world_f32, 8.0).expect("valid grid"), ops),
        3 => drive(UniformGrid::new(world_f64, 4.0).expect("valid grid"), ops),
        4 => drive(
            MxCifQuadtree::with_config(world_f32, MxCifConfig::for_element_size(&world_f32, 1.0))
                .expect("valid MX-CIF quadtree"),
            ops,
        ),
        _ => drive(
            MxCifQuadtree::with_config(
                world_f64,
                MxCifConfig {
                    max_elements: 1,
                    max_depth: 5,
                },
            )
            .expect("valid MX-CIF quadtree"),
            ops,
        ),
    }
}

/// Reads the input a byte at a time; past the end it yields zeros, so every input decodes.
struct Bytes<'a> {
    data: &'a [u8],
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// A coordinate: mostly small lattice values around the world (so boxes meet, touch and
    /// straddle cell and node borders), sometimes a value from the table of hard cases, and
    /// sometimes arbitrary bits.
    fn coord<S: Scalar>(&mut self) -> S {
        let b = self.u8();
        match b {
            0..=199 => S::from_f64(f64::from(b) * 0.75 - 10.0),
            200..=239 => S::from_f64(HARD[usize::from(b - 200) % HARD.len()]),
            _ => {
                let bits = u64::from_le_bytes(core::array::from_fn(|_| self.u8()));
                S::from_f64(f64::from_bits(bits))
            }
        }
    }

    fn point<S: Scalar>(&mut self) -> Point<S> {
        Point::new(self.coord(), self.coord())
    }

    fn aabb<S: Scalar>(&mut self) -> Aabb<S> {
        Aabb {
            min: self.point(),
            max: self.point(),
        }
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Coordinates that break naive code.
const HARD: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    f32::MAX as f64,
    f32::MIN as f64,
    1e-310,
    -1e-310,
    f32::MIN_POSITIVE as f64,
    -0.0,
    0.0,
    WORLD,
    WORLD / 2.0,
    WORLD / 4.0,
    WORLD + 1e-9,
    -1e-9,
    1e7 + 0.5,
    1e7 - 0.5,
    -1e7,
    1e15,
    -1e15,
    1e300,
    0.1,
    8.0,
    16.0,
];

/// One live element as the fuzzer tracks it.
struct Live {
    sut: Handle,
    oracle: Handle,
}

/// The structure under test, the oracle, and what the fuzzer knows.
struct Pair<S: Scalar, I> {
    sut: I,
    oracle: BruteForce<S, u64>,
    live: Vec<Live>,
    stale: Vec<(Handle, Handle)>,
    next_id: u64,
    ws: (Workspace<S>, Workspace<S>),
}

fn drive<S: Scalar, I: SpatialIndex<S, u64>>(sut: I, data: &[u8]) {
    let mut p = Pair {
        sut,
        oracle: BruteForce::new(),
        live: Vec::new(),
        stale: Vec::new(),
        next_id: 0,
        ws: (Workspace::new(), Workspace::new()),
    };
    let mut input = Bytes { data };
    let mut step = 0usize;
    while !input.is_empty() {
        let op = input.u8();
        p.apply(op, &mut input, step);
        p.check(step, op);
        step += 1;
    }
    p.compare_pairs(step);
}

impl<S: Scalar, I: SpatialIndex<S, u64>> Pair<S, I> {
    fn pick(&self, input: &mut Bytes<'_>) -> Option<usize> {
        let i = usize::from(input.u16());
        (!self.live.is_empty()).then(|| i % self.live.len())
    }

    fn apply(&mut self, op: u8, input: &mut Bytes<'_>, step: usize) {
        match op % 16 {
            0..=3 => {
                let b: Aabb<S> = input.aabb();
                let id = self.next_id;
                let (got, want) = (self.sut.insert(b, id), self.oracle.insert(b, id));
                match (got, want) {
                    (Ok(sut), Ok(oracle)) => {
                        self.next_id += 1;
                        self.live.push(Live { sut, oracle });
                    }
                    (Err(_), Err(_)) => {}
                    (got, want) => fail(step, "insert", &b, &got, &want),
                }
            }
            4 => {
                if let Some(i) = self.pick(input) {
                    let e = self.live.swap_remove(i);
                    let (got, want) = (self.sut.remove(e.sut), self.oracle.remove(e.oracle));
                    if got != want || got.is_none() {
                        fail(step, "remove", &e.sut, &got, &want);
                    }
                    self.stale.push((e.sut, e.oracle));
                }
            }
            5 | 6 => {
                let b: Aabb<S> = input.aabb();
                if let Some(i) = self.pick(input) {
                    let e = &self.live[i];
                    let (got, want) = (self.sut.update(e.sut, b), self.oracle.update(e.oracle, b));
                    if got.is_ok() != want.is_ok() {
                        fail(step, "update", &b, &got, &want);
                    }
                }
            }
            7 => {
                self.sut.maintain();
                self.oracle.maintain();
            }
            8 => {
                if input.u8() < 16 {
                    self.sut.clear();
                    self.oracle.clear();
                    self.stale
                        .extend(self.live.drain(..).map(|e| (e.sut, e.oracle)));
                }
            }
            9 => {
                let area: Aabb<S> = input.aabb();
                let got = collect(|f| self.sut.query(&area, |i| f(*i.value)));
                let want = collect(|f| self.oracle.query(&area, |i| f(*i.value)));
                same(step, "query", &area, got, want);
            }
            10 => {
                let (point, k) = (input.point::<S>(), usize::from(input.u8() % 80));
                let got: Vec<(S, u64)> = self
                    .sut
                    .nearest(point, k, &mut self.ws.0)
                    .iter()
                    .map(|n| (n.distance_2, *self.sut.get(n.handle).expect("live").value))
                    .collect();
                let want: Vec<S> = self
                    .oracle
                    .nearest(point, k, &mut self.ws.1)
                    .iter()
                    .map(|n| n.distance_2)
                    .collect();
                let distances: Vec<S> = got.iter().map(|g| g.0).collect();
                let mut ids: Vec<u64> = got.iter().map(|g| g.1).collect();
                ids.sort_unstable();
                ids.dedup();
                if distances != want || ids.len() != got.len() {
                    fail(step, "nearest", &(point, k), &got, &want);
                }
            }
            11 => {
                let (point, radius) = (input.point::<S>(), input.coord::<S>());
                let got = collect(|f| self.sut.within(point, radius, |i| f(*i.value)));
                let want = collect(|f| self.oracle.within(point, radius, |i| f(*i.value)));
                same(step, "within", &(point, radius), got, want);
            }
            12 | 13 => {
                let ray = Ray {
                    origin: input.point(),
                    direction: input.point(),
                    max_t: input.coord(),
                };
                self.raycast(step, &ray);
            }
            14 => self.misuse_stale(input, step),
            _ => self.compare_pairs(step),
        }
    }

    fn raycast(&mut self, step: usize, ray: &Ray<S>) {
        let mut got = Vec::new();
        let _ = self.sut.raycast_all(ray, &mut self.ws.0, |i, t| {
            got.push((t, *i.value));
            ControlFlow::Continue(())
        });
        let mut want = Vec::new();
        let _ = self.oracle.raycast_all(ray, &mut self.ws.1, |i, t| {
            want.push((t, *i.value));
            ControlFlow::Continue(())
        });
        if got.windows(2).any(|w| w[1].0 < w[0].0) {
            fail(step, "raycast order", ray, &got, &want);
        }
        let sorted = |v: &[(S, u64)]| {
            let mut v: Vec<(u64, S)> = v.iter().map(|&(t, id)| (id, t)).collect();
            v.sort_unstable_by_key(|e| e.0);
            v
        };
        if sorted(&got) != sorted(&want) {
            fail(step, "raycast", ray, &got, &want);
        }
        let first = self.sut.raycast(ray, &mut self.ws.0).map(|h| h.t);
        if first != want.first().map(|w| w.0) {
            fail(step, "raycast first", ray, &first, &want.first());
        }
    }

    fn misuse_stale(&mut self, input: &mut Bytes<'_>, step: usize) {
        let which = usize::from(input.u16());
        let b: Aabb<S> = input.aabb();
        let handle = if self.stale.is_empty() {
            Handle::from_bits(u64::from(input.u16()) | u64::from(input.u16()) << 32)
        } else {
            self.stale[which % self.stale.len()].0
        };
        if self.live.iter().any(|e| e.sut == handle) {
            return;
        }
        if self.sut.get(handle).is_some()
            || self.sut.update(handle, b).is_ok()
            || self.sut.remove(handle).is_some()
        {
            fail(step, "stale handle accepted", &handle, &(), &());
        }
    }

    fn compare_pairs(&self, step: usize) {
        let (got, want) = (pairs_of(&self.sut), pairs_of(&self.oracle));
        if got != want {
            fail(step, "pairs", &self.live.len(), &got, &want);
        }
    }

    /// After every step: invariants, length, and every live element findable by handle.
    fn check(&self, step: usize, op: u8) {
        if let Err(e) = self.sut.check_invariants() {
            panic!("step {step} (op {op}): invariant broken: {e}");
        }
        if self.sut.len() != self.oracle.len() || self.sut.len() != self.live.len() {
            panic!(
                "step {step} (op {op}): len {} but the oracle holds {} ({} live)",
                self.sut.len(),
                self.oracle.len(),
                self.live.len()
            );
        }
        for e in &self.live {
            let (got, want) = (self.sut.get(e.sut), self.oracle.get(e.oracle));
            match (got, want) {
                (Some(g), Some(w)) if g.aabb == w.aabb && g.value == w.value => {}
                _ => panic!(
                    "step {step} (op {op}): get({:?}) differs from the oracle",
                    e.sut
                ),
            }
        }
    }
}

/// Every pair `for_each_pair` reports, as sorted (smaller id, larger id) pairs.
fn pairs_of<S: Scalar>(index: &impl SpatialQuery<S, u64>) -> Vec<(u64, u64)> {
    let mut v = Vec::new();
    let _ = index.for_each_pair(|a, b| {
        let (a, b) = (*a.value, *b.value);
        v.push((a.min(b), a.max(b)));
        ControlFlow::Continue(())
    });
    v.sort_unstable();
    v
}

/// Runs a visiting query and returns the ids it reported, sorted (duplicates kept).
fn collect(
    query: impl FnOnce(&mut dyn FnMut(u64) -> ControlFlow<()>) -> ControlFlow<()>,
) -> Vec<u64> {
    let mut ids = Vec::new();
    let _ = query(&mut |id| {
        ids.push(id);
        ControlFlow::Continue(())
    });
    ids.sort_unstable();
    ids
}

fn same(step: usize, what: &str, input: &dyn Debug, got: Vec<u64>, want: Vec<u64>) {
    if got != want {
        fail(step, what, input, &got, &want);
    }
}

fn fail(step: usize, what: &str, input: &dyn Debug, got: &dyn Debug, want: &dyn Debug) -> ! {
    panic!("step {step}: {what} {input:?}: got {got:?}, the oracle {want:?}")
}

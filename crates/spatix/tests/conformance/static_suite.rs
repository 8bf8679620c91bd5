//! The query half of the suite, for static structures (built once from a data set, then only
//! read): the `conformance_static!` macro and its drivers.
//!
//! ```text
//! conformance_static!(kdtree_f32, f32, points, |data| {
//!     spatix::KdTree::build(data.iter().map(|&(b, id)| (b.min, id)))
//! });
//! conformance_static!(packed_f64, f64, boxes, |data| spatix::PackedIndex::build(data.iter().copied()));
//! ```
//!
//! * `$name`: the module of tests; `$scalar`: `f32` or `f64`.
//! * `points` or `boxes`: the kind of data the structure stores. `points` turns every
//!   generated box into the zero-size box at its lower-left corner (so `b.min == b.max`);
//!   `boxes` uses the data variants as they are.
//! * The closure receives a data set `&[(Aabb<S>, u64)]` (element `i` has value `i`; values are
//!   distinct, boxes may repeat) and returns `Result<structure, spatix::Error>`: a structure
//!   holding exactly those elements (with any handles), implementing `SpatialQuery<S, u64>`;
//!   or `Err(Error::InvalidAabb)` when an element's box is invalid (a NaN or infinite
//!   coordinate, or an inverted axis).
//!
//! Each instantiation gets these tests:
//! * `random_<variant>` (six variants, as in `data.rs`) and `random_identical` (every element
//!   the same box): proptest cases, each a data set of 0 to 300 elements (plus duplicated
//!   elements) and up to 48 reads: query, for_each_pair, nearest (k = 0, 1, 2, 8, 64, len,
//!   beyond len), within, raycast_all and raycast, get (also with stale and foreign handles),
//!   iter, len, memory_bytes, and a visitor that breaks on its first call. Every answer is
//!   compared with `BruteForce` built from the same data and with the test's own model, and
//!   `check_invariants` runs after every read. The last step checks everything from every
//!   element (nearest with k = 0, 1, 8, 64, len, len + 1 from each).
//! * `invalid_data`: a data set with one invalid element is rejected with `InvalidAabb`.
//! * `bulk`: seeded data sets of 10,000 elements of every variant and of one repeated box, with
//!   300 random reads and the full check each (pairs compared where at most 2 million
//!   intersect: the oracle's pair pass is quadratic).

use core::fmt;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use spatix::{Aabb, BruteForce, Error, Handle, Scalar, SpatialIndex, SpatialQuery};
use spatix_workload::Tier;

use crate::check::B;
use crate::data::{self, Bx, World};
use crate::harness::{Harness, Stats};
use crate::ops::{self, Op, Stop};
use crate::suite;

/// Instantiates the static suite for one structure: one module of tests named `$name`
/// (see the module docs for the interface).
macro_rules! conformance_static {
    // The kd-tree (points) is not yet exact for squares beyond the range of `S` (issue 16's
    // kd-tree half, done in kdtree/): the extreme variant runs on the boxes kind only.
    ($name:ident, $scalar:ty, points, $make:expr $(,)?) => {
        conformance_static!(@tests $name, $scalar, $crate::static_suite::Kind::Points, $make);
    };
    ($name:ident, $scalar:ty, boxes, $make:expr $(,)?) => {
        conformance_static!(
            @tests $name, $scalar, $crate::static_suite::Kind::Boxes, $make, random_extreme
        );
    };
    (@tests $name:ident, $scalar:ty, $kind:expr, $make:expr $(, $extreme:ident)?) => {
        mod $name {
            use $crate::data::Variant;
            use $crate::static_suite::{self, Kind, Source};

            const KIND: Kind = $kind;

            fn make(
                data: &[(::spatix::Aabb<$scalar>, u64)],
            ) -> Result<$crate::erased::ErasedStatic<$scalar>, ::spatix::Error> {
                static_suite::build(data, $make).map($crate::erased::ErasedStatic::new)
            }

            #[test]
            fn random_uniform() {
                static_suite::random(Source::Variant(Variant::Uniform), KIND, &make);
            }

            #[test]
            fn random_clustered() {
                static_suite::random(Source::Variant(Variant::Clustered), KIND, &make);
            }

            #[test]
            fn random_mixed_sizes() {
                static_suite::random(Source::Variant(Variant::MixedSizes), KIND, &make);
            }

            #[test]
            fn random_coincident() {
                static_suite::random(Source::Variant(Variant::Coincident), KIND, &make);
            }

            #[test]
            fn random_out_of_world() {
                static_suite::random(Source::Variant(Variant::OutOfWorld), KIND, &make);
            }

            #[test]
            fn random_degenerate() {
                static_suite::random(Source::Variant(Variant::Degenerate), KIND, &make);
            }

            $(
                #[test]
                fn $extreme() {
                    static_suite::random(Source::Variant(Variant::Extreme), KIND, &make);
                }
            )?

            #[test]
            fn random_identical() {
                static_suite::random(Source::Identical, KIND, &make);
            }

            #[test]
            fn invalid_data() {
                static_suite::invalid_data::<$scalar, _>(KIND, &make);
            }

            #[test]
            fn bulk() {
                static_suite::bulk(KIND, &make);
            }
        }
    };
}

/// What a static structure stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Boxes, as the data variants make them.
    Boxes,
    /// Points: zero-size boxes.
    Points,
}

/// What a data set is drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Elements drawn independently from a data variant.
    Variant(data::Variant),
    /// One box (of the uniform variant), repeated.
    Identical,
}

impl Source {
    /// The variant whose query points, areas and rays probe the data.
    fn variant(self) -> data::Variant {
        match self {
            Self::Variant(v) => v,
            Self::Identical => data::Variant::Uniform,
        }
    }
}

/// One static case: a data set and the reads to check on the structure built from it.
#[derive(Clone)]
pub(crate) struct Case {
    world: World,
    data: Vec<Bx>,
    probes: Vec<Op>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "world {:?}, {} elements:", self.world, self.data.len())?;
        for (i, b) in self.data.iter().enumerate() {
            writeln!(f, "  #{i:3}: {b:?}")?;
        }
        writeln!(f, "{} reads:", self.probes.len())?;
        for (i, op) in self.probes.iter().enumerate() {
            writeln!(f, "  read {i:3}: {op:?}")?;
        }
        Ok(())
    }
}

/// Longest generated list of reads.
const MAX_PROBES: usize = 48;

/// Elements of the bulk data sets: 2k in the fast tier, 10k in the deep one.
fn bulk_size() -> usize {
    Tier::current().pick(2_000, 10_000)
}

/// The bulk data sets' world: ten times the side of the random cases' worlds, so that the
/// elements (whose sizes do not scale with the world) are about as dense as there.
const BULK_WORLD: World = World {
    min: 0.0,
    side: 1000.0,
};

/// Reads per bulk data set.
const BULK_PROBES: usize = 300;

/// The bulk tests compare `for_each_pair` only where at most this many pairs intersect.
const BULK_PAIRS_MAX: usize = 2_000_000;

/// How the static suite builds a structure from a data set: a `dyn` closure, so that the
/// drivers are instantiated once per structure type, not once per instance of the suite.
pub(crate) type Build<'a, S, I> = &'a dyn Fn(&[(Aabb<S>, u64)]) -> Result<I, Error>;

/// Calls the closure of `conformance_static!` (here so that its argument type is known).
pub(crate) fn build<S, I>(
    data: &[(Aabb<S>, u64)],
    make: impl FnOnce(&[(Aabb<S>, u64)]) -> Result<I, Error>,
) -> Result<I, Error> {
    make(data)
}

/// The zero-size box at a box's lower-left corner.
fn as_point(b: Bx) -> Bx {
    Bx::point(b.min[0], b.min[1])
}

/// Data sets of `source` of a size from `sizes`: for a variant, its boxes with a few elements
/// repeated (so that even uniform points coincide); as points for [`Kind::Points`].
fn data_set(
    source: Source,
    kind: Kind,
    world: World,
    sizes: impl Into<proptest::collection::SizeRange>,
) -> BoxedStrategy<Vec<Bx>> {
    let sizes = sizes.into();
    let set = match source {
        Source::Variant(v) => {
            let copies = vec((any::<u16>(), any::<u16>()), 0..=8);
            (vec(data::boxes(v, world), sizes), copies)
                .prop_map(|(mut set, copies)| {
                    for (from, to) in copies {
                        if !set.is_empty() {
                            let b = set[usize::from(from) % set.len()];
                            set.insert(usize::from(to) % (set.len() + 1), b);
                        }
                    }
                    set
                })
                .boxed()
        }
        Source::Identical => (
            data::boxes(data::Variant::Uniform, world),
            vec(Just(()), sizes),
        )
            .prop_map(|(b, n)| vec![b; n.len()])
            .boxed(),
    };
    match kind {
        Kind::Boxes => set,
        Kind::Points => set
            .prop_map(|set| set.into_iter().map(as_point).collect())
            .boxed(),
    }
}

/// Whole cases: a world, a data set of 0 to 300 elements (sizes 0..=2 and 0..=40 weighted up,
/// so that the empty and the one-element structure are common), and reads.
fn cases(source: Source, kind: Kind) -> impl Strategy<Value = Case> {
    proptest::sample::select(vec![World::W100, World::W128]).prop_flat_map(move |world| {
        let data = prop_oneof![
            1 => data_set(source, kind, world, 0..=2),
            3 => data_set(source, kind, world, 0..=40),
            3 => data_set(source, kind, world, 40..=300),
        ];
        let probes = vec(ops::probe(source.variant(), world), 0..=MAX_PROBES);
        (data, probes).prop_map(move |(data, probes)| Case {
            world,
            data,
            probes,
        })
    })
}

/// Handles of a second instance (and of a second oracle) built from four points: foreign
/// handles, which must name nothing here.
fn foreign<S, I>(make: Build<'_, S, I>, world: Aabb<S>) -> Result<Vec<(Handle, Handle)>, String>
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    let c = world.center();
    let data: Vec<(Aabb<S>, u64)> = [c, world.min, world.max, c]
        .into_iter()
        .enumerate()
        .map(|(i, p)| (Aabb { min: p, max: p }, 1_000_000 + i as u64))
        .collect();
    let other = make(&data).map_err(|e| format!("building from four points failed: {e}"))?;
    let mut other_oracle = BruteForce::new();
    let mut handles = Vec::new();
    for &(b, id) in &data {
        let ho = other_oracle
            .insert(b, id)
            .map_err(|e| format!("ORACLE rejected {:?}: {e}", B(&b)))?;
        let h = other
            .iter()
            .find(|item| *item.value == id)
            .ok_or_else(|| format!("a four-point instance lost element {id}"))?
            .handle;
        handles.push((h, ho));
    }
    Ok(handles)
}

/// Builds the structure and the oracle from `data` and runs `probes`, then the full check;
/// `check_invariants` after every read unless `bulk` (then once before and once after).
fn run<S, I>(
    make: Build<'_, S, I>,
    world: World,
    data: &[Bx],
    probes: &[Op],
    bulk: bool,
) -> Result<Stats, String>
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    let world = world.aabb::<S>();
    let data: Vec<(Aabb<S>, u64)> = data
        .iter()
        .enumerate()
        .map(|(i, b)| (b.to(), i as u64))
        .collect();
    let sut = make(&data)
        .map_err(|e| format!("building from {} valid elements failed: {e}", data.len()))?;
    let mut h = Harness::from_built(sut, &data, world, foreign(make, world)?)?;
    if bulk {
        h.pairs_limit = BULK_PAIRS_MAX;
    }
    h.check_step().map_err(|e| format!("freshly built: {e}"))?;
    for (i, op) in probes.iter().enumerate() {
        h.probe(op)
            .and_then(|()| if bulk { Ok(()) } else { h.check_step() })
            .map_err(|e| format!("read {i} {op:?}: {e}"))?;
    }
    h.check_step()
        .and_then(|()| h.check_all())
        .map_err(|e| format!("full check after the last read ({}): {e}", probes.len()))?;
    h.stats.cases = 1;
    Ok(h.stats)
}

/// Runs the random cases of one source; the failure (if any) is the shrunk one.
pub(crate) fn run_cases<S, I>(
    source: Source,
    kind: Kind,
    make: Build<'_, S, I>,
    config: Config,
) -> Result<Stats, TestError<Case>>
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    run_strategy(source, kind, config, &|case| {
        run(make, case.world, &case.data, &case.probes, false)
    })
}

/// Runs `test` on the random cases of one source and sums their statistics: the one place
/// proptest's runner is instantiated for the static suite (see `suite::run_strategy`).
fn run_strategy(
    source: Source,
    kind: Kind,
    config: Config,
    test: &dyn Fn(&Case) -> Result<Stats, String>,
) -> Result<Stats, TestError<Case>> {
    let stats = std::cell::RefCell::new(Stats::default());
    let mut runner = TestRunner::new(config);
    runner.run(&cases(source, kind), |case| {
        let s = test(&case).map_err(TestCaseError::fail)?;
        stats.borrow_mut().add(&s);
        Ok(())
    })?;
    Ok(stats.into_inner())
}

/// The random cases of one source: panics with the shrunk failure, then checks that the
/// cases exercised every kind of read and outcome.
pub(crate) fn random<S, I>(source: Source, kind: Kind, make: Build<'_, S, I>)
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    let config = suite::config(4096);
    let count = config.cases;
    let s = run_cases(source, kind, make, config)
        .unwrap_or_else(|e| panic!("static conformance failure, {source:?} {kind:?} data: {e}"));
    if count >= suite::COVERAGE_MIN_CASES {
        let reached = [
            ("non-empty query results", s.query_hits),
            ("intersecting pairs", s.pairs),
            ("nearest with k > len", s.nearest_over_len),
            ("early stops", s.early_breaks),
            ("ray hits", s.ray_hits),
            ("stale-handle gets", s.stale),
        ];
        suite::assert_reached(source, &reached, &s);
    }
}

/// A data set with one invalid element is rejected with `InvalidAabb`, wherever it is and
/// however it is invalid; the same data without it builds.
pub(crate) fn invalid_data<S, I>(kind: Kind, make: Build<'_, S, I>)
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let mut bad = vec![
        Bx::point(nan, 1.0),
        Bx::point(1.0, nan),
        Bx::point(inf, 1.0),
        Bx::point(1.0, -inf),
        Bx::point(nan, nan),
    ];
    if kind == Kind::Boxes {
        bad.extend([
            Bx::new(0.0, 0.0, nan, 1.0),
            Bx::new(0.0, 0.0, 1.0, inf),
            Bx::new(2.0, 0.0, 1.0, 1.0),
            Bx::new(0.0, 2.0, 1.0, 1.0),
            Bx::new(-inf, -inf, inf, inf),
        ]);
    }
    let good: Vec<Bx> = (0..50)
        .map(|i| {
            let b = Bx::new(f64::from(i), 3.0, f64::from(i) + 2.0, 4.0);
            if kind == Kind::Points { as_point(b) } else { b }
        })
        .collect();
    let to = |set: &[Bx]| -> Vec<(Aabb<S>, u64)> {
        set.iter()
            .enumerate()
            .map(|(i, b)| (b.to(), i as u64))
            .collect()
    };
    assert!(make(&to(&good)).is_ok(), "the valid data set was rejected");
    for b in bad {
        for at in [0, 17, 50] {
            let mut set = good.clone();
            set.insert(at, b);
            let got = make(&to(&set)).err();
            assert_eq!(
                got,
                Some(Error::InvalidAabb),
                "a data set with the invalid box {b:?} at {at}"
            );
        }
    }
}

/// Seeded data sets of [`bulk_size`] elements from every source, with [`BULK_PROBES`] random reads
/// and the full check each.
pub(crate) fn bulk<S, I>(kind: Kind, make: Build<'_, S, I>)
where
    S: Scalar,
    I: SpatialQuery<S, u64> + Sync,
{
    // The kd-tree is not yet exact on extreme data (see `conformance_static!`).
    let mut sources: Vec<Source> = data::Variant::ALL
        .into_iter()
        .filter(|&v| kind == Kind::Boxes || v != data::Variant::Extreme)
        .map(Source::Variant)
        .collect();
    sources.push(Source::Identical);
    let mut compared = 0;
    for (k, source) in sources.into_iter().enumerate() {
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[k as u8 + 1; 32]),
        );
        let n = bulk_size();
        let data = draw(&mut runner, data_set(source, kind, BULK_WORLD, n..=n));
        let reads = vec(
            ops::probe(source.variant(), BULK_WORLD),
            BULK_PROBES..=BULK_PROBES,
        );
        // The pair pass is compared once, in the full check: the model's count is quadratic.
        let probes: Vec<Op> = draw(&mut runner, reads.boxed())
            .into_iter()
            .filter(|op| !matches!(op, Op::Pairs | Op::Stop(Stop::Pairs)))
            .collect();
        let stats = run(make, BULK_WORLD, &data, &probes, true).unwrap_or_else(|e| {
            panic!(
                "bulk static test, {source:?} {kind:?} data, {} elements: {e}",
                data.len()
            )
        });
        compared += usize::from(stats.pairs_skipped == 0);
        eprintln!(
            "bulk {source:?} {kind:?}: {} elements, {stats:?}",
            data.len()
        );
    }
    assert!(
        compared >= 3,
        "pairs were compared on {compared} bulk data sets only"
    );
}

/// One value of a strategy, from a seeded runner.
fn draw<T: fmt::Debug>(runner: &mut TestRunner, strategy: BoxedStrategy<T>) -> T {
    strategy
        .new_tree(runner)
        .expect("the strategies never reject")
        .current()
}

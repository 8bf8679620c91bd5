//! The `conformance!` macro, and the drivers its tests call.

use std::cell::RefCell;
use std::fmt::Debug;

use proptest::test_runner::{
    Config, RngSeed, TestCaseError, TestError, TestRunner, contextualize_config,
};
use spatix::{Aabb, Scalar, SpatialIndex};

use crate::data::Variant;
use crate::harness::{self, Stats};
use crate::ops::{self, Case};
use crate::scenarios;
use spatix_workload::Tier;

/// Instantiates the whole suite for one structure: one module of tests named `$name`.
///
/// ```text
/// conformance!(quadtree_f32, f32, |world| spatix::Quadtree::new(world).unwrap());
/// conformance!(brute_f64, f64, |world| spatix::BruteForce::new(), bulk_max = 10_000);
/// ```
///
/// The closure gets the world box of the data set and returns an empty structure storing
/// `u64` values. `bulk_max` caps the size of the largest bulk test (default 100_000); only
/// structures whose `for_each_pair` is quadratic need it, and they skip the adversarial data
/// sets (`adversarial.rs`, 10^4 to 10^5 elements each), which the others all run.
/// `max_half_extent` declares that the structure holds only boxes with
/// `max - min <= 2 * max_half_extent` on each axis (computed in the scalar type): it must
/// reject larger valid boxes with `Error::BoxTooLarge` and change nothing, and is compared
/// with the oracle on the rest.
///
/// ```text
/// conformance!(points_f32, f32, |world| spatix::PointGrid::new(world, 4.0).unwrap(), max_half_extent = 4.0);
/// ```
macro_rules! conformance {
    (@or $default:expr) => {
        $default
    };
    (@or $default:expr, $value:expr) => {
        $value
    };
    ($name:ident, $scalar:ty, $make:expr $(, max_half_extent = $bound:expr)? $(,)?) => {
        conformance!(
            @suite $name, $scalar, $make, 100_000,
            conformance!(@or None $(, Some($bound))?), adversarial
        );
    };
    // Without the adversarial sets (instances that add a layer over a structure the suite
    // already runs them on, where they would only add minutes).
    ($name:ident, $scalar:ty, $make:expr, no_adversarial $(, max_half_extent = $bound:expr)? $(,)?) => {
        conformance!(
            @suite $name, $scalar, $make, 100_000, conformance!(@or None $(, Some($bound))?)
        );
    };
    // A structure of the list: bounded by `max_half_extent` where `$bounded` (a constant).
    ($name:ident, $scalar:ty, $make:expr, bounded_if = $bounded:expr, max_half_extent = $bound:expr $(,)?) => {
        conformance!(
            @suite $name, $scalar, $make, 100_000,
            if $bounded { Some($bound) } else { None }, adversarial
        );
    };
    ($name:ident, $scalar:ty, $make:expr, bulk_max = $bulk_max:expr $(,)?) => {
        conformance!(@suite $name, $scalar, $make, $bulk_max, None);
    };
    (@suite $name:ident, $scalar:ty, $make:expr, $bulk_max:expr, $bound:expr
        $(, $adversarial:ident)?) => {
        mod $name {
            use $crate::data::Variant;
            use $crate::{bulk, suite};

            const BULK_MAX: usize = $bulk_max;
            const BOUND: Option<f64> = $bound;

            #[allow(unused_variables)]
            fn make(world: ::spatix::Aabb<$scalar>) -> $crate::erased::Erased<$scalar> {
                $crate::erased::Erased::new(suite::build(world, $make))
            }

            #[test]
            fn ops_uniform() {
                suite::random_ops(Variant::Uniform, &make, BOUND);
            }

            #[test]
            fn ops_clustered() {
                suite::random_ops(Variant::Clustered, &make, BOUND);
            }

            #[test]
            fn ops_mixed_sizes() {
                suite::random_ops(Variant::MixedSizes, &make, BOUND);
            }

            #[test]
            fn ops_coincident() {
                suite::random_ops(Variant::Coincident, &make, BOUND);
            }

            #[test]
            fn ops_out_of_world() {
                suite::random_ops(Variant::OutOfWorld, &make, BOUND);
            }

            #[test]
            fn ops_degenerate() {
                suite::random_ops(Variant::Degenerate, &make, BOUND);
            }

            #[test]
            fn ops_extreme() {
                suite::random_ops(Variant::Extreme, &make, BOUND);
            }

            #[test]
            fn scenarios() {
                suite::scenarios(&make, BOUND);
            }

            #[test]
            fn bulk_empty() {
                bulk::run(0, BULK_MAX, &make, BOUND);
            }

            #[test]
            fn bulk_one() {
                bulk::run(1, BULK_MAX, &make, BOUND);
            }

            #[test]
            fn bulk_thousand() {
                bulk::run(1000, BULK_MAX, &make, BOUND);
            }

            #[test]
            fn bulk_large() {
                bulk::run(bulk::large(), BULK_MAX, &make, BOUND);
            }

            $(
                #[test]
                fn $adversarial() {
                    $crate::adversarial::run(&make, BOUND);
                }
            )?
        }
    };
}

/// Cases per variant unless `PROPTEST_CASES` says otherwise: in the fast tier enough for every
/// coverage assertion and to catch every fault of `broken.rs` (which runs at this count and
/// says so); in the deep tier (`SPATIX_TESTS=deep`, `scripts/test-deep.sh`) four times as
/// many, the count the whole suite ran before it had tiers. Other seeds: `PROPTEST_RNG_SEED`,
/// and the fuzz targets.
pub(crate) fn default_cases() -> u32 {
    Tier::current().pick(FAST_CASES, 4 * FAST_CASES)
}
/// The fast tier's cases per variant.
pub(crate) const FAST_CASES: u32 = 32;
/// The fixed seed (override with `PROPTEST_RNG_SEED` to explore further).
const SEED: u64 = 0x5EED_2DC0_111D_E5A5;
/// Coverage is asserted only when at least this many cases ran.
pub(crate) const COVERAGE_MIN_CASES: u32 = 24;

/// Calls the constructor closure of `conformance!` (here so that the closure's argument type is
/// known).
pub(crate) fn build<S, I>(world: Aabb<S>, make: impl FnOnce(Aabb<S>) -> I) -> I {
    make(world)
}

/// The proptest configuration: fixed seed, no failure files, `PROPTEST_*` variables honoured.
pub(crate) fn config(max_shrink_iters: u32) -> Config {
    contextualize_config(Config {
        cases: default_cases(),
        rng_seed: RngSeed::Fixed(SEED),
        failure_persistence: None,
        max_shrink_iters,
        ..Config::default()
    })
}

/// Runs the random sequences of one variant; the failure (if any) is the shrunk one.
pub(crate) fn run_cases<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    variant: Variant,
    make: Make<'_, S, I>,
    config: Config,
    bound: Option<f64>,
) -> Result<Stats, TestError<Case>> {
    run_strategy(variant, config, &|case| {
        harness::run_ops(make, case.world, &case.ops, bound)
    })
}

/// Runs `test` on the random cases of `variant` and sums their statistics: the one place
/// proptest's runner is instantiated (a `dyn` test, not one per structure, keeps the suite's
/// build time down).
fn run_strategy(
    variant: Variant,
    config: Config,
    test: &dyn Fn(&Case) -> Result<Stats, String>,
) -> Result<Stats, TestError<Case>> {
    let stats = RefCell::new(Stats::default());
    let mut runner = TestRunner::new(config);
    runner.run(&ops::cases(variant), |case| {
        let s = test(&case).map_err(TestCaseError::fail)?;
        stats.borrow_mut().add(&s);
        Ok(())
    })?;
    Ok(stats.into_inner())
}

/// How the suite makes an empty structure for a world: a `dyn` closure, so that the drivers
/// are instantiated once per structure type, not once per instance of the suite.
pub(crate) type Make<'a, S, I> = &'a dyn Fn(Aabb<S>) -> I;

/// Describes a proptest failure: the reason, then the minimal sequence step by step.
pub(crate) fn describe(variant: Variant, error: &TestError<Case>) -> String {
    match error {
        TestError::Fail(reason, case) => format!(
            "conformance failure, {variant:?} data: {reason}\nminimal failing sequence, {case:?}"
        ),
        TestError::Abort(reason) => format!("{variant:?}: proptest aborted: {reason}"),
    }
}

/// The random-sequence test of one variant: panics with the shrunk failure, then checks that
/// the sequences exercised every kind of operation and outcome.
pub(crate) fn random_ops<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    variant: Variant,
    make: Make<'_, S, I>,
    bound: Option<f64>,
) {
    let config = config(8192);
    let cases = config.cases;
    let stats = run_cases(variant, make, config, bound)
        .unwrap_or_else(|e| panic!("{}", describe(variant, &e)));
    if cases >= COVERAGE_MIN_CASES {
        coverage(variant, &stats);
    }
}

/// The generators are too weak if a batch of sequences never reaches some outcome.
fn coverage(variant: Variant, s: &Stats) {
    let reached = [
        ("valid inserts", s.inserted),
        ("rejected invalid boxes", s.rejected),
        ("removals", s.removed),
        ("updates", s.updated),
        ("stale-handle operations", s.stale),
        ("clears", s.clears),
        ("non-empty query results", s.query_hits),
        ("intersecting pairs", s.pairs),
        ("nearest with k > len", s.nearest_over_len),
        ("early stops", s.early_breaks),
        ("ray hits", s.ray_hits),
    ];
    assert_reached(variant, &reached, s);
}

/// The generators are too weak if some outcome in `reached` never happened, or if the
/// structures never held 40 elements.
pub(crate) fn assert_reached(what: impl Debug, reached: &[(&str, usize)], s: &Stats) {
    for &(outcome, n) in reached {
        assert!(n > 0, "{what:?}: no case produced {outcome}: {s:?}");
    }
    assert!(s.max_len >= 40, "{what:?}: populations stay small: {s:?}");
}

/// The hand-written scenarios.
pub(crate) fn scenarios<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    make: Make<'_, S, I>,
    bound: Option<f64>,
) {
    for (name, case) in scenarios::all() {
        if let Err(e) = harness::run_ops(make, case.world, &case.ops, bound) {
            panic!("scenario \"{name}\": {e}\nsequence, {case:?}");
        }
    }
}

//! The suite must be able to fail: `BruteForce` wrapped in adapters with one deliberate fault
//! each, run through the same random sequences, must be caught, and shrunk to a short sequence.
//! A fault-free adapter must pass, so that the failures are the faults' doing. Every test here
//! runs the fast tier's number of cases (`suite::FAST_CASES`), whatever the tier: the fast
//! tier catches every fault.

use core::ops::ControlFlow;
use core::sync::atomic::{AtomicUsize, Ordering};

use proptest::test_runner::TestError;
use spatix::{
    Aabb, BruteForce, Error, Handle, Item, Iter, Neighbor, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, Workspace,
};
use spatix_workload::{Layout, Sizes};

use crate::bulk;
use crate::check::{overlap, valid};
use crate::data::Variant;
use crate::static_suite::{self, Kind, Source};
use crate::suite;

/// One deliberate defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// No defect: the adapter must pass.
    None,
    /// `query` (and so `within`) never reports the elements whose value is a multiple of 7
    /// (the same elements on every call, so batches agree with single queries).
    DropEvery7thValue,
    /// `for_each_pair` reports its first pair twice.
    DuplicateFirstPair,
    /// Boxes that only touch do not count as intersecting (in `query` and `for_each_pair`).
    MissTouching,
    /// Visitors' `Break` is ignored.
    IgnoreBreak,
    /// An invalid box is stored (as the zero box) instead of rejected.
    AcceptInvalidBox,
    /// `nearest` returns one neighbour too few when `k <= len`.
    NearestOneShort,
    /// Every 5th valid `update` returns `Ok` but does nothing.
    LoseEvery5thUpdate,
    /// `get`, `remove` and `update` look handles up by slot only, ignoring the generation: a
    /// stale handle whose slot was reused names the new element.
    IgnoreGeneration,
    /// `query` (and so `within`) loses elements entirely outside the world.
    OutOfWorldLost,
    /// `raycast_all` reports its hits farthest first.
    RaycastReversed,
    /// `update_all` never calls `f` for the last element it stores.
    UpdateAllSkipsLast,
    /// `update_all` stores an invalid box `f` returns (as the zero box) and reports success.
    UpdateAllAcceptsInvalid,
}

/// `BruteForce` with a fault.
struct Broken<S, T> {
    inner: BruteForce<S, T>,
    fault: Fault,
    world: Aabb<S>,
    count: AtomicUsize,
}

impl<S: Scalar> Broken<S, u64> {
    fn new(fault: Fault, world: Aabb<S>) -> Self {
        Self {
            inner: BruteForce::new(),
            fault,
            world,
            count: AtomicUsize::new(0),
        }
    }

    /// The handle the adapter actually uses.
    fn resolve(&self, handle: Handle) -> Handle {
        if self.fault == Fault::IgnoreGeneration {
            if let Some(item) = self.inner.iter().find(|i| i.handle.slot() == handle.slot()) {
                return item.handle;
            }
        }
        handle
    }

    /// Counts calls; true on every `n`th.
    fn every(&self, n: usize) -> bool {
        (self.count.fetch_add(1, Ordering::Relaxed) + 1) % n == 0
    }
}

fn strictly_overlap<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    a.min.x < b.max.x && b.min.x < a.max.x && a.min.y < b.max.y && b.min.y < a.max.y
}

impl<S: Scalar> SpatialQuery<S, u64> for Broken<S, u64> {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, u64>> {
        self.inner.get(self.resolve(handle))
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn iter(&self) -> Iter<'_, S, u64> {
        self.inner.iter()
    }

    fn query<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
    {
        match self.fault {
            Fault::DropEvery7thValue => self.inner.query(area, |item| {
                if *item.value % 7 == 0 {
                    ControlFlow::Continue(())
                } else {
                    visit(item)
                }
            }),
            Fault::MissTouching => self.inner.query(area, |item| {
                if strictly_overlap(&item.aabb, area) {
                    visit(item)
                } else {
                    ControlFlow::Continue(())
                }
            }),
            Fault::IgnoreBreak => self.inner.query(area, |item| {
                let _ = visit(item);
                ControlFlow::Continue(())
            }),
            Fault::OutOfWorldLost => self.inner.query(area, |item| {
                if overlap(&item.aabb, &self.world) {
                    visit(item)
                } else {
                    ControlFlow::Continue(())
                }
            }),
            _ => self.inner.query(area, visit),
        }
    }

    fn for_each_pair<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>, Item<'_, S, u64>) -> ControlFlow<()>,
    {
        let mut first = true;
        match self.fault {
            Fault::DuplicateFirstPair => self.inner.for_each_pair(|a, b| {
                if first {
                    first = false;
                    visit(a, b)?;
                }
                visit(a, b)
            }),
            Fault::MissTouching => self.inner.for_each_pair(|a, b| {
                if strictly_overlap(&a.aabb, &b.aabb) {
                    visit(a, b)
                } else {
                    ControlFlow::Continue(())
                }
            }),
            Fault::IgnoreBreak => self.inner.for_each_pair(|a, b| {
                let _ = visit(a, b);
                ControlFlow::Continue(())
            }),
            _ => self.inner.for_each_pair(visit),
        }
    }

    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        let k = if self.fault == Fault::NearestOneShort && k > 0 && k <= self.len() {
            k - 1
        } else {
            k
        };
        self.inner.nearest(point, k, workspace)
    }

    fn visit_regions<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(&::spatix::Region<S>) -> ControlFlow<()>,
    {
        self.inner.visit_regions(visit)
    }

    // The probed searches keep the plain ones' faults: they answer what those answer, told to
    // the probe as the candidates of one region (the world).
    fn query_probed<P: ::spatix::Probe<S>, F>(
        &self,
        area: &Aabb<S>,
        probe: &mut P,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
    {
        probe.region(&self.world);
        self.query(area, |item| {
            probe.candidate(item.handle);
            visit(item)
        })
    }

    fn nearest_probed<'w, P: ::spatix::Probe<S>>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        probe: &mut P,
    ) -> &'w [Neighbor<S>] {
        probe.region(&self.world);
        let found = self.nearest(point, k, workspace);
        for n in found {
            probe.candidate(n.handle);
        }
        found
    }

    fn raycast_all_probed<P: ::spatix::Probe<S>, F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        probe: &mut P,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
    {
        probe.region(&self.world);
        self.raycast_all(ray, workspace, |item, t| {
            probe.candidate(item.handle);
            visit(item, t)
        })
    }

    fn memory_bytes(&self) -> usize {
        self.inner.memory_bytes()
    }

    fn check_invariants(&self) -> Result<(), Error> {
        self.inner.check_invariants()
    }

    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
    {
        if self.fault != Fault::RaycastReversed {
            return self.inner.raycast_all(ray, workspace, visit);
        }
        let mut hits = Vec::new();
        let _ = self.inner.raycast_all(ray, workspace, |item, t| {
            hits.push((item.handle, t));
            ControlFlow::Continue(())
        });
        for (handle, t) in hits.into_iter().rev() {
            visit(self.inner.get(handle).expect("live"), t)?;
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar> SpatialIndex<S, u64> for Broken<S, u64> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        if self.fault == Fault::AcceptInvalidBox && !valid(&aabb) {
            return self.inner.insert(Aabb::default(), value);
        }
        self.inner.insert(aabb, value)
    }

    fn remove(&mut self, handle: Handle) -> Option<u64> {
        self.inner.remove(self.resolve(handle))
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        if self.fault == Fault::LoseEvery5thUpdate
            && valid(&aabb)
            && self.inner.get(handle).is_some()
            && self.every(5)
        {
            return Ok(());
        }
        self.inner.update(self.resolve(handle), aabb)
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64> {
        let handle = self.resolve(handle);
        self.inner.value_mut(handle)
    }

    fn update_all<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        F: FnMut(Handle, &mut u64, &Aabb<S>) -> Aabb<S>,
    {
        let last = self.inner.iter().last().map(|item| item.handle);
        let fault = self.fault;
        self.inner.update_all(|handle, value, old| match fault {
            Fault::UpdateAllSkipsLast if Some(handle) == last => *old,
            Fault::UpdateAllAcceptsInvalid => {
                let new = f(handle, value, old);
                if valid(&new) { new } else { Aabb::default() }
            }
            _ => f(handle, value, old),
        })
    }

    fn clear(&mut self) {
        self.inner.clear();
    }

    fn maintain(&mut self) {
        self.inner.maintain();
    }
}

/// Runs the random sequences of `variant` on an adapter with `fault`; returns the shrunk
/// failure's reason and length.
fn failure(fault: Fault, variant: Variant) -> Option<(String, usize)> {
    let make = |world: Aabb<f64>| Broken::<f64, u64>::new(fault, world);
    let mut config = suite::config(2048);
    // The fast tier's count, whatever PROPTEST_CASES or the tier says: README's test command
    // catches every fault.
    config.cases = suite::FAST_CASES;
    match suite::run_cases(variant, &make, config, None) {
        Ok(_) => None,
        Err(e) => {
            eprintln!("{fault:?} caught: {}", suite::describe(variant, &e));
            match e {
                TestError::Fail(reason, case) => Some((reason.to_string(), case.ops.len())),
                TestError::Abort(reason) => panic!("proptest aborted: {reason}"),
            }
        }
    }
}

/// The fault must be caught, with a message containing `expect`, and shrunk to at most
/// `max_steps` operations.
fn assert_caught(fault: Fault, variant: Variant, expect: &str, max_steps: usize) {
    let (reason, steps) = failure(fault, variant)
        .unwrap_or_else(|| panic!("the suite did not catch {fault:?} on {variant:?} data"));
    assert!(
        reason.contains(expect),
        "{fault:?} was caught, but not as expected (\"{expect}\"): {reason}"
    );
    assert!(
        steps <= max_steps,
        "{fault:?} was caught, but only shrunk to {steps} steps: {reason}"
    );
}

#[test]
fn fault_free_adapter_passes() {
    for variant in Variant::ALL {
        if let Some((reason, _)) = failure(Fault::None, variant) {
            panic!("the fault-free adapter failed on {variant:?} data: {reason}");
        }
    }
}

#[test]
fn catches_dropped_query_results() {
    assert_caught(Fault::DropEvery7thValue, Variant::Uniform, "missing", 8);
}

#[test]
fn catches_duplicate_pairs() {
    assert_caught(
        Fault::DuplicateFirstPair,
        Variant::Clustered,
        "more than once",
        4,
    );
}

#[test]
fn catches_touching_boxes_missed() {
    assert_caught(Fault::MissTouching, Variant::Degenerate, "missing", 4);
}

#[test]
fn catches_ignored_break() {
    assert_caught(Fault::IgnoreBreak, Variant::Coincident, "early stop", 4);
}

#[test]
fn catches_invalid_box_accepted() {
    assert_caught(
        Fault::AcceptInvalidBox,
        Variant::OutOfWorld,
        "invalid box",
        2,
    );
}

#[test]
fn catches_short_nearest() {
    assert_caught(Fault::NearestOneShort, Variant::MixedSizes, "neighbours", 4);
}

#[test]
fn catches_lost_updates() {
    assert_caught(Fault::LoseEvery5thUpdate, Variant::Uniform, "last set", 8);
}

#[test]
fn catches_generation_ignored() {
    // Caught by whichever stale handle (removed, foreign, next-generation) comes first.
    assert_caught(Fault::IgnoreGeneration, Variant::Uniform, "get of the", 8);
}

#[test]
fn catches_out_of_world_elements_lost() {
    assert_caught(Fault::OutOfWorldLost, Variant::OutOfWorld, "missing", 4);
}

#[test]
fn catches_update_all_skipping_an_element() {
    assert_caught(
        Fault::UpdateAllSkipsLast,
        Variant::Uniform,
        "update_all called f",
        8,
    );
}

#[test]
fn catches_update_all_accepting_invalid_boxes() {
    assert_caught(
        Fault::UpdateAllAcceptsInvalid,
        Variant::Uniform,
        "update_all returned",
        8,
    );
}

/// The bulk comparisons catch faults too.
#[test]
fn catches_rays_out_of_order() {
    assert_caught(Fault::RaycastReversed, Variant::Uniform, "out of order", 6);
}

#[test]
fn bulk_catches_faults() {
    for (fault, expect) in [
        (Fault::DropEvery7thValue, "missing"),
        (Fault::DuplicateFirstPair, "more than once"),
        (Fault::NearestOneShort, "neighbours"),
    ] {
        let make = |world: Aabb<f32>| Broken::<f32, u64>::new(fault, world);
        let e = bulk::one(1000, Layout::Clustered, Sizes::Mixed, 1, &make, None)
            .expect_err("the bulk test did not catch the fault");
        assert!(e.contains(expect), "{fault:?}: {e}");
        eprintln!("{fault:?} caught by the bulk test: {e}");
    }
}

/// The adapter with `fault`, built once from a data set, as the static suite builds
/// structures; an invalid box is rejected unless the fault accepts it.
fn built(fault: Fault, data: &[(Aabb<f64>, u64)]) -> Result<Broken<f64, u64>, Error> {
    let world = Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0))?;
    let mut index = Broken::new(fault, world);
    for &(aabb, id) in data {
        index.insert(aabb, id)?;
    }
    Ok(index)
}

/// The static suite's random cases catch every fault a static structure can have, with the
/// expected message; the fault-free adapter passes them.
#[test]
fn static_suite_catches_faults() {
    let mut config = suite::config(1024);
    // The fast tier's count: README's test command catches every fault.
    config.cases = suite::FAST_CASES;
    for kind in [Kind::Boxes, Kind::Points] {
        let make = |data: &[(Aabb<f64>, u64)]| built(Fault::None, data);
        if let Err(e) = static_suite::run_cases(
            Source::Variant(Variant::Coincident),
            kind,
            &make,
            config.clone(),
        ) {
            panic!("the fault-free adapter failed the static suite ({kind:?}): {e}");
        }
    }
    for (fault, source, kind, expect) in [
        (
            Fault::DropEvery7thValue,
            Variant::Uniform,
            Kind::Boxes,
            "missing",
        ),
        (
            Fault::DuplicateFirstPair,
            Variant::Coincident,
            Kind::Points,
            "more than once",
        ),
        (
            Fault::MissTouching,
            Variant::Degenerate,
            Kind::Boxes,
            "missing",
        ),
        (
            Fault::IgnoreBreak,
            Variant::Clustered,
            Kind::Points,
            "early stop",
        ),
        (
            Fault::NearestOneShort,
            Variant::MixedSizes,
            Kind::Boxes,
            "neighbours",
        ),
        (
            Fault::IgnoreGeneration,
            Variant::Uniform,
            Kind::Points,
            "handle",
        ),
        (
            Fault::OutOfWorldLost,
            Variant::OutOfWorld,
            Kind::Boxes,
            "missing",
        ),
        (
            Fault::RaycastReversed,
            Variant::Uniform,
            Kind::Boxes,
            "out of order",
        ),
    ] {
        let make = |data: &[(Aabb<f64>, u64)]| built(fault, data);
        let e = static_suite::run_cases(Source::Variant(source), kind, &make, config.clone())
            .expect_err("the static suite did not catch the fault");
        let reason = match e {
            TestError::Fail(reason, _) => reason.to_string(),
            TestError::Abort(reason) => panic!("proptest aborted: {reason}"),
        };
        assert!(
            reason.contains(expect),
            "{fault:?} was caught, but not as expected (\"{expect}\"): {reason}"
        );
        eprintln!("{fault:?} caught by the static suite: {reason}");
    }
}

/// A build that stores an invalid box instead of rejecting it fails `invalid_data`.
#[test]
#[should_panic(expected = "InvalidAabb")]
fn static_suite_catches_invalid_data_accepted() {
    static_suite::invalid_data(Kind::Boxes, &|data: &[(Aabb<f64>, u64)]| {
        built(Fault::AcceptInvalidBox, data)
    });
}

/// A structure that declares a bound on half extents must refuse larger boxes: one that
/// accepts them is caught by the random sequences and by the bulk test.
#[test]
fn catches_boxes_over_the_bound_accepted() {
    let make = |world: Aabb<f64>| Broken::<f64, u64>::new(Fault::None, world);
    let mut config = suite::config(2048);
    config.cases = suite::FAST_CASES;
    match suite::run_cases(Variant::MixedSizes, &make, config, Some(2.0)) {
        Err(TestError::Fail(reason, _)) => assert!(
            reason
                .to_string()
                .contains("larger than the declared bound"),
            "caught, but not as expected: {reason}"
        ),
        other => panic!("the suite did not catch boxes over the bound: {other:?}"),
    }
    let e = bulk::one(1000, Layout::Uniform, Sizes::Mixed, 1, &make, Some(4.0))
        .expect_err("the bulk test did not catch boxes over the bound");
    assert!(e.contains("larger than the bound"), "{e}");
}

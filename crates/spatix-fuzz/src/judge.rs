//! The oracle side of every driver: the read-only operations decoded, run on the structure
//! under test and on `BruteForce`, and their results compared exactly.

use core::fmt::Debug;
use core::ops::ControlFlow;

use spatix::prelude::*;
use spatix::{
    Aabb, BatchBuffers, BruteForce, Handle, ParallelQuery, Point, Ray, Scalar, Workspace,
};

use crate::decode::Bytes;
use crate::exact;
use crate::op::{BATCH, Op};

/// One element as a driver tracks it: its handle in the structure and in the oracle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Live {
    pub(crate) sut: Handle,
    pub(crate) oracle: Handle,
}

/// The oracle, and the scratch memory of both sides' searches.
pub(crate) struct Judge<S: Scalar> {
    pub(crate) oracle: BruteForce<S, u64>,
    ws: (Workspace<S>, Workspace<S>),
}

impl<S: Scalar> Judge<S> {
    pub(crate) fn new() -> Self {
        Self {
            oracle: BruteForce::new(),
            ws: (Workspace::new(), Workspace::new()),
        }
    }

    /// Decodes and compares one read-only operation: [`Op::Query`], [`Op::Nearest`],
    /// [`Op::Within`], [`Op::Ray`], [`Op::Pairs`]. The first four with [`BATCH`] set are a
    /// batch of such reads instead ([`Judge::batch`]). Returns `false`, having read nothing, for any other op.
    pub(crate) fn read<Q: SpatialQuery<S, u64> + Sync>(
        &mut self,
        sut: &Q,
        op: u8,
        input: &mut Bytes<'_>,
        step: usize,
    ) -> bool {
        if op & BATCH != 0 && Op::of(op).batches() {
            self.batch(sut, op, input, step);
            return true;
        }
        match Op::of(op) {
            Op::Query => self.query(sut, step, &input.aabb()),
            Op::Nearest => {
                let (point, k) = (input.point::<S>(), usize::from(input.u8() % 80));
                self.nearest(sut, step, point, k);
            }
            Op::Within => {
                let (point, radius) = (input.point::<S>(), input.coord::<S>());
                self.within(sut, step, point, radius);
            }
            Op::Ray => self.raycast(sut, step, &ray(input)),
            Op::Pairs => self.pairs(sut, step),
            _ => return false,
        }
        true
    }

    /// A batch of up to 100 reads of one kind (a read with [`BATCH`] set): a count, then
    /// the queries as the single op decodes them (nearest: one `k` first, then the points;
    /// within: one radius first, then the points). Each query's batch answer
    /// ([`ParallelQuery`]) must be the structure's own single-query answer, element for
    /// element and in the same order, and each single-query answer is judged against the
    /// oracle as the single op would be.
    fn batch<Q: SpatialQuery<S, u64> + Sync>(
        &mut self,
        sut: &Q,
        op: u8,
        input: &mut Bytes<'_>,
        step: usize,
    ) {
        let count = 1 + usize::from(input.u8() % 100);
        let mut buffers = BatchBuffers::new();
        match Op::of(op) {
            Op::Query => {
                let areas: Vec<Aabb<S>> = (0..count).map(|_| input.aabb()).collect();
                let found = sut.query_batch(&areas, &mut buffers);
                for (i, area) in areas.iter().enumerate() {
                    let alone = handles(|f| sut.query(area, |item| f(item.handle)));
                    if found.get(i) != alone {
                        fail(step, "query_batch", area, &found.get(i), &alone);
                    }
                }
                for area in &areas {
                    self.query(sut, step, area);
                }
            }
            Op::Nearest => {
                let k = usize::from(input.u8() % 80);
                let points: Vec<Point<S>> = (0..count).map(|_| input.point()).collect();
                let found = sut.nearest_batch(&points, k, &mut buffers);
                for (i, &point) in points.iter().enumerate() {
                    let alone = sut.nearest(point, k, &mut self.ws.0);
                    if found.get(i) != alone {
                        fail(step, "nearest_batch", &(point, k), &found.get(i), &alone);
                    }
                }
                for &point in &points {
                    self.nearest(sut, step, point, k);
                }
            }
            Op::Within => {
                let radius = input.coord::<S>();
                let points: Vec<Point<S>> = (0..count).map(|_| input.point()).collect();
                let found = sut.within_batch(&points, radius, &mut buffers);
                for (i, &point) in points.iter().enumerate() {
                    let alone = handles(|f| sut.within(point, radius, |item| f(item.handle)));
                    if found.get(i) != alone {
                        fail(
                            step,
                            "within_batch",
                            &(point, radius),
                            &found.get(i),
                            &alone,
                        );
                    }
                }
                for &point in &points {
                    self.within(sut, step, point, radius);
                }
            }
            _ => {
                let rays: Vec<Ray<S>> = (0..count).map(|_| ray(input)).collect();
                let found = sut.raycast_batch(&rays, &mut buffers);
                for (i, r) in rays.iter().enumerate() {
                    let alone = sut.raycast(r, &mut self.ws.0);
                    if found.get(i) != alone.as_slice() {
                        fail(step, "raycast_batch", r, &found.get(i), &alone);
                    }
                }
                for r in &rays {
                    self.raycast(sut, step, r);
                }
            }
        }
    }

    /// One window query, against the oracle.
    fn query<Q: SpatialQuery<S, u64>>(&self, sut: &Q, step: usize, area: &Aabb<S>) {
        let got = collect(|f| sut.query(area, |i| f(*i.value)));
        let want = collect(|f| self.oracle.query(area, |i| f(*i.value)));
        same(step, "query", area, got, want);
    }

    /// One k-nearest query, against the oracle and exact arithmetic.
    fn nearest<Q: SpatialQuery<S, u64>>(
        &mut self,
        sut: &Q,
        step: usize,
        point: Point<S>,
        k: usize,
    ) {
        let got: Vec<(S, u64)> = sut
            .nearest(point, k, &mut self.ws.0)
            .iter()
            .map(|n| (n.distance, *sut.get(n.handle).expect("live").value))
            .collect();
        let want: Vec<S> = self
            .oracle
            .nearest(point, k, &mut self.ws.1)
            .iter()
            .map(|n| n.distance)
            .collect();
        // As many as the oracle, each once; which ones, and their distances, are judged by
        // exact arithmetic below (the oracle's own rounding may rank two elements an ulp apart
        // the other way round from a structure that rounds differently).
        let mut ids: Vec<u64> = got.iter().map(|g| g.1).collect();
        ids.sort_unstable();
        ids.dedup();
        if got.len() != want.len() || ids.len() != got.len() {
            fail(step, "nearest", &(point, k), &got, &want);
        }
        if let Err(why) = self.exact_nearest(point, &got) {
            fail(
                step,
                &format!("nearest (exact: {why})"),
                &(point, k),
                &got,
                &want,
            );
        }
    }

    /// One radius query, against the oracle and exact arithmetic.
    fn within<Q: SpatialQuery<S, u64>>(&self, sut: &Q, step: usize, point: Point<S>, radius: S) {
        let got = collect(|f| sut.within(point, radius, |i| f(*i.value)));
        let want = collect(|f| self.oracle.within(point, radius, |i| f(*i.value)));
        if let Err(why) = self.exact_within(point, radius, &want) {
            fail(
                step,
                &format!("within (exact: {why})"),
                &(point, radius),
                &got,
                &want,
            );
        }
        same(step, "within", &(point, radius), got, want);
    }

    /// Checks the oracle's within result with exact arithmetic: everything reported within
    /// the radius (to a few ulps), everything certainly within it reported.
    fn exact_within(&self, point: Point<S>, radius: S, found: &[u64]) -> Result<(), String> {
        if !(point.is_finite() && radius >= S::ZERO) || radius == S::INFINITY {
            return Ok(());
        }
        for item in self.oracle.iter() {
            let (may, must) = exact::within(&item.aabb, point, radius);
            let reported = found.binary_search(item.value).is_ok();
            if reported && !may {
                return Err(format!("#{} reported beyond the radius", item.value));
            }
            if must && !reported {
                return Err(format!("#{} within the radius, not reported", item.value));
            }
        }
        Ok(())
    }

    /// Checks a nearest result (distance, id) with exact arithmetic: every distance the exact
    /// one (to a few ulps), and no element left out that is nearer than one reported.
    fn exact_nearest(&self, point: Point<S>, got: &[(S, u64)]) -> Result<(), String> {
        let (bits, ulp) = exact::tolerance::<S>();
        let boxes: std::collections::HashMap<u64, Aabb<S>> =
            self.oracle.iter().map(|i| (*i.value, i.aabb)).collect();
        let mut farthest: Option<exact::Big> = None;
        for &(distance, id) in got {
            let d = exact::box_distance_2(&boxes[&id], point);
            if !exact::distance_matches(distance.to_f64(), &d, S::MAX.to_f64(), ulp, bits) {
                return Err(format!("#{id} reported at {distance:?}"));
            }
            if farthest.as_ref().is_none_or(|x| *x < d) {
                farthest = Some(d);
            }
        }
        if let Some(farthest) = farthest {
            let reported: std::collections::HashSet<u64> = got.iter().map(|g| g.1).collect();
            for (id, b) in boxes.iter().filter(|(id, _)| !reported.contains(id)) {
                if !exact::at_most(&farthest, &exact::box_distance_2(b, point), bits) {
                    return Err(format!("#{id} is nearer than a reported neighbour"));
                }
            }
        }
        Ok(())
    }

    fn raycast<Q: SpatialQuery<S, u64>>(&mut self, sut: &Q, step: usize, ray: &Ray<S>) {
        let mut got = Vec::new();
        let _ = sut.raycast_all(ray, &mut self.ws.0, |i, t| {
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
        let first = sut.raycast(ray, &mut self.ws.0).map(|h| h.t);
        if first != want.first().map(|w| w.0) {
            fail(step, "raycast first", ray, &first, &want.first());
        }
    }

    /// Compares every intersecting pair.
    pub(crate) fn pairs<Q: SpatialQuery<S, u64>>(&self, sut: &Q, step: usize) {
        let (got, want) = (pairs_of(sut), pairs_of(&self.oracle));
        if got != want {
            fail(step, "pairs", &self.oracle.len(), &got, &want);
        }
    }

    /// After every step: invariants, length, every live element findable by handle, and
    /// `iter` listing exactly the live elements.
    pub(crate) fn check<Q: SpatialQuery<S, u64>>(
        &self,
        sut: &Q,
        live: &[Live],
        step: usize,
        op: u8,
    ) {
        if let Err(e) = sut.check_invariants() {
            panic!("step {step} (op {op}): invariant broken: {e}");
        }
        if sut.len() != self.oracle.len() || sut.len() != live.len() {
            panic!(
                "step {step} (op {op}): len {} but the oracle holds {} ({} live)",
                sut.len(),
                self.oracle.len(),
                live.len()
            );
        }
        for e in live {
            let (got, want) = (sut.get(e.sut), self.oracle.get(e.oracle));
            match (got, want) {
                (Some(g), Some(w))
                    if g.handle == e.sut && g.aabb == w.aabb && g.value == w.value => {}
                _ => panic!(
                    "step {step} (op {op}): get({:?}) differs from the oracle",
                    e.sut
                ),
            }
        }
        let got = listed(sut);
        let want = listed(&self.oracle);
        if got != want {
            fail(step, "iter", &op, &got, &want);
        }
    }
}

/// A ray as the raycast ops decode it: origin, direction, reach (any of them may be invalid).
fn ray<S: Scalar>(input: &mut Bytes<'_>) -> Ray<S> {
    Ray {
        origin: input.point(),
        direction: input.point(),
        max_t: input.coord(),
    }
}

/// Every element `iter` lists, as (value, box) sorted by value.
fn listed<S: Scalar>(index: &impl SpatialQuery<S, u64>) -> Vec<(u64, Aabb<S>)> {
    let mut v: Vec<(u64, Aabb<S>)> = index.iter().map(|i| (*i.value, i.aabb)).collect();
    v.sort_unstable_by_key(|e| e.0);
    v
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

/// Runs a visiting query and returns the handles it reported, in its order.
fn handles(
    query: impl FnOnce(&mut dyn FnMut(Handle) -> ControlFlow<()>) -> ControlFlow<()>,
) -> Vec<Handle> {
    let mut found = Vec::new();
    let _ = query(&mut |h| {
        found.push(h);
        ControlFlow::Continue(())
    });
    found
}

fn same(step: usize, what: &str, input: &dyn Debug, got: Vec<u64>, want: Vec<u64>) {
    if got != want {
        fail(step, what, input, &got, &want);
    }
}

/// Panics with what differed from the oracle.
pub(crate) fn fail(
    step: usize,
    what: &str,
    input: &dyn Debug,
    got: &dyn Debug,
    want: &dyn Debug,
) -> ! {
    panic!("step {step}: {what} {input:?}: got {got:?}, the oracle {want:?}")
}

//! The structure's shape and the probed searches, checked beside every plain search the
//! harness makes: a probed search gives exactly the plain one's answers, in the same order;
//! every answer was a candidate; [`QueryCost`] counts what a recording probe saw; and the
//! regions of `visit_regions` list every element (see [`check_regions`]).

use core::ops::ControlFlow;
use std::collections::HashSet;

use spatix::{
    Aabb, Handle, Neighbor, Point, Probe, QueryCost, Ray, Region, RegionKind, Scalar, SpatialQuery,
    Workspace,
};

use crate::check::{B, Seen};

/// A probe that records what a search told it, and counts it in a [`QueryCost`] too.
struct Recorder<S> {
    cost: QueryCost,
    regions: usize,
    candidates: HashSet<Handle>,
    /// A region box that is not a box (NaN or inverted), if one was told.
    bad_region: Option<Aabb<S>>,
}

impl<S: Scalar> Recorder<S> {
    fn new() -> Self {
        Self {
            cost: QueryCost::default(),
            regions: 0,
            candidates: HashSet::new(),
            bad_region: None,
        }
    }

    /// What every probed search must keep: every answer was a candidate, the counting probe
    /// saw what the recording one did, regions are boxes, and answers came from a region.
    fn check(&self, answers: impl IntoIterator<Item = Handle>, what: &str) -> Result<(), String> {
        let mut n = 0;
        for h in answers {
            n += 1;
            if !self.candidates.contains(&h) {
                return Err(format!(
                    "{what}: answer {h:?} was never told to the probe as a candidate"
                ));
            }
        }
        if self.cost.regions != self.regions || self.cost.candidates < self.candidates.len() {
            return Err(format!(
                "{what}: QueryCost counted {:?}, the recording probe saw {} regions and {} distinct candidates",
                self.cost,
                self.regions,
                self.candidates.len()
            ));
        }
        if self.cost.candidates < n {
            return Err(format!("{what}: {n} answers but only {:?}", self.cost));
        }
        if n > 0 && self.regions == 0 {
            return Err(format!("{what}: {n} answers, but no region was entered"));
        }
        if let Some(b) = self.bad_region {
            return Err(format!(
                "{what}: the probe was told a region {:?} that is no box",
                B(&b)
            ));
        }
        Ok(())
    }
}

impl<S: Scalar> Probe<S> for Recorder<S> {
    fn region(&mut self, bounds: &Aabb<S>) {
        Probe::<S>::region(&mut self.cost, bounds);
        self.regions += 1;
        if !(bounds.min.x <= bounds.max.x && bounds.min.y <= bounds.max.y) {
            self.bad_region = Some(*bounds);
        }
    }

    fn candidate(&mut self, handle: Handle) {
        Probe::<S>::candidate(&mut self.cost, handle);
        self.candidates.insert(handle);
    }
}

/// `query_probed` against the plain query's answers `plain`.
pub(crate) fn check_query<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    area: &Aabb<S>,
    plain: &[Seen<S>],
) -> Result<(), String> {
    let what = format!("query_probed {:?}", B(area));
    let mut probe = Recorder::new();
    let mut got = Vec::new();
    let flow = index.query_probed(area, &mut probe, |item| {
        got.push(item.handle);
        ControlFlow::Continue(())
    });
    if flow.is_break() {
        return Err(format!(
            "{what}: returned Break, but the visitor never broke"
        ));
    }
    let want: Vec<Handle> = plain.iter().map(|s| s.handle).collect();
    if got != want {
        return Err(format!(
            "{what}: answered {got:?}, the plain query {want:?}"
        ));
    }
    probe.check(got, &what)
}

/// `nearest_probed` against the plain search's answers `plain`.
pub(crate) fn check_nearest<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    point: Point<S>,
    k: usize,
    workspace: &mut Workspace<S>,
    plain: &[Neighbor<S>],
) -> Result<(), String> {
    let what = format!("nearest_probed(({:?}, {:?}), k = {k})", point.x, point.y);
    let mut probe = Recorder::new();
    let got = index.nearest_probed(point, k, workspace, &mut probe);
    if got != plain {
        return Err(format!(
            "{what}: answered {got:?}, the plain search {plain:?}"
        ));
    }
    probe.check(got.iter().map(|n| n.handle), &what)
}

/// `raycast_all_probed` against the plain cast's hits `plain`.
pub(crate) fn check_raycast<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
    plain: &[(Seen<S>, S)],
) -> Result<(), String> {
    let what = format!("raycast_all_probed {ray:?}");
    let mut probe = Recorder::new();
    let mut got = Vec::new();
    let flow = index.raycast_all_probed(ray, workspace, &mut probe, |item, t| {
        got.push((item.handle, t));
        ControlFlow::Continue(())
    });
    if flow.is_break() {
        return Err(format!(
            "{what}: returned Break, but the visitor never broke"
        ));
    }
    let want: Vec<(Handle, S)> = plain.iter().map(|(s, t)| (s.handle, *t)).collect();
    if got != want {
        return Err(format!("{what}: hit {got:?}, the plain cast {want:?}"));
    }
    probe.check(got.iter().map(|h| h.0), &what)
}

/// Most (element, region) tests [`check_regions`] makes for its sum check.
const PAIR_TESTS: usize = 4_000_000;

/// The regions of `visit_regions` over the live boxes `live`:
/// * every region's box is a box, and every region kind lists elements only where it may (a
///   [`RegionKind::Part`] lists none);
/// * every element inside `world` meets a region that lists elements (its box clamped into
///   the union of the listing regions' boxes, for the grids whose cells cover only a part of
///   a huge world; elements outside the world are listed in border cells or nodes, which
///   they need not meet), checked on the first 64 such elements;
/// * the elements listed add up: at least one listing per element, and, when every element
///   lies inside the world, no more listings than (element, listing region it meets) pairs,
///   where that count is cheap enough (not for `Layered`, whose static part lists removed
///   elements until it is rebuilt);
/// * `Break` stops the visit at once.
pub(crate) fn check_regions<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    live: &[Aabb<S>],
    world: &Aabb<S>,
) -> Result<(), String> {
    let mut regions: Vec<Region<S>> = Vec::new();
    let flow = index.visit_regions(|r| {
        regions.push(*r);
        ControlFlow::Continue(())
    });
    if flow.is_break() {
        return Err("visit_regions returned Break, but the visitor never broke".into());
    }
    for r in &regions {
        let b = &r.bounds;
        if !(b.min.x <= b.max.x && b.min.y <= b.max.y) {
            return Err(format!("visit_regions: region {r:?} has no box"));
        }
        if r.kind == RegionKind::Part && r.elements != 0 {
            return Err(format!(
                "visit_regions: part region {r:?} lists elements itself"
            ));
        }
    }
    let listing: Vec<&Region<S>> = regions.iter().filter(|r| r.elements > 0).collect();
    let listed: usize = listing.iter().map(|r| r.elements).sum();
    if listed < live.len() {
        return Err(format!(
            "visit_regions: {listed} elements listed in all, fewer than the {} held",
            live.len()
        ));
    }
    if live.is_empty() {
        return Ok(());
    }
    let all = listing
        .iter()
        .map(|r| r.bounds)
        .reduce(|a, b| a.union(&b))
        .ok_or("visit_regions: elements are held, but no region lists any")?;
    let meets = |e: &Aabb<S>, r: &Region<S>| e.clamped_to(&all).intersects(&grown(&r.bounds));
    let inside: Vec<&Aabb<S>> = live.iter().filter(|e| world.contains(e)).collect();
    for e in inside.iter().take(64) {
        if !listing.iter().any(|r| meets(e, r)) {
            return Err(format!(
                "visit_regions: element {:?} meets no region that lists elements",
                B(e)
            ));
        }
    }
    // Layered's static part lists the elements removed from it until its next build.
    let layered = regions.iter().any(|r| r.kind == RegionKind::Part);
    if !layered
        && inside.len() == live.len()
        && live.len().saturating_mul(listing.len()) <= PAIR_TESTS
    {
        let pairs: usize = live
            .iter()
            .map(|e| listing.iter().filter(|r| meets(e, r)).count())
            .sum();
        if listed > pairs {
            return Err(format!(
                "visit_regions: {listed} elements listed in all, more than the {pairs} (element, region) pairs that meet"
            ));
        }
    }
    let mut calls = 0;
    let flow = index.visit_regions(|_| {
        calls += 1;
        ControlFlow::Break(())
    });
    if calls != 1 || flow.is_continue() {
        return Err(format!(
            "visit_regions: a visitor breaking at once was called {calls} times and the visit returned {flow:?}"
        ));
    }
    Ok(())
}

/// A region's box widened for the rounding of cell and node boxes (computed from the world
/// box, a cell size, a split point): by a relative slack of its size and magnitude.
fn grown<S: Scalar>(b: &Aabb<S>) -> Aabb<S> {
    let slack = |lo: S, hi: S| {
        let m = lo.abs_s().max_s(hi.abs_s()).max_s(hi - lo);
        if m.is_finite() {
            m * S::from_f64(1e-4)
        } else {
            S::ZERO
        }
    };
    let (sx, sy) = (slack(b.min.x, b.max.x), slack(b.min.y, b.max.y));
    Aabb {
        min: Point::new(b.min.x - sx, b.min.y - sy),
        max: Point::new(b.max.x + sx, b.max.y + sy),
    }
}

//! Applying operations to the structure under test and to the `BruteForce` oracle, and
//! comparing the two (and the oracle with a plain model kept by the test), step by step.

use core::ops::ControlFlow;
use std::collections::{HashMap, HashSet};

use spatix::{
    Aabb, BruteForce, Error, Handle, Item, Point, Ray, Scalar, SpatialIndex, SpatialQuery,
    Workspace,
};

use crate::check::{
    B, P, PairSet, R, Seen, check_nearest, check_stop, overlap, query_all, raycast_all, same_ids,
    shown_pairs, valid, within_all, within_exact,
};
use crate::data::{Bx, World};
use crate::ops::{Move, Op, Pick, StaleOp, StaleSrc, Stop};
use crate::suite::Make;

/// What a batch of sequences exercised, to assert that the generators are not too weak.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) cases: usize,
    pub(crate) steps: usize,
    pub(crate) inserted: usize,
    pub(crate) rejected: usize,
    pub(crate) removed: usize,
    pub(crate) updated: usize,
    pub(crate) stale: usize,
    pub(crate) clears: usize,
    pub(crate) query_hits: usize,
    pub(crate) pairs: usize,
    pub(crate) nearest_over_len: usize,
    pub(crate) early_breaks: usize,
    pub(crate) ray_hits: usize,
    pub(crate) pairs_skipped: usize,
    pub(crate) too_large: usize,
    pub(crate) max_len: usize,
}

impl Stats {
    pub(crate) fn add(&mut self, o: &Self) {
        self.cases += o.cases;
        self.steps += o.steps;
        self.inserted += o.inserted;
        self.rejected += o.rejected;
        self.removed += o.removed;
        self.updated += o.updated;
        self.stale += o.stale;
        self.clears += o.clears;
        self.query_hits += o.query_hits;
        self.pairs += o.pairs;
        self.nearest_over_len += o.nearest_over_len;
        self.early_breaks += o.early_breaks;
        self.ray_hits += o.ray_hits;
        self.pairs_skipped += o.pairs_skipped;
        self.too_large += o.too_large;
        self.max_len = self.max_len.max(o.max_len);
    }
}

/// A live element as the test knows it.
#[derive(Clone, Copy, Debug)]
struct Entry<S> {
    id: u64,
    sut: Handle,
    oracle: Handle,
    aabb: Aabb<S>,
}

/// Which structure reported something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Sut,
    Oracle,
}

/// The structure under test, the oracle, and the test's own model of their contents.
pub(crate) struct Harness<S: Scalar, I> {
    sut: I,
    oracle: BruteForce<S, u64>,
    world: Aabb<S>,
    live: Vec<Entry<S>>,
    /// id → position in `live`.
    pos: HashMap<u64, usize>,
    by_sut: HashMap<Handle, u64>,
    by_oracle: HashMap<Handle, u64>,
    /// (structure under test, oracle) handles of removed or cleared elements.
    stale: Vec<(Handle, Handle)>,
    /// Handles of other instances.
    foreign: Vec<(Handle, Handle)>,
    next_id: u64,
    ws_sut: Workspace<S>,
    ws_oracle: Workspace<S>,
    /// `for_each_pair` is compared only when at most this many pairs intersect (the bulk
    /// static tests lower it: the oracle's pair pass is quadratic).
    pub(crate) pairs_limit: usize,
    /// The structure's declared bound on half extents (see `conformance!`).
    bound: Option<f64>,
    pub(crate) stats: Stats,
}

/// Whether a valid box is larger than a structure's declared bound on half extents, by the
/// rule such a structure keeps: `max - min > 2 * bound` on an axis, computed in `S`.
pub(crate) fn too_large<S: Scalar>(b: &Aabb<S>, bound: Option<f64>) -> bool {
    bound.is_some_and(|h| {
        let h = S::from_f64(h);
        let fit = h + h;
        valid(b) && (b.max.x - b.min.x > fit || b.max.y - b.min.y > fit)
    })
}

/// Where `to` takes an element whose box is `b`.
fn moved<S: Scalar>(b: &Aabb<S>, to: Move) -> Aabb<S> {
    match to {
        Move::To(bx) => bx.to(),
        Move::Shift(dx, dy) => {
            let (dx, dy) = (S::from_f64(dx), S::from_f64(dy));
            Aabb {
                min: Point::new(b.min.x + dx, b.min.y + dy),
                max: Point::new(b.max.x + dx, b.max.y + dy),
            }
        }
        Move::Grow(d) => {
            let d = S::from_f64(d);
            Aabb {
                min: Point::new(b.min.x - d, b.min.y - d),
                max: Point::new(b.max.x + d, b.max.y + d),
            }
        }
    }
}

fn next_generation(h: Handle) -> Handle {
    Handle::from_bits(h.to_bits().wrapping_add(1 << 32))
}

impl<S: Scalar, I: SpatialQuery<S, u64> + Sync> Harness<S, I> {
    /// A harness around a structure and an oracle that hold nothing the model knows of yet;
    /// `foreign` are handles of other instances (stale here).
    fn with_parts(
        sut: I,
        oracle: BruteForce<S, u64>,
        world: Aabb<S>,
        foreign: Vec<(Handle, Handle)>,
    ) -> Self {
        Self {
            sut,
            oracle,
            world,
            live: Vec::new(),
            pos: HashMap::new(),
            by_sut: HashMap::new(),
            by_oracle: HashMap::new(),
            stale: Vec::new(),
            foreign,
            next_id: 0,
            ws_sut: Workspace::new(),
            ws_oracle: Workspace::new(),
            pairs_limit: usize::MAX,
            bound: None,
            stats: Stats::default(),
        }
    }

    /// A harness around a structure built from `data` (element `i` is `data[i]` with value
    /// `i`) and an oracle holding the same elements: each element of the structure is matched
    /// to its data by value, and must carry its box.
    pub(crate) fn from_built(
        sut: I,
        data: &[(Aabb<S>, u64)],
        world: Aabb<S>,
        foreign: Vec<(Handle, Handle)>,
    ) -> Result<Self, String> {
        let mut oracle = BruteForce::new();
        let mut oracle_handles = Vec::with_capacity(data.len());
        for &(aabb, id) in data {
            let h = oracle
                .insert(aabb, id)
                .map_err(|e| format!("ORACLE rejected {:?}: {e}", B(&aabb)))?;
            oracle_handles.push(h);
        }
        let mut h = Self::with_parts(sut, oracle, world, foreign);
        let mut found = vec![false; data.len()];
        let items: Vec<Seen<S>> = h.sut.iter().map(Seen::of).collect();
        for seen in items {
            let i = usize::try_from(seen.id).ok().filter(|&i| i < data.len());
            let Some(i) = i.filter(|&i| !found[i]) else {
                return Err(format!(
                    "iter yielded value {} (handle {:?}), which is not the index of a data element or repeats one",
                    seen.id, seen.handle
                ));
            };
            found[i] = true;
            if seen.aabb != data[i].0 {
                return Err(format!(
                    "element {i} was built from {:?}, but holds {:?}",
                    B(&data[i].0),
                    B(&seen.aabb)
                ));
            }
            h.register(Entry {
                id: seen.id,
                sut: seen.handle,
                oracle: oracle_handles[i],
                aabb: seen.aabb,
            });
        }
        if let Some(i) = found.iter().position(|f| !f) {
            return Err(format!(
                "element {i} {:?} is missing from iter ({} of {} found)",
                B(&data[i].0),
                h.live.len(),
                data.len()
            ));
        }
        h.next_id = data.len() as u64;
        Ok(h)
    }

    /// Applies one read-only operation to both structures and compares what they return.
    pub(crate) fn probe(&mut self, op: &Op) -> Result<(), String> {
        self.stats.steps += 1;
        self.read(op)
    }

    fn read(&mut self, op: &Op) -> Result<(), String> {
        match op {
            Op::Query(b) => self.query(b.to()),
            Op::Pairs => self.pairs(),
            Op::Nearest(p, k) => {
                let k = k.resolve(self.live.len());
                self.nearest(p.to(), k)
            }
            Op::Within(p, r) => self.within(p.to(), S::from_f64(*r)),
            Op::Raycast(r) => self.raycast(r.to()),
            Op::Get(p) => match self.pick_live(*p) {
                Some(e) => self.check_get(e.id),
                None => Ok(()),
            },
            Op::Iter => self.check_iter(),
            Op::Stop(s) => self.stop(*s),
            Op::Stale(src, StaleOp::Get) => self.stale_get(*src),
            _ => Err(format!(
                "{op:?} changes the structure: not a read-only operation"
            )),
        }
    }

    /// `get` of a handle that names no live element is `None` in both structures.
    fn stale_get(&mut self, src: StaleSrc) -> Result<(), String> {
        let Some((h, ho, what)) = self.stale_handle(src) else {
            return Ok(());
        };
        self.stats.stale += 1;
        self.check_stale_get(h, ho, what)
    }

    fn check_stale_get(&self, h: Handle, ho: Handle, what: &str) -> Result<(), String> {
        if let Some(item) = self.sut.get(h) {
            return Err(format!(
                "get of the {what} handle {h:?} returned value {} box {:?}, expected None",
                item.value,
                B(&item.aabb)
            ));
        }
        if self.oracle.get(ho).is_some() {
            return Err(format!("ORACLE: get of the {what} handle {ho:?} is Some"));
        }
        Ok(())
    }

    fn describe(&self, id: u64) -> String {
        match self.pos.get(&id) {
            Some(&i) => format!("#{id} {:?}", B(&self.live[i].aabb)),
            None => format!("#{id} (not live)"),
        }
    }

    fn pick_live(&self, pick: Pick) -> Option<Entry<S>> {
        pick.of(self.live.len()).map(|i| self.live[i])
    }

    fn entry(&self, id: u64) -> Entry<S> {
        self.live[self.pos[&id]]
    }

    /// Checks that an item a structure reported is a live element with the right handle, value
    /// and box, and returns its id.
    fn resolve(&self, side: Side, seen: &Seen<S>) -> Result<u64, String> {
        let (map, who) = match side {
            Side::Sut => (&self.by_sut, ""),
            Side::Oracle => (&self.by_oracle, "ORACLE: "),
        };
        let id = *map.get(&seen.handle).ok_or_else(|| {
            format!(
                "{who}reported handle {:?} (value {}), which names no live element",
                seen.handle, seen.id
            )
        })?;
        if id != seen.id {
            return Err(format!(
                "{who}reported handle {:?} with value {}, but that handle holds #{id}",
                seen.handle, seen.id
            ));
        }
        let e = self.entry(id);
        if seen.aabb != e.aabb {
            return Err(format!(
                "{who}reported #{id} with box {:?}, but its box is {:?}",
                B(&seen.aabb),
                B(&e.aabb)
            ));
        }
        Ok(id)
    }

    fn resolve_all(&self, side: Side, seen: &[Seen<S>]) -> Result<Vec<u64>, String> {
        seen.iter().map(|s| self.resolve(side, s)).collect()
    }

    fn register(&mut self, e: Entry<S>) {
        self.pos.insert(e.id, self.live.len());
        self.by_sut.insert(e.sut, e.id);
        self.by_oracle.insert(e.oracle, e.id);
        self.live.push(e);
    }

    /// A (structure under test, oracle) pair of handles that name no live element, and where it
    /// came from; `None` when the source has nothing to offer or (by a fluke) names a live one.
    fn stale_handle(&self, src: StaleSrc) -> Option<(Handle, Handle, &'static str)> {
        let (h, ho, what) = match src {
            StaleSrc::Removed(p) if !self.stale.is_empty() => {
                let (h, ho) = self.stale[p.of(self.stale.len())?];
                (h, ho, "removed")
            }
            StaleSrc::Removed(p) | StaleSrc::Foreign(p) => {
                let (h, ho) = self.foreign[p.of(self.foreign.len())?];
                (h, ho, "foreign")
            }
            StaleSrc::NextGeneration(p) => {
                let e = self.pick_live(p)?;
                (
                    next_generation(e.sut),
                    next_generation(e.oracle),
                    "next-generation",
                )
            }
            StaleSrc::Swapped(p) => {
                let e = self.pick_live(p)?;
                (e.oracle, e.sut, "other instance's")
            }
            StaleSrc::Forged(bits) => (Handle::from_bits(bits), Handle::from_bits(bits), "forged"),
        };
        (!self.by_sut.contains_key(&h) && !self.by_oracle.contains_key(&ho))
            .then_some((h, ho, what))
    }

    fn query(&mut self, area: Aabb<S>) -> Result<(), String> {
        let what = || format!("query {:?}", B(&area));
        let (got, flow) = query_all(&self.sut, &area);
        if flow.is_break() {
            return Err(format!(
                "{}: returned Break, but the visitor never broke",
                what()
            ));
        }
        let seen = got.clone();
        if !valid(&area) && !got.is_empty() {
            return Err(format!(
                "{}: the area is invalid, yet {} elements matched",
                what(),
                got.len()
            ));
        }
        let got = self
            .resolve_all(Side::Sut, &got)
            .map_err(|e| format!("{}: {e}", what()))?;
        let (want, _) = query_all(&self.oracle, &area);
        let want = self.resolve_all(Side::Oracle, &want)?;
        let model: Vec<u64> = self
            .live
            .iter()
            .filter(|e| valid(&area) && overlap(&e.aabb, &area))
            .map(|e| e.id)
            .collect();
        let describe = |id| self.describe(id);
        same_ids(&want, &model, &describe)
            .map_err(|e| format!("ORACLE disagrees with the model on {}: {e}", what()))?;
        same_ids(&got, &want, &describe).map_err(|e| format!("{}: {e}", what()))?;
        crate::probes::check_query(&self.sut, &area, &seen)?;
        self.stats.query_hits += usize::from(!got.is_empty());
        Ok(())
    }

    fn within(&mut self, point: Point<S>, radius: S) -> Result<(), String> {
        let what = || format!("within({:?}, {radius:?})", P(point));
        let (got, flow) = within_all(&self.sut, point, radius);
        if flow.is_break() {
            return Err(format!(
                "{}: returned Break, but the visitor never broke",
                what()
            ));
        }
        let got = self
            .resolve_all(Side::Sut, &got)
            .map_err(|e| format!("{}: {e}", what()))?;
        let usable = point.x.is_finite() && point.y.is_finite() && radius >= S::ZERO;
        if let Some(&far) = got
            .iter()
            .find(|&&id| !usable || !within_exact(&self.entry(id).aabb, point, radius, true))
        {
            return Err(format!(
                "{}: reported {}, which is not within the radius",
                what(),
                self.describe(far)
            ));
        }
        let (want, _) = within_all(&self.oracle, point, radius);
        let want = self.resolve_all(Side::Oracle, &want)?;
        // The exact model: the oracle must report every element certainly within the radius
        // and nothing certainly beyond it (distances within a few ulps of it may go either way).
        let oracle_set: HashSet<u64> = want.iter().copied().collect();
        let wrong = self.live.iter().find(|e| {
            let must = usable && within_exact(&e.aabb, point, radius, false);
            let may = usable && within_exact(&e.aabb, point, radius, true);
            let reported = oracle_set.contains(&e.id);
            (must && !reported) || (reported && !may)
        });
        if let Some(e) = wrong {
            return Err(format!(
                "ORACLE disagrees with the exact model on {}: {}",
                what(),
                self.describe(e.id)
            ));
        }
        let describe = |id| self.describe(id);
        same_ids(&got, &want, &describe).map_err(|e| format!("{}: {e}", what()))
    }

    /// Every intersecting pair once, and nothing else: each side's pairs are streamed into a
    /// set of unordered pairs of model positions (one bit per possible pair, so even the
    /// quadratic pair counts of coincident data stay cheap), each checked as it comes, and
    /// the count compared with the model's; on a shortfall the missing pairs are listed.
    fn pairs(&mut self) -> Result<(), String> {
        let expected = self.model_pair_count();
        if expected > self.pairs_limit {
            self.stats.pairs_skipped += 1;
            return Ok(());
        }
        let want = self
            .pair_set(Side::Oracle)
            .map_err(|e| format!("ORACLE: for_each_pair: {e}"))?;
        self.check_pair_count(&want, expected)
            .map_err(|e| format!("ORACLE disagrees with the model on pairs: {e}"))?;
        let got = self
            .pair_set(Side::Sut)
            .map_err(|e| format!("for_each_pair: {e}"))?;
        self.check_pair_count(&got, expected)
            .map_err(|e| format!("for_each_pair: {e}"))?;
        self.stats.pairs += got.len();
        Ok(())
    }

    /// How many unordered pairs of live elements intersect.
    fn model_pair_count(&self) -> usize {
        let mut n = 0;
        for (i, a) in self.live.iter().enumerate() {
            n += self.live[i + 1..]
                .iter()
                .filter(|b| overlap(&a.aabb, &b.aabb))
                .count();
        }
        n
    }

    /// The pairs one side reports, each checked as it comes: live elements, distinct,
    /// intersecting, not reported before.
    fn pair_set(&self, side: Side) -> Result<PairSet, String> {
        let mut set = PairSet::new(self.live.len());
        let mut error = None;
        let mut visit = |a: Item<'_, S, u64>, b: Item<'_, S, u64>| match self.add_pair(
            side,
            &mut set,
            &Seen::of(a),
            &Seen::of(b),
        ) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                error = Some(e);
                ControlFlow::Break(())
            }
        };
        let flow = match side {
            Side::Sut => self.sut.for_each_pair(&mut visit),
            Side::Oracle => self.oracle.for_each_pair(&mut visit),
        };
        if let Some(e) = error {
            return Err(e);
        }
        if flow.is_break() {
            return Err("returned Break, but the visitor never broke".into());
        }
        Ok(set)
    }

    fn add_pair(
        &self,
        side: Side,
        set: &mut PairSet,
        a: &Seen<S>,
        b: &Seen<S>,
    ) -> Result<(), String> {
        let (ia, ib) = (self.resolve(side, a)?, self.resolve(side, b)?);
        if ia == ib {
            return Err(format!("element {} paired with itself", self.describe(ia)));
        }
        let (pa, pb) = (self.pos[&ia], self.pos[&ib]);
        if !overlap(&self.live[pa].aabb, &self.live[pb].aabb) {
            return Err(format!(
                "unexpected pair ({}, {}): they do not intersect",
                self.describe(ia),
                self.describe(ib)
            ));
        }
        if !set.insert(pa, pb) {
            return Err(format!(
                "pair ({}, {}) reported more than once",
                self.describe(ia),
                self.describe(ib)
            ));
        }
        Ok(())
    }

    /// A set whose every pair intersects has `expected` pairs, or names the missing ones.
    fn check_pair_count(&self, set: &PairSet, expected: usize) -> Result<(), String> {
        if set.len() == expected {
            return Ok(());
        }
        let mut missing = Vec::new();
        for (i, a) in self.live.iter().enumerate() {
            for (j, b) in self.live.iter().enumerate().skip(i + 1) {
                if overlap(&a.aabb, &b.aabb) && !set.contains(i, j) {
                    missing.push((a.id, b.id));
                }
            }
        }
        Err(format!(
            "{} pairs reported, {expected} expected; missing {}",
            set.len(),
            shown_pairs(&missing, &|id| self.describe(id))
        ))
    }

    fn nearest(&mut self, point: Point<S>, k: usize) -> Result<(), String> {
        let got = self.sut.nearest(point, k, &mut self.ws_sut).to_vec();
        let want = self.oracle.nearest(point, k, &mut self.ws_oracle).to_vec();
        let truth = |h: Handle| self.by_sut.get(&h).map(|&id| (id, self.entry(id).aabb));
        let all: Vec<(u64, Aabb<S>)> = self.live.iter().map(|e| (e.id, e.aabb)).collect();
        check_nearest(&got, &want, point, k, all.len(), Some(&all), &truth)
            .map_err(|e| format!("nearest({:?}, k = {k}): {e}", P(point)))?;
        crate::probes::check_nearest(&self.sut, point, k, &mut self.ws_sut, &got)?;
        self.stats.nearest_over_len += usize::from(k > self.live.len());
        Ok(())
    }

    /// Every hit once, in ascending `t`, each with the exact entry parameter of
    /// `Aabb::ray_entry`; and `raycast` returns a hit at the smallest parameter.
    fn raycast(&mut self, ray: Ray<S>) -> Result<(), String> {
        let what = || format!("raycast {:?}", R(&ray));
        let (got, flow) = raycast_all(&self.sut, &ray, &mut self.ws_sut);
        if flow.is_break() {
            return Err(format!(
                "{}: returned Break, but the visitor never broke",
                what()
            ));
        }
        let model: HashMap<u64, S> = self
            .live
            .iter()
            .filter_map(|e| e.aabb.ray_entry(&ray).map(|t| (e.id, t)))
            .collect();
        let (want, _) = raycast_all(&self.oracle, &ray, &mut self.ws_oracle);
        for (side, hits) in [(Side::Oracle, &want), (Side::Sut, &got)] {
            let who = if side == Side::Oracle { "ORACLE: " } else { "" };
            if let Some(w) = hits.windows(2).find(|w| w[1].1 < w[0].1) {
                return Err(format!(
                    "{who}{}: hits out of order: t = {:?} (#{}) reported before t = {:?} (#{})",
                    what(),
                    w[0].1,
                    w[0].0.id,
                    w[1].1,
                    w[1].0.id
                ));
            }
            for (seen, t) in hits.iter() {
                let id = self
                    .resolve(side, seen)
                    .map_err(|e| format!("{}: {e}", what()))?;
                if let Some(&true_t) = model.get(&id)
                    && true_t != *t
                {
                    return Err(format!(
                        "{who}{}: reported {} at t = {t:?}, but the ray enters it at {true_t:?}",
                        what(),
                        self.describe(id)
                    ));
                }
            }
        }
        let ids =
            |hits: &[(crate::check::Seen<S>, S)]| hits.iter().map(|h| h.0.id).collect::<Vec<_>>();
        let model_ids: Vec<u64> = model.keys().copied().collect();
        let describe = |id| self.describe(id);
        same_ids(&ids(&want), &model_ids, &describe)
            .map_err(|e| format!("ORACLE disagrees with the model on {}: {e}", what()))?;
        same_ids(&ids(&got), &model_ids, &describe).map_err(|e| format!("{}: {e}", what()))?;
        let first = self.sut.raycast(&ray, &mut self.ws_sut);
        let min_t = model
            .values()
            .copied()
            .reduce(|a, b| if b < a { b } else { a });
        match (first, min_t) {
            (None, None) => {}
            (Some(hit), Some(t)) => {
                let id = self.by_sut.get(&hit.handle).copied();
                if hit.t != t || id.and_then(|id| model.get(&id)) != Some(&t) {
                    return Err(format!(
                        "{}: raycast returned {:?} at t = {:?}, but the first hit is at t = {t:?}",
                        what(),
                        hit.handle,
                        hit.t
                    ));
                }
            }
            (first, _) => {
                return Err(format!(
                    "{}: raycast returned {first:?}, but the first hit is at {min_t:?}",
                    what()
                ));
            }
        }
        crate::probes::check_raycast(&self.sut, &ray, &mut self.ws_sut, &got)?;
        self.stats.ray_hits += usize::from(!got.is_empty());
        Ok(())
    }

    fn stop(&mut self, probe: Stop) -> Result<(), String> {
        let mut calls = 0;
        let (flow, matches, what) = match probe {
            Stop::Query(b) => {
                let area = b.to();
                let flow = self.sut.query(&area, |_| {
                    calls += 1;
                    ControlFlow::Break(())
                });
                (
                    flow,
                    query_all(&self.oracle, &area).0.len(),
                    format!("query {:?}", B(&area)),
                )
            }
            Stop::Pairs => {
                let flow = self.sut.for_each_pair(|_, _| {
                    calls += 1;
                    ControlFlow::Break(())
                });
                (flow, self.model_pair_count(), "for_each_pair".into())
            }
            Stop::Within(p, r) => {
                let (p, r) = (p.to(), S::from_f64(r));
                let flow = self.sut.within(p, r, |_| {
                    calls += 1;
                    ControlFlow::Break(())
                });
                (
                    flow,
                    within_all(&self.oracle, p, r).0.len(),
                    format!("within({:?}, {r:?})", P(p)),
                )
            }
            Stop::Raycast(r) => {
                let ray = r.to();
                let flow = self.sut.raycast_all(&ray, &mut self.ws_sut, |_, _| {
                    calls += 1;
                    ControlFlow::Break(())
                });
                (
                    flow,
                    raycast_all(&self.oracle, &ray, &mut self.ws_oracle).0.len(),
                    format!("raycast {:?}", R(&ray)),
                )
            }
        };
        check_stop(calls, flow, matches).map_err(|e| format!("early stop in {what}: {e}"))?;
        self.stats.early_breaks += usize::from(matches > 0);
        Ok(())
    }

    /// `get` of a live element returns its handle, box and value, in both structures.
    fn check_get(&self, id: u64) -> Result<(), String> {
        let e = self.entry(id);
        let item = self.sut.get(e.sut).ok_or_else(|| {
            format!(
                "get({:?}) of the live {} returned None",
                e.sut,
                self.describe(id)
            )
        })?;
        if item.handle != e.sut || *item.value != id || item.aabb != e.aabb {
            return Err(format!(
                "get({:?}) returned handle {:?} value {} box {:?}, but #{id} was last set to box {:?}",
                e.sut,
                item.handle,
                item.value,
                B(&item.aabb),
                B(&e.aabb)
            ));
        }
        match self.oracle.get(e.oracle) {
            Some(o) if *o.value == id && o.aabb == e.aabb => Ok(()),
            _ => Err(format!("ORACLE: get of #{id} disagrees with the model")),
        }
    }

    /// `iter` yields every live element once; `len`, `is_empty` and the iterator's exact size
    /// agree; `memory_bytes` covers at least every element's box and value.
    fn check_iter(&self) -> Result<(), String> {
        let n = self.live.len();
        let items: Vec<Seen<S>> = self.sut.iter().map(Seen::of).collect();
        let hint = self.sut.iter().len();
        if hint != n || items.len() != n {
            return Err(format!(
                "iter yielded {} elements and reported length {hint}, but {n} are live",
                items.len()
            ));
        }
        let ids = self
            .resolve_all(Side::Sut, &items)
            .map_err(|e| format!("iter: {e}"))?;
        let model: Vec<u64> = self.live.iter().map(|e| e.id).collect();
        same_ids(&ids, &model, &|id| self.describe(id)).map_err(|e| format!("iter: {e}"))?;
        let oracle: Vec<Seen<S>> = self.oracle.iter().map(Seen::of).collect();
        let oracle = self.resolve_all(Side::Oracle, &oracle)?;
        same_ids(&oracle, &model, &|id| self.describe(id))
            .map_err(|e| format!("ORACLE iter: {e}"))?;
        // At least a point's two coordinates and the value per element (a structure of
        // points, such as the kd-tree, stores no box).
        let least = n * (2 * size_of::<S>() + size_of::<u64>());
        let bytes = self.sut.memory_bytes();
        if bytes < least {
            return Err(format!(
                "memory_bytes() is {bytes}, less than the {least} bytes {n} points and values take"
            ));
        }
        Ok(())
    }

    /// After every step: the structural self-check and the length.
    pub(crate) fn check_step(&mut self) -> Result<(), String> {
        self.sut
            .check_invariants()
            .map_err(|e| format!("check_invariants: {e}"))?;
        self.oracle
            .check_invariants()
            .map_err(|e| format!("ORACLE check_invariants: {e}"))?;
        let n = self.live.len();
        if self.sut.len() != n || self.sut.is_empty() != (n == 0) {
            return Err(format!(
                "len() is {} and is_empty() {}, but {n} elements are live",
                self.sut.len(),
                self.sut.is_empty()
            ));
        }
        if self.oracle.len() != n {
            return Err(format!(
                "ORACLE: len() is {}, expected {n}",
                self.oracle.len()
            ));
        }
        self.stats.max_len = self.stats.max_len.max(n);
        Ok(())
    }

    /// After the last step: everything, from many places.
    pub(crate) fn check_all(&mut self) -> Result<(), String> {
        self.check_iter()?;
        let boxes: Vec<Aabb<S>> = self.live.iter().map(|e| e.aabb).collect();
        crate::probes::check_regions(&self.sut, &boxes, &self.world)?;
        for e in self.live.clone() {
            self.check_get(e.id)?;
        }
        self.pairs()?;
        let world = self.world;
        let huge = Bx::new(-1e15, -1e15, 1e15, 1e15).to();
        for area in [world, huge] {
            self.query(area)?;
        }
        let n = self.live.len();
        for e in self.live.clone().into_iter().take(24) {
            self.query(e.aabb)?;
            let c = e.aabb.center();
            for k in [0, 1, 8, 64, n, n + 1] {
                self.nearest(c, k)?;
            }
            self.within(c, S::ONE)?;
            for origin in [world.min, world.max, Point::new(world.min.x, c.y)] {
                let direction = Point::new(c.x - origin.x, c.y - origin.y);
                self.raycast(Ray {
                    origin,
                    direction,
                    max_t: S::INFINITY,
                })?;
            }
        }
        for (h, ho) in self.stale.clone().into_iter().take(24) {
            self.check_stale_get(h, ho, "removed")?;
        }
        #[cfg(feature = "rayon")]
        {
            let boxes: Vec<Aabb<S>> = self.live.iter().map(|e| e.aabb).collect();
            crate::batches::check(&self.sut, &boxes, self.world, self.stats.steps as u64)?;
        }
        Ok(())
    }
}

impl<S: Scalar, I: SpatialIndex<S, u64> + Sync> Harness<S, I> {
    /// A fresh structure from `make`, a fresh oracle, and a few handles from a second instance
    /// of each (foreign handles: live there, stale here).
    pub(crate) fn new(
        make: Make<'_, S, I>,
        world: Aabb<S>,
        bound: Option<f64>,
    ) -> Result<Self, String> {
        let sut = make(world);
        let oracle = BruteForce::new();
        let mut other = make(world);
        let mut other_oracle = BruteForce::<S, u64>::new();
        let mut foreign = Vec::new();
        let c = world.center();
        for (i, p) in [c, world.min, world.max, c].into_iter().enumerate() {
            let b = Aabb { min: p, max: p };
            let h = other.insert(b, 1_000_000 + i as u64).map_err(|e| {
                format!("a second instance rejected the valid box {:?}: {e}", B(&b))
            })?;
            let ho = other_oracle
                .insert(b, 1_000_000 + i as u64)
                .map_err(|e| format!("ORACLE rejected {:?}: {e}", B(&b)))?;
            foreign.push((h, ho));
        }
        if other.remove(foreign[3].0) != Some(1_000_003) {
            return Err("a second instance did not remove an element it holds".into());
        }
        other_oracle.remove(foreign[3].1);
        let mut h = Self::with_parts(sut, oracle, world, foreign);
        h.bound = bound;
        Ok(h)
    }

    fn unregister(&mut self, id: u64) {
        let i = self.pos.remove(&id).expect("live");
        let e = self.live.swap_remove(i);
        if let Some(moved) = self.live.get(i) {
            self.pos.insert(moved.id, i);
        }
        self.by_sut.remove(&e.sut);
        self.by_oracle.remove(&e.oracle);
        self.stale.push((e.sut, e.oracle));
    }

    /// Applies one operation to both structures and compares whatever it returns.
    pub(crate) fn apply(&mut self, op: &Op) -> Result<(), String> {
        self.stats.steps += 1;
        match op {
            Op::Insert(b) => self.insert(b.to()),
            Op::InsertMany(bs) => bs.iter().try_for_each(|b| self.insert(b.to())),
            Op::Remove(p) => self.remove(*p),
            Op::Update(p, m) => self.update(*p, *m),
            Op::UpdateAll(moves) => self.update_all(moves),
            Op::Stale(src, what) => self.stale_op(*src, *what),
            Op::Maintain => {
                self.sut.maintain();
                self.oracle.maintain();
                Ok(())
            }
            Op::Clear => self.clear(),
            _ => self.read(op),
        }
    }

    fn insert(&mut self, aabb: Aabb<S>) -> Result<(), String> {
        let id = self.next_id;
        self.next_id += 1;
        let got = self.sut.insert(aabb, id);
        if too_large(&aabb, self.bound) {
            if got != Err(Error::BoxTooLarge) {
                return Err(format!(
                    "insert of {:?}, larger than the declared bound {:?}, returned {got:?}, expected Err(BoxTooLarge)",
                    B(&aabb),
                    self.bound
                ));
            }
            self.stats.too_large += 1;
            return Ok(());
        }
        let want = self.oracle.insert(aabb, id);
        if !valid(&aabb) {
            if got != Err(Error::InvalidAabb) {
                return Err(format!(
                    "insert of the invalid box {:?} returned {got:?}, expected Err(InvalidAabb)",
                    B(&aabb)
                ));
            }
            if want != Err(Error::InvalidAabb) {
                return Err(format!(
                    "ORACLE: insert of invalid {:?} returned {want:?}",
                    B(&aabb)
                ));
            }
            self.stats.rejected += 1;
            return Ok(());
        }
        let sut =
            got.map_err(|e| format!("insert of the valid box {:?} failed: {e:?}", B(&aabb)))?;
        let oracle = want.map_err(|e| format!("ORACLE: insert of {:?} failed: {e:?}", B(&aabb)))?;
        if let Some(old) = self.by_sut.get(&sut) {
            return Err(format!(
                "insert returned handle {sut:?}, which already names {}",
                self.describe(*old)
            ));
        }
        self.register(Entry {
            id,
            sut,
            oracle,
            aabb,
        });
        self.stats.inserted += 1;
        self.check_get(id)
    }

    fn remove(&mut self, pick: Pick) -> Result<(), String> {
        let Some(e) = self.pick_live(pick) else {
            return Ok(());
        };
        let got = self.sut.remove(e.sut);
        if got != Some(e.id) {
            return Err(format!(
                "remove({:?}) of {} returned {got:?}",
                e.sut,
                self.describe(e.id)
            ));
        }
        let want = self.oracle.remove(e.oracle);
        if want != Some(e.id) {
            return Err(format!("ORACLE: remove of #{} returned {want:?}", e.id));
        }
        self.unregister(e.id);
        self.stats.removed += 1;
        if let Some(item) = self.sut.get(e.sut) {
            return Err(format!(
                "get({:?}) right after removing #{} returned value {} box {:?}",
                e.sut,
                e.id,
                item.value,
                B(&item.aabb)
            ));
        }
        Ok(())
    }

    /// What an update of a live element to `aabb` must return.
    fn update_outcome(&mut self, aabb: &Aabb<S>) -> Result<(), Error> {
        if !valid(aabb) {
            Err(Error::InvalidAabb)
        } else if too_large(aabb, self.bound) {
            self.stats.too_large += 1;
            Err(Error::BoxTooLarge)
        } else {
            Ok(())
        }
    }

    fn update(&mut self, pick: Pick, to: Move) -> Result<(), String> {
        let Some(e) = self.pick_live(pick) else {
            return Ok(());
        };
        let aabb = moved(&e.aabb, to);
        let got = self.sut.update(e.sut, aabb);
        let expected = self.update_outcome(&aabb);
        let want = if expected == Err(Error::BoxTooLarge) {
            expected.clone()
        } else {
            self.oracle.update(e.oracle, aabb)
        };
        if got != expected {
            return Err(format!(
                "update of {} to {:?} returned {got:?}, expected {expected:?}",
                self.describe(e.id),
                B(&aabb)
            ));
        }
        if want != expected {
            return Err(format!(
                "ORACLE: update to {:?} returned {want:?}",
                B(&aabb)
            ));
        }
        if expected.is_ok() {
            let i = self.pos[&e.id];
            self.live[i].aabb = aabb;
            self.stats.updated += 1;
        }
        self.check_get(e.id)
    }

    /// `update_all` moves every element by the next of `moves` in the order the structure
    /// visits them: each element is visited once, with its handle, value and current box;
    /// refused boxes leave their element as it was and the first refusal is returned; the
    /// values `f` writes are kept (checked, then undone by a second pass that moves nothing).
    fn update_all(&mut self, moves: &[Move]) -> Result<(), String> {
        const FLIP: u64 = 1 << 62;
        let mut calls: Vec<(Handle, u64, Aabb<S>, Aabb<S>)> = Vec::new();
        let (live, pos) = (&self.live, &self.pos);
        let got = self.sut.update_all(|handle, value, old| {
            let id = *value;
            let new = match (pos.get(&id), moves.len()) {
                (Some(&i), n) if n > 0 => moved(&live[i].aabb, moves[calls.len() % n]),
                _ => *old,
            };
            *value = id ^ FLIP;
            calls.push((handle, id, *old, new));
            new
        });
        if calls.len() != self.live.len() {
            return Err(format!(
                "update_all called f {} times with {} live elements",
                calls.len(),
                self.live.len()
            ));
        }
        let mut expected = Ok(());
        let mut seen = std::collections::HashSet::new();
        for &(handle, id, old, new) in &calls {
            if !seen.insert(id) || !self.pos.contains_key(&id) {
                return Err(format!(
                    "update_all called f for value {id} twice, or for no live element"
                ));
            }
            let e = self.entry(id);
            if handle != e.sut || old != e.aabb {
                return Err(format!(
                    "update_all called f with handle {handle:?} and box {:?} for {}, whose handle is {:?}",
                    B(&old),
                    self.describe(id),
                    e.sut
                ));
            }
            let outcome = self.update_outcome(&new);
            if outcome.is_ok() {
                if self.oracle.update(e.oracle, new).is_err() {
                    return Err(format!("ORACLE: update to {:?} failed", B(&new)));
                }
                let i = self.pos[&id];
                self.live[i].aabb = new;
                self.stats.updated += 1;
            } else if expected.is_ok() {
                expected = outcome;
            }
        }
        if got != expected {
            return Err(format!(
                "update_all returned {got:?}, expected {expected:?} (the first refusal in the order f was called)"
            ));
        }
        for e in &self.live {
            match self.sut.get(e.sut) {
                Some(item) if *item.value == e.id ^ FLIP => {}
                other => {
                    return Err(format!(
                        "after update_all, get of {} gave value {:?}: the value f wrote was not kept",
                        self.describe(e.id),
                        other.map(|item| *item.value)
                    ));
                }
            }
        }
        let undo = self.sut.update_all(|_, value, b| {
            *value ^= FLIP;
            *b
        });
        if undo.is_err() {
            return Err(format!(
                "update_all returning every box unchanged gave {undo:?}"
            ));
        }
        self.live
            .iter()
            .map(|e| e.id)
            .collect::<Vec<_>>()
            .into_iter()
            .try_for_each(|id| self.check_get(id))
    }

    fn stale_op(&mut self, src: StaleSrc, op: StaleOp) -> Result<(), String> {
        let Some((h, ho, what)) = self.stale_handle(src) else {
            return Ok(());
        };
        self.stats.stale += 1;
        match op {
            StaleOp::Remove => {
                let got = self.sut.remove(h);
                if got.is_some() {
                    return Err(format!(
                        "remove of the {what} handle {h:?} returned {got:?}, expected None"
                    ));
                }
                if self.oracle.remove(ho).is_some() {
                    return Err(format!(
                        "ORACLE: remove of the {what} handle {ho:?} is Some"
                    ));
                }
            }
            StaleOp::Get => self.check_stale_get(h, ho, what)?,
            StaleOp::Update(bx) => {
                let aabb = bx.to();
                let got = self.sut.update(h, aabb);
                let want = self.oracle.update(ho, aabb);
                let large = too_large(&aabb, self.bound);
                let ok = |r: &Result<(), Error>| {
                    r == &Err(Error::StaleHandle)
                        || (!valid(&aabb) && r == &Err(Error::InvalidAabb))
                        || (large && r == &Err(Error::BoxTooLarge))
                };
                if !ok(&got) {
                    return Err(format!(
                        "update of the {what} handle {h:?} to {:?} returned {got:?}, expected Err(StaleHandle)",
                        B(&aabb)
                    ));
                }
                if !ok(&want) {
                    return Err(format!(
                        "ORACLE: update of the {what} handle returned {want:?}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn clear(&mut self) -> Result<(), String> {
        self.sut.clear();
        self.oracle.clear();
        let ids: Vec<u64> = self.live.iter().map(|e| e.id).collect();
        for id in ids {
            self.unregister(id);
        }
        self.stats.clears += 1;
        self.check_iter()
    }
}

/// Runs one sequence: a fresh structure from `make` and a fresh oracle, every operation applied
/// to both and compared, `check_invariants` and `len` after every step, and a full comparison
/// at the end. The error names the step and the operation.
pub(crate) fn run_ops<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    make: Make<'_, S, I>,
    world: World,
    ops: &[Op],
    bound: Option<f64>,
) -> Result<Stats, String> {
    let mut h = Harness::new(make, world.aabb(), bound)?;
    h.check_step()
        .map_err(|e| format!("fresh structure: {e}"))?;
    for (i, op) in ops.iter().enumerate() {
        h.apply(op)
            .and_then(|()| h.check_step())
            .map_err(|e| format!("step {i} {op:?}: {e}"))?;
    }
    h.check_all()
        .map_err(|e| format!("full check after the last step ({}): {e}", ops.len()))?;
    h.stats.cases = 1;
    Ok(h.stats)
}

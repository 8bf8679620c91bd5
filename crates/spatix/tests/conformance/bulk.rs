//! Seeded bulk tests with the standard moving-agents workload, from 0 to 10^5 elements (2·10^4
//! in the fast tier): insert
//! everything, compare; move every agent a few steps with `update` and `maintain`, compare;
//! remove every third agent, compare. "Compare" is: `check_invariants`, `len`, `iter` and `get`,
//! the full pair set against an independent sweep-and-prune, and a few hundred queries,
//! within-radius and nearest queries against `BruteForce`.

use std::collections::HashMap;

use spatix::{
    Aabb, BruteForce, Error, Handle, Point, Scalar, SpatialIndex, SpatialQuery, Workspace,
};
use spatix_workload::{Agents, Layout, Rng, Sizes, Tier};

use crate::check::{self, B, P, Seen};
use crate::harness;
use crate::suite::Make;

/// Up to this many agents the sweep itself is checked against the oracle's (quadratic) pairs.
const ORACLE_PAIRS_MAX: usize = 2000;

/// Every unordered pair of intersecting boxes (closed), sorted: sort by `min.x`, then sweep each
/// box over the boxes that start before it ends.
pub(crate) fn sweep_pairs<S: Scalar>(boxes: &[(u64, Aabb<S>)]) -> Vec<(u64, u64)> {
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        boxes[a]
            .1
            .min
            .x
            .partial_cmp(&boxes[b].1.min.x)
            .expect("finite coordinates")
    });
    let mut out = Vec::new();
    for (at, &a) in order.iter().enumerate() {
        let (ia, ba) = boxes[a];
        for &b in &order[at + 1..] {
            let (ib, bb) = boxes[b];
            if bb.min.x > ba.max.x {
                break;
            }
            if bb.min.y <= ba.max.y && ba.min.y <= bb.max.y {
                out.push((ia.min(ib), ia.max(ib)));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Agents of the largest bulk test: 20k in the fast tier, 100k in the deep one.
pub(crate) fn large() -> usize {
    Tier::current().pick(20_000, 100_000)
}

/// Runs the bulk test with `min(n, max)` agents for every layout that is affordable at that
/// size (coincident and out-of-world only up to 1000: their pair counts are quadratic).
pub(crate) fn run<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    n: usize,
    max: usize,
    make: Make<'_, S, I>,
    bound: Option<f64>,
) {
    let n = n.min(max);
    let small = [
        (Layout::Uniform, Sizes::Uniform),
        (Layout::Clustered, Sizes::Uniform),
        (Layout::Uniform, Sizes::Mixed),
        (Layout::Coincident, Sizes::Uniform),
        (Layout::OutOfWorld, Sizes::Mixed),
    ];
    let sets = if n <= 1000 { &small[..] } else { &small[..3] };
    for (k, &(layout, sizes)) in sets.iter().enumerate() {
        let seed = 0xB01C_0000 + (n as u64) * 16 + k as u64;
        if let Err(e) = one(n, layout, sizes, seed, make, bound) {
            panic!(
                "bulk test, {n} agents, {layout:?} layout, {sizes:?} sizes, seed {seed:#x}: {e}"
            );
        }
    }
}

/// One bulk test: insert, compare, move, compare, remove a third, compare.
pub(crate) fn one<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    n: usize,
    layout: Layout,
    sizes: Sizes,
    seed: u64,
    make: Make<'_, S, I>,
    bound: Option<f64>,
) -> Result<(), String> {
    let agents = Agents::<S>::new(n, layout, sizes, seed);
    let mut sut = make(agents.world);
    let mut oracle = BruteForce::new();
    let mut handles = Vec::with_capacity(n);
    for (i, aabb) in agents.boxes().enumerate() {
        if harness::too_large(&aabb, bound) {
            // Larger than the structure holds: it must refuse, and the agent stays out.
            let got = sut.insert(aabb, i as u64);
            if got != Err(Error::BoxTooLarge) {
                return Err(format!(
                    "insert of agent {i} {:?}, larger than the bound, returned {got:?}",
                    B(&aabb)
                ));
            }
            handles.push(None);
            continue;
        }
        let h = sut
            .insert(aabb, i as u64)
            .map_err(|e| format!("insert of agent {i} {:?}: {e}", B(&aabb)))?;
        let ho = oracle
            .insert(aabb, i as u64)
            .map_err(|e| format!("ORACLE insert: {e}"))?;
        handles.push(Some((h, ho)));
    }
    let mut t = Bulk {
        agents,
        sut,
        oracle,
        handles,
        rng: Rng::new(seed),
        ws_sut: Workspace::new(),
        ws_oracle: Workspace::new(),
    };
    t.check("after inserting")?;
    for step in 1..=3 {
        t.agents.step();
        for i in 0..n {
            if let Some((h, ho)) = t.handles[i] {
                let b = t.agents.aabb(i);
                t.sut
                    .update(h, b)
                    .map_err(|e| format!("step {step}: update of agent {i} to {:?}: {e}", B(&b)))?;
                t.oracle
                    .update(ho, b)
                    .map_err(|e| format!("ORACLE update: {e}"))?;
            }
        }
        t.sut.maintain();
        t.invariants(&format!("after step {step}"))?;
    }
    t.check("after 3 steps")?;
    for i in (0..n).step_by(3) {
        let Some((h, ho)) = t.handles[i].take() else {
            continue;
        };
        let got = t.sut.remove(h);
        if got != Some(i as u64) {
            return Err(format!("remove of agent {i} returned {got:?}"));
        }
        t.oracle.remove(ho);
    }
    t.sut.maintain();
    t.check("after removing every third agent")
}

/// One bulk test in progress. Values are agent indices.
struct Bulk<S: Scalar, I> {
    agents: Agents<S>,
    sut: I,
    oracle: BruteForce<S, u64>,
    /// (structure under test, oracle) handle of each agent; `None` once removed.
    handles: Vec<Option<(Handle, Handle)>>,
    rng: Rng,
    ws_sut: Workspace<S>,
    ws_oracle: Workspace<S>,
}

impl<S: Scalar, I: SpatialIndex<S, u64> + Sync> Bulk<S, I> {
    fn live(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.handles.len()).filter(|&i| self.handles[i].is_some())
    }

    fn describe(&self, id: u64) -> String {
        format!("agent {id} {:?}", B(&self.agents.aabb(id as usize)))
    }

    /// Checks that a reported item is a live agent with its handle and current box.
    fn resolve(&self, s: &Seen<S>, oracle: bool) -> Result<u64, String> {
        let i = s.id as usize;
        let handle = self
            .handles
            .get(i)
            .copied()
            .flatten()
            .map(|(h, ho)| if oracle { ho } else { h });
        if handle != Some(s.handle) {
            return Err(format!(
                "reported handle {:?} with value {}, which is not that agent's live handle",
                s.handle, s.id
            ));
        }
        if s.aabb != self.agents.aabb(i) {
            return Err(format!(
                "reported agent {i} with box {:?}, but its box is {:?}",
                B(&s.aabb),
                B(&self.agents.aabb(i))
            ));
        }
        Ok(s.id)
    }

    fn resolve_all(&self, seen: &[Seen<S>], oracle: bool) -> Result<Vec<u64>, String> {
        seen.iter().map(|s| self.resolve(s, oracle)).collect()
    }

    fn invariants(&self, phase: &str) -> Result<(), String> {
        self.sut
            .check_invariants()
            .map_err(|e| format!("{phase}: check_invariants: {e}"))?;
        let n = self.live().count();
        if self.sut.len() != n || self.sut.is_empty() != (n == 0) {
            return Err(format!(
                "{phase}: len() is {}, is_empty() {}, but {n} agents are live",
                self.sut.len(),
                self.sut.is_empty()
            ));
        }
        Ok(())
    }

    fn check(&mut self, phase: &str) -> Result<(), String> {
        self.invariants(phase)?;
        self.contents()
            .and_then(|()| self.pairs())
            .and_then(|()| self.queries())
            .and_then(|()| self.nearest())
            .map_err(|e| format!("{phase}: {e}"))
    }

    fn contents(&self) -> Result<(), String> {
        let items: Vec<Seen<S>> = self.sut.iter().map(Seen::of).collect();
        let ids = self
            .resolve_all(&items, false)
            .map_err(|e| format!("iter: {e}"))?;
        let live: Vec<u64> = self.live().map(|i| i as u64).collect();
        check::same_ids(&ids, &live, &|id| self.describe(id)).map_err(|e| format!("iter: {e}"))?;
        for i in self.live().step_by(97) {
            let (h, _) = self.handles[i].expect("live");
            let item = self
                .sut
                .get(h)
                .ok_or_else(|| format!("get of agent {i} returned None"))?;
            self.resolve(&Seen::of(item), false)
                .map_err(|e| format!("get of agent {i}: {e}"))?;
        }
        Ok(())
    }

    fn pairs(&self) -> Result<(), String> {
        let (got, flow) = check::pairs_all(&self.sut);
        if flow.is_break() {
            return Err("for_each_pair returned Break, but the visitor never broke".into());
        }
        let mut ids = Vec::with_capacity(got.len());
        for (a, b) in &got {
            ids.push((
                self.resolve(a, false)
                    .map_err(|e| format!("for_each_pair: {e}"))?,
                self.resolve(b, false)
                    .map_err(|e| format!("for_each_pair: {e}"))?,
            ));
        }
        let boxes: Vec<(u64, Aabb<S>)> = self
            .live()
            .map(|i| (i as u64, self.agents.aabb(i)))
            .collect();
        let expected = sweep_pairs(&boxes);
        let describe = |id| self.describe(id);
        if boxes.len() <= ORACLE_PAIRS_MAX {
            let (want, _) = check::pairs_all(&self.oracle);
            let mut want_ids = Vec::with_capacity(want.len());
            for (a, b) in &want {
                want_ids.push((self.resolve(a, true)?, self.resolve(b, true)?));
            }
            check::same_pairs(&want_ids, &expected, &describe)
                .map_err(|e| format!("the sweep disagrees with the ORACLE: {e}"))?;
        }
        check::same_pairs(&ids, &expected, &describe).map_err(|e| format!("for_each_pair: {e}"))
    }

    /// A random area: an agent's box, a point, a small box or a large box, in and around the
    /// arena.
    fn area(&mut self, q: usize) -> Aabb<S> {
        let arena = self.agents.arena;
        let (lo, hi) = (arena.min.x.to_f64(), arena.max.x.to_f64());
        let side = hi - lo;
        let n = self.handles.len();
        if q % 4 == 0 && n > 0 {
            let i = self.rng.below(n);
            if self.handles[i].is_some() {
                return self.agents.aabb(i);
            }
        }
        let half = match q % 4 {
            1 => 0.0,
            2 => self.rng.range(0.0, side / 50.0),
            _ => self.rng.range(0.0, side / 8.0),
        };
        let (cx, cy) = (
            self.rng.range(lo - side * 0.1, hi + side * 0.1),
            self.rng.range(lo - side * 0.1, hi + side * 0.1),
        );
        let (hw, hh) = (half, half * self.rng.range(0.25, 1.0));
        Aabb {
            min: Point::new(S::from_f64(cx - hw), S::from_f64(cy - hh)),
            max: Point::new(S::from_f64(cx + hw), S::from_f64(cy + hh)),
        }
    }

    fn point(&mut self) -> Point<S> {
        let arena = self.agents.arena;
        let (lo, hi) = (arena.min.x.to_f64(), arena.max.x.to_f64());
        let margin = (hi - lo) * 0.1;
        Point::new(
            S::from_f64(self.rng.range(lo - margin, hi + margin)),
            S::from_f64(self.rng.range(lo - margin, hi + margin)),
        )
    }

    fn queries(&mut self) -> Result<(), String> {
        for q in 0..200 {
            let area = self.area(q);
            let (got, flow) = check::query_all(&self.sut, &area);
            if flow.is_break() {
                return Err(format!("query {:?} returned Break", B(&area)));
            }
            let got = self
                .resolve_all(&got, false)
                .map_err(|e| format!("query {:?}: {e}", B(&area)))?;
            let want = self.resolve_all(&check::query_all(&self.oracle, &area).0, true)?;
            check::same_ids(&got, &want, &|id| self.describe(id))
                .map_err(|e| format!("query {:?}: {e}", B(&area)))?;
        }
        let side = (self.agents.arena.max.x - self.agents.arena.min.x).to_f64();
        for _ in 0..40 {
            let p = self.point();
            let r = S::from_f64(self.rng.range(0.0, side / 20.0));
            let (got, _) = check::within_all(&self.sut, p, r);
            let got = self
                .resolve_all(&got, false)
                .map_err(|e| format!("within({:?}, {r:?}): {e}", P(p)))?;
            let want = self.resolve_all(&check::within_all(&self.oracle, p, r).0, true)?;
            check::same_ids(&got, &want, &|id| self.describe(id))
                .map_err(|e| format!("within({:?}, {r:?}): {e}", P(p)))?;
        }
        Ok(())
    }

    fn nearest(&mut self) -> Result<(), String> {
        let by_handle: HashMap<Handle, u64> = self
            .live()
            .map(|i| (self.handles[i].expect("live").0, i as u64))
            .collect();
        let len = by_handle.len();
        for q in 0..30 {
            let p = self.point();
            let k = [1, 10, 100][q % 3];
            let got = self.sut.nearest(p, k, &mut self.ws_sut).to_vec();
            let want = self.oracle.nearest(p, k, &mut self.ws_oracle).to_vec();
            let truth = |h: Handle| {
                by_handle
                    .get(&h)
                    .map(|&id| (id, self.agents.aabb(id as usize)))
            };
            check::check_nearest(&got, &want, p, k, len, None, &truth)
                .map_err(|e| format!("nearest({:?}, k = {k}): {e}", P(p)))?;
        }
        Ok(())
    }
}

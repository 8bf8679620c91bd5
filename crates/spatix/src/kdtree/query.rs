//! Rectangle, nearest-neighbour, radius and ray queries.

use core::ops::{ControlFlow, Range};

use super::metric::{Magnitudes, Metric, Scaled, Squared};
use super::{Cursor, Kd, MAX_PENDING, Split, coord};
use crate::base::prefetch::prefetch;
use crate::base::slots::Elements;
use crate::base::stack::ArrayStack;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::nearest::{Pending, Search};
use crate::search::ray::{RaySearch, cast_tree};
use crate::{Aabb, Item, Neighbor, Point, Scalar};

/// A subtree waiting in a rectangle query, with the region its points lie in.
#[derive(Clone, Copy, Debug, Default)]
struct Region<S> {
    node: Cursor,
    region: Aabb<S>,
}

/// A subtree waiting in a distance search: `offset[a]` is how far the query point lies from
/// the subtree's region along axis `a` (a lower bound, signed, in the metric's units), and
/// `bound` the key those offsets give, a lower bound of every point's in the subtree.
#[derive(Clone, Copy, Debug, Default)]
struct Far<D, K> {
    node: Cursor,
    offset: [D; 2],
    bound: K,
}

/// What a radius search keeps with each pending subtree besides its bound: nothing, or the
/// region its points lie in (to report whole subtrees inside the circle). Nothing where the
/// circle cannot hold a leaf: the regions cost about 7% at compare's radius.
trait Carry<S>: Copy + Default {
    /// What the root carries, whose points lie in `bounds`.
    fn root(bounds: Aabb<S>) -> Self;
    /// What the children of a node carry: the left one's and the right one's.
    fn cut(self, split: Split<S>) -> (Self, Self);
    /// The region, if carried.
    fn region(&self) -> Option<&Aabb<S>>;
}

impl<S> Carry<S> for () {
    #[inline(always)]
    fn root(_: Aabb<S>) -> Self {}
    #[inline(always)]
    fn cut(self, _: Split<S>) -> (Self, Self) {
        ((), ())
    }
    #[inline(always)]
    fn region(&self) -> Option<&Aabb<S>> {
        None
    }
}

impl<S: Scalar> Carry<S> for Aabb<S> {
    #[inline(always)]
    fn root(bounds: Aabb<S>) -> Self {
        bounds
    }
    #[inline(always)]
    fn cut(self, split: Split<S>) -> (Self, Self) {
        split.cut(&self)
    }
    #[inline(always)]
    fn region(&self) -> Option<&Aabb<S>> {
        Some(self)
    }
}

/// Most points whose distances a nearest-neighbour search computes in one pass: two leaves
/// of up to 32 points (the default bucket size, 16, leaves room for bucket sizes up to 32).
const PAIR: usize = 64;

/// A search for at most this many neighbours prefetches the values of the leaf pair it
/// scans first (it will most likely report one of them).
const VALUES_PREFETCH_K: usize = 8;

/// Most bytes of values a search prefetches for one range of points.
const VALUES_PREFETCH_BYTES: usize = 256;

/// Most hits a radius search holds before reporting them.
const HITS: usize = 32;

/// A nearest-neighbour search for more than one point prefetches the far side of the nodes
/// of up to this height it passes: the leaves it will most likely scan next (the sibling pair
/// and the sibling four), so that their cache misses overlap the current pair's. For k = 1
/// the search rarely leaves the first pair, and the prefetches would only cost bandwidth.
const PREFETCH_UP_TO: u32 = 3;

/// A radius search starts loading all the points under the node of this height on its way
/// down (eight leaves), before it reads the splits below it: the leaves it then scans are
/// most likely among them, and their misses overlap the descent's (1M uniform points,
/// radius 10, alternating runs: about a tenth faster; nearest-neighbour searches showed no
/// clear gain and do not).
const NEAR_PREFETCH_AT: u32 = 3;

/// Whether a region whose nearest-neighbour rank is `rank` may hold a point within `bound`
/// (an infinite bound: a search not yet full, which takes everything).
#[inline(always)]
fn may_hold<S: Scalar>(rank: S, bound: S) -> bool {
    rank < bound || bound == S::INFINITY
}

impl<'a, S: Scalar, T> Kd<'a, S, T> {
    /// One step of a distance search down an internal node: the child on the side of `q`,
    /// and the other child with its offsets and bound (`from` holds the offsets of the
    /// subtree being descended, which the near child keeps).
    #[inline(always)]
    fn towards<M: Metric<S>>(
        &self,
        metric: M,
        node: Cursor,
        q: [S; 2],
        from: &Far<M::D, M::K>,
    ) -> (Cursor, Far<M::D, M::K>) {
        let split = self.splits.get(node);
        let axis = split.axis as usize;
        let d = metric.diff(q[axis], split.value);
        // Arithmetic rather than a branch: the side is a coin toss, which no predictor guesses.
        let right = d >= M::D::default();
        // Selected rather than indexed: a store to one lane followed by a load of both
        // stalls store forwarding on the hottest path of the search.
        let offset = if axis == 0 {
            [d, from.offset[1]]
        } else {
            [from.offset[0], d]
        };
        let beyond = Far {
            node: node.child(!right),
            offset,
            bound: metric.key(offset[0], offset[1]),
        };
        (node.child(right), beyond)
    }

    /// The stack of a distance search, holding the root (at offsets and bound zero).
    #[inline(always)]
    fn distance_stack<M: Metric<S>>(&self, metric: M) -> ArrayStack<Far<M::D, M::K>, MAX_PENDING> {
        let zero = M::D::default();
        let mut stack = ArrayStack::new();
        stack.push(Far {
            node: self.shape.root(),
            offset: [zero, zero],
            bound: metric.key(zero, zero),
        });
        stack
    }

    /// The search itself, in `metric`'s arithmetic.
    ///
    /// The two leaves below a node of height 1 are adjacent in tree order, and the search
    /// computes the distances to both in one pass before offering any: their cache misses
    /// then overlap, where a scan that offers as it goes waits for one leaf, then for its
    /// sibling (which it is likely to need: it is the nearest region after the query
    /// point's own).
    #[inline(always)]
    fn nearest_with<M: Metric<S>, W: Watch<S>>(
        &self,
        metric: M,
        point: Point<S>,
        k: usize,
        search: &mut Search<'_, S>,
        watch: &mut W,
    ) {
        let q = [point.x, point.y];
        let mut ranks = [S::ZERO; PAIR];
        let mut stack = self.distance_stack(metric);
        while let Some(far) = stack.pop() {
            if !may_hold(metric.rank(far.bound), search.bound()) {
                continue;
            }
            let mut node = far.node;
            while node.height > 0 {
                watch.region(|| self.region_of(node));
                let (near, beyond) = self.towards(metric, node, q, &far);
                let beyond_rank = metric.rank(beyond.bound);
                if node.height == 1 {
                    let pair = self.shape.range(node);
                    if pair.len() <= PAIR {
                        self.watch_range(watch, pair.clone());
                        if k <= VALUES_PREFETCH_K {
                            self.prefetch_values(pair.clone());
                        }
                        let ranks = &mut ranks[..pair.len()];
                        self.ranks(metric, q, pair.start, ranks);
                        self.offer(self.shape.range(near), pair.start, ranks, k, search);
                        if may_hold(beyond_rank, search.bound()) {
                            let far_leaf = self.shape.range(beyond.node);
                            self.offer(far_leaf, pair.start, ranks, k, search);
                        }
                        break;
                    }
                }
                if may_hold(beyond_rank, search.bound()) {
                    if node.height <= PREFETCH_UP_TO && k > 1 {
                        prefetch(&self.points[self.shape.range(beyond.node)]);
                    }
                    stack.push(beyond);
                }
                node = near;
            }
            if node.height == 0 {
                // The root alone, or a leaf too large to load with its sibling.
                watch.region(|| self.region_of(node));
                let leaf = self.shape.range(node);
                self.watch_range(watch, leaf.clone());
                for first in leaf.clone().step_by(PAIR) {
                    let run = first..leaf.end.min(first + PAIR);
                    let ranks = &mut ranks[..run.len()];
                    self.ranks(metric, q, first, ranks);
                    self.offer(run, first, ranks, k, search);
                }
            }
        }
    }

    /// The ranks of the points from position `first` on, one per element of `ranks`.
    #[inline(always)]
    fn ranks<M: Metric<S>>(&self, metric: M, q: [S; 2], first: usize, ranks: &mut [S]) {
        for (rank, p) in ranks.iter_mut().zip(&self.points[first..]) {
            let (dx, dy) = (metric.diff(q[0], p[0]), metric.diff(q[1], p[1]));
            *rank = metric.rank(metric.key(dx, dy));
        }
    }

    /// Offers the points at positions `range` to the search, with their ranks
    /// `ranks[i - first]`. Out of line, with the search's bookkeeping inlined into its loop
    /// ([`Search::offer_inlined`]): compiled once, and no call per candidate (k = 8 and 64
    /// offer dozens to hundreds of candidates per query).
    #[inline(never)]
    fn offer(
        &self,
        range: Range<usize>,
        first: usize,
        ranks: &[S],
        k: usize,
        search: &mut Search<'_, S>,
    ) {
        let ranks = &ranks[range.start - first..range.end - first];
        if k == 1 {
            // The nearest alone: the smallest rank, found without a branch per point, and
            // one offer.
            let (mut best, mut at) = (S::INFINITY, 0);
            for (j, &rank) in ranks.iter().enumerate() {
                let better = rank < best;
                best = if better { rank } else { best };
                at = if better { j } else { at };
            }
            if let Some(&rank) = ranks.get(at) {
                if rank <= search.bound() {
                    search.offer(self.handle(range.start + at), rank);
                }
            }
            return;
        }
        let mut bound = search.bound();
        for (i, &rank) in range.zip(ranks) {
            // `<=`: an infinite distance still fills a search that is not full.
            if rank <= bound {
                search.offer_inlined(self.handle(i), rank);
                bound = search.bound();
            }
        }
    }

    /// Whether a circle of `radius` is large enough to hold whole leaves: at least twice
    /// the area of an average leaf's region (the points' bounding box over the number of
    /// leaves). Only then does a radius search look for subtrees that lie inside it, which
    /// costs it a region per pending subtree (about 6% at a radius holding a few points).
    fn may_hold_leaves(&self, radius: S) -> bool {
        let b = &self.bounds;
        let area = (b.max.x.to_f64() - b.min.x.to_f64()) * (b.max.y.to_f64() - b.min.y.to_f64());
        let r = radius.to_f64();
        r * r * (1u64 << self.shape.height) as f64 >= 2.0 * area
    }

    /// The radius search itself, in `metric`'s arithmetic; where regions are carried (`C`),
    /// subtrees taken from the stack whose region lies inside the circle are reported without
    /// a test per point.
    #[inline(always)]
    fn within_with<M: Metric<S>, F, C: Carry<S>>(
        &self,
        metric: M,
        point: Point<S>,
        radius: S,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        let q = [point.x, point.y];
        // Keys below `inner` are hits, keys above `outer` misses (infinite: a radius beyond
        // every distance, which takes every point); in between, the exact test decides.
        let (inner, outer) = metric.radius_keys(radius);
        let area = Aabb::around(point, radius);
        let exact = |p: Point<S>| {
            area.contains_point(p) && Aabb { min: p, max: p }.within_distance(point, radius)
        };
        // The key of a region's farthest corner from the query point.
        let farthest = |region: &Aabb<S>| {
            metric.key(
                metric.span(q[0], region.min.x, region.max.x),
                metric.span(q[1], region.min.y, region.max.y),
            )
        };
        let zero = M::D::default();
        let mut stack = ArrayStack::<(Far<M::D, M::K>, C), MAX_PENDING>::new();
        stack.push((
            Far {
                node: self.shape.root(),
                offset: [zero, zero],
                bound: metric.key(zero, zero),
            },
            C::root(self.bounds),
        ));
        // Hits wait here and are reported in batches.
        let mut hits = [0u32; HITS];
        let mut held = 0;
        while let Some((far, mut carried)) = stack.pop() {
            let mut node = far.node;
            // Checked where a subtree is taken from the stack (all but the query point's own
            // path): checking every node of the descent cost 10% at radii that never take a
            // whole subtree.
            let inside = carried
                .region()
                .is_some_and(|region| farthest(region) < inner);
            if node.height > 0 && inside {
                self.visit_positions(&hits[..held], &mut visit)?;
                held = 0;
                let range = self.shape.range(node);
                self.prefetch_values(range.clone());
                self.visit_range(range, &mut visit)?;
                continue;
            }
            while node.height > 0 {
                if node.height == NEAR_PREFETCH_AT {
                    prefetch(&self.points[self.shape.range(node)]);
                }
                let (near, beyond) = self.towards(metric, node, q, &far);
                let (lo, hi) = carried.cut(self.splits.get(node));
                let right = near.leaf != node.leaf;
                if beyond.bound <= outer {
                    if node.height <= PREFETCH_UP_TO {
                        let range = self.shape.range(beyond.node);
                        self.prefetch_values(range.clone());
                        prefetch(&self.points[range]);
                    }
                    stack.push((beyond, if right { lo } else { hi }));
                }
                carried = if right { hi } else { lo };
                node = near;
            }
            let leaf = self.shape.range(node);
            self.prefetch_values(leaf.clone());
            for (i, p) in leaf.clone().zip(&self.points[leaf]) {
                let (dx, dy) = (metric.diff(q[0], p[0]), metric.diff(q[1], p[1]));
                let key = metric.key(dx, dy);
                // Stored unconditionally, kept only on a hit: no branch to mispredict.
                hits[held] = i as u32;
                // `&` and `|`, not `&&` and `||`: the one branch left is on the rare keys
                // within the slack of the radius.
                let sure = key < inner;
                let edge = (key <= outer) & !sure;
                held += usize::from(sure | (edge && exact(Point::new(p[0], p[1]))));
                if held == HITS {
                    self.visit_positions(&hits, &mut visit)?;
                    held = 0;
                }
            }
        }
        self.visit_positions(&hits[..held], &mut visit)
    }

    /// Starts loading the values at tree positions `range` into the cache (when they are
    /// small: a few lines at most), so that reporting hits there does not wait for them.
    #[inline(always)]
    fn prefetch_values(&self, range: Range<usize>) {
        if size_of::<T>() * range.len() <= VALUES_PREFETCH_BYTES {
            prefetch(&self.values[range]);
        }
    }

    /// Visits the elements at the tree positions `hits`.
    #[inline]
    fn visit_positions<F>(&self, hits: &[u32], visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        for &i in hits {
            visit(self.item(i as usize))?;
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Searches<S, T> for Kd<'_, S, T> {
    /// Depth-first over the subtrees whose region meets `area`; a subtree whose region lies
    /// inside `area` is reported without testing its points.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        if !area.intersects(&self.bounds) {
            return ControlFlow::Continue(());
        }
        let mut stack = ArrayStack::<Region<S>, MAX_PENDING>::new();
        stack.push(Region {
            node: self.shape.root(),
            region: self.bounds,
        });
        while let Some(Region { node, region }) = stack.pop() {
            watch.region(|| region);
            if area.contains(&region) {
                self.watch_range(watch, self.shape.range(node));
                self.visit_range(self.shape.range(node), &mut visit)?;
                continue;
            }
            if node.height == 0 {
                for i in self.shape.range(node) {
                    watch.candidate(|| self.handle(i));
                    if area.contains_point(self.point(i)) {
                        visit(self.item(i))?;
                    }
                }
                continue;
            }
            let split = self.splits.get(node);
            let axis = split.axis as usize;
            let (left, right) = node.children();
            let (lo, hi) = split.cut(&region);
            if coord(&area.max, axis) >= split.value {
                stack.push(Region {
                    node: right,
                    region: hi,
                });
            }
            if coord(&area.min, axis) <= split.value {
                stack.push(Region {
                    node: left,
                    region: lo,
                });
            }
        }
        ControlFlow::Continue(())
    }

    /// Backtracking search with no visited map: descend towards the point, scan the leaf,
    /// and backtrack into the far side of a split only while the region beyond it (bounded by
    /// this and the earlier splits crossed) is nearer than the k-th best so far. Plain
    /// squared distances where they are safe ([`Magnitudes`](super::metric::Magnitudes)),
    /// scaled ones elsewhere.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        let mut search = workspace.begin(k);
        if self.magnitudes.squares_safe(point) {
            self.nearest_with(Squared, point, k, &mut search, watch);
            return workspace.finish();
        }
        let scaled = Scaled::for_query(&self.bounds, point);
        self.nearest_with(scaled, point, k, &mut search, watch);
        // Reported as every structure reports them (`Point::distance`, `Point::distance_2`);
        // ranked by the scaled keys, which break the ties that rounding makes there (at zero
        // or infinity).
        workspace.finish_with(|handle| {
            let p = self.point(handle.slot() as usize);
            (point.distance(p), point.distance_2(p))
        })
    }

    /// Depth-first over the subtrees whose distance bound is within the radius; plain squared
    /// distances where they are safe, scaled ones elsewhere (the same ranking as
    /// [`nearest`](crate::SpatialQuery::nearest)).
    ///
    /// An element is reported when it lies in the box `point ± radius` and
    /// [`Aabb::within_distance`] holds, as the trait's default and `BruteForce` decide. The
    /// metric's keys, whose error is far below [`Scalar::RELATIVE_SLACK`], decide every point
    /// clearly inside or outside the radius; only those within the slack of it take that
    /// exact test. A subtree whose region lies clearly inside the circle is reported whole,
    /// without a test per point.
    #[inline]
    fn do_within<F: Visits<S, T>>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()> {
        let whole = self.may_hold_leaves(radius);
        match (
            self.magnitudes.squares_safe(point) && Magnitudes::ordinary(radius),
            whole,
        ) {
            (true, false) => self.within_with::<_, _, ()>(Squared, point, radius, visit),
            (true, true) => self.within_with::<_, _, Aabb<S>>(Squared, point, radius, visit),
            (false, _) => {
                let scaled = Scaled::for_query(&self.bounds, point);
                self.within_with::<_, _, Aabb<S>>(scaled, point, radius, visit)
            }
        }
    }

    /// Best-first over node regions by where the ray enters them (conservatively), through
    /// the traversal every tree shares; each point lies in exactly one leaf, so each hit is
    /// recorded once.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let mut search = workspace.begin_ray();
        let pending = |node: Cursor, region: Aabb<S>| {
            region.ray_entry_conservative(ray).map(|t| Pending {
                key: t,
                node: node.leaf,
                aux: node.height,
                aabb: region,
            })
        };
        if let Some(root) = pending(self.shape.root(), self.bounds) {
            search.push_region(root);
        }
        let expand = |p: Pending<S>, search: &mut RaySearch<'_, S>| {
            watch.region(|| p.aabb);
            let node = Cursor {
                leaf: p.node,
                height: p.aux,
            };
            if node.height == 0 {
                for i in self.shape.range(node) {
                    watch.candidate(|| self.handle(i));
                    let p = self.point(i);
                    if let Some(t) = (Aabb { min: p, max: p }).entry_unchecked(ray) {
                        search.push_hit(t, i as u32);
                    }
                }
                return;
            }
            let (left, right) = node.children();
            let (lo, hi) = self.splits.get(node).cut(&p.aabb);
            for (child, region) in [(left, lo), (right, hi)] {
                if let Some(next) = pending(child, region) {
                    search.push_region(next);
                }
            }
        };
        cast_tree(&mut search, self, expand, visit)
    }
}

/// Ray hits name tree positions.
impl<S: Scalar, T> Elements<S, T> for Kd<'_, S, T> {
    #[inline]
    fn item(&self, position: u32) -> Item<'_, S, T> {
        Kd::item(self, position as usize)
    }
}

//! Rectangle, nearest-neighbour, radius and ray queries.

use core::ops::{ControlFlow, Range};

use super::{Cursor, KdTree, MAX_PENDING, coord};
use crate::nearest::{Pending, Search};
use crate::pool::ArrayStack;
use crate::prefetch::prefetch;
use crate::ray::{RaySearch, cast_tree};
use crate::{Aabb, Handle, Item, Neighbor, Point, Ray, Scalar, Workspace};

/// A subtree waiting in a rectangle query, with the region its points lie in.
#[derive(Clone, Copy, Debug, Default)]
struct Region<S> {
    node: Cursor,
    region: Aabb<S>,
}

/// A subtree waiting in a distance search: `offset[a]` is how far the query point lies from
/// the subtree's region along axis `a` (a lower bound, signed), and `bound` the squared
/// distance those offsets give, a lower bound of every point's in the subtree.
#[derive(Clone, Copy, Debug, Default)]
struct Far<S> {
    node: Cursor,
    offset: [S; 2],
    bound: S,
}

/// Most points whose distances a nearest-neighbour search computes in one pass: two leaves
/// of up to 32 points (the default bucket size, 16, leaves room for bucket sizes up to 32).
const PAIR: usize = 64;

/// Most hits a radius search holds before reporting them.
const HITS: usize = 32;

/// A nearest-neighbour search for more than one point prefetches the far side of the nodes
/// of up to this height it passes: the leaves it will most likely scan next (the sibling pair
/// and the sibling four), so that their cache misses overlap the current pair's. For k = 1
/// the search rarely leaves the first pair, and the prefetches would only cost bandwidth.
const PREFETCH_UP_TO: u32 = 3;

impl<S: Scalar> Far<S> {
    /// Whether the subtree may hold a point within `bound` (an infinite bound: a search not
    /// yet full, which takes everything).
    #[inline]
    fn within(&self, bound: S) -> bool {
        self.bound < bound || bound == S::INFINITY
    }

    /// The other side of a split at signed distance `d` from the query point along `axis`.
    #[inline]
    fn beyond(&self, node: Cursor, axis: usize, d: S) -> Self {
        // Selected rather than indexed: a store to one lane followed by a load of both
        // stalls store forwarding on the hottest path of the search.
        let offset = if axis == 0 {
            [d, self.offset[1]]
        } else {
            [self.offset[0], d]
        };
        Self {
            node,
            offset,
            bound: offset[0] * offset[0] + offset[1] * offset[1],
        }
    }
}

impl<S: Scalar, T> KdTree<S, T> {
    /// One step of a distance search down an internal node: the child on the side of `q`,
    /// and the other child with its distance bound (`from` holds the offsets of the subtree
    /// being descended, which the near child keeps).
    #[inline]
    fn towards(&self, node: Cursor, q: [S; 2], from: &Far<S>) -> (Cursor, Far<S>) {
        let split = self.splits.get(node);
        let axis = split.axis as usize;
        let d = q[axis] - split.value;
        // Arithmetic rather than a branch: the side is a coin toss, which no predictor guesses.
        let right = d >= S::ZERO;
        (node.child(right), from.beyond(node.child(!right), axis, d))
    }

    /// The stack of a distance search, holding the root (at bound 0).
    fn distance_stack(&self) -> ArrayStack<Far<S>, MAX_PENDING> {
        let mut stack = ArrayStack::new();
        stack.push(Far {
            node: self.shape.root(),
            ..Far::default()
        });
        stack
    }

    /// Depth-first over the subtrees whose region meets `area`; a subtree whose region lies
    /// inside `area` is reported without testing its points.
    pub(super) fn query_impl<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() || self.entries.is_empty() || !area.intersects(&self.bounds) {
            return ControlFlow::Continue(());
        }
        let mut stack = ArrayStack::<Region<S>, MAX_PENDING>::new();
        stack.push(Region {
            node: self.shape.root(),
            region: self.bounds,
        });
        while let Some(Region { node, region }) = stack.pop() {
            if area.contains(&region) {
                self.visit_range(self.shape.range(node), &mut visit)?;
                continue;
            }
            if node.height == 0 {
                for i in self.shape.range(node) {
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

    /// The seed's search without its visited map: descend towards the point, scan the leaf,
    /// and backtrack into the far side of a split only while the region beyond it (bounded by
    /// this and the earlier splits crossed) is nearer than the k-th best so far.
    ///
    /// The two leaves below a node of height 1 are adjacent in tree order, and the search
    /// computes the distances to both in one pass before offering any: their cache misses
    /// then overlap, where a scan that offers as it goes waits for one leaf, then for its
    /// sibling (which it is likely to need: it is the nearest region after the query
    /// point's own).
    pub(super) fn nearest_impl<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        let mut search = workspace.begin(k);
        if !point.is_finite() || k == 0 || self.entries.is_empty() {
            return workspace.finish();
        }
        let q = [point.x, point.y];
        let mut d2 = [S::ZERO; PAIR];
        let mut stack = self.distance_stack();
        while let Some(far) = stack.pop() {
            // An infinite bound means the search is not full yet (or squares overflowed).
            if !far.within(search.bound()) {
                continue;
            }
            let mut node = far.node;
            while node.height > 0 {
                let (near, beyond) = self.towards(node, q, &far);
                if node.height == 1 {
                    let pair = self.shape.range(node);
                    if pair.len() <= PAIR {
                        let d2 = &mut d2[..pair.len()];
                        self.distances(q, pair.start, d2);
                        self.offer(self.shape.range(near), pair.start, d2, &mut search);
                        if beyond.within(search.bound()) {
                            let far_leaf = self.shape.range(beyond.node);
                            self.offer(far_leaf, pair.start, d2, &mut search);
                        }
                        break;
                    }
                }
                if beyond.within(search.bound()) {
                    if node.height <= PREFETCH_UP_TO && k > 1 {
                        prefetch(&self.entries[self.shape.range(beyond.node)]);
                    }
                    stack.push(beyond);
                }
                node = near;
            }
            if node.height == 0 {
                // The root alone, or a leaf too large to load with its sibling.
                let leaf = self.shape.range(node);
                for first in leaf.clone().step_by(PAIR) {
                    let run = first..leaf.end.min(first + PAIR);
                    let d2 = &mut d2[..run.len()];
                    self.distances(q, first, d2);
                    self.offer(run, first, d2, &mut search);
                }
            }
        }
        workspace.finish()
    }

    /// The squared distances from `q` to the points from position `first` on, one per
    /// element of `d2`.
    #[inline]
    fn distances(&self, q: [S; 2], first: usize, d2: &mut [S]) {
        for (d2, e) in d2.iter_mut().zip(&self.entries[first..]) {
            let (dx, dy) = (q[0] - e.p[0], q[1] - e.p[1]);
            *d2 = dx * dx + dy * dy;
        }
    }

    /// Offers the points at positions `range` to the search, with their squared distances
    /// `d2[i - first]`. Out of line: the search's bookkeeping is then compiled once.
    #[inline(never)]
    fn offer(&self, range: Range<usize>, first: usize, d2: &[S], search: &mut Search<'_, S>) {
        let d2 = &d2[range.start - first..range.end - first];
        let mut bound = search.bound();
        for (e, &d2) in self.entries[range].iter().zip(d2) {
            // `<=`: an infinite distance still fills a search that is not full.
            if d2 <= bound {
                search.offer(Handle::new(e.slot, self.generation), d2);
                bound = search.bound();
            }
        }
    }

    /// Depth-first over the subtrees whose distance bound is at most `radius`; the test is
    /// the default `within`'s ([`Aabb::around`], then [`Aabb::within_distance`]), computed
    /// on the points directly.
    pub(super) fn within_impl<F>(&self, point: Point<S>, radius: S, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !(point.is_finite() && radius >= S::ZERO) || self.entries.is_empty() {
            return ControlFlow::Continue(());
        }
        let r2 = radius * radius;
        let area = Aabb::around(point, radius);
        if !r2.is_finite() {
            // Squares overflow: let the exact test decide, point by point.
            for i in 0..self.entries.len() {
                let item = self.item(i);
                if item.aabb.intersects(&area) && item.aabb.within_distance(point, radius) {
                    visit(item)?;
                }
            }
            return ControlFlow::Continue(());
        }
        let q = [point.x, point.y];
        let mut stack = self.distance_stack();
        // Hits wait here and are reported in batches (`Slots::visit_fresh_slots`).
        let mut hits = [0u32; HITS];
        let mut held = 0;
        while let Some(far) = stack.pop() {
            let mut node = far.node;
            while node.height > 0 {
                let (near, beyond) = self.towards(node, q, &far);
                if beyond.bound <= r2 {
                    if node.height <= PREFETCH_UP_TO {
                        prefetch(&self.entries[self.shape.range(beyond.node)]);
                    }
                    stack.push(beyond);
                }
                node = near;
            }
            for e in &self.entries[self.shape.range(node)] {
                let [x, y] = e.p;
                let (dx, dy) = (q[0] - x, q[1] - y);
                let inside =
                    area.min.x <= x && x <= area.max.x && area.min.y <= y && y <= area.max.y;
                // Stored unconditionally, kept only on a hit: no branch to mispredict.
                hits[held] = e.slot;
                held += usize::from(dx * dx + dy * dy <= r2 && inside);
                if held == HITS {
                    self.slots.visit_fresh_slots(&hits, &mut visit)?;
                    held = 0;
                }
            }
        }
        self.slots.visit_fresh_slots(&hits[..held], &mut visit)
    }

    /// Best-first over node regions by where the ray enters them (conservatively), through
    /// the traversal every tree shares; each point lies in exactly one leaf, so each hit is
    /// recorded once.
    pub(super) fn raycast_impl<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let mut search = workspace.begin_ray();
        if !ray.is_valid() || self.entries.is_empty() {
            return ControlFlow::Continue(());
        }
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
            let node = Cursor {
                leaf: p.node,
                height: p.aux,
            };
            if node.height == 0 {
                for i in self.shape.range(node) {
                    let p = self.point(i);
                    if let Some(t) = (Aabb { min: p, max: p }).entry_unchecked(ray) {
                        search.push_hit(t, self.entries[i].slot);
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
        cast_tree(&mut search, &self.slots, expand, visit)
    }
}

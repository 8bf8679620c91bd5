//! Rectangle, nearest-neighbour and ray queries.

use core::ops::ControlFlow;

use super::{MAX_LEVELS, Tree, bits, overlapping};
use crate::base::stack::ArrayStack;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::nearest::Pending;
use crate::search::ray::{RaySearch, cast_tree};
use crate::{Aabb, Neighbor, Scalar};

/// Children of one node still to visit: those at `first + i` of `level` for each bit `i`
/// of `mask`.
#[derive(Clone, Copy, Debug, Default)]
struct Siblings {
    level: u32,
    first: u32,
    mask: u64,
}

impl<S: Scalar, T> Searches<S, T> for Tree<'_, S, T> {
    /// Depth-first with an explicit stack holding, per level, the mask of the children still
    /// to visit (so at most one entry per level: it never needs the heap). Each visited node
    /// tests all its children in one branch-free pass; every element is stored once, so
    /// each is reported at most once with no further check.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        if !self.root().is_some_and(|r| r.intersects(area)) {
            return ControlFlow::Continue(());
        }
        let mut stack = ArrayStack::<Siblings, MAX_LEVELS>::new();
        let (mut level, mut node) = (self.depth(), 0);
        loop {
            watch.region(|| self.level(level as usize)[node as usize]);
            let (first, end) = self.children(level, node);
            let below = &self.level(level as usize - 1)[first as usize..end as usize];
            let hits = overlapping(below, area);
            if level == 1 {
                self.watch_elements(watch, first, end);
                for i in bits(hits) {
                    visit(self.elements.at(first + i))?;
                }
            } else if hits != 0 {
                stack.push(Siblings {
                    level: level - 1,
                    first,
                    mask: hits,
                });
            }
            let Some(mut next) = stack.pop() else {
                return ControlFlow::Continue(());
            };
            let i = next.mask.trailing_zeros();
            next.mask &= next.mask - 1;
            if next.mask != 0 {
                stack.push(next);
            }
            (level, node) = (next.level, next.first + i);
        }
    }

    /// Best-first search: nodes come off a min-queue by the distance to their union box, and
    /// the search stops when the nearest waiting node is farther than the k-th best so far.
    ///
    /// Until k candidates are known nothing can be pruned, so the search first walks down
    /// greedily to the leaf that is nearest at every level and offers its elements (a first
    /// bound at the cost of one descent, with nothing queued); the best-first pass then
    /// queues only what beats that bound, and skips that leaf.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        let mut search = workspace.begin_exact(k);
        let Some(root) = self.root() else {
            return workspace.finish();
        };
        let distance = |b: &Aabb<S>| b.distance_key(point);
        let (mut level, mut node) = (self.depth(), 0);
        while level > 1 {
            watch.region(|| self.level(level as usize)[node as usize]);
            let (first, end) = self.children(level, node);
            let below = &self.level(level as usize - 1)[first as usize..end as usize];
            // A loop rather than an iterator's `reduce`: core's `fold` behind it is generic
            // too, and was inlined or not by how the caller's crate was cut (issue 47).
            let (mut best, mut i) = (distance(&below[0]), first);
            for (j, b) in (first + 1..end).zip(&below[1..]) {
                let d = distance(b);
                if d < best {
                    (best, i) = (d, j);
                }
            }
            (level, node) = (level - 1, i);
        }
        let greedy_leaf = node;
        watch.region(|| self.level(1)[greedy_leaf as usize]);
        let (first, end) = self.children(1, greedy_leaf);
        self.watch_elements(watch, first, end);
        for (i, b) in (first..end).zip(&self.elements.boxes[first as usize..end as usize]) {
            search.offer(self.elements.handle(i), distance(b));
        }
        search.push(Pending {
            key: distance(root),
            node: 0,
            aux: self.depth(),
            aabb: *root,
        });
        while let Some(p) = search.pop() {
            if p.key > search.bound() {
                break;
            }
            if p.aux > 1 || p.node != greedy_leaf {
                watch.region(|| p.aabb);
                let (first, end) = self.children(p.aux, p.node);
                if p.aux == 1 {
                    self.watch_elements(watch, first, end);
                }
                let below = &self.level(p.aux as usize - 1)[first as usize..end as usize];
                for (i, b) in (first..end).zip(below) {
                    let d = distance(b);
                    if d > search.bound() {
                        continue;
                    }
                    if p.aux == 1 {
                        search.offer(self.elements.handle(i), d);
                    } else {
                        search.push(Pending {
                            key: d,
                            node: i,
                            aux: p.aux - 1,
                            aabb: *b,
                        });
                    }
                }
            }
        }
        workspace.finish()
    }

    /// Ordered traversal ([`cast_tree`]): nodes come off a min-queue by where the ray enters
    /// their union box (widened for rounding), and a hit is reported once no waiting node
    /// could hold an earlier one.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let mut search = workspace.begin_ray();
        let pending = |b: &Aabb<S>, node: u32, level: u32| {
            b.ray_entry_conservative(ray).map(|t| Pending {
                key: t,
                node,
                aux: level,
                aabb: *b,
            })
        };
        if let Some(root) = self.root().and_then(|r| pending(r, 0, self.depth())) {
            search.push_region(root);
        }
        let expand = |p: Pending<S>, search: &mut RaySearch<'_, S>| {
            watch.region(|| p.aabb);
            let (first, end) = self.children(p.aux, p.node);
            if p.aux == 1 {
                self.watch_elements(watch, first, end);
            }
            let below = &self.level(p.aux as usize - 1)[first as usize..end as usize];
            for (i, b) in (first..end).zip(below) {
                if p.aux == 1 {
                    if let Some(t) = b.entry_unchecked(ray) {
                        search.push_hit(t, i);
                    }
                } else if let Some(next) = pending(b, i, p.aux - 1) {
                    search.push_region(next);
                }
            }
        };
        cast_tree(&mut search, &self.elements, expand, visit)
    }
}

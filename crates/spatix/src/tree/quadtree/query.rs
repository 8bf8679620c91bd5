//! Rectangle, nearest-neighbour and ray queries.

use core::ops::ControlFlow;

use super::Quadtree;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::ray::RaySearch;
use crate::tree::BRANCH;
use crate::tree::{Frame, Stack, cast_frames, nearest_in_frames};
use crate::{Aabb, Neighbor, Point, Scalar};

impl<S: Scalar, T> Searches<S, T> for Quadtree<S, T> {
    /// Visits the leaves overlapping `area` with an explicit stack; an element listed in
    /// several of them is reported only by the leaf that owns the lower-left corner of its
    /// (clamped) intersection with the (clamped) area, so each exactly once with no
    /// per-query memory.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        let qa = self.filed_box(area);
        let mut stack = Stack::new();
        stack.push(Frame::root(self.base.world));
        while let Some(f) = stack.pop() {
            watch.region(|| f.aabb);
            let node = self.base.nodes[f.node as usize];
            if node.count == BRANCH {
                let mid = f.mid();
                let mask = Frame::quadrants(mid, &qa);
                for i in 0..4 {
                    if mask & (1 << i) != 0 {
                        stack.push(f.child(node.first_child, i, mid));
                    }
                }
                continue;
            }
            for e in self.links.items(node.first_child) {
                watch.candidate(|| self.slots.handle(e));
                let b = self.slots.aabb(e);
                if !b.intersects(area) {
                    continue;
                }
                let corner = self.base.world.closest_point(b.min);
                let q = Point::new(corner.x.max_s(qa.min.x), corner.y.max_s(qa.min.y));
                if f.owns(q) {
                    visit(self.slots.item(e))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Best-first search ([`nearest_in_frames`]). An element listed in several leaves counts
    /// only in the leaf owning the (clamped) point of its box nearest to the query point,
    /// which is never farther than the element.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        nearest_in_frames(self.base.world, point, k, workspace, |f, search| {
            watch.region(|| f.aabb);
            let node = self.base.nodes[f.node as usize];
            if node.count == BRANCH {
                return Some(node.first_child);
            }
            for e in self.links.items(node.first_child) {
                watch.candidate(|| self.slots.handle(e));
                let b = self.slots.aabb(e);
                let d = b.distance_key(point);
                if d <= search.bound()
                    && f.owns(self.base.world.closest_point(b.closest_point(point)))
                {
                    search.offer(self.slots.handle(e), d);
                }
            }
            None
        })
    }

    /// Ordered traversal ([`cast_frames`]); a hit is reported once no waiting node could hold
    /// an earlier one. An element listed in several leaves is recorded only by the leaf
    /// owning the (clamped) point where the ray enters it.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let node = |f: &Frame<S>, search: &mut RaySearch<'_, S>| {
            watch.region(|| f.aabb);
            let node = self.base.nodes[f.node as usize];
            if node.count == BRANCH {
                return Some(node.first_child);
            }
            for e in self.links.items(node.first_child) {
                watch.candidate(|| self.slots.handle(e));
                let b = self.slots.aabb(e);
                if let Some(t) = b.entry_unchecked(ray) {
                    if f.owns(self.base.world.closest_point(b.entry_point(ray, t))) {
                        search.push_hit(t, e);
                    }
                }
            }
            None
        };
        cast_frames(self.base.world, ray, workspace, &self.slots, node, visit)
    }
}

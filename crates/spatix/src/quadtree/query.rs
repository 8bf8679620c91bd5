//! Rectangle, nearest-neighbour and ray queries.

use core::ops::ControlFlow;

use super::{BRANCH, Frame, Quadtree, Stack};
use crate::nearest::Pending;
use crate::ray::{RaySearch, cast_tree};
use crate::{Aabb, Item, Neighbor, Point, Ray, Scalar, Workspace};

impl<S: Scalar, T> Quadtree<S, T> {
    /// Visits the leaves overlapping `area` with an explicit stack; an element listed in
    /// several of them is reported only by the leaf that owns the lower-left corner of its
    /// (clamped) intersection with the (clamped) area, so each exactly once with no
    /// per-query memory.
    pub(super) fn query_impl<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() {
            return ControlFlow::Continue(());
        }
        let qa = self.filed_box(area);
        let mut stack = Stack::new();
        stack.push(Frame::root(self.world));
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
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
                let b = self.slots.aabb(e);
                if !b.intersects(area) {
                    continue;
                }
                let corner = self.world.closest_point(b.min);
                let q = Point::new(corner.x.max_s(qa.min.x), corner.y.max_s(qa.min.y));
                if f.owns(q) {
                    visit(self.slots.item(e))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Best-first search: nodes come off a min-queue by their distance bound (their box grown
    /// to infinity across world borders, so out-of-world elements are bounded too), and the
    /// search stops when the nearest pending node is farther than the k-th best so far. An
    /// element listed in several leaves counts only in the leaf owning the (clamped) point of
    /// its box nearest to the query point, which is never farther than the element.
    pub(super) fn nearest_impl<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        let mut search = workspace.begin();
        if point.is_finite() && k > 0 && self.slots.len() > 0 {
            let pending = |f: &Frame<S>| f.pending(f.reach().distance_2_to_point(point));
            search.push(pending(&Frame::root(self.world)));
            while let Some(p) = search.pop() {
                if p.key > search.bound(k) {
                    break;
                }
                let f = Frame::from_pending(&p);
                let node = self.nodes[f.node as usize];
                if node.count == BRANCH {
                    for child in f.children(node.first_child) {
                        let next = pending(&child);
                        if next.key <= search.bound(k) {
                            search.push(next);
                        }
                    }
                    continue;
                }
                for e in self.links.items(node.first_child) {
                    let b = self.slots.aabb(e);
                    let d = b.distance_2_to_point(point);
                    if d <= search.bound(k)
                        && f.owns(self.world.closest_point(b.closest_point(point)))
                    {
                        search.offer(k, self.slots.handle(e), d);
                    }
                }
            }
        }
        workspace.finish()
    }

    /// Ordered traversal: nodes come off a min-queue by where the ray enters them (their box
    /// grown to infinity across world borders, widened for rounding), and a hit is reported
    /// once no waiting node could hold an earlier one. An element listed in several leaves is
    /// recorded only by the leaf owning the (clamped) point where the ray enters it.
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
        if !ray.is_valid() || self.slots.len() == 0 {
            return ControlFlow::Continue(());
        }
        let pending = |f: &Frame<S>| f.reach().ray_entry_conservative(ray).map(|t| f.pending(t));
        if let Some(root) = pending(&Frame::root(self.world)) {
            search.push_region(root);
        }
        let expand = |p: Pending<S>, search: &mut RaySearch<'_, S>| {
            let f = Frame::from_pending(&p);
            let node = self.nodes[f.node as usize];
            if node.count == BRANCH {
                for child in f.children(node.first_child) {
                    if let Some(next) = pending(&child) {
                        search.push_region(next);
                    }
                }
                return;
            }
            for e in self.links.items(node.first_child) {
                let b = self.slots.aabb(e);
                if let Some(t) = b.entry_unchecked(ray) {
                    if f.owns(self.world.closest_point(b.entry_point(ray, t))) {
                        search.push_hit(t, e);
                    }
                }
            }
        };
        cast_tree(&mut search, &self.slots, expand, visit)
    }
}

//! Rectangle and nearest-neighbour queries.

use core::ops::ControlFlow;

use super::{BRANCH, Frame, Quadtree, Stack};
use crate::nearest::Pending;
use crate::{Aabb, Item, Neighbor, Point, Scalar, Workspace};

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
            let pending = |f: &Frame<S>| Pending {
                distance_2: f.reach().distance_2_to_point(point),
                node: f.node,
                aux: u32::from(f.depth) | u32::from(f.edges) << 8,
                aabb: f.aabb,
            };
            search.push(pending(&Frame::root(self.world)));
            while let Some(p) = search.pop() {
                if p.distance_2 > search.bound(k) {
                    break;
                }
                let f = Frame {
                    aabb: p.aabb,
                    node: p.node,
                    depth: p.aux as u8,
                    edges: (p.aux >> 8) as u8,
                };
                let node = self.nodes[f.node as usize];
                if node.count == BRANCH {
                    for child in f.children(node.first_child) {
                        let next = pending(&child);
                        if next.distance_2 <= search.bound(k) {
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
}

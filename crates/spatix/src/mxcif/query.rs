//! Rectangle, nearest-neighbour and ray queries.

use core::ops::ControlFlow;

use super::MxCifQuadtree;
use crate::nearest::Pending;
use crate::quad::{Frame, Stack};
use crate::ray::{RaySearch, cast_tree};
use crate::{Aabb, Item, Neighbor, Point, Ray, Scalar, Workspace};

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// The seed's query with an explicit stack: every node on the way down tests its own
    /// elements against the area, and only the children whose box the (clamped) area
    /// overlaps are visited. Each element is stored once, so each is reported once.
    pub(super) fn query_impl<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() || self.slots.len() == 0 {
            return ControlFlow::Continue(());
        }
        let qa = self.filed_box(area);
        let mut stack = Stack::new();
        stack.push(Frame::root(self.world));
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
            let (boxes, slots) = self.elements(&node);
            for (b, &slot) in boxes.iter().zip(slots) {
                if b.intersects(area) {
                    visit(self.slots.item(slot))?;
                }
            }
            if node.is_branch() {
                let mid = f.mid();
                let mask = Frame::quadrants(mid, &qa);
                for i in 0..4 {
                    if mask & (1 << i) != 0 {
                        stack.push(f.child(node.first_child, i, mid));
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Best-first search: nodes come off a min-queue by the distance to their box grown to
    /// infinity across world borders (every element filed in a node lies in that region,
    /// even one outside the world), each node offers its own elements, and the search stops
    /// when the nearest pending node is farther than the k-th best so far.
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
                let (boxes, slots) = self.elements(&node);
                for (b, &slot) in boxes.iter().zip(slots) {
                    let d = b.distance_2_to_point(point);
                    if d <= search.bound(k) {
                        search.offer(k, self.slots.handle(slot), d);
                    }
                }
                if node.is_branch() {
                    for child in f.children(node.first_child) {
                        let next = pending(&child);
                        if next.key <= search.bound(k) {
                            search.push(next);
                        }
                    }
                }
            }
        }
        workspace.finish()
    }

    /// Ordered traversal ([`cast_tree`]): nodes come off a min-queue by where the ray may
    /// enter them (their box grown to infinity across world borders, widened for rounding);
    /// each node records the hits of its own elements, and a hit is reported once no waiting
    /// node could hold an earlier one.
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
            let (boxes, slots) = self.elements(&node);
            for (b, &slot) in boxes.iter().zip(slots) {
                if let Some(t) = b.entry_unchecked(ray) {
                    search.push_hit(t, slot);
                }
            }
            if node.is_branch() {
                for child in f.children(node.first_child) {
                    if let Some(next) = pending(&child) {
                        search.push_region(next);
                    }
                }
            }
        };
        cast_tree(&mut search, &self.slots, expand, visit)
    }
}

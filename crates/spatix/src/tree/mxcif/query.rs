//! Rectangle, nearest-neighbour and ray queries.

use core::ops::ControlFlow;

use super::MxCifQuadtree;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::ray::RaySearch;
use crate::tree::{Frame, Stack, cast_frames, nearest_in_frames};
use crate::{Aabb, Neighbor, Scalar};

impl<S: Scalar, T> Searches<S, T> for MxCifQuadtree<S, T> {
    /// The query, with an explicit stack: every node on the way down tests its own
    /// elements against the area, and only the children whose box the (clamped) area
    /// overlaps are visited. Each element is stored once, so each is reported once.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        if self.slots.len() == 0 {
            return ControlFlow::Continue(());
        }
        let qa = self.filed_box(area);
        let mut stack = Stack::new();
        stack.push(Frame::root(self.base.world));
        while let Some(f) = stack.pop() {
            watch.region(|| f.aabb);
            let node = self.base.nodes[f.node as usize];
            let (boxes, slots) = self.elements(&node);
            for (b, &slot) in boxes.iter().zip(slots) {
                watch.candidate(|| self.slots.handle(slot));
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

    /// Best-first search ([`nearest_in_frames`]): every element filed in a node lies in the
    /// node's box grown to infinity across world borders, so its distance bounds theirs;
    /// each node offers its own elements.
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
            let (boxes, slots) = self.elements(&node);
            for (b, &slot) in boxes.iter().zip(slots) {
                watch.candidate(|| self.slots.handle(slot));
                let d = b.distance_key(point);
                if d <= search.bound() {
                    search.offer(self.slots.handle(slot), d);
                }
            }
            node.is_branch().then_some(node.first_child)
        })
    }

    /// Ordered traversal ([`cast_frames`]): each node records the hits of its own elements,
    /// and a hit is reported once no waiting node could hold an earlier one.
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
            let (boxes, slots) = self.elements(&node);
            for (b, &slot) in boxes.iter().zip(slots) {
                watch.candidate(|| self.slots.handle(slot));
                if let Some(t) = b.entry_unchecked(ray) {
                    search.push_hit(t, slot);
                }
            }
            node.is_branch().then_some(node.first_child)
        };
        cast_frames(self.base.world, ray, workspace, &self.slots, node, visit)
    }
}

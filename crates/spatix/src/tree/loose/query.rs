//! Rectangle, nearest-neighbour and ray queries: descents into the children whose loose box
//! meets the search. Each element is listed in one leaf, so each is met once.

use core::ops::ControlFlow;

use super::{LooseQuadtree, is_something};
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::nearest::Pending;
use crate::search::ray::{RaySearch, cast_tree};
use crate::tree::BRANCH;
use crate::tree::NodeStack;
use crate::{Aabb, Neighbor, Scalar};

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// The node `n` waiting in a best-first search with `key`.
    #[inline]
    fn pending(&self, n: u32, key: S) -> Pending<S> {
        Pending {
            key,
            node: n,
            aux: 0,
            aabb: self.loose[n as usize],
        }
    }
}

impl<S: Scalar, T> Searches<S, T> for LooseQuadtree<S, T> {
    /// Depth-first descent with an explicit stack into every node whose loose box meets
    /// `area`; the elements of the leaves reached are tested exactly.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        if !self.loose[0].intersects(area) {
            return ControlFlow::Continue(());
        }
        let mut stack = NodeStack::new();
        stack.push(0);
        while let Some(n) = stack.pop() {
            watch.region(|| self.loose[n as usize]);
            let node = self.base.nodes[n as usize];
            if node.count == BRANCH {
                let g = node.first_child;
                for i in 0..4 {
                    if self.loose[(g + i) as usize].intersects(area) {
                        stack.push(g + i);
                    }
                }
                continue;
            }
            for (_, e) in self.walk(node.first_child) {
                watch.candidate(|| self.slots.handle(e.item));
                if e.data.intersects(area) {
                    visit(self.slots.item(e.item))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Best-first search: nodes come off a min-queue by the distance to their loose box (a
    /// lower bound for every element below them), and the search stops when the nearest
    /// pending node is farther than the k-th best so far.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        let mut search = workspace.begin_exact(k);
        search.push(self.pending(0, self.loose[0].distance_key(point)));
        while let Some(p) = search.pop() {
            if p.key > search.bound() {
                break;
            }
            watch.region(|| p.aabb);
            let node = self.base.nodes[p.node as usize];
            if node.count == BRANCH {
                for c in node.first_child..node.first_child + 4 {
                    let b = &self.loose[c as usize];
                    if is_something(b) {
                        let key = b.distance_key(point);
                        if key <= search.bound() {
                            search.push(self.pending(c, key));
                        }
                    }
                }
                continue;
            }
            for (_, e) in self.walk(node.first_child) {
                watch.candidate(|| self.slots.handle(e.item));
                let d = e.data.distance_key(point);
                if d <= search.bound() {
                    search.offer(self.slots.handle(e.item), d);
                }
            }
        }
        workspace.finish()
    }

    /// Ordered traversal ([`cast_tree`]): nodes come off a min-queue by where the ray enters
    /// their loose box (widened for rounding, so never later than it enters any element
    /// below), and a hit is reported once no waiting node could hold an earlier one.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let mut search = workspace.begin_ray();
        let pending = |n: u32| {
            let b = &self.loose[n as usize];
            is_something(b)
                .then(|| b.ray_entry_conservative(ray))
                .flatten()
                .map(|t| self.pending(n, t))
        };
        if let Some(root) = pending(0) {
            search.push_region(root);
        }
        let expand = |p: Pending<S>, search: &mut RaySearch<'_, S>| {
            watch.region(|| p.aabb);
            let node = self.base.nodes[p.node as usize];
            if node.count == BRANCH {
                for c in node.first_child..node.first_child + 4 {
                    if let Some(next) = pending(c) {
                        search.push_region(next);
                    }
                }
                return;
            }
            for (_, e) in self.walk(node.first_child) {
                watch.candidate(|| self.slots.handle(e.item));
                if let Some(t) = e.data.entry_unchecked(ray) {
                    search.push_hit(t, e.item);
                }
            }
        };
        cast_tree(&mut search, &self.slots, expand, visit)
    }
}

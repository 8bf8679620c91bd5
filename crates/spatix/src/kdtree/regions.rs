//! The kd-tree's shape: every split with the box it divides, and every leaf (bucket) with
//! the box its points lie in; and what a search tells its probe.

use core::ops::{ControlFlow, Range};

use super::{Cursor, Kd, MAX_PENDING};
use crate::base::stack::ArrayStack;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind, Watch};
use crate::{Aabb, Scalar};

impl<S: Scalar, T> Kd<'_, S, T> {
    /// The box `node`'s points lie in: the points' bounding box cut by the splits on the way
    /// down to it (closed: both sides of a split hold its line). O(height); for probes only.
    pub(super) fn region_of(&self, node: Cursor) -> Aabb<S> {
        let mut at = self.shape.root();
        let mut region = self.bounds;
        while at.height > node.height {
            let right = (node.leaf >> (at.height - 1)) & 1 == 1;
            let (lo, hi) = self.splits.get(at).cut(&region);
            region = if right { hi } else { lo };
            at = at.child(right);
        }
        region
    }

    /// Tells `watch` that a search considered the points at positions `range`.
    #[inline(always)]
    pub(super) fn watch_range<W: Watch<S>>(&self, watch: &mut W, range: Range<usize>) {
        if W::ACTIVE {
            for i in range {
                watch.candidate(|| self.handle(i));
            }
        }
    }
}

impl<S: Scalar, T> Regions<S> for Kd<'_, S, T> {
    /// Every node depth first, left before right: an internal node is a
    /// [`RegionKind::Split`] (the box it divides, listing no element), a leaf a
    /// [`RegionKind::Leaf`] (its box and its points); depth 0 at the root. None when empty.
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        if self.shape.n == 0 {
            return ControlFlow::Continue(());
        }
        let root = self.shape.root();
        let mut stack = ArrayStack::<(Cursor, Aabb<S>), MAX_PENDING>::new();
        stack.push((root, self.bounds));
        while let Some((node, bounds)) = stack.pop() {
            let depth = root.height - node.height;
            if node.height == 0 {
                visit(&Region {
                    bounds,
                    depth,
                    kind: RegionKind::Leaf,
                    elements: self.shape.range(node).len(),
                })?;
                continue;
            }
            visit(&Region {
                bounds,
                depth,
                kind: RegionKind::Split,
                elements: 0,
            })?;
            let (left, right) = node.children();
            let (lo, hi) = self.splits.get(node).cut(&bounds);
            stack.push((right, hi));
            stack.push((left, lo));
        }
        ControlFlow::Continue(())
    }
}

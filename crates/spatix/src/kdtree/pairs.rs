//! Coincident pairs: points intersect only where they coincide.

use core::ops::ControlFlow;

use super::{Cursor, Kd, MAX_PENDING, coord, everywhere};
use crate::base::stack::ArrayStack;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Aabb, Point, Scalar};

/// A subtree waiting in the pair pass, with the region its splits bound it to (infinite
/// where no split bounds it).
#[derive(Clone, Copy, Debug, Default)]
struct Bounded<S> {
    node: Cursor,
    region: Aabb<S>,
}

impl<'a, S: Scalar, T> Kd<'a, S, T> {
    /// Visits the tree positions `>= from` whose point equals `p`.
    fn coincident_from(
        &self,
        p: Point<S>,
        from: usize,
        visit: &mut impl FnMut(usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut stack = ArrayStack::<Cursor, MAX_PENDING>::new();
        stack.push(self.shape.root());
        while let Some(node) = stack.pop() {
            let range = self.shape.range(node);
            if range.end <= from {
                continue;
            }
            if node.height == 0 {
                for j in range.start.max(from)..range.end {
                    if self.point(j) == p {
                        visit(j)?;
                    }
                }
                continue;
            }
            let split = self.splits.get(node);
            let v = coord(&p, split.axis as usize);
            let (left, right) = node.children();
            if v >= split.value {
                stack.push(right);
            }
            if v <= split.value {
                stack.push(left);
            }
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Pairs<S, T> for Kd<'_, S, T> {
    /// Leaf by leaf, in tree order. A pair is reported by its earlier point (in tree order):
    /// against the later points of the same leaf, and, only when the point lies on its
    /// leaf's region border (a split line; elsewhere no other leaf can hold an equal point),
    /// against the equal points of the later leaves, found by a descent towards it.
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, mut visit: F) -> ControlFlow<()> {
        if self.points.len() < 2 {
            return ControlFlow::Continue(());
        }
        let mut stack = ArrayStack::<Bounded<S>, MAX_PENDING>::new();
        stack.push(Bounded {
            node: self.shape.root(),
            region: everywhere(),
        });
        while let Some(Bounded { node, region }) = stack.pop() {
            if node.height > 0 {
                let (left, right) = node.children();
                let (lo, hi) = self.splits.get(node).cut(&region);
                stack.push(Bounded {
                    node: right,
                    region: hi,
                });
                stack.push(Bounded {
                    node: left,
                    region: lo,
                });
                continue;
            }
            let range = self.shape.range(node);
            for i in range.clone() {
                let p = self.points[i];
                for j in i + 1..range.end {
                    if self.points[j] == p {
                        visit(self.item(i), self.item(j))?;
                    }
                }
                let p = self.point(i);
                let on_border = p.x == region.min.x
                    || p.x == region.max.x
                    || p.y == region.min.y
                    || p.y == region.max.y;
                if on_border {
                    self.coincident_from(p, range.end, &mut |j| visit(self.item(i), self.item(j)))?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

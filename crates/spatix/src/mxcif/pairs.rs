//! All intersecting pairs by the seed's scheme: within each node, then each node's elements
//! against its descendants'.

use core::ops::ControlFlow;

use super::MxCifQuadtree;
use crate::quad::{Frame, Stack};
use crate::{Aabb, Item, Scalar};

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// Every intersecting pair exactly once, with no per-element query and no memory but two
    /// fixed stacks: elements of different subtrees never intersect (an element that touches
    /// a split line stays above it), so a pair lies either in one node (tested there, each
    /// against the earlier ones) or in a node and one of its descendants (tested by the
    /// upper element's walk down the children its box overlaps).
    pub(super) fn pairs_impl<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut stack = Stack::new();
        stack.push(Frame::root(self.world));
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
            let (boxes, slots) = self.elements(&node);
            for i in 1..boxes.len() {
                let a = &boxes[i];
                for j in 0..i {
                    if a.intersects(&boxes[j]) {
                        visit(self.slots.item(slots[i]), self.slots.item(slots[j]))?;
                    }
                }
            }
            if node.is_branch() {
                let children = f.children(node.first_child);
                for (a, &slot) in boxes.iter().zip(slots) {
                    self.against_descendants(&children, a, slot, &mut visit)?;
                }
                for child in children.into_iter().rev() {
                    stack.push(child);
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Tests element `slot` (box `a`) of a branch against the elements of the branch's
    /// descendants, visiting only the nodes its clamped box overlaps.
    fn against_descendants<F>(
        &self,
        children: &[Frame<S>; 4],
        a: &Aabb<S>,
        slot: u32,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let c = self.filed_box(a);
        let mut stack = Stack::new();
        for child in children {
            if c.intersects(&child.aabb) {
                stack.push(*child);
            }
        }
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
            let (boxes, slots) = self.elements(&node);
            for (b, &other) in boxes.iter().zip(slots) {
                if a.intersects(b) {
                    visit(self.slots.item(slot), self.slots.item(other))?;
                }
            }
            if node.is_branch() {
                let mid = f.mid();
                let mask = Frame::quadrants(mid, &c);
                for i in 0..4 {
                    if mask & (1 << i) != 0 {
                        stack.push(f.child(node.first_child, i, mid));
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

//! All intersecting pairs, with no de-duplication: within each node, then each node's elements
//! against its descendants'.

use core::ops::ControlFlow;

use super::{MxCifQuadtree, Node};
use crate::contract::{Pairs, VisitsPairs};
use crate::tree::{Frame, Stack};
use crate::{Aabb, Item, Scalar};

/// [`Aabb::intersects`] without branches: in the pair loops, which comparison fails is
/// unpredictable.
#[inline(always)]
fn touch<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    (a.min.x <= b.max.x) & (b.min.x <= a.max.x) & (a.min.y <= b.max.y) & (b.min.y <= a.max.y)
}

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// The pairs whose upper element lies in the subtree of `start`.
    fn pairs_below<F>(&self, start: Frame<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let top = self.base.nodes[start.node as usize];
        self.pairs_within(&top, &mut visit)?;
        if !top.is_branch() {
            return ControlFlow::Continue(());
        }
        let mut branches = Stack::new();
        let mut walk = Stack::new();
        branches.push(start);
        while let Some(f) = branches.pop() {
            self.against_all_descendants(&f, &mut walk, &mut visit)?;
            let node = self.base.nodes[f.node as usize];
            let mid = f.mid();
            for i in (0..4).rev() {
                let child = self.base.nodes[(node.first_child + i) as usize];
                self.pairs_within(&child, &mut visit)?;
                if child.is_branch() {
                    branches.push(f.child(node.first_child, i, mid));
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Tests every element of branch `f` against the elements of its descendants.
    fn against_all_descendants<F>(
        &self,
        f: &Frame<S>,
        walk: &mut Stack<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let node = self.base.nodes[f.node as usize];
        let (boxes, slots) = self.elements(&node);
        for (a, &slot) in boxes.iter().zip(slots) {
            walk.push(*f);
            self.against_descendants(a, slot, walk, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// Tests the elements of a node against each other.
    #[inline(never)]
    fn pairs_within<F>(&self, node: &Node, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let (boxes, slots) = self.elements(node);
        for i in 1..boxes.len() {
            let a = &boxes[i];
            for j in 0..i {
                if touch(a, &boxes[j]) {
                    visit(self.slots.item(slots[i]), self.slots.item(slots[j]))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Tests element `slot` (box `a`) against the elements of the descendants of the branch
    /// on `walk`, visiting only the nodes its clamped box overlaps; `walk` holds the branches
    /// whose children are still to be visited.
    fn against_descendants<F>(
        &self,
        a: &Aabb<S>,
        slot: u32,
        walk: &mut Stack<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let c = self.filed_box(a);
        while let Some(f) = walk.pop() {
            let first_child = self.base.nodes[f.node as usize].first_child;
            let mid = f.mid();
            let mask = Frame::quadrants(mid, &c);
            for i in 0..4 {
                if mask & (1 << i) == 0 {
                    continue;
                }
                let child = self.base.nodes[(first_child + i) as usize];
                let (boxes, slots) = self.elements(&child);
                for (b, &other) in boxes.iter().zip(slots) {
                    if touch(a, b) {
                        visit(self.slots.item(slot), self.slots.item(other))?;
                    }
                }
                if child.is_branch() {
                    walk.push(f.child(first_child, i, mid));
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Pairs<S, T> for MxCifQuadtree<S, T> {
    /// Every intersecting pair exactly once, with no per-element query and no memory but two
    /// fixed stacks: elements of different subtrees never intersect (an element that touches
    /// a split line stays above it), so a pair lies either in one node (tested there, each
    /// against the earlier ones) or in a node and one of its descendants (tested by the
    /// upper element's walk down the children its box overlaps). Leaves are handled by their
    /// parent and never go on a stack.
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()> {
        self.pairs_below(Frame::root(self.base.world), visit)
    }
}

/// A part of the MX-CIF pair pass.
#[cfg(feature = "rayon")]
#[derive(Clone, Copy)]
pub(crate) enum Part<S> {
    /// A branch above the subtrees: its own pairs and its elements' walks down.
    Above(Frame<S>),
    /// The pairs whose upper element lies in this subtree.
    Below(Frame<S>),
}

/// Every branch of the cut is a part: its elements belong to no subtree below it.
#[cfg(feature = "rayon")]
impl<S: Copy> crate::tree::SplitPart<S> for Part<S> {
    fn subtree(f: Frame<S>) -> Self {
        Part::Below(f)
    }

    fn as_subtree(&self) -> Option<Frame<S>> {
        match *self {
            Part::Below(f) => Some(f),
            Part::Above(_) => None,
        }
    }

    fn branch(f: Frame<S>) -> Option<Self> {
        Some(Part::Above(f))
    }
}

/// Parts: subtrees cut breadth first, and each branch above them. A pair belongs to the node
/// of its upper element, so the parts need no coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for MxCifQuadtree<S, T> {
    type Part = Part<S>;
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Part<S>>, _: &mut ()) {
        self.base.split(target, Node::shown, parts);
    }

    fn pairs_of_part<F>(&self, part: &Part<S>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        match part {
            Part::Above(f) => {
                self.pairs_within(&self.base.nodes[f.node as usize], visit)?;
                self.against_all_descendants(f, &mut Stack::new(), visit)
            }
            Part::Below(f) => self.pairs_below(*f, visit),
        }
    }
}

//! Every intersecting pair, by a simultaneous traversal of the tree with itself.

use core::ops::ControlFlow;

use super::{PackedIndex, bits, overlapping};
use crate::slots::Elements;
use crate::{Item, Scalar};

impl<S: Scalar, T> PackedIndex<S, T> {
    /// The pairs among the elements beneath the root.
    pub(super) fn pairs_impl<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if self.root().is_none() {
            return ControlFlow::Continue(());
        }
        self.pairs_within(self.depth(), 0, &mut visit)
    }

    /// The pairs among the elements beneath node `node` of level `level`: those beneath each
    /// child, and those across each two children whose boxes intersect (each unordered pair
    /// of children once, so each pair of elements once). Recursion is as deep as the tree.
    fn pairs_within<F>(&self, level: u32, node: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let (first, end) = self.children(level, node);
        let below = &self.level(level as usize - 1)[first as usize..end as usize];
        for (i, a) in (first..).zip(below) {
            let later = &below[(i - first + 1) as usize..];
            if level > 1 {
                self.pairs_within(level - 1, i, visit)?;
            }
            for j in bits(overlapping(later, a)) {
                let j = i + 1 + j;
                if level == 1 {
                    visit(self.elements.item(i), self.elements.item(j))?;
                } else {
                    self.pairs_across(level - 1, i, j, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs of one element beneath node `a` and one beneath node `b` (distinct nodes of
    /// level `level` whose boxes intersect). Only the children of `a` that meet `b`'s box,
    /// and those of `b` that meet `a`'s, can be part of a pair.
    fn pairs_across<F>(&self, level: u32, a: u32, b: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let nodes = self.level(level as usize);
        let (box_a, box_b) = (&nodes[a as usize], &nodes[b as usize]);
        let kids = self.level(level as usize - 1);
        let (a0, a1) = self.children(level, a);
        let (b0, b1) = self.children(level, b);
        let near_b = overlapping(&kids[a0 as usize..a1 as usize], box_b);
        let near_a = overlapping(&kids[b0 as usize..b1 as usize], box_a);
        for i in bits(near_b) {
            let i = a0 + i;
            let kid = &kids[i as usize];
            for j in bits(near_a) {
                let j = b0 + j;
                if !kids[j as usize].intersects(kid) {
                    continue;
                }
                if level == 1 {
                    visit(self.elements.item(i), self.elements.item(j))?;
                } else {
                    self.pairs_across(level - 1, i, j, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

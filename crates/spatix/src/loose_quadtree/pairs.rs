//! All intersecting pairs: the tree joined with itself (the dual-tree self-join).
//!
//! The pairs below a branch are those within each child plus those across each two children;
//! the pairs across two disjoint subtrees whose loose boxes meet are found by splitting one of
//! them into its children, down to two leaves. Two elements in different leaves meet in
//! exactly one such call (the one for the two children of their deepest common ancestor that
//! hold them), so each pair is reported once with no bookkeeping, and a pair of elements with
//! far-apart centres is found all the same, since loose boxes enclose the whole elements.

use core::ops::ControlFlow;

use super::{LooseQuadtree, nothing};
use crate::handle::NIL;
use crate::quadtree::BRANCH;
use crate::{Aabb, Item, Scalar};

/// Elements gathered on the stack at once from one leaf (crowded leaves at the depth limit
/// are taken in several chunks).
const CHUNK: usize = 64;

/// One gathered element: its box, copied out of the slot table, and its slot.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    slot: u32,
}

/// Half the perimeter of a box (never NaN, unlike the area of an unbounded one).
#[inline]
fn extent<S: Scalar>(b: &Aabb<S>) -> S {
    let s = b.size();
    s.x + s.y
}

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// Every intersecting pair of elements below node `n`, each once.
    pub(super) fn pairs_within<F>(&self, n: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let node = self.nodes[n as usize];
        if node.count != BRANCH {
            return self.pairs_in_leaf(node.first_child, visit);
        }
        let g = node.first_child;
        for c in g..g + 4 {
            self.pairs_within(c, visit)?;
        }
        for a in g..g + 3 {
            for b in a + 1..g + 4 {
                if self.loose[a as usize].intersects(&self.loose[b as usize]) {
                    self.pairs_across(a, b, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every intersecting pair with one element below `a` and the other below `b` (two
    /// disjoint subtrees whose loose boxes meet), each once: the larger branch is split
    /// into its children whose boxes meet the other side's, down to two leaves.
    fn pairs_across<F>(&self, a: u32, b: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let (na, nb) = (self.nodes[a as usize], self.nodes[b as usize]);
        let (la, lb) = (&self.loose[a as usize], &self.loose[b as usize]);
        let (a_branch, b_branch) = (na.count == BRANCH, nb.count == BRANCH);
        if !a_branch && !b_branch {
            return self.pairs_between_leaves(na.first_child, nb.first_child, lb, visit);
        }
        let (split, keep) = if a_branch && (!b_branch || extent(la) >= extent(lb)) {
            (na.first_child, b)
        } else {
            (nb.first_child, a)
        };
        let kept = self.loose[keep as usize];
        for c in split..split + 4 {
            if self.loose[c as usize].intersects(&kept) {
                self.pairs_across(c, keep, visit)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The intersecting pairs among the elements of one leaf (list `head`): each chunk of
    /// gathered elements against itself, then against the rest of the list.
    fn pairs_in_leaf<F>(&self, head: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut chunk = [Entry::default(); CHUNK];
        let mut at = head;
        while at != NIL {
            let mut n = 0;
            while at != NIL && n < CHUNK {
                let link = self.links.link(at);
                chunk[n] = Entry {
                    aabb: link.data,
                    slot: link.item,
                };
                n += 1;
                at = link.next;
            }
            let chunk = &chunk[..n];
            for (i, x) in chunk.iter().enumerate().skip(1) {
                for y in &chunk[..i] {
                    if x.aabb.intersects(&y.aabb) {
                        visit(self.slots.item(x.slot), self.slots.item(y.slot))?;
                    }
                }
            }
            for (_, e) in self.walk(at) {
                for x in chunk {
                    if x.aabb.intersects(&e.data) {
                        visit(self.slots.item(x.slot), self.slots.item(e.item))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The intersecting pairs with one element in leaf `a` and one in leaf `b` (list heads):
    /// the elements of `a` that meet `b`'s loose box `b_box` are gathered (in chunks), and
    /// `b`'s list is streamed against them, skipping elements that miss the chunk's bounds.
    fn pairs_between_leaves<F>(
        &self,
        a: u32,
        b: u32,
        b_box: &Aabb<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut chunk = [Entry::default(); CHUNK];
        let mut at = a;
        while at != NIL {
            let (mut n, mut bounds) = (0, nothing());
            while at != NIL && n < CHUNK {
                let link = self.links.link(at);
                let aabb = link.data;
                if aabb.intersects(b_box) {
                    chunk[n] = Entry {
                        aabb,
                        slot: link.item,
                    };
                    n += 1;
                    bounds = bounds.union(&aabb);
                }
                at = link.next;
            }
            if n == 0 {
                continue;
            }
            let chunk = &chunk[..n];
            for (_, e) in self.walk(b) {
                if !e.data.intersects(&bounds) {
                    continue;
                }
                for x in chunk {
                    if x.aabb.intersects(&e.data) {
                        visit(self.slots.item(x.slot), self.slots.item(e.item))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

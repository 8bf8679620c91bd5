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
use crate::{Aabb, Item, Point, Scalar};

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

/// One run of the pair pass: the tree, the visitor, and the stack buffer that the leaves'
/// elements are gathered into (one for the whole pass, so the recursion does not clear a
/// buffer per call).
pub(super) struct PairPass<'t, S, T, F> {
    tree: &'t LooseQuadtree<S, T>,
    visit: F,
    chunk: [Entry<S>; CHUNK],
}

impl<'t, S: Scalar, T, F> PairPass<'t, S, T, F>
where
    F: FnMut(Item<'t, S, T>, Item<'t, S, T>) -> ControlFlow<()>,
{
    pub(super) fn new(tree: &'t LooseQuadtree<S, T>, visit: F) -> Self {
        Self {
            tree,
            visit,
            chunk: [Entry::default(); CHUNK],
        }
    }

    /// Reports one pair.
    #[inline]
    fn report(&mut self, a: u32, b: u32) -> ControlFlow<()> {
        let slots = &self.tree.slots;
        (self.visit)(slots.item(a), slots.item(b))
    }

    /// Every intersecting pair of elements below node `n`, each once.
    pub(super) fn within(&mut self, n: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let node = tree.nodes[n as usize];
        if node.count != BRANCH {
            return self.in_leaf(node.first_child);
        }
        let g = node.first_child;
        for c in g..g + 4 {
            self.within(c)?;
        }
        for a in g..g + 3 {
            for b in a + 1..g + 4 {
                if tree.loose[a as usize].intersects(&tree.loose[b as usize]) {
                    self.across(a, b)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every intersecting pair with one element below `a` and the other below `b` (two
    /// disjoint subtrees whose loose boxes meet), each once: the larger branch is split
    /// into its children whose boxes meet the other side's, down to two leaves.
    fn across(&mut self, a: u32, b: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let (na, nb) = (tree.nodes[a as usize], tree.nodes[b as usize]);
        let (la, lb) = (&tree.loose[a as usize], &tree.loose[b as usize]);
        let (a_branch, b_branch) = (na.count == BRANCH, nb.count == BRANCH);
        if !a_branch && !b_branch {
            return self.between_leaves(na.first_child, nb.first_child, lb);
        }
        let (split, keep) = if a_branch && (!b_branch || extent(la) >= extent(lb)) {
            (na.first_child, b)
        } else {
            (nb.first_child, a)
        };
        let kept = tree.loose[keep as usize];
        for c in split..split + 4 {
            if tree.loose[c as usize].intersects(&kept) {
                self.across(c, keep)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Gathers into the buffer the elements of the list from `at` on whose box meets
    /// `filter`, until it is full; returns how many, their bounds, and where the list
    /// resumes.
    #[inline]
    fn gather(&mut self, mut at: u32, filter: &Aabb<S>) -> (usize, Aabb<S>, u32) {
        let (mut n, mut bounds) = (0, nothing());
        while at != NIL && n < CHUNK {
            let link = self.tree.links.link(at);
            if link.data.intersects(filter) {
                self.chunk[n] = Entry {
                    aabb: link.data,
                    slot: link.item,
                };
                n += 1;
                bounds = bounds.union(&link.data);
            }
            at = link.next;
        }
        (n, bounds, at)
    }

    /// The intersecting pairs among the elements of one leaf (list `head`): each chunk of
    /// gathered elements against itself, then against the rest of the list.
    fn in_leaf(&mut self, head: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let everything = Aabb {
            min: Point::new(-S::INFINITY, -S::INFINITY),
            max: Point::new(S::INFINITY, S::INFINITY),
        };
        let mut at = head;
        while at != NIL {
            let (n, _, rest) = self.gather(at, &everything);
            at = rest;
            for i in 1..n {
                for j in 0..i {
                    let (x, y) = (self.chunk[i], self.chunk[j]);
                    if x.aabb.intersects(&y.aabb) {
                        self.report(x.slot, y.slot)?;
                    }
                }
            }
            for (_, e) in tree.walk(rest) {
                for i in 0..n {
                    let x = self.chunk[i];
                    if x.aabb.intersects(&e.data) {
                        self.report(x.slot, e.item)?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The intersecting pairs with one element in leaf `a` and one in leaf `b` (list heads):
    /// the elements of `a` that meet `b`'s loose box `b_box` are gathered (in chunks), and
    /// `b`'s list is streamed against them, skipping elements that miss the chunk's bounds.
    fn between_leaves(&mut self, a: u32, b: u32, b_box: &Aabb<S>) -> ControlFlow<()> {
        let tree = self.tree;
        let mut at = a;
        while at != NIL {
            let (n, bounds, rest) = self.gather(at, b_box);
            at = rest;
            if n == 0 {
                continue;
            }
            for (_, e) in tree.walk(b) {
                if !e.data.intersects(&bounds) {
                    continue;
                }
                for i in 0..n {
                    let x = self.chunk[i];
                    if x.aabb.intersects(&e.data) {
                        self.report(x.slot, e.item)?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

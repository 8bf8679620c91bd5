//! All intersecting pairs, leaf by leaf.

use core::ops::ControlFlow;

use super::Quadtree;
use crate::base::handle::NIL;
use crate::contract::{Pairs, VisitsPairs};
use crate::tree::BRANCH;
use crate::tree::{Frame, RIGHT, Stack, TOP};
use crate::{Aabb, Item, Scalar};

/// Entries gathered on the stack at once, from as many consecutive leaves as fit: the boxes are
/// read from the slot table in one tight loop, so that their cache misses overlap, and the
/// all-pairs loops then run on the stack copy.
const BATCH: usize = 256;

/// Most leaves gathered in one batch.
const BATCH_LEAVES: usize = 64;

/// The element's clamped box starts at or right of the leaf's left side.
const FIRST_COL: u32 = 1;
/// The element's clamped box starts at or above the leaf's bottom side.
const FIRST_ROW: u32 = 2;
/// The element's clamped box starts on the leaf's right or top side (not a world border): it
/// only touches the leaf, and every pair it makes here is owned by a neighbour.
const OUTSIDE: u32 = 4;

/// One listed element, copied out of the slot table, with its flags for the leaf it was
/// gathered from.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    slot: u32,
    flags: u32,
}

/// The entries of one leaf within a batch.
#[derive(Clone, Copy, Default)]
struct Span {
    start: u16,
    end: u16,
}

/// Whether two entries of a leaf intersect and the leaf owns their pair: it owns the lower-left
/// corner `q` of the intersection of their clamped boxes exactly when `q` is not left of or
/// below it (one of the two starts inside it on each axis) and not on its right or top side.
/// Branch-free: which comparison fails is unpredictable.
#[inline(always)]
fn reportable<S: Scalar>(a: &Entry<S>, b: &Entry<S>) -> bool {
    ((a.flags | b.flags) == FIRST_COL | FIRST_ROW)
        & (a.aabb.min.x <= b.aabb.max.x)
        & (b.aabb.min.x <= a.aabb.max.x)
        & (a.aabb.min.y <= b.aabb.max.y)
        & (b.aabb.min.y <= a.aabb.max.y)
}

impl<S: Scalar, T> Quadtree<S, T> {
    /// The flags of an element's box in leaf `f`.
    #[inline(always)]
    fn flags(&self, f: &Frame<S>, aabb: &Aabb<S>) -> u32 {
        let corner = self.base.world.closest_point(aabb.min);
        let col = u32::from(corner.x >= f.aabb.min.x) * FIRST_COL;
        let row = u32::from(corner.y >= f.aabb.min.y) * FIRST_ROW;
        let right = (corner.x >= f.aabb.max.x) & (f.edges & RIGHT == 0);
        let top = (corner.y >= f.aabb.max.y) & (f.edges & TOP == 0);
        col | row | (u32::from(right | top) * OUTSIDE)
    }

    /// The cache-friendly pass over the leaves below `start`: walk them in tree order
    /// and test the elements of each leaf against each other. A pair listed together in
    /// several leaves is reported only by the leaf that owns the lower-left corner of the
    /// intersection of their clamped boxes, so each exactly once, with no per-call memory.
    #[inline]
    pub(super) fn pairs_below<F>(&self, start: Frame<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut entries = [Entry::default(); BATCH];
        let mut spans = [Span::default(); BATCH_LEAVES];
        let (mut used, mut leaves) = (0usize, 0usize);
        let mut stack = Stack::new();
        stack.push(start);
        while let Some(f) = stack.pop() {
            let node = self.base.nodes[f.node as usize];
            if node.count == BRANCH {
                for child in f.children(node.first_child).into_iter().rev() {
                    stack.push(child);
                }
                continue;
            }
            let n = node.count as usize;
            if n < 2 {
                continue;
            }
            if n > BATCH {
                self.pairs_of_crowded_leaf(&f, node.first_child, &mut visit)?;
                continue;
            }
            if used + n > BATCH || leaves == BATCH_LEAVES {
                self.pairs_of_batch(&entries, &spans[..leaves], &mut visit)?;
                (used, leaves) = (0, 0);
            }
            // Slots first (sequential list nodes), then boxes in one tight loop.
            for (e, slot) in entries[used..used + n]
                .iter_mut()
                .zip(self.links.items(node.first_child))
            {
                e.slot = slot;
            }
            let mut kept = used;
            for i in used..used + n {
                let slot = entries[i].slot;
                let aabb = *self.slots.aabb(slot);
                let flags = self.flags(&f, &aabb);
                entries[kept] = Entry { aabb, slot, flags };
                kept += usize::from(flags & OUTSIDE == 0);
            }
            if kept - used >= 2 {
                spans[leaves] = Span {
                    start: used as u16,
                    end: kept as u16,
                };
                leaves += 1;
                used = kept;
            }
        }
        self.pairs_of_batch(&entries, &spans[..leaves], &mut visit)
    }

    /// Tests the pairs within each gathered leaf.
    fn pairs_of_batch<F>(
        &self,
        entries: &[Entry<S>],
        spans: &[Span],
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for span in spans {
            let leaf = &entries[span.start as usize..span.end as usize];
            for (i, a) in leaf.iter().enumerate().skip(1) {
                for b in &leaf[..i] {
                    if reportable(a, b) {
                        visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// A leaf too crowded to gather (at the depth limit): walk its list against its own tail.
    fn pairs_of_crowded_leaf<F>(&self, f: &Frame<S>, head: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let entry = |slot: u32| {
            let aabb = *self.slots.aabb(slot);
            Entry {
                aabb,
                slot,
                flags: self.flags(f, &aabb),
            }
        };
        let mut at = head;
        while at != NIL {
            let link = self.links.link(at);
            let a = entry(link.item);
            for slot in self.links.items(link.next) {
                let b = entry(slot);
                if reportable(&a, &b) {
                    visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                }
            }
            at = link.next;
        }
        ControlFlow::Continue(())
    }
}

/// Parts: subtrees, cut breadth first. A pair is reported by the leaf that owns it, so the
/// subtrees need no coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for Quadtree<S, T> {
    type Part = Frame<S>;
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Frame<S>>, _: &mut ()) {
        self.base.split(target, crate::tree::Node::shown, parts);
    }

    fn pairs_of_part<F>(&self, f: &Frame<S>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs_below(*f, visit)
    }
}

impl<S: Scalar, T> Pairs<S, T> for Quadtree<S, T> {
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()> {
        self.pairs_below(Frame::root(self.base.world), visit)
    }
}

//! Filing elements in leaves, splitting leaves, and the deferred collapse of empty branches.

use super::Quadtree;
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::tree::{
    BRANCH, EMPTY_LEAF, Frame, Node, NodeStack, compact_leaf_lists, release_group, take_group,
};
use crate::{Aabb, Error, Handle, Scalar};

/// The contract's changes, called by the public methods with a
/// valid box and a live slot.
impl<S: Scalar, T> Mutates<S, T> for Quadtree<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        let i = slot as usize;
        if self.homes.len() <= i {
            self.homes.resize(i + 1, Frame::default());
        }
        let filed = self.filed_box(&aabb);
        self.refile(slot, Frame::root(self.base.world), None, Some(filed));
        Ok(self.slots.handle(slot))
    }

    fn do_remove(&mut self, slot: u32) -> T {
        let filed = self.filed_box(self.slots.aabb(slot));
        self.refile(slot, self.homes[slot as usize], Some(filed), None);
        self.slots.remove(slot)
    }

    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let new = self.filed_box(&aabb);
        let home = self.homes[slot as usize];
        let fits = home.fits(&new);
        let node = self.base.nodes[home.node as usize];
        if fits && self.settled(&home, node.count) {
            // Still inside its only leaf: nothing but the box changes. A leaf that could
            // split goes through `refile`, which asks whether the new box lets it.
            self.slots.set_aabb(slot, aabb);
            return Ok(());
        }
        let old = self.filed_box(self.slots.aabb(slot));
        if fits
            && node.count == BRANCH
            && self.same_leaf_children(&home, node.first_child, &old, &new)
        {
            // Still in the same leaves below its home: nothing but the box changes.
            self.slots.set_aabb(slot, aabb);
            return Ok(());
        }
        let start = if fits {
            home
        } else {
            Frame::root(self.base.world)
        };
        // The new box goes in first: a leaf split during the refiling reads it.
        self.slots.set_aabb(slot, aabb);
        self.refile(slot, start, Some(old), Some(new));
        Ok(())
    }

    fn do_clear(&mut self) {
        self.base.nodes.truncate(1);
        self.base.nodes[0] = EMPTY_LEAF;
        self.base.free_group = NIL;
        self.links.clear();
        self.slots.clear();
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Slots<S, T> {
        &mut self.slots
    }

    #[inline]
    fn do_maintain(&mut self) {
        self.collapse_empty_branches();
        if self.links.relinked() > 0 {
            self.compact_lists();
        }
    }
}

impl<S: Scalar, T> Quadtree<S, T> {
    /// Moves element `slot` from the leaves overlapping `old` to those overlapping `new`
    /// (either may be `None`: insert, remove) in one traversal from `start` (a node that
    /// holds every leaf of both) that writes only to the leaves whose membership changes,
    /// splitting leaves that overflow. Then sets the element's home.
    #[inline(never)]
    pub(super) fn refile(
        &mut self,
        slot: u32,
        start: Frame<S>,
        old: Option<Aabb<S>>,
        new: Option<Aabb<S>>,
    ) {
        let touches = |f: &Frame<S>, b: &Option<Aabb<S>>| b.is_some_and(|b| b.intersects(&f.aabb));
        // The tree's own stack: no initialisation per call, and no allocation once warm.
        let mut stack = core::mem::take(&mut self.stack);
        stack.clear();
        stack.push(start);
        while let Some(f) = stack.pop() {
            let node = self.base.nodes[f.node as usize];
            if node.count == BRANCH {
                let mid = f.mid();
                let quadrants = |b: &Option<Aabb<S>>| match b {
                    Some(b) if b.intersects(&f.aabb) => Frame::quadrants(mid, b),
                    _ => 0,
                };
                let mask = quadrants(&old) | quadrants(&new);
                for i in 0..4 {
                    if mask & (1 << i) != 0 {
                        stack.push(f.child(node.first_child, i, mid));
                    }
                }
                continue;
            }
            let leaf = &mut self.base.nodes[f.node as usize];
            let (max, depth) = (self.base.config.max_elements, self.base.config.max_depth);
            // Whether this change can make the leaf separate, given that it did not before
            // (the invariant): it overflows now and may split, and either just began to
            // overflow, or it lost a straddler or gained an element that does not straddle.
            let may_separate = match (touches(&f, &old), touches(&f, &new)) {
                (true, false) => {
                    let found = self.links.remove(&mut leaf.first_child, slot);
                    debug_assert!(found, "element {slot} missing from a leaf it overlaps");
                    leaf.count -= 1;
                    leaf.count > max && f.can_split(depth) && old.is_some_and(|b| f.straddles(&b))
                }
                (false, true) => {
                    self.links.push(&mut leaf.first_child, slot);
                    leaf.count += 1;
                    leaf.count > max
                        && f.can_split(depth)
                        && (leaf.count == max + 1 || new.is_some_and(|b| !f.straddles(&b)))
                }
                (true, true) => {
                    leaf.count > max
                        && f.can_split(depth)
                        && old.is_some_and(|b| f.straddles(&b))
                        && new.is_some_and(|b| !f.straddles(&b))
                }
                (false, false) => false,
            };
            if may_separate && self.splits(&f) {
                self.split(f);
            }
        }
        self.stack = stack;
        if let Some(new) = new {
            self.homes[slot as usize] = self.descend(start, &new);
        }
    }

    /// The deepest node at or below `f` that strictly holds the (clamped) box `c`.
    fn descend(&self, mut f: Frame<S>, c: &Aabb<S>) -> Frame<S> {
        loop {
            let node = self.base.nodes[f.node as usize];
            if node.count != BRANCH {
                return f;
            }
            match f
                .children(node.first_child)
                .into_iter()
                .find(|ch| ch.fits(c))
            {
                Some(child) => f = child,
                None => return f,
            }
        }
    }

    /// Whether the leaf at `f` splits: it overflows, [`Frame::can_split`] allows it, and the
    /// split would separate its elements, at most half of them straddling the children.
    ///
    /// The last condition bounds the tree by its elements, not by `max_depth`. Elements that
    /// overlap alike (two boxes covering a leaf, or crossing it with edges a hair apart)
    /// would otherwise go to the same children level after level, and a leaf holding them
    /// would become 4^depth leaves (2^depth along a shared edge). An element straddles a
    /// leaf's children only where its box covers a midline of the leaf, so it is a
    /// non-straddler in at most 16 leaves per level (those holding one of its corners).
    /// Each split uses up at least half its leaf's count in such (element, leaf) pairs, so
    /// there are at most 16 · (depth + 1) splits per element, whatever the boxes.
    fn splits(&self, f: &Frame<S>) -> bool {
        let node = self.base.nodes[f.node as usize];
        node.count > self.base.config.max_elements
            && f.can_split(self.base.config.max_depth)
            && f.separates(
                self.links
                    .items(node.first_child)
                    .map(|e| self.filed_box(self.slots.aabb(e))),
            )
    }

    /// Turns a leaf that [`splits`](Self::splits) into a branch with four children and moves
    /// its element nodes down (relinking them, allocating only for elements that straddle
    /// children); children that split in turn do.
    fn split(&mut self, f: Frame<S>) {
        let mut at = self.base.nodes[f.node as usize].first_child;
        let group = self.alloc_group();
        self.base.nodes[f.node as usize] = Node {
            first_child: group,
            count: BRANCH,
        };
        let children = f.children(group);
        while at != NIL {
            let link = self.links.link(at);
            let e = link.item;
            let c = self.filed_box(self.slots.aabb(e));
            let mut placed = 0;
            for child in &children {
                if !c.intersects(&child.aabb) {
                    continue;
                }
                let node = &mut self.base.nodes[child.node as usize];
                if placed == 0 {
                    self.links.set_next(at, node.first_child);
                    node.first_child = at;
                } else {
                    self.links.push(&mut node.first_child, e);
                }
                node.count += 1;
                placed += 1;
            }
            debug_assert!(placed > 0, "children tile their parent");
            at = link.next;
        }
        for child in children {
            if self.splits(&child) {
                self.split(child);
            }
        }
    }

    /// Four empty leaves, contiguous: a recycled group if one is free.
    fn alloc_group(&mut self) -> u32 {
        take_group(
            &mut self.base.nodes,
            &mut self.base.free_group,
            EMPTY_LEAF,
            |n| n.first_child,
        )
    }

    /// The deferred cleanup: every branch whose four children are all empty leaves
    /// becomes an empty leaf, and the child group goes on the free list. One level per call
    /// (a branch emptied by this pass collapses on the next), the root never.
    pub(super) fn collapse_empty_branches(&mut self) {
        if self.base.nodes[0].count != BRANCH {
            return;
        }
        let mut stack = NodeStack::new();
        stack.push(0);
        while let Some(n) = stack.pop() {
            let group = self.base.nodes[n as usize].first_child;
            let g = group as usize;
            let children = &self.base.nodes[g..g + 4];
            if children.iter().all(|c| c.count == 0) {
                release_group(&mut self.base.nodes, &mut self.base.free_group, n);
            } else {
                for (i, c) in children.iter().enumerate() {
                    if c.count == BRANCH {
                        stack.push(group + i as u32);
                    }
                }
            }
        }
    }

    /// Lays every leaf's element list out contiguously, leaves in the pair pass's order.
    pub(super) fn compact_lists(&mut self) {
        compact_leaf_lists(&mut self.base.nodes, &mut self.links);
    }
}

/// The frame update on the calling thread: a move re-files along the tree, which does not
/// split into independent parts.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for Quadtree<S, T> {}

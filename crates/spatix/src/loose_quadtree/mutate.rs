//! Filing elements by centre, growing loose boxes, splitting leaves, and the deferred refit of
//! the loose boxes (with the collapse of empty branches).

use super::{LooseQuadtree, nothing, quadrant};
use crate::handle::NIL;
use crate::quadtree::{BRANCH, Frame, Node, compact_leaf_lists, release_group, take_group};
use crate::{Aabb, Scalar};

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// Lists element `slot` (whose box `aabb` is already stored) in the leaf whose quadrant
    /// holds its clamped centre, growing the loose box of every node on the way down, and
    /// splits that leaf if it overflows.
    pub(super) fn file(&mut self, slot: u32, aabb: &Aabb<S>) {
        let c = self.centre(aabb);
        let mut f = Frame::root(self.world);
        loop {
            let at = f.node as usize;
            self.loose[at] = self.loose[at].union(aabb);
            let node = self.nodes[at];
            if node.count != BRANCH {
                break;
            }
            let mid = f.mid();
            f = f.child(node.first_child, quadrant(mid, c), mid);
        }
        let leaf = &mut self.nodes[f.node as usize];
        self.links.push(&mut leaf.first_child, slot);
        leaf.count += 1;
        self.leaves[slot as usize] = f.node;
        if leaf.count > self.config.max_elements && f.can_split(self.config.max_depth) {
            self.split(f);
        }
    }

    /// Unlinks element `slot` from its leaf. Loose boxes stay as they are until `maintain`.
    pub(super) fn unfile(&mut self, slot: u32) {
        let leaf = &mut self.nodes[self.leaves[slot as usize] as usize];
        let found = self.links.remove(&mut leaf.first_child, slot);
        debug_assert!(found, "element {slot} missing from its leaf");
        leaf.count -= 1;
    }

    /// Grows the loose box of `node` and of its ancestors to enclose `aabb`, stopping at the
    /// first that already does (its own ancestors enclose it too).
    pub(super) fn grow_from(&mut self, mut node: u32, aabb: &Aabb<S>) {
        loop {
            let b = &mut self.loose[node as usize];
            if b.contains(aabb) {
                return;
            }
            *b = b.union(aabb);
            if node == 0 {
                return;
            }
            node = self.parent(node);
        }
    }

    /// Turns an overflowing leaf into a branch with four children and moves each element
    /// node to the child whose quadrant holds the element's centre (relinking only), growing
    /// the children's loose boxes around their elements; children that still overflow split
    /// in turn, as far as [`Frame::can_split`] allows. The branch keeps its loose box, which
    /// encloses them all.
    fn split(&mut self, f: Frame<S>) {
        let mut at = self.nodes[f.node as usize].first_child;
        let group = self.alloc_group(f.node);
        self.nodes[f.node as usize] = Node {
            first_child: group,
            count: BRANCH,
        };
        let children = f.children(group);
        for child in &children {
            self.regions[child.node as usize] = child.reach();
        }
        let mid = f.mid();
        while at != NIL {
            let link = self.links.link(at);
            let e = link.item;
            let b = *self.slots.aabb(e);
            let child = group + quadrant(mid, self.centre(&b));
            let node = &mut self.nodes[child as usize];
            self.links.set_next(at, node.first_child);
            node.first_child = at;
            node.count += 1;
            let loose = &mut self.loose[child as usize];
            *loose = loose.union(&b);
            self.leaves[e as usize] = child;
            at = link.next;
        }
        for child in children {
            if self.nodes[child.node as usize].count > self.config.max_elements
                && child.can_split(self.config.max_depth)
            {
                self.split(child);
            }
        }
    }

    /// Four empty leaves under `parent`, contiguous, with empty loose boxes: a recycled group
    /// if one is free. Their regions are the caller's to set.
    fn alloc_group(&mut self, parent: u32) -> u32 {
        let (group, fresh) = take_group(&mut self.nodes, &mut self.free_group);
        let g = group as usize;
        if fresh {
            self.loose.extend_from_slice(&[nothing(); 4]);
            self.regions.extend_from_slice(&[nothing(); 4]);
            self.parents.push(parent);
        } else {
            self.loose[g..g + 4].fill(nothing());
            self.parents[(g - 1) / 4] = parent;
        }
        group
    }

    /// Recomputes the loose boxes below `n` (included) bottom-up, so that each is the union
    /// of its elements' or its children's boxes, and returns `n`'s. A branch whose four
    /// children are then empty leaves becomes an empty leaf (its group goes on the free
    /// list), so a subtree emptied since the last call collapses in one pass. Recursion
    /// depth is bounded by the depth limit (at most 30).
    pub(super) fn refit(&mut self, n: u32) -> Aabb<S> {
        let node = self.nodes[n as usize];
        let b = if node.count == BRANCH {
            let g = node.first_child;
            let mut b = nothing();
            for i in 0..4 {
                b = b.union(&self.refit(g + i));
            }
            let g = g as usize;
            if self.nodes[g..g + 4].iter().all(|c| c.count == 0) {
                release_group(&mut self.nodes, &mut self.free_group, n);
            }
            b
        } else {
            self.links
                .items(node.first_child)
                .fold(nothing(), |b, e| b.union(self.slots.aabb(e)))
        };
        self.loose[n as usize] = b;
        b
    }

    /// Lays every leaf's element list out contiguously, leaves in the pair pass's order.
    pub(super) fn compact_lists(&mut self) {
        compact_leaf_lists(&mut self.nodes, &mut self.links);
    }
}

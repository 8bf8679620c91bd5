//! Filing elements by centre, growing loose boxes, splitting leaves, and the deferred refit of
//! the loose boxes (with the collapse of empty branches).

use super::{COMPACT_ONE_IN, Group, LooseQuadtree, Walk, nothing, owns, quadrant};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::tree::{BRANCH, EMPTY_LEAF, Node, compact_leaf_lists, release_group};
use crate::tree::{Frame, take_group};
use crate::{Aabb, Error, Handle, Point, Scalar};

/// The contract's changes, called by the public methods with a
/// valid box and a live slot.
impl<S: Scalar, T> Mutates<S, T> for LooseQuadtree<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        let i = slot as usize;
        if self.leaves.len() <= i {
            self.leaves.resize(i + 1, NIL);
            self.entries.resize(i + 1, NIL);
        }
        self.file(0, slot, &aabb, self.centre(&aabb));
        Ok(self.slots.handle(slot))
    }

    fn do_remove(&mut self, slot: u32) -> T {
        self.unfile(slot);
        self.slots.remove(slot)
    }

    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let leaf = self.leaves[slot as usize];
        // The new box goes in first: a leaf split during the refiling reads it.
        self.slots.set_aabb(slot, aabb);
        let c = self.centre(&aabb);
        if owns(&self.regions[leaf as usize], c) {
            // Still in its leaf: only boxes grow, up to the first that already encloses it.
            *self.links.data_mut(self.entries[slot as usize]) = aabb;
            self.grow_from(leaf, &aabb);
        } else {
            self.refile(slot, leaf, &aabb, c);
        }
        Ok(())
    }

    fn do_clear(&mut self) {
        self.base.nodes.truncate(1);
        self.base.nodes[0] = EMPTY_LEAF;
        self.loose.truncate(1);
        self.loose[0] = nothing();
        self.regions.truncate(1);
        self.groups.clear();
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
        let compacted = self.links.relinked() * COMPACT_ONE_IN >= self.links.in_use().max(1);
        if compacted {
            self.compact_lists();
        }
        self.refit(0, compacted);
    }
}

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// Lists element `slot` (whose box `aabb` is already stored) in the leaf below `start`
    /// whose quadrant holds its clamped centre `c` (`start` must own `c`), growing the loose
    /// box of every node on the way down, and splits that leaf if it overflows. The nodes
    /// above `start` must already enclose `aabb`.
    #[inline(never)]
    pub(super) fn file(&mut self, start: u32, slot: u32, aabb: &Aabb<S>, c: Point<S>) {
        let (mut n, mut depth) = (start, self.depth(start));
        loop {
            let at = n as usize;
            self.loose[at] = self.loose[at].union(aabb);
            let node = self.base.nodes[at];
            if node.count != BRANCH {
                break;
            }
            // The upper-right child's region starts at the branch's split point.
            let g = node.first_child;
            n = g + quadrant(self.regions[(g + 3) as usize].min, c);
            depth += 1;
        }
        let leaf = &mut self.base.nodes[n as usize];
        self.entries[slot as usize] = self.links.push_with(&mut leaf.first_child, slot, *aabb);
        leaf.count += 1;
        self.leaves[slot as usize] = n;
        if leaf.count > self.base.config.max_elements && depth < self.base.config.max_depth {
            let f = self.frame_of(n, c);
            if f.can_split(self.base.config.max_depth) {
                self.split(f);
            }
        }
    }

    /// The frame (quadrant, depth) of node `n`, which owns the point `c`: found on the way
    /// down from the root towards `c`.
    fn frame_of(&self, n: u32, c: Point<S>) -> Frame<S> {
        let mut f = Frame::root(self.base.world);
        while f.node != n {
            let mid = f.mid();
            f = f.child(
                self.base.nodes[f.node as usize].first_child,
                quadrant(mid, c),
                mid,
            );
        }
        f
    }

    /// Moves element `slot` out of `leaf`, whose quadrant no longer holds its clamped centre
    /// `c`, into the leaf that does: up to the nearest ancestor that owns `c` (whose own
    /// ancestors grow to enclose `aabb`), and down from there.
    #[inline(never)]
    pub(super) fn refile(&mut self, slot: u32, leaf: u32, aabb: &Aabb<S>, c: Point<S>) {
        self.unfile(slot);
        let mut a = self.parent(leaf);
        while !owns(&self.regions[a as usize], c) {
            a = self.parent(a);
        }
        if a != 0 {
            self.grow_from(self.parent(a), aabb);
        }
        self.file(a, slot, aabb, c);
    }

    /// Unlinks element `slot` from its leaf (in O(1): the leaf's first element takes its
    /// node). Loose boxes stay as they are until `maintain`.
    pub(super) fn unfile(&mut self, slot: u32) {
        let leaf = &mut self.base.nodes[self.leaves[slot as usize] as usize];
        let entry = self.entries[slot as usize];
        if let Some(moved) = self.links.remove_node(&mut leaf.first_child, entry) {
            self.entries[moved as usize] = entry;
        }
        leaf.count -= 1;
    }

    /// Grows the loose box of `node` and of its ancestors to enclose `aabb`, stopping at the
    /// first that already does (its own ancestors enclose it too).
    #[inline]
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
        let mut at = self.base.nodes[f.node as usize].first_child;
        let group = self.alloc_group(Group {
            parent: f.node,
            depth: u32::from(f.depth) + 1,
        });
        self.base.nodes[f.node as usize] = Node {
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
            let (e, b) = (link.item, link.data);
            let child = group + quadrant(mid, self.centre(&b));
            let node = &mut self.base.nodes[child as usize];
            self.links.set_next(at, node.first_child);
            node.first_child = at;
            node.count += 1;
            let loose = &mut self.loose[child as usize];
            *loose = loose.union(&b);
            self.leaves[e as usize] = child;
            at = link.next;
        }
        for child in children {
            if self.base.nodes[child.node as usize].count > self.base.config.max_elements
                && child.can_split(self.base.config.max_depth)
            {
                self.split(child);
            }
        }
    }

    /// Four empty leaves, contiguous, with empty loose boxes: a recycled group if one is
    /// free. Their regions are the caller's to set.
    fn alloc_group(&mut self, record: Group) -> u32 {
        let before = self.base.nodes.len();
        let group = take_group(
            &mut self.base.nodes,
            &mut self.base.free_group,
            EMPTY_LEAF,
            |n| n.first_child,
        );
        let (g, fresh) = (group as usize, self.base.nodes.len() > before);
        if fresh {
            self.loose.extend_from_slice(&[nothing(); 4]);
            self.regions.extend_from_slice(&[nothing(); 4]);
            self.groups.push(record);
        } else {
            self.loose[g..g + 4].fill(nothing());
            self.groups[(g - 1) / 4] = record;
        }
        group
    }

    /// Recomputes the loose boxes below `n` (included) bottom-up, so that each is the union
    /// of its elements' or its children's boxes, and returns `n`'s; with `renumber`, also
    /// records again where each element's node is (after the nodes moved). A branch whose
    /// four children are then empty leaves becomes an empty leaf (its group goes on the free
    /// list), so a subtree emptied since the last call collapses in one pass. Recursion
    /// depth is bounded by the depth limit (at most 30).
    pub(super) fn refit(&mut self, n: u32, renumber: bool) -> Aabb<S> {
        let node = self.base.nodes[n as usize];
        let b = if node.count == BRANCH {
            let g = node.first_child;
            let mut b = nothing();
            for i in 0..4 {
                b = b.union(&self.refit(g + i, renumber));
            }
            let g = g as usize;
            if self.base.nodes[g..g + 4].iter().all(|c| c.count == 0) {
                release_group(&mut self.base.nodes, &mut self.base.free_group, n);
            }
            b
        } else {
            let walk = Walk {
                links: &self.links,
                at: node.first_child,
            };
            let mut b = nothing();
            for (at, link) in walk {
                b = b.union(&link.data);
                if renumber {
                    self.entries[link.item as usize] = at;
                }
            }
            b
        };
        self.loose[n as usize] = b;
        b
    }

    /// Lays every leaf's element list out contiguously, leaves in the pair pass's order.
    pub(super) fn compact_lists(&mut self) {
        compact_leaf_lists(&mut self.base.nodes, &mut self.links);
    }
}

/// The frame update on the calling thread: a move re-files along the tree, which does not
/// split into independent parts.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for LooseQuadtree<S, T> {}

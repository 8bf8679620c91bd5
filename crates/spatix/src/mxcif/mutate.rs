//! Placing elements, swap-with-last removal, splitting leaves, merging branches, and the
//! nodes' runs growing and shrinking.

use super::{EMPTY_LEAF, FREE, MxCifQuadtree, Node, Place, quadrant};
use crate::handle::NIL;
use crate::quad::Frame;
use crate::{Aabb, Scalar};

/// The smallest run a non-empty node owns: smaller runs would be reallocated as often as an
/// element comes or goes.
const MIN_CAP: u32 = 4;

/// The run capacity for `len` elements: a power of two, at least [`MIN_CAP`].
fn cap_for(len: u32) -> u32 {
    len.next_power_of_two().max(MIN_CAP)
}

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// Files element `slot` (box `aabb`, already in the slot table) in the smallest node at
    /// or below `f` that contains its clamped box, as the seed's `add` does: descend into the
    /// child that contains it while there is one; a full leaf splits first, unless it is at
    /// the depth limit or too thin to halve. `f` must contain the clamped box.
    pub(super) fn place(&mut self, slot: u32, aabb: Aabb<S>, mut f: Frame<S>) {
        let c = self.filed_box(&aabb);
        loop {
            let node = self.nodes[f.node as usize];
            if node.is_branch() {
                let mid = f.mid();
                match quadrant(mid, &c) {
                    Some(i) => f = f.child(node.first_child, i, mid),
                    None => break,
                }
            } else if node.len >= self.config.max_elements && f.can_split(self.config.max_depth) {
                self.split(&f);
            } else {
                break;
            }
        }
        self.append(f, aabb, slot);
    }

    /// Appends an element to node `f`'s run (growing it if full) and records its place.
    fn append(&mut self, f: Frame<S>, aabb: Aabb<S>, slot: u32) {
        let node = self.nodes[f.node as usize];
        if node.len == node.cap {
            self.move_run(f.node, cap_for(node.len + 1));
        }
        let node = &mut self.nodes[f.node as usize];
        let at = node.start + node.len;
        node.len += 1;
        self.runs.set(at, aabb, slot);
        self.places[slot as usize] = Place { frame: f, at };
    }

    /// Moves a node's elements to a new run of `cap` entries (0: none) and frees the old one.
    fn move_run(&mut self, n: u32, cap: u32) {
        let node = self.nodes[n as usize];
        let start = if cap == 0 { 0 } else { self.runs.alloc(cap) };
        for i in 0..node.len {
            self.runs.copy(node.start + i, start + i);
            let slot = self.runs.items[(start + i) as usize];
            self.places[slot as usize].at = start + i;
        }
        if node.cap > 0 {
            self.runs.release(node.start, node.cap);
        }
        let node = &mut self.nodes[n as usize];
        node.start = start;
        node.cap = cap;
    }

    /// Takes element `slot` out of its node: the seed's swap-with-last (the node's last
    /// element moves into its entry). A run left a quarter full moves to one of half the
    /// size; an empty one is freed.
    pub(super) fn detach(&mut self, slot: u32) {
        let Place { frame, at } = self.places[slot as usize];
        let n = frame.node;
        let node = self.nodes[n as usize];
        let last = node.start + node.len - 1;
        if at != last {
            self.runs.copy(last, at);
            let moved = self.runs.items[at as usize];
            self.places[moved as usize].at = at;
        }
        let len = node.len - 1;
        self.nodes[n as usize].len = len;
        if len == 0 {
            self.move_run(n, 0);
        } else if node.cap > MIN_CAP && len <= node.cap / 4 {
            self.move_run(n, node.cap / 2);
        }
        self.removed = true;
    }

    /// Turns a full leaf into a branch with four empty children and moves down every element
    /// that fits a child (the seed's `split`); the rest stay. Each child's run is allocated
    /// once, at its final size.
    fn split(&mut self, f: &Frame<S>) {
        let group = self.alloc_group();
        self.nodes[f.node as usize].first_child = group;
        let node = self.nodes[f.node as usize];
        let mid = f.mid();
        let goes_to = |b: &Aabb<S>| quadrant(mid, &b.clamped_to(&self.world));
        let mut counts = [0u32; 4];
        for b in &self.runs.boxes[node.run()] {
            if let Some(i) = goes_to(b) {
                counts[i as usize] += 1;
            }
        }
        for (i, &count) in counts.iter().enumerate() {
            if count > 0 {
                self.move_run(group + i as u32, cap_for(count));
            }
        }
        let children = f.children(group);
        let mut kept = node.start;
        for at in node.run() {
            let at = at as u32;
            let aabb = self.runs.boxes[at as usize];
            let slot = self.runs.items[at as usize];
            match quadrant(mid, &self.filed_box(&aabb)) {
                Some(i) => self.append(children[i as usize], aabb, slot),
                None => {
                    self.runs.set(kept, aabb, slot);
                    self.places[slot as usize].at = kept;
                    kept += 1;
                }
            }
        }
        let len = kept - node.start;
        self.nodes[f.node as usize].len = len;
        if len == 0 {
            self.move_run(f.node, 0);
        } else if cap_for(len) < node.cap {
            self.move_run(f.node, cap_for(len));
        }
    }

    /// Four empty leaves, contiguous: a recycled group if one is free.
    fn alloc_group(&mut self) -> u32 {
        if self.free_group != NIL {
            let group = self.free_group;
            let g = group as usize;
            self.free_group = self.nodes[g].first_child;
            self.nodes[g..g + 4].fill(EMPTY_LEAF);
            group
        } else {
            let group = self.nodes.len() as u32;
            self.nodes.extend_from_slice(&[EMPTY_LEAF; 4]);
            group
        }
    }

    /// The seed's merge, bottom-up below `f`: a branch whose four children are leaves
    /// holding, with it, no more than `max_elements` takes their elements and becomes a
    /// leaf; its child group goes on the free list. Children merge before their parent, so
    /// a whole subtree can fold in one pass. Returns whether `f` is a leaf afterwards.
    pub(super) fn merge_below(&mut self, f: Frame<S>) -> bool {
        let node = self.nodes[f.node as usize];
        if !node.is_branch() {
            return true;
        }
        let group = node.first_child;
        let mut leaves = true;
        for child in f.children(group) {
            leaves &= self.merge_below(child);
        }
        let g = group as usize;
        let total = node.len + self.nodes[g..g + 4].iter().map(|c| c.len).sum::<u32>();
        if !leaves || total > self.config.max_elements {
            return false;
        }
        if total > node.cap {
            self.move_run(f.node, cap_for(total));
        }
        for child in group..group + 4 {
            let c = self.nodes[child as usize];
            for at in c.run() {
                self.append(f, self.runs.boxes[at], self.runs.items[at]);
            }
            if c.cap > 0 {
                self.runs.release(c.start, c.cap);
            }
        }
        self.nodes[g..g + 4].fill(Node {
            first_child: NIL,
            start: 0,
            len: FREE,
            cap: 0,
        });
        self.nodes[g].first_child = self.free_group;
        self.free_group = group;
        self.nodes[f.node as usize].first_child = NIL;
        true
    }
}

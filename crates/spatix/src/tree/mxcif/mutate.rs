//! Placing elements, swap-with-last removal, splitting leaves, merging branches, and the
//! nodes' runs growing and shrinking.

use super::runs::cap_for;
use super::{EMPTY_LEAF, FREE, MxCifQuadtree, Node, Place, quadrant};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::tree::{Frame, take_group};
use crate::{Aabb, Error, Handle, Scalar};

/// The run a node of `len` elements moves to when it grows or shrinks: a quarter more room
/// than it needs, so that a node whose count wavers does not move back and forth.
#[inline]
fn roomy(len: u32) -> u32 {
    cap_for(len + len / 4 + 1)
}

/// The contract's changes, called by the public methods with a
/// valid box and a live slot.
impl<S: Scalar, T> Mutates<S, T> for MxCifQuadtree<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        self.compact_if_fragmented();
        let slot = self.slots.insert(aabb, value)?;
        let i = slot as usize;
        if self.places.len() <= i {
            self.places.resize(i + 1, Place::default());
        }
        self.place(slot, aabb, Frame::root(self.base.world));
        Ok(self.slots.handle(slot))
    }

    fn do_remove(&mut self, slot: u32) -> T {
        self.detach(slot);
        self.slots.remove(slot)
    }

    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let c = self.filed_box(&aabb);
        let Place { node, at } = self.places[slot as usize];
        let home = self.frames[node as usize];
        let fits = home.fits(&c);
        if fits
            && (!self.base.nodes[home.node as usize].is_branch()
                || quadrant(home.mid(), &c).is_none())
        {
            // Still in its node and in no child of it: only the box changes.
            self.slots.set_aabb(slot, aabb);
            self.runs.boxes[at as usize] = aabb;
            return Ok(());
        }
        self.compact_if_fragmented();
        self.detach(slot);
        self.slots.set_aabb(slot, aabb);
        let start = if fits {
            home
        } else {
            Frame::root(self.base.world)
        };
        self.place(slot, aabb, start);
        Ok(())
    }

    fn do_clear(&mut self) {
        self.base.nodes.truncate(1);
        self.base.nodes[0] = EMPTY_LEAF;
        self.frames.truncate(1);
        self.base.free_group = NIL;
        self.runs.clear();
        self.slots.clear();
        self.removed = false;
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Slots<S, T> {
        &mut self.slots
    }

    #[inline]
    fn do_maintain(&mut self) {
        if core::mem::take(&mut self.removed) {
            self.merge_below(Frame::root(self.base.world));
        }
        self.compact_if_fragmented();
    }
}

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// Files element `slot` (box `aabb`, already in the slot table) in the smallest node at
    /// or below `f` that contains its clamped box: descend into the
    /// child that contains it while there is one; a full leaf splits first, unless it is at
    /// the depth limit or too thin to halve. `f` must contain the clamped box.
    #[inline(never)]
    pub(super) fn place(&mut self, slot: u32, aabb: Aabb<S>, mut f: Frame<S>) {
        let c = self.filed_box(&aabb);
        loop {
            let node = self.base.nodes[f.node as usize];
            if node.is_branch() {
                let mid = f.mid();
                match quadrant(mid, &c) {
                    Some(i) => f = f.child(node.first_child, i, mid),
                    None => break,
                }
            } else if node.len >= self.base.config.max_elements
                && f.can_split(self.base.config.max_depth)
            {
                self.split(&f);
            } else {
                break;
            }
        }
        self.append(f.node, aabb, slot);
    }

    /// Appends an element to node `n`'s run (growing it if full) and records its place.
    #[inline(always)]
    fn append(&mut self, n: u32, aabb: Aabb<S>, slot: u32) {
        let node = self.base.nodes[n as usize];
        if node.len == node.cap {
            self.move_run(n, roomy(node.len));
        }
        let node = &mut self.base.nodes[n as usize];
        let at = node.start + node.len;
        node.len += 1;
        self.runs.set(at, aabb, slot);
        self.places[slot as usize] = Place { node: n, at };
    }

    /// Moves a node's elements to a new run of at least `cap` entries (0: none) and frees the
    /// old one.
    #[inline(never)]
    fn move_run(&mut self, n: u32, cap: u32) {
        let node = self.base.nodes[n as usize];
        let (start, cap) = if cap == 0 {
            (0, 0)
        } else {
            self.runs.alloc(cap)
        };
        for i in 0..node.len {
            self.runs.copy(node.start + i, start + i);
            let slot = self.runs.items[(start + i) as usize];
            self.places[slot as usize].at = start + i;
        }
        if node.cap > 0 {
            self.runs.release(node.start, node.cap);
        }
        let node = &mut self.base.nodes[n as usize];
        node.start = start;
        node.cap = cap;
    }

    /// Compacts the runs once a quarter of the element arrays lies in free runs: the arrays
    /// then stay within a third more than the runs in use, whatever the churn. Amortised
    /// O(1): freeing that many entries took as many moves. Called only while every live
    /// element sits in its node (compaction finds runs through their elements' places).
    pub(super) fn compact_if_fragmented(&mut self) {
        if self.runs.free_entries() * 4 > self.runs.allocated() {
            self.compact_runs();
        }
    }

    /// Slides every node's run down over the free runs, in address order and in place, so
    /// that the runs tile the start of the element arrays, and forgets the free runs. Run
    /// starts are found from their first element's place (a run in use is never empty), free
    /// runs from the capacity they are marked with. O(entries).
    fn compact_runs(&mut self) {
        let end = self.runs.allocated() as u32;
        let (mut from, mut to) = (0u32, 0u32);
        while from < end {
            let first = self.runs.items[from as usize];
            let place = self.places.get(first as usize).filter(|p| p.at == from);
            let Some(n) = place.filter(|_| self.slots.is_live(first)).map(|p| p.node) else {
                from += self.runs.free_cap(from);
                continue;
            };
            let node = self.base.nodes[n as usize];
            if to != from {
                self.runs.slide(from, to, node.len);
                for at in to..to + node.len {
                    let slot = self.runs.items[at as usize];
                    self.places[slot as usize].at = at;
                }
                self.base.nodes[n as usize].start = to;
            }
            from += node.cap;
            to += node.cap;
        }
        self.runs.truncate(to);
    }

    /// Takes element `slot` out of its node by swap-with-last (the node's last
    /// element moves into its entry). A run left less than half full moves to a smaller one;
    /// an empty one is freed.
    #[inline]
    pub(super) fn detach(&mut self, slot: u32) {
        let Place { node: n, at } = self.places[slot as usize];
        let node = self.base.nodes[n as usize];
        let last = node.start + node.len - 1;
        if at != last {
            self.runs.copy(last, at);
            let moved = self.runs.items[at as usize];
            self.places[moved as usize].at = at;
        }
        let len = node.len - 1;
        self.base.nodes[n as usize].len = len;
        if len == 0 {
            self.move_run(n, 0);
        } else if len * 2 < node.cap && roomy(len) < node.cap {
            self.move_run(n, roomy(len));
        }
        self.removed = true;
    }

    /// Turns a full leaf into a branch with four empty children and moves down every element
    /// that fits a child; the rest stay. Each child's run is allocated
    /// once, at its final size.
    fn split(&mut self, f: &Frame<S>) {
        let group = self.alloc_group(f);
        self.base.nodes[f.node as usize].first_child = group;
        let node = self.base.nodes[f.node as usize];
        let mid = f.mid();
        let goes_to = |b: &Aabb<S>| quadrant(mid, &b.clamped_to(&self.base.world));
        let mut counts = [0u32; 4];
        for b in &self.runs.boxes[node.run()] {
            if let Some(i) = goes_to(b) {
                counts[i as usize] += 1;
            }
        }
        for (i, &count) in counts.iter().enumerate() {
            if count > 0 {
                self.move_run(group + i as u32, roomy(count));
            }
        }
        let mut kept = node.start;
        for at in node.run() {
            let at = at as u32;
            let aabb = self.runs.boxes[at as usize];
            let slot = self.runs.items[at as usize];
            match quadrant(mid, &self.filed_box(&aabb)) {
                Some(i) => self.append(group + i, aabb, slot),
                None => {
                    self.runs.set(kept, aabb, slot);
                    self.places[slot as usize].at = kept;
                    kept += 1;
                }
            }
        }
        let len = kept - node.start;
        self.base.nodes[f.node as usize].len = len;
        if len == 0 {
            self.move_run(f.node, 0);
        } else if len * 2 < node.cap && roomy(len) < node.cap {
            self.move_run(f.node, roomy(len));
        }
    }

    /// Four empty leaves, contiguous, as the children of `f`: a recycled group if one is
    /// free. Their frames are recorded.
    fn alloc_group(&mut self, f: &Frame<S>) -> u32 {
        let group = take_group(
            &mut self.base.nodes,
            &mut self.base.free_group,
            EMPTY_LEAF,
            |n| n.first_child,
        );
        let g = group as usize;
        self.frames.resize(self.base.nodes.len(), Frame::default());
        self.frames[g..g + 4].copy_from_slice(&f.children(group));
        group
    }

    /// The merge, bottom-up below `f`: a branch whose four children are leaves
    /// holding, with it, no more than `max_elements` takes their elements and becomes a
    /// leaf; its child group goes on the free list. Children merge before their parent, so
    /// a whole subtree can fold in one pass. Returns whether `f` is a leaf afterwards.
    pub(super) fn merge_below(&mut self, f: Frame<S>) -> bool {
        let node = self.base.nodes[f.node as usize];
        if !node.is_branch() {
            return true;
        }
        let group = node.first_child;
        let mut leaves = true;
        for child in f.children(group) {
            leaves &= self.merge_below(child);
        }
        let g = group as usize;
        let total = node.len + self.base.nodes[g..g + 4].iter().map(|c| c.len).sum::<u32>();
        if !leaves || total > self.base.config.max_elements {
            return false;
        }
        if total > node.cap {
            self.move_run(f.node, roomy(total));
        }
        for child in group..group + 4 {
            let c = self.base.nodes[child as usize];
            for at in c.run() {
                self.append(f.node, self.runs.boxes[at], self.runs.items[at]);
            }
            if c.cap > 0 {
                self.runs.release(c.start, c.cap);
            }
        }
        self.base.nodes[g..g + 4].fill(Node {
            first_child: NIL,
            start: 0,
            len: FREE,
            cap: 0,
        });
        self.base.nodes[g].first_child = self.base.free_group;
        self.base.free_group = group;
        self.base.nodes[f.node as usize].first_child = NIL;
        true
    }
}

/// The frame update on the calling thread: a move re-files along the tree, which does not
/// split into independent parts.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for MxCifQuadtree<S, T> {}

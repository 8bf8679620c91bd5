//! Insert, remove, update, and `maintain`'s re-filing and shrinking.

use super::{LooseGrid, empty};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::grid::lattice::Lattice;
use crate::{Aabb, Error, Handle, Scalar};

/// `maintain` lays the element lists out in cell order once at least one element in this
/// many was re-filed since the last time. A re-filed element keeps its list node, which lies
/// among the nodes of the cell it left, a neighbour, so the order decays slowly.
const PACK_ONE_IN: usize = 8;

/// How far `b` reaches past `square` (negative when it lies strictly inside).
#[inline]
pub(super) fn overhang<S: Scalar>(b: &Aabb<S>, square: &Aabb<S>) -> S {
    (square.min.x - b.min.x)
        .max_s(b.max.x - square.max.x)
        .max_s(square.min.y - b.min.y)
        .max_s(b.max.y - square.max.y)
}

/// Whether `update` takes its fast path for an element filed in loose cell `home` and moved
/// to `aabb`: if so, how far (at least 0) the box reaches past the square of its cell (the
/// one holding its centre if that is `home`, else `home`'s), which the grid's overhang must
/// cover.
#[inline]
pub(super) fn fast_reach<S: Scalar>(
    loose: &Lattice<S>,
    limit: S,
    home: u32,
    aabb: &Aabb<S>,
) -> Option<S> {
    let centre = aabb.center();
    let (cx, cy) = (loose.col(centre.x), loose.row(centre.y));
    let square = if loose.index(cx, cy) == home as usize {
        loose.square(cx, cy)
    } else {
        let cols = loose.cols;
        loose.square(home % cols, home / cols)
    };
    let reach = overhang(aabb, &square);
    (reach <= limit).then(|| reach.max_s(S::ZERO))
}

impl<S: Scalar, T> LooseGrid<S, T> {
    /// Lists the element in `slot` (already in the slot table with box `aabb`) in the loose
    /// cell of its centre, growing the cell's box to enclose it.
    pub(super) fn file(&mut self, slot: u32, aabb: Aabb<S>) {
        let cell = self.cell_of(&aabb);
        let node = self.elements.push_with(&mut self.heads[cell], slot, aabb);
        let i = slot as usize;
        if i >= self.node_of.len() {
            self.node_of.resize(i + 1, NIL);
            self.home.resize(i + 1, NIL);
        }
        self.node_of[i] = node;
        self.home[i] = cell as u32;
        self.grow(cell, &aabb);
    }

    /// Lays the element lists out in cell order, each front to back, and re-points `node_of`.
    fn pack(&mut self) {
        let heads = &mut self.heads;
        self.elements
            .compact(|visit| heads.iter_mut().for_each(visit));
        let live = self.elements.in_use();
        for (at, link) in (0u32..).zip(&self.elements.nodes()[..live]) {
            self.node_of[link.item as usize] = at;
        }
    }

    /// Grows loose cell `cell`'s box to enclose `b`, listing the cell in the tight cells it
    /// newly reaches.
    #[inline(always)]
    fn grow(&mut self, cell: usize, b: &Aabb<S>) {
        let old = self.boxes[cell];
        let new = old.union(b);
        if new != old {
            self.boxes[cell] = new;
            self.relist(cell, &old, &new);
        }
    }

    /// Moves loose cell `cell` from the tight cells it is listed in with box `old` to those
    /// for box `new` (only the difference is touched).
    fn relist(&mut self, cell: usize, old: &Aabb<S>, new: &Aabb<S>) {
        let square = self.square(cell);
        self.relist_at(cell, &square, old, new);
    }

    /// [`LooseGrid::relist`] for a cell whose square is known.
    #[inline(never)]
    fn relist_at(&mut self, cell: usize, square: &Aabb<S>, old: &Aabb<S>, new: &Aabb<S>) {
        let (was, now) = (self.tight_range(old, square), self.tight_range(new, square));
        self.tight.relist(cell, was, now);
    }
}

impl<S: Scalar, T> Mutates<S, T> for LooseGrid<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        self.file(slot, aabb);
        Ok(self.slots.handle(slot))
    }

    /// Unlinks the element; its loose cell's box shrinks at the next `maintain`.
    fn do_remove(&mut self, slot: u32) -> T {
        let cell = self.home[slot as usize] as usize;
        let found = self.elements.remove(&mut self.heads[cell], slot);
        debug_assert!(found, "a live element is listed in its home cell");
        self.node_of[slot as usize] = NIL;
        self.slots.remove(slot)
    }

    /// The element's box changes in the slot table and in its list node. If the new box
    /// reaches no further than `reach` past the square of the element's cell (the fast path),
    /// that is all, but for the grid's overhang rising to cover it: no cell is read or
    /// written, even when the centre has drifted into a neighbouring cell (`maintain`
    /// re-files it). Otherwise the cell's box grows to enclose it, which may make the cell
    /// irregular (listed in the tight grid) until `maintain`.
    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let home = self.home[slot as usize];
        let fast = fast_reach(&self.loose, self.reach, home, &aabb);
        self.slots.set_aabb(slot, aabb);
        *self.elements.data_mut(self.node_of[slot as usize]) = aabb;
        match fast {
            Some(reach) => self.overhang = self.overhang.max_s(reach),
            None => self.grow(home as usize, &aabb),
        }
        Ok(())
    }

    fn do_clear(&mut self) {
        self.boxes.fill(empty());
        self.heads.fill(NIL);
        self.overhang = -S::INFINITY;
        self.elements.clear();
        self.node_of.fill(NIL);
        self.tight.clear();
        self.slots.clear();
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Slots<S, T> {
        &mut self.slots
    }

    /// `maintain`: one pass over the cells in order re-files every element whose centre left
    /// its cell (its node moves to the front of the other cell's list: to a cell already
    /// passed, whose box then grows; or to one ahead, where it is met again) and shrinks each
    /// cell's box to the elements it keeps; the overhang is forgotten. The nodes stay where
    /// they are, so only re-filed elements are written to; once enough have moved since the
    /// last time, the lists are laid out again in cell order.
    #[inline]
    fn do_maintain(&mut self) {
        let loose = self.loose;
        for cy in 0..loose.rows {
            for cx in 0..loose.cols {
                let cell = loose.index(cx, cy);
                let mut new = empty();
                let mut prev = NIL;
                let mut at = self.heads[cell];
                while at != NIL {
                    let link = self.elements.link(at);
                    let to = loose.index_of(link.data.center());
                    if to == cell {
                        new = new.union(&link.data);
                        prev = at;
                    } else {
                        if prev == NIL {
                            self.heads[cell] = link.next;
                        } else {
                            self.elements.set_next(prev, link.next);
                        }
                        self.elements.set_next(at, self.heads[to]);
                        self.heads[to] = at;
                        self.elements.note_relink();
                        self.home[link.item as usize] = to as u32;
                        if to < cell {
                            self.grow(to, &link.data);
                        }
                    }
                    at = link.next;
                }
                let old = self.boxes[cell];
                if new != old {
                    self.boxes[cell] = new;
                    let square = self.loose.square(cx, cy);
                    if self.is_irregular(&old, &square) || self.is_irregular(&new, &square) {
                        self.relist_at(cell, &square, &old, &new);
                    }
                }
            }
        }
        self.overhang = -S::INFINITY;
        if self.elements.relinked() * PACK_ONE_IN >= self.elements.in_use().max(1) {
            self.pack();
        }
        self.tight.pack_if_scattered();
    }
}

/// The frame update in parallel parts ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)).
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for LooseGrid<S, T> {
    /// In parallel chunks of slots ([`Slots::par_update`](crate::base::slots::Slots::par_update)),
    /// each element that takes `update`'s fast path is moved in place and the chunks' largest
    /// overhangs are combined; then, on the calling thread, the rest grow their cells' boxes
    /// in slot order; last, in parallel, every list node takes its element's new box.
    fn update_in_parts<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), crate::Error>
    where
        T: Send,
    {
        let (loose, limit, home) = (&self.loose, self.reach, &self.home[..]);
        let (moved, overhang) = self.slots.par_update(
            &f,
            |slot, _, new, overhang: &mut S| {
                let fast = super::mutate::fast_reach(loose, limit, home[slot as usize], new);
                if let Some(reach) = fast {
                    *overhang = overhang.max_s(reach);
                }
                Ok(fast.is_some())
            },
            self.overhang,
            Scalar::max_s,
        );
        self.overhang = overhang;
        for (slot, aabb) in moved.iter() {
            self.do_update(slot, aabb)?;
        }
        let boxes = self.slots.boxes();
        self.elements
            .par_set_data(|slot| boxes.get(slot as usize).copied());
        self.slots.moved_applied(moved)
    }
}

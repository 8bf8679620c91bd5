//! Insert, remove and update.

use super::{Leveled, Place};
use crate::handle::NIL;
use crate::{Aabb, Error, Handle, Point, Scalar};

impl<S: Scalar, T> Leveled<S, T> {
    pub(crate) fn insert_impl(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let place = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let slot = self.slots.insert(aabb, value)?;
        if self.node_of.len() <= slot as usize {
            self.node_of.resize(slot as usize + 1, NIL);
            self.home.resize(slot as usize + 1, NIL);
        }
        self.link(place, slot, aabb.min);
        self.pack_if_scattered();
        Ok(self.slots.handle(slot))
    }

    pub(crate) fn remove_impl(&mut self, slot: u32) -> T {
        let place = self.filed(slot);
        self.unlink(place, slot);
        self.node_of[slot as usize] = NIL;
        self.home[slot as usize] = NIL;
        self.pack_if_scattered();
        self.slots.remove(slot)
    }

    /// Moves an element. As long as it stays in its level and its corner within the level's
    /// `max_overhang` of its cell, only the box in the slot table and the corner in its list
    /// node change (and the level's overhang grows); `maintain` re-files it later. Otherwise
    /// it is re-filed at once. The common case, a corner still in its cell, computes nothing
    /// but the corner's cell.
    #[inline(always)]
    pub(crate) fn update_impl(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let new = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let old_level = self.level_of(self.slots.aabb(slot));
        let home = self.home[slot as usize];
        self.slots.set_aabb(slot, aabb);
        if old_level == new.level {
            let level = &mut self.levels[new.level];
            if level.lattice.index(new.cx, new.cy) == home as usize
                || level.overhang_to(aabb.min, home)
            {
                *self.pool.data_mut(self.node_of[slot as usize]) = aabb.min;
                return Ok(());
            }
        }
        self.refile_now(slot, old_level, home, new);
        Ok(())
    }

    /// The slow path of [`Leveled::update`]: moves `slot` (its box already updated) from cell
    /// `home` of level `old_level` to `new`.
    #[cold]
    #[inline(never)]
    fn refile_now(&mut self, slot: u32, old_level: usize, home: u32, new: Place) {
        let (cx, cy) = self.levels[old_level].coords(home);
        let old = Place {
            level: old_level,
            cx,
            cy,
        };
        self.unlink(old, slot);
        let corner = self.slots.aabb(slot).min;
        self.link(new, slot, corner);
        self.pack_if_scattered();
    }

    /// Where a live slot is filed: the level its box fits, its home cell there.
    #[inline]
    pub(crate) fn filed(&self, slot: u32) -> Place {
        let level = self.level_of(self.slots.aabb(slot));
        let (cx, cy) = self.levels[level].coords(self.home[slot as usize]);
        Place { level, cx, cy }
    }

    /// The level a stored box is filed in: the first whose `fit` holds it.
    #[inline]
    fn level_of(&self, b: &Aabb<S>) -> usize {
        let extent = (b.max.x - b.min.x).max_s(b.max.y - b.min.y);
        self.levels
            .iter()
            .position(|l| extent <= l.fit)
            .expect("a stored box fits the level it was filed in")
    }

    /// Re-files, in one pass over level `i`'s cells, every element whose corner lies outside
    /// its cell: its node moves, in place, to the front of its corner's cell's list (which,
    /// if still ahead in the pass, meets it again, now at home). The level's overhang is then
    /// zero.
    pub(crate) fn refile(&mut self, i: usize) {
        let level = &mut self.levels[i];
        if level.overhang == S::ZERO {
            return;
        }
        let cols = level.lattice.cols;
        for cy in 0..level.lattice.rows {
            if level.rows[cy as usize] == NIL {
                continue;
            }
            for cx in 0..cols {
                let mut prev = NIL;
                let mut at = level.head(cx, cy);
                while at != NIL {
                    let node = self.pool.link(at);
                    let next = node.next;
                    let (tx, ty) = level.lattice.cell_of(node.data);
                    if (tx, ty) == (cx, cy) {
                        prev = at;
                    } else {
                        if prev == NIL {
                            *level.head_mut(cx, cy) = next;
                        } else {
                            self.pool.set_next(prev, next);
                        }
                        let target = level.head_mut(tx, ty);
                        self.pool.set_next(at, *target);
                        *target = at;
                        self.pool.note_relink();
                        level.row_len[cy as usize] -= 1;
                        level.row_len[ty as usize] += 1;
                        self.home[node.item as usize] = level.lattice.index(tx, ty) as u32;
                    }
                    at = next;
                }
            }
        }
        level.overhang = S::ZERO;
    }

    #[inline]
    fn link(&mut self, place: Place, slot: u32, corner: Point<S>) {
        let level = &mut self.levels[place.level];
        let head = level.head_mut(place.cx, place.cy);
        self.node_of[slot as usize] = self.pool.push_with(head, slot, corner);
        self.home[slot as usize] = level.lattice.index(place.cx, place.cy) as u32;
        level.row_len[place.cy as usize] += 1;
        level.len += 1;
    }

    /// Unlinks `slot` from the cell it is filed in, in O(1) without walking the list: the
    /// first node of the list takes over the contents of the slot's node, and is unlinked and
    /// freed instead.
    #[inline]
    fn unlink(&mut self, place: Place, slot: u32) {
        let node = self.node_of[slot as usize];
        let level = &mut self.levels[place.level];
        let head = level.head_mut(place.cx, place.cy);
        let first = *head;
        let moved = self.pool.link(first);
        if first != node {
            self.pool.replace(node, moved.item, moved.data);
            self.node_of[moved.item as usize] = node;
        }
        *head = moved.next;
        self.pool.release(first);
        level.row_len[place.cy as usize] -= 1;
        level.len -= 1;
    }

    /// Packs the lists once they are scattered, so that they stay close to traversal order
    /// even if `maintain` is never called.
    #[inline]
    fn pack_if_scattered(&mut self) {
        if self.pool.scattered() {
            self.pack();
        }
    }
}

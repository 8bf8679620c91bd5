//! Insert, remove and update.

use super::{Corner, Levels, Place};
use crate::handle::NIL;
use crate::pool::Node;
use crate::{Aabb, Error, Handle, Point, Scalar};

impl<S: Scalar, T> Levels<S, T> {
    pub(crate) fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let aabb = aabb.validated()?;
        let place = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let slot = self.slots.insert(aabb, value)?;
        if self.node_of.len() <= slot as usize {
            self.node_of.resize(slot as usize + 1, NIL);
        }
        self.link(place, slot, aabb.min);
        self.pack_if_scattered();
        Ok(self.slots.handle(slot))
    }

    pub(crate) fn remove(&mut self, handle: Handle) -> Option<T> {
        let slot = self.slots.slot_of(handle)?;
        let place = self.filed(slot);
        self.unlink(place, slot);
        self.node_of[slot as usize] = NIL;
        self.pack_if_scattered();
        Some(self.slots.remove(slot))
    }

    /// Moves an element. When it stays in its cell, only the box in the slot table and the
    /// corner in its list node change.
    pub(crate) fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        let aabb = aabb.validated()?;
        let slot = self.slots.slot_of(handle).ok_or(Error::StaleHandle)?;
        let new = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let old = self.filed(slot);
        self.slots.set_aabb(slot, aabb);
        if old == new {
            self.pool.link_mut(self.node_of[slot as usize]).corner = aabb.min;
        } else {
            self.unlink(old, slot);
            self.link(new, slot, aabb.min);
            self.pack_if_scattered();
        }
        Ok(())
    }

    /// Where a live slot is filed, from its stored box.
    #[inline]
    pub(crate) fn filed(&self, slot: u32) -> Place {
        self.place(self.slots.aabb(slot))
            .expect("a stored box fits the level it was filed in")
    }

    #[inline]
    fn link(&mut self, place: Place, slot: u32, corner: Point<S>) {
        let level = &mut self.levels[place.level];
        let head = level.head_mut(place.cx, place.cy);
        let node = Corner {
            next: NIL,
            slot,
            corner,
        };
        self.pool.push_node(head, node);
        self.node_of[slot as usize] = *head;
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
            let at = self.pool.link_mut(node);
            at.slot = moved.slot;
            at.corner = moved.corner;
            self.node_of[moved.slot as usize] = node;
        }
        *head = moved.next();
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

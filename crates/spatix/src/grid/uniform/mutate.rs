//! Insert, remove and update.

use super::UniformGrid;
use crate::base::handle::NIL;
use crate::grid::lattice::CellRange;
use crate::{Aabb, Error, Handle, Scalar};

impl<S: Scalar, T> UniformGrid<S, T> {
    pub(super) fn insert_impl(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        let range = self.lattice.range(&aabb);
        self.link_block(range, None, slot);
        self.pack_if_scattered();
        Ok(self.slots.handle(slot))
    }

    pub(super) fn remove_impl(&mut self, slot: u32) -> T {
        let range = self.lattice.range(self.slots.aabb(slot));
        self.unlink_block(range, None, slot);
        self.pack_if_scattered();
        self.slots.remove(slot)
    }

    /// Inlined into the caller's loop: an element that stays in its cells costs two cell
    /// ranges and a store; one that changes cells is re-linked out of line.
    #[inline]
    pub(super) fn update_impl(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let old = self.lattice.range(self.slots.aabb(slot));
        let new = self.lattice.range(&aabb);
        self.slots.set_aabb(slot, aabb);
        if old != new {
            self.relink(slot, old, new);
        }
        Ok(())
    }

    /// Moves `slot` from the cells of `old` to those of `new`.
    #[inline(never)]
    fn relink(&mut self, slot: u32, old: CellRange, new: CellRange) {
        self.unlink_block(old, Some(new), slot);
        self.link_block(new, Some(old), slot);
        self.pack_if_scattered();
    }

    pub(super) fn clear_impl(&mut self) {
        self.cells.fill(NIL);
        self.pool.clear();
        self.slots.clear();
    }

    /// Packs the lists once they are scattered ([`ListPool::scattered`]), so that they stay
    /// close to cell order even if `maintain` is never called.
    ///
    /// [`ListPool::scattered`]: crate::base::pool::ListPool::scattered
    #[inline]
    fn pack_if_scattered(&mut self) {
        if self.pool.scattered() {
            self.pack();
        }
    }

    /// Files `slot` in every cell of `range` that is not in `except`.
    #[inline]
    pub(super) fn link_block(&mut self, range: CellRange, except: Option<CellRange>, slot: u32) {
        for cy in range.y0..=range.y1 {
            let row = cy as usize * self.lattice.cols as usize;
            for cx in range.x0..=range.x1 {
                if !except.is_some_and(|e| e.contains(cx, cy)) {
                    self.pool.push(&mut self.cells[row + cx as usize], slot);
                }
            }
        }
    }

    /// Unlinks `slot` from every cell of `range` that is not in `except`.
    #[inline]
    fn unlink_block(&mut self, range: CellRange, except: Option<CellRange>, slot: u32) {
        for cy in range.y0..=range.y1 {
            let row = cy as usize * self.lattice.cols as usize;
            for cx in range.x0..=range.x1 {
                if !except.is_some_and(|e| e.contains(cx, cy)) {
                    let found = self.pool.remove(&mut self.cells[row + cx as usize], slot);
                    debug_assert!(found, "a live element is filed in every cell of its range");
                }
            }
        }
    }
}

/// The frame update in parallel parts ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)).
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for UniformGrid<S, T> {
    /// In parallel chunks of slots ([`Slots::par_update`](crate::base::slots::Slots::par_update)),
    /// each element whose box keeps its range of cells is moved in place; then, on the
    /// calling thread, the elements that change cells are re-filed in slot order.
    fn update_in_parts<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), crate::Error>
    where
        T: Send,
    {
        let lattice = &self.lattice;
        let (moved, ()) = self.slots.par_update(
            &f,
            |_, old, new, ()| Ok(lattice.range(old) == lattice.range(new)),
            (),
            |(), ()| (),
        );
        for (slot, aabb) in moved.iter() {
            self.update_impl(slot, aabb)?;
        }
        self.slots.moved_applied(moved)
    }
}

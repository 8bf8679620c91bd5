//! Insert, remove, update, and `maintain`'s re-filing and shrinking.

use super::{LooseGrid, empty};
use crate::handle::NIL;
use crate::{Aabb, Error, Handle, Scalar};

/// `maintain` lays the tight lists out in order once the loose cells listed or delisted since
/// the last time reach this fraction of the entries.
const PACK_TIGHT_ONE_IN: usize = 4;

/// How far `b` reaches past `square` (negative when it lies strictly inside).
#[inline]
pub(super) fn overhang<S: Scalar>(b: &Aabb<S>, square: &Aabb<S>) -> S {
    (square.min.x - b.min.x)
        .max_s(b.max.x - square.max.x)
        .max_s(square.min.y - b.min.y)
        .max_s(b.max.y - square.max.y)
}

impl<S: Scalar, T> LooseGrid<S, T> {
    pub(super) fn insert_element(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let aabb = aabb.validated()?;
        let slot = self.slots.insert(aabb, value)?;
        let cell = self.cell_of(&aabb);
        let node = self.elements.push_with(&mut self.heads[cell], slot, aabb);
        if slot as usize == self.node_of.len() {
            self.node_of.push(node);
            self.home.push(cell as u32);
        } else {
            self.node_of[slot as usize] = node;
            self.home[slot as usize] = cell as u32;
        }
        self.grow(cell, &aabb);
        Ok(self.slots.handle(slot))
    }

    /// Unlinks the element; its loose cell's box shrinks at the next `maintain`.
    pub(super) fn remove_element(&mut self, handle: Handle) -> Option<T> {
        let slot = self.slots.slot_of(handle)?;
        let cell = self.home[slot as usize] as usize;
        let found = self.elements.remove(&mut self.heads[cell], slot);
        debug_assert!(found, "a live element is listed in its home cell");
        self.node_of[slot as usize] = NIL;
        Some(self.slots.remove(slot))
    }

    /// The element's box changes in the slot table and in its list node. If the new box
    /// reaches no further than `reach` past the square of the element's cell (the fast path),
    /// that is all, but for the grid's overhang rising to cover it: no cell is read or
    /// written, even when the centre has drifted into a neighbouring cell (`maintain`
    /// re-files it). Otherwise the cell's box grows to enclose it, which may make the cell
    /// irregular (listed in the tight grid) until `maintain`.
    pub(super) fn update_element(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        let aabb = aabb.validated()?;
        let slot = self.slots.slot_of(handle).ok_or(Error::StaleHandle)?;
        let home = self.home[slot as usize] as usize;
        let centre = aabb.center();
        let (cx, cy) = (self.loose.col(centre.x), self.loose.row(centre.y));
        let square = if self.loose.index(cx, cy) == home {
            self.square_at(cx, cy)
        } else {
            self.square(home)
        };
        let reach = overhang(&aabb, &square);
        self.slots.set_aabb(slot, aabb);
        *self.elements.data_mut(self.node_of[slot as usize]) = aabb;
        if reach <= self.reach {
            self.overhang = self.overhang.max_s(reach.max_s(S::ZERO));
        } else {
            self.grow(home, &aabb);
        }
        Ok(())
    }

    /// Grows loose cell `cell`'s box to enclose `b`, listing the cell in the tight cells it
    /// newly reaches.
    #[inline]
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
    fn relist_at(&mut self, cell: usize, square: &Aabb<S>, old: &Aabb<S>, new: &Aabb<S>) {
        let (was, now) = (self.tight_range(old, square), self.tight_range(new, square));
        if was == now {
            return;
        }
        match (was, now) {
            (None, Some(_)) => self.irregular += 1,
            (Some(_), None) => self.irregular -= 1,
            _ => {}
        }
        if let Some(range) = was {
            for (tx, ty) in range.cells() {
                if !now.is_some_and(|r| r.contains(tx, ty)) {
                    let head = &mut self.tight_cells[self.tight.index(tx, ty)];
                    let found = self.tight_lists.remove(head, cell as u32);
                    debug_assert!(found, "a loose cell is listed under its whole listing box");
                }
            }
        }
        if let Some(range) = now {
            for (tx, ty) in range.cells() {
                if !was.is_some_and(|r| r.contains(tx, ty)) {
                    let head = &mut self.tight_cells[self.tight.index(tx, ty)];
                    self.tight_lists.push(head, cell as u32);
                }
            }
        }
    }

    /// `maintain`: the element nodes are regrouped by the cell of their centre (a counting
    /// sort, in place: every list becomes one run of nodes, in cell order), then one
    /// sequential pass over the runs shrinks each cell's box to its elements and re-points
    /// `node_of` and `home`; the overhang is forgotten.
    pub(super) fn tidy(&mut self) {
        let loose = self.loose;
        self.elements
            .regroup(&mut self.heads, |link| loose.index_of(link.data.center()));
        self.overhang = -S::INFINITY;
        for cy in 0..loose.rows {
            for cx in 0..loose.cols {
                let cell = loose.index(cx, cy);
                let mut new = empty();
                let mut at = self.heads[cell];
                if at != NIL {
                    for link in &self.elements.nodes()[at as usize..] {
                        new = new.union(&link.data);
                        self.node_of[link.item as usize] = at;
                        self.home[link.item as usize] = cell as u32;
                        at += 1;
                        if link.next == NIL {
                            break;
                        }
                    }
                }
                let old = self.boxes[cell];
                if new != old {
                    self.boxes[cell] = new;
                    let square = self.square_at(cx, cy);
                    self.relist_at(cell, &square, &old, &new);
                }
            }
        }
        if self.tight_lists.relinked() * PACK_TIGHT_ONE_IN >= self.tight_lists.in_use().max(1) {
            let heads = &mut self.tight_cells;
            self.tight_lists
                .compact(|visit| heads.iter_mut().for_each(visit));
        }
    }
}

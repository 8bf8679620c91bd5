//! All intersecting pairs, cell by cell.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::handle::NIL;
use crate::{Aabb, Item, Scalar};

/// Entries of one cell gathered on the stack before the all-pairs loop. A fuller cell is
/// processed in blocks of this many: each block against itself, then against the rest of the
/// list.
const BLOCK: usize = 48;

/// The element's range starts in the current cell's column.
const FIRST_COL: u32 = 1;
/// The element's range starts in the current cell's row.
const FIRST_ROW: u32 = 2;

/// One list entry, copied out of the slot table.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    slot: u32,
    /// `FIRST_COL | FIRST_ROW` bits for the current cell.
    first: u32,
}

impl<S: Scalar, T> UniformGrid<S, T> {
    /// A pair sharing several cells is reported only from the cell holding the lower-left
    /// corner of the two boxes' intersection: `(max(a.x0, b.x0), max(a.y0, b.y0))` in cell
    /// coordinates, which is the current cell exactly when one of the two ranges starts in
    /// its column and one starts in its row.
    pub(super) fn pairs<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut buffer = [Entry::<S>::default(); BLOCK];
        let both = FIRST_COL | FIRST_ROW;
        for cy in 0..self.rows {
            for cx in 0..self.cols {
                let mut start = self.cells[self.index(cx, cy)];
                while start != NIL {
                    let mut n = 0;
                    let mut at = start;
                    while at != NIL && n < BLOCK {
                        let link = self.pool.link(at);
                        buffer[n] = self.entry(link.item, cx, cy);
                        at = link.next;
                        n += 1;
                    }
                    let block = &buffer[..n];
                    for (i, a) in block.iter().enumerate() {
                        for b in &block[i + 1..] {
                            if a.first | b.first == both && a.aabb.intersects(&b.aabb) {
                                visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                            }
                        }
                    }
                    start = at;
                    while at != NIL {
                        let link = self.pool.link(at);
                        at = link.next;
                        let b = self.entry(link.item, cx, cy);
                        for a in block {
                            if a.first | b.first == both && a.aabb.intersects(&b.aabb) {
                                visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                            }
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    #[inline]
    fn entry(&self, slot: u32, cx: u32, cy: u32) -> Entry<S> {
        let aabb = *self.slots.aabb(slot);
        let first = u32::from(self.col(aabb.min.x) == cx) * FIRST_COL
            | u32::from(self.row(aabb.min.y) == cy) * FIRST_ROW;
        Entry { aabb, slot, first }
    }
}

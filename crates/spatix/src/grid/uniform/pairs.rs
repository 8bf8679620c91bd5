//! All intersecting pairs, cell by cell.

use core::ops::{ControlFlow, Range};

use super::UniformGrid;
use crate::base::handle::NIL;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Aabb, Item, Scalar};

/// Entries gathered on the stack at once, from as many consecutive cells of a row as fit: the
/// boxes are read from the slot table in one tight loop, so their cache misses overlap, and
/// the all-pairs loops then run on the stack copy.
const BATCH: usize = 256;

/// Most cells gathered in one batch.
const BATCH_CELLS: usize = 64;

/// A cell with more entries than a batch holds is paired in blocks of this many: each block
/// against itself, then against the rest of the list.
const BLOCK: usize = 64;

/// The element's range starts in the current cell's column.
const FIRST_COL: u32 = 1;
/// The element's range starts in the current cell's row.
const FIRST_ROW: u32 = 2;
/// Both: a pair is reported in a cell when their flags together make this.
const BOTH: u32 = FIRST_COL | FIRST_ROW;

/// One list entry, copied out of the slot table.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    slot: u32,
    /// `FIRST_COL | FIRST_ROW` bits for the cell it was gathered from.
    first: u32,
}

/// The entries of one cell within a batch.
#[derive(Clone, Copy, Default)]
struct Span {
    cx: u32,
    start: u32,
    end: u32,
}

/// Whether two entries of a cell intersect and the cell is their pair's reference cell.
/// Written without short-circuits: which comparison fails is unpredictable, so branching on
/// each costs more than evaluating all five.
#[inline]
fn reportable<S: Scalar>(a: &Entry<S>, b: &Entry<S>) -> bool {
    (a.first | b.first == BOTH)
        & (a.aabb.min.x <= b.aabb.max.x)
        & (b.aabb.min.x <= a.aabb.max.x)
        & (a.aabb.min.y <= b.aabb.max.y)
        & (b.aabb.min.y <= a.aabb.max.y)
}

impl<S: Scalar, T> UniformGrid<S, T> {
    /// A pair sharing several cells is reported only from the cell holding the lower-left
    /// corner of the two boxes' intersection: `(max(a.x0, b.x0), max(a.y0, b.y0))` in cell
    /// coordinates, which is the current cell exactly when one of the two ranges starts in
    /// its column and one starts in its row.
    /// Rows `rows` only: each cell reports its own pairs, so any split of the rows is exact.
    #[inline]
    pub(super) fn pairs_in_rows<F>(&self, rows: Range<u32>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut buffer = [Entry::<S>::default(); BATCH];
        let mut spans = [Span::default(); BATCH_CELLS];
        for cy in rows {
            let row = &self.cells[self.lattice.index(0, cy)..][..self.lattice.cols as usize];
            let pool = self.pools.of_row(cy);
            let mut cx = 0u32;
            while cx < self.lattice.cols {
                // Gather whole cells until the batch is full: the slots first, then their
                // boxes in one tight loop (their cache misses overlap), then the flags.
                let (mut n, mut m) = (0usize, 0usize);
                while cx < self.lattice.cols && m < BATCH_CELLS {
                    let head = row[cx as usize];
                    if head == NIL || pool.link(head).next == NIL {
                        cx += 1; // no pair in an empty cell or a single entry
                        continue;
                    }
                    let start = n;
                    let mut at = head;
                    while at != NIL && n < BATCH {
                        let link = pool.link(at);
                        buffer[n].slot = link.item;
                        at = link.next;
                        n += 1;
                    }
                    if at != NIL {
                        n = start; // it does not fit: next batch, or blocks if alone
                        break;
                    }
                    spans[m] = Span {
                        cx,
                        start: start as u32,
                        end: n as u32,
                    };
                    m += 1;
                    cx += 1;
                }
                for entry in &mut buffer[..n] {
                    entry.aabb = *self.slots.aabb(entry.slot);
                }
                for span in &spans[..m] {
                    let entries = &mut buffer[span.start as usize..span.end as usize];
                    for entry in entries.iter_mut() {
                        entry.first = self.first(&entry.aabb, span.cx, cy);
                    }
                    self.pair_within(entries, &mut visit)?;
                }
                if m == 0 && cx < self.lattice.cols {
                    self.pair_crowded(row[cx as usize], cx, cy, &mut buffer, &mut visit)?;
                    cx += 1;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every reportable pair among the entries of one cell.
    #[inline(never)]
    fn pair_within<F>(&self, entries: &[Entry<S>], visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for (i, a) in entries.iter().enumerate() {
            for b in &entries[i + 1..] {
                if reportable(a, b) {
                    visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// A cell too crowded for one batch, in blocks: each block against itself, then against
    /// the rest of the list.
    fn pair_crowded<F>(
        &self,
        head: u32,
        cx: u32,
        cy: u32,
        buffer: &mut [Entry<S>; BATCH],
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let pool = self.pools.of_row(cy);
        let mut start = head;
        while start != NIL {
            let mut n = 0;
            let mut at = start;
            while at != NIL && n < BLOCK {
                let link = pool.link(at);
                buffer[n] = self.entry(link.item, cx, cy);
                at = link.next;
                n += 1;
            }
            let block = &buffer[..n];
            self.pair_within(block, visit)?;
            start = at;
            while at != NIL {
                let link = pool.link(at);
                at = link.next;
                let b = self.entry(link.item, cx, cy);
                for a in block {
                    if reportable(a, &b) {
                        visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    #[inline]
    fn entry(&self, slot: u32, cx: u32, cy: u32) -> Entry<S> {
        let aabb = *self.slots.aabb(slot);
        let first = self.first(&aabb, cx, cy);
        Entry { aabb, slot, first }
    }

    /// `FIRST_COL | FIRST_ROW` bits of a box in cell `(cx, cy)`.
    #[inline]
    fn first(&self, aabb: &Aabb<S>, cx: u32, cy: u32) -> u32 {
        (u32::from(self.lattice.col(aabb.min.x) == cx) * FIRST_COL)
            | (u32::from(self.lattice.row(aabb.min.y) == cy) * FIRST_ROW)
    }
}

/// Parts: bands of rows. Every cell reports only the pairs it owns, so the bands need no
/// coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for UniformGrid<S, T> {
    type Part = Range<u32>;
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Range<u32>>, _: &mut ()) {
        parts.clear();
        parts.extend(crate::par::even_ranges(self.lattice.rows, target));
    }

    fn pairs_of_part<F>(&self, rows: &Range<u32>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs_in_rows(rows.clone(), visit)
    }
}

impl<S: Scalar, T> Pairs<S, T> for UniformGrid<S, T> {
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()> {
        self.pairs_in_rows(0..self.lattice.rows, visit)
    }
}

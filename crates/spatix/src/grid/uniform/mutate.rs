//! Insert, remove and update.
//!
//! Each band of rows keeps its lists in its own pool ([`BandPools`](crate::base::pool::BandPools)): an element is linked
//! and unlinked band by band ([`refile_in_band`]), each band's pool packed once it is
//! scattered, so that the parallel frame ([`UpdateParts`](crate::par::UpdateParts)) can
//! apply each band's share of the moves on its own thread, in the serial order.

use core::ops::Range;

use super::UniformGrid;
use crate::base::handle::NIL;
use crate::base::pool::{BAND_SCATTERED_AFTER_AT_LEAST, ListPool};
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::grid::lattice::CellRange;
#[cfg(feature = "rayon")]
use crate::grid::lattice::Lattice;
use crate::{Aabb, Error, Handle, Scalar};

/// The rows of band `band`, of `2^shift` rows, in a grid of `rows` rows.
#[inline]
fn band_rows(shift: u32, rows: u32, band: usize) -> Range<u32> {
    let start = (band as u32) << shift;
    start..(start + (1 << shift)).min(rows)
}

/// Calls `visit(band)` for every band (of `2^shift` rows) holding a row of `old` or of
/// `new`, in band order.
#[inline]
fn for_bands(
    shift: u32,
    old: Option<CellRange>,
    new: Option<CellRange>,
    mut visit: impl FnMut(usize),
) {
    let span =
        |r: Option<CellRange>| r.map(|r| ((r.y0 >> shift) as usize, (r.y1 >> shift) as usize));
    match (span(old), span(new)) {
        (Some((a0, a1)), Some((b0, b1))) if a0.max(b0) <= a1.min(b1) + 1 => {
            (a0.min(b0)..=a1.max(b1)).for_each(visit);
        }
        (Some((a0, a1)), Some((b0, b1))) => {
            let (first, second) = if a0 < b0 {
                ((a0, a1), (b0, b1))
            } else {
                ((b0, b1), (a0, a1))
            };
            (first.0..=first.1).for_each(&mut visit);
            (second.0..=second.1).for_each(visit);
        }
        (Some((a0, a1)), None) | (None, Some((a0, a1))) => (a0..=a1).for_each(visit),
        (None, None) => {}
    }
}

/// Within one band (whose lists are in `pool`, its cells `cells`, row-major with `cols`
/// columns, starting at row `rows.start`): unlinks `slot` from the cells of `old` not in
/// `new`, links it into the cells of `new` not in `old`, then packs the band's lists if they
/// are scattered ([`ListPool::scattered_after`]), so that they stay close to cell order even if
/// `maintain` is never called.
#[inline]
fn refile_in_band(
    pool: &mut ListPool,
    cells: &mut [u32],
    rows: &Range<u32>,
    cols: u32,
    old: Option<CellRange>,
    new: Option<CellRange>,
    slot: u32,
) {
    let rows_of = |r: &CellRange| r.y0.max(rows.start)..=r.y1.min(rows.end - 1);
    if let Some(o) = old {
        for cy in rows_of(&o) {
            let row = (cy - rows.start) as usize * cols as usize;
            for cx in o.x0..=o.x1 {
                if !new.is_some_and(|n| n.contains(cx, cy)) {
                    let found = pool.remove(&mut cells[row + cx as usize], slot);
                    debug_assert!(found, "a live element is filed in every cell of its range");
                }
            }
        }
    }
    if let Some(n) = new {
        for cy in rows_of(&n) {
            let row = (cy - rows.start) as usize * cols as usize;
            for cx in n.x0..=n.x1 {
                if !old.is_some_and(|o| o.contains(cx, cy)) {
                    pool.push(&mut cells[row + cx as usize], slot);
                }
            }
        }
    }
    if pool.scattered_after(BAND_SCATTERED_AFTER_AT_LEAST) {
        pool.compact_band(|visit| cells.iter_mut().for_each(visit));
    }
}

impl<S: Scalar, T> UniformGrid<S, T> {
    /// Moves `slot` from the cells of `old` to those of `new`.
    #[inline(never)]
    fn relink(&mut self, slot: u32, old: CellRange, new: CellRange) {
        self.refile(slot, Some(old), Some(new));
    }

    /// Moves `slot` from the cells of `old` (none: a new element) to those of `new` (none: a
    /// removed one), band by band.
    #[inline(never)]
    fn refile(&mut self, slot: u32, old: Option<CellRange>, new: Option<CellRange>) {
        let (rows, cols, shift) = (self.lattice.rows, self.lattice.cols, self.pools.shift());
        let (pools, cells) = (self.pools.pools_mut(), &mut self.cells);
        for_bands(shift, old, new, |band| {
            let rows = band_rows(shift, rows, band);
            let cells =
                &mut cells[rows.start as usize * cols as usize..rows.end as usize * cols as usize];
            let pool = &mut pools[band];
            refile_in_band(pool, cells, &rows, cols, old, new, slot);
        });
    }

    /// Files `slot` in every cell of `range`, without packing (loading a byte form).
    pub(super) fn link_block(&mut self, range: CellRange, slot: u32) {
        for cy in range.y0..=range.y1 {
            let row = cy as usize * self.lattice.cols as usize;
            let pool = self.pools.of_row_mut(cy);
            for cx in range.x0..=range.x1 {
                pool.push(&mut self.cells[row + cx as usize], slot);
            }
        }
    }
}

impl<S: Scalar, T> Mutates<S, T> for UniformGrid<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        let range = self.lattice.range(&aabb);
        self.refile(slot, None, Some(range));
        Ok(self.slots.handle(slot))
    }

    fn do_remove(&mut self, slot: u32) -> T {
        let range = self.lattice.range(self.slots.aabb(slot));
        self.refile(slot, Some(range), None);
        self.slots.remove(slot)
    }

    /// Inlined into the caller's loop: an element that stays in its cells costs two cell
    /// ranges and a store; one that changes cells is re-linked out of line.
    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let old = self.lattice.range(self.slots.aabb(slot));
        let new = self.lattice.range(&aabb);
        self.slots.set_aabb(slot, aabb);
        if old != new {
            self.relink(slot, old, new);
        }
        Ok(())
    }

    fn do_clear(&mut self) {
        self.cells.fill(NIL);
        self.pools.clear();
        self.slots.clear();
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Slots<S, T> {
        &mut self.slots
    }

    #[inline]
    fn do_maintain(&mut self) {
        if self.pools.relinked() > 0 {
            self.pack();
        }
    }
}

/// One element's re-filing as a band sees it: its slot, old and new cell ranges.
#[cfg(feature = "rayon")]
#[derive(Clone, Copy, Debug)]
struct Refiling {
    slot: u32,
    old: CellRange,
    new: CellRange,
}

/// The re-filings of one chunk of slots, sorted by band (stably: in slot order within each
/// band); an element whose rows span several bands is listed in each. Kept from frame to
/// frame so that a warm frame allocates nothing.
#[cfg(feature = "rayon")]
#[derive(Clone, Debug, Default)]
pub(super) struct ChunkRefilings {
    refilings: Vec<Refiling>,
    /// Band `b`'s re-filings are `refilings[starts[b]..starts[b + 1]]`.
    starts: Vec<u32>,
}

#[cfg(feature = "rayon")]
impl ChunkRefilings {
    /// Sorts `moved` (one chunk's elements to re-file, in slot order) by band, in two passes
    /// (count, then place).
    fn fill<S: Scalar>(
        &mut self,
        lattice: &Lattice<S>,
        boxes: &[Aabb<S>],
        (bands, shift): (usize, u32),
        moved: &[(u32, Aabb<S>)],
    ) {
        self.starts.clear();
        self.starts.resize(bands + 1, 0);
        let ranges = |&(slot, ref aabb): &(u32, Aabb<S>)| {
            let old = lattice.range(&boxes[slot as usize]);
            (slot, old, lattice.range(aabb))
        };
        for m in moved {
            let (_, old, new) = ranges(m);
            for_bands(shift, Some(old), Some(new), |b| self.starts[b + 1] += 1);
        }
        for b in 0..bands {
            self.starts[b + 1] += self.starts[b];
        }
        let total = self.starts[bands] as usize;
        self.refilings.clear();
        // Grown as pushing would grow it, so that a frame with a few more movers than the
        // last rarely needs more.
        self.refilings.reserve(total.next_power_of_two());
        self.refilings.resize(
            total,
            Refiling {
                slot: NIL,
                old: CellRange::default(),
                new: CellRange::default(),
            },
        );
        for m in moved {
            let (slot, old, new) = ranges(m);
            for_bands(shift, Some(old), Some(new), |b| {
                self.refilings[self.starts[b] as usize] = Refiling { slot, old, new };
                self.starts[b] += 1;
            });
        }
        // `starts[b]` is now band `b`'s end: shift back by one band.
        for b in (1..=bands).rev() {
            self.starts[b] = self.starts[b - 1];
        }
        self.starts[0] = 0;
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.refilings.capacity() * size_of::<Refiling>() + self.starts.capacity() * 4
    }

    fn of_band(&self, band: usize) -> &[Refiling] {
        &self.refilings[self.starts[band] as usize..self.starts[band + 1] as usize]
    }
}

/// The frame update in parallel parts ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)).
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for UniformGrid<S, T> {
    /// In parallel chunks of slots ([`Slots::par_update`](crate::base::slots::Slots::par_update)),
    /// each element whose box keeps its range of cells is moved in place; the elements that
    /// change cells are then sorted by band, chunk by chunk in parallel, and each band, on
    /// its own thread, unlinks and links its share of them in slot order: the order of the
    /// serial pass, band by band, so every band's pool ends as the serial pass leaves it.
    fn update_in_parts<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), crate::Error>
    where
        T: Send,
    {
        use rayon::prelude::*;
        let lattice = &self.lattice;
        let (moved, ()) = self.slots.par_update(
            &f,
            |_, old, new, ()| Ok(lattice.range(old) == lattice.range(new)),
            (),
            |(), ()| (),
        );
        let chunks = moved.chunks();
        if chunks.iter().any(|c| !c.is_empty()) {
            let mut refile = core::mem::take(&mut self.refile);
            if refile.len() < chunks.len() {
                refile.resize_with(chunks.len(), ChunkRefilings::default);
            }
            let (rows, cols, shift) = (self.lattice.rows, self.lattice.cols, self.pools.shift());
            let bands = (self.pools.pools().len(), shift);
            let (lattice, boxes) = (&self.lattice, self.slots.boxes());
            refile[..chunks.len()]
                .par_iter_mut()
                .zip(chunks)
                .for_each(|(sorted, moved)| sorted.fill(lattice, boxes, bands, moved));
            let band_cells = (cols as usize) << shift;
            let sorted = &refile[..chunks.len()];
            self.pools
                .pools_mut()
                .par_iter_mut()
                .zip(self.cells.par_chunks_mut(band_cells))
                .enumerate()
                .for_each(|(band, (pool, cells))| {
                    let band_rows = band_rows(shift, rows, band);
                    for r in sorted.iter().flat_map(|s| s.of_band(band)) {
                        refile_in_band(
                            pool,
                            cells,
                            &band_rows,
                            cols,
                            Some(r.old),
                            Some(r.new),
                            r.slot,
                        );
                    }
                });
            self.refile = refile;
            self.slots.par_set_moved(&moved);
        }
        self.slots.moved_applied(moved)
    }
}

//! The engine shared by [`PointGrid`](crate::PointGrid) and
//! [`HierarchicalGrid`](crate::HierarchicalGrid): one or more *levels*, each a lattice of
//! cells in which an element is filed once, as a point, by the lower-left corner of its box.
//!
//! A level holds boxes no larger than its `fit` on each axis, so an element filed in a cell
//! sticks out of it by at most `fit` on the high sides (a little more, `reach`, to cover
//! rounding): searches widen their area by `reach` on the low sides, test the stored corner
//! first and read the true box from the slot table only when the corner alone cannot decide.
//! Cells are at least `reach` wide (plus a rounding margin), so two intersecting elements of a
//! level sit in the same or in neighbouring cells.
//!
//! Why the corner and not the centre: the corner is the box's own coordinate, exact; a centre
//! would be rounded, and far from the origin (out-of-world boxes, `f32`) the rounding can
//! exceed any fixed margin, whereas every search bound below holds exactly because rounding is
//! monotone.
//!
//! Cells are `u32` heads of index-linked lists in one shared [`ListPool`] whose nodes carry
//! the corner next to the slot. Rows of cells are allocated on first use and released by
//! `maintain` once empty, so empty rows cost one table entry.

use core::cmp::Ordering;

use crate::base::handle::NIL;
use crate::base::per_slot::PerSlot;
use crate::base::pool::{BAND_SCATTERED_AFTER_AT_LEAST, Link, ListPool, band_count, band_shift};
use crate::base::slots::Slots;
use crate::{Aabb, Error, Point, Scalar};

use super::lattice::{Lattice, bulk_extent, cell_for_count, extent_of, magnitude, within_quarter};
use crate::contract::{Holds, Through};

mod bytes;
mod mutate;
mod pairs;
mod query;
mod regions;
#[cfg(all(test, feature = "rayon"))]
mod tests;
mod validate;

/// Most levels a hierarchy may have: cell sizes at least double from one level to the next,
/// from at most 2^28 cells across the finest level, plus the catch-all level.
pub(crate) const MAX_LEVELS: usize = 30;

/// [`Level::pick_cell`]: cell side as a multiple of the least that fits the boxes.
const CELL_FACTOR: f64 = 2.0;

/// [`Level::pick_cell`]: at most this many cells along the world's longer side (cells smaller
/// than that only help points, and rows of them would be long).
const MAX_CELLS_PER_SIDE: f64 = 4096.0;

/// `maintain` packs the lists once one node in this many moved since the last pack: a node
/// that moves stays near its old cell's nodes, and the pair pass was measured to lose little
/// until many did, whereas a pack rewrites every node.
const PACK_SHARE: usize = 4;

/// A band of a level holds at least this many cells (unless it holds every row): more than
/// the uniform grid's bands (`MIN_BAND_CELLS`), since each element is one node here, not
/// one per cell it overlaps. Each band's pool keeps room and a compaction ring buffer of its
/// own: with bands of 4096 cells, 20,000 tiny boxes spread thinly (`auto`'s sparse cells)
/// took 100 bytes an element; with these, under 100 (the memory tests), while a grid of a
/// million agents still has 32 bands.
const BAND_CELLS: u64 = 16_384;

/// One list node: the next node, the element's slot (`item`), and the lower-left corner of
/// its box (`data`).
pub(crate) type Corner<S> = Link<Point<S>>;

const _: () = assert!(size_of::<Corner<f32>>() == 16);
const _: () = assert!(size_of::<Corner<f64>>() == 24);

/// One lattice of cells holding the elements whose boxes fit `fit`.
#[derive(Clone, Debug)]
pub(crate) struct Level<S> {
    pub(crate) lattice: Lattice<S>,
    /// Largest width and height filed here (infinite for the catch-all level).
    pub(crate) fit: S,
    /// `fit` plus a relative margin: bounds the true extent of every box filed here, whatever
    /// the rounding of `max - min`. Searches widen by it.
    pub(crate) reach: S,
    /// How far (on either axis) any element's corner may lie outside its cell: elements that
    /// move stay in their cell until `maintain` re-files them, as long as their corner stays
    /// within `max_overhang` of it. Grown by updates, reset by `maintain`.
    pub(crate) overhang: S,
    /// The most `overhang` may reach while cells stay wide enough for the pair pass: two
    /// elements within `reach` of each other must still sit in the same or neighbouring cells.
    pub(crate) max_overhang: S,
    /// Rows per band: `2^shift` ([`band_shift`]: the level's shape alone decides it).
    shift: u32,
    /// The level's rows, cut into bands, each with its own lists.
    pub(crate) bands: Vec<Band<S>>,
    /// Elements filed in this level.
    pub(crate) len: usize,
}

/// A band of a level's rows (`2^shift` of them, fewer in the last band) with the lists of
/// its cells in a pool of its own, so that bands are re-filed and packed on different
/// threads. Node numbers are the band's own.
#[derive(Clone, Debug)]
pub(crate) struct Band<S> {
    /// Per row of the band: the offset of its `cols` heads in `heads`, or `NIL` if it has
    /// none.
    rows: Vec<u32>,
    /// Per row of the band: the elements filed in it.
    row_len: Vec<u32>,
    /// The heads of the allocated rows' cells, `cols` per row; released rows are chained
    /// through their first head.
    heads: Vec<u32>,
    /// The first released row of `heads`, or `NIL`.
    free_row: u32,
    /// The nodes of the band's lists.
    pub(crate) pool: ListPool<Point<S>>,
}

impl<S: Scalar> Level<S> {
    /// A level of cells of side `cell` over `world` (its part within ±MAX/4:
    /// [`within_quarter`]), for boxes up to `fit` wide and high. A level of a single cell
    /// holds boxes of any size (the catch-all's infinite `fit`, or one so large that cells
    /// wide enough for it would not be finite).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the lattice is invalid, if `fit` is negative or NaN, or
    /// if the cells are too small for `fit`.
    pub(crate) fn new(world: Aabb<S>, cell: S, fit: S) -> Result<Self, Error> {
        let lattice = Lattice::new(within_quarter(&world.valid_world()?), cell)?;
        let shift = band_shift(lattice.rows, lattice.cols, BAND_CELLS);
        if fit
            .partial_cmp(&S::ZERO)
            .is_none_or(|o| o == Ordering::Less)
        {
            return Err(Error::InvalidParameter(
                "the size bound must not be negative",
            ));
        }
        let reach = reach_of(fit);
        let fits = lattice.len() == 1 || reach + lattice.margin() * S::from_f64(4.0) <= cell;
        if !fits {
            return Err(Error::InvalidParameter(
                "cells must be at least as wide as the largest element (twice its half extent)",
            ));
        }
        let max_overhang = if reach.is_finite() {
            // Short of half the room by a slack relative to the cell, not to the room: the
            // check `reach + 2 · max_overhang + 4 · margin <= cell` rounds to a few ulps of the
            // cell, more than a slack of a narrow room.
            let room = cell - reach - lattice.margin() * S::from_f64(4.0);
            ((room - cell * S::RELATIVE_SLACK) * S::HALF).max_s(S::ZERO)
        } else {
            S::ZERO
        };
        Ok(Self {
            lattice,
            fit,
            reach,
            overhang: S::ZERO,
            max_overhang,
            shift,
            bands: (0..band_count(lattice.rows, shift))
                .map(|b| {
                    let first = (b as u32) << shift;
                    Band::new(lattice.rows.min(first + (1 << shift)) - first)
                })
                .collect(),
            len: 0,
        })
    }

    /// The smallest cell side (up to rounding) of a level over `world` for boxes up to `fit`:
    /// `fit` plus the rounding margins (infinite if that overflows).
    pub(crate) fn cell_for_fit(world: &Aabb<S>, fit: S) -> S {
        let world = &within_quarter(world);
        let slack = S::RELATIVE_SLACK;
        let four = S::from_f64(4.0);
        (reach_of(fit) + magnitude(world) * slack * four) * (S::ONE + slack * (four + S::ONE))
    }

    /// The cell side a constructor picks for a level over `world` (its part within ±MAX/4)
    /// for boxes up to `fit`: twice [`cell_for_fit`](Self::cell_for_fit), raised so that
    /// there are at most 4096 cells along the world's longer side, and to `floor`; 1 for
    /// boxes and a world of no area; one cell over the world when a cell that wide would not
    /// be finite in `S` (boxes nearly MAX wide).
    pub(crate) fn pick_cell(world: &Aabb<S>, fit: S, floor: f64) -> S {
        let world = &within_quarter(world);
        let (width, height) = extent_of(world);
        let side = width.max(height);
        let least = Self::cell_for_fit(world, fit);
        let mut cell = (least.to_f64() * CELL_FACTOR)
            .max(side / MAX_CELLS_PER_SIDE)
            .max(floor);
        if !(cell > 0.0 && cell.is_finite()) {
            cell = 1.0; // points in a world of no area
        }
        let cell = S::from_f64(cell).max_s(least);
        if cell.is_finite() {
            cell
        } else {
            Self::one_cell(side)
        }
    }

    /// A cell side that covers a world whose longer side is `side` (at most MAX/2) in one
    /// cell.
    #[cold]
    fn one_cell(side: f64) -> S {
        S::from_f64(side.max(1.0))
    }

    /// The floor an `auto` constructor puts under [`pick_cell`](Self::pick_cell) for `count`
    /// elements like the valid boxes of `sample`: about `per_cell` elements per cell over
    /// where the bulk of the sample lies ([`bulk_extent`]). Without it, small boxes spread
    /// thinly over a large world would ask for cells of their own size over all of it: every
    /// row in use and far more cells than elements; over the whole world instead of the bulk,
    /// one stray element would make every cell larger. 0 (no floor) for no elements.
    pub(crate) fn sparse_floor(
        world: &Aabb<S>,
        sample: &[Aabb<S>],
        count: usize,
        per_cell: f64,
    ) -> f64 {
        let (width, height) = bulk_extent(&within_quarter(world), sample);
        cell_for_count(width, height, count, per_cell)
    }

    /// Column and row of the cell with row-major index `cell`.
    #[inline]
    pub(crate) fn coords(&self, cell: u32) -> (u32, u32) {
        let cols = self.lattice.cols;
        (cell % cols, cell / cols)
    }

    /// How far (the larger of the two axes) `corner` lies outside cell `(cx, cy)`, whose
    /// bands reach to infinity on the world's border.
    #[inline]
    pub(crate) fn drift(&self, corner: Point<S>, cx: u32, cy: u32) -> S {
        let l = &self.lattice;
        let (x0, x1) = l.band(cx, l.cols, l.world.min.x);
        let (y0, y1) = l.band(cy, l.rows, l.world.min.y);
        let dx = (x0 - corner.x).max_s(corner.x - x1);
        let dy = (y0 - corner.y).max_s(corner.y - y1);
        dx.max_s(dy).max_s(S::ZERO)
    }

    /// How far the elements filed in a cell may stick out of it, below and above: the
    /// overhang, plus `reach` above, plus the rounding margin of cell boundaries. Every search
    /// widens its cells by these.
    #[inline]
    pub(crate) fn spread(&self) -> (S, S) {
        let below = self.overhang + self.lattice.margin();
        (below, below + self.reach)
    }

    /// Rows of heads ever made (in use or released).
    #[cfg(test)]
    pub(crate) fn head_rows(&self) -> usize {
        let cols = self.lattice.cols as usize;
        self.bands.iter().map(|b| b.heads.len() / cols).sum()
    }

    /// The band of row `cy`, and the row's place in it.
    #[inline]
    fn band_of(&self, cy: u32) -> (usize, usize) {
        (
            (cy >> self.shift) as usize,
            (cy & ((1 << self.shift) - 1)) as usize,
        )
    }

    /// The pool holding the lists of row `cy`'s cells.
    #[inline]
    pub(crate) fn pool(&self, cy: u32) -> &ListPool<Point<S>> {
        &self.bands[self.band_of(cy).0].pool
    }

    /// The heads of row `cy`, if it has any.
    #[inline]
    pub(crate) fn row_heads(&self, cy: u32) -> Option<&[u32]> {
        let (band, row) = self.band_of(cy);
        self.bands[band].row_heads(row, self.lattice.cols)
    }

    /// The head of cell `(cx, cy)` (`NIL` when empty).
    #[inline]
    pub(crate) fn head(&self, cx: u32, cy: u32) -> u32 {
        self.row_heads(cy).map_or(NIL, |row| row[cx as usize])
    }

    /// Writes `corner` into node `node` of row `cy`'s band (an element that stays in its
    /// cell).
    #[inline]
    pub(crate) fn set_corner(&mut self, cy: u32, node: u32, corner: Point<S>) {
        let (band, _) = self.band_of(cy);
        *self.bands[band].pool.data_mut(node) = corner;
    }

    /// Elements filed in row `cy`.
    pub(crate) fn row_len(&self, cy: u32) -> u32 {
        let (band, row) = self.band_of(cy);
        self.bands[band].row_len[row]
    }

    /// Pushes `slot` with its corner onto the list of cell `(cx, cy)` (allocating its row if
    /// it has none); returns its node in the row's band. Out of line: an insert's, or an
    /// element's re-filed at once or joining another band in `maintain`.
    #[inline(never)]
    fn push(&mut self, cx: u32, cy: u32, slot: u32, corner: Point<S>) -> u32 {
        let (band, row) = self.band_of(cy);
        let cols = self.lattice.cols;
        self.bands[band].push(cx, row, cols, (slot, corner))
    }

    /// Forgets every element; keeps the memory.
    fn clear(&mut self) {
        self.overhang = S::ZERO;
        self.bands.iter_mut().for_each(Band::clear);
        self.len = 0;
    }

    fn memory_bytes(&self) -> usize {
        self.bands.capacity() * size_of::<Band<S>>()
            + self.bands.iter().map(Band::memory_bytes).sum::<usize>()
    }
}

impl<S: Scalar> Band<S> {
    /// A band of `rows` rows with no element (no row of heads allocated).
    fn new(rows: u32) -> Self {
        Self {
            rows: vec![NIL; rows as usize],
            row_len: vec![0; rows as usize],
            heads: Vec::new(),
            free_row: NIL,
            pool: ListPool::default(),
        }
    }

    /// The heads of the band's row `row` (of `cols` cells), if it has any.
    #[inline]
    fn row_heads(&self, row: usize, cols: u32) -> Option<&[u32]> {
        let at = self.rows[row];
        (at != NIL).then(|| &self.heads[at as usize..][..cols as usize])
    }

    /// Where the head of cell `cx` of the band's row `row` is in `heads`; allocates the row
    /// if it has none.
    #[inline(always)]
    fn head_at(&mut self, cx: u32, row: usize, cols: u32) -> usize {
        if self.rows[row] == NIL {
            self.rows[row] = self.allocate_row(cols);
        }
        self.rows[row] as usize + cx as usize
    }

    /// Pushes `slot` with its corner onto the list of cell `cx` of the band's row `row` (of
    /// `cols` cells); returns its node.
    #[inline]
    fn push(&mut self, cx: u32, row: usize, cols: u32, (slot, corner): (u32, Point<S>)) -> u32 {
        let at = self.head_at(cx, row, cols);
        self.row_len[row] += 1;
        self.pool.push_with(&mut self.heads[at], slot, corner)
    }

    /// A row of empty heads: a released one, or a new one at the end of `heads`.
    #[cold]
    #[inline(never)]
    fn allocate_row(&mut self, cols: u32) -> u32 {
        let cols = cols as usize;
        if self.free_row != NIL {
            let at = self.free_row;
            self.free_row = self.heads[at as usize];
            self.heads[at as usize..][..cols].fill(NIL);
            at
        } else {
            let at = self.heads.len() as u32;
            self.heads.resize(self.heads.len() + cols, NIL);
            at
        }
    }

    /// Releases the rows that hold no element.
    fn release_empty_rows(&mut self) {
        for row in 0..self.rows.len() {
            let at = self.rows[row];
            if at != NIL && self.row_len[row] == 0 {
                self.heads[at as usize] = self.free_row;
                self.free_row = at;
                self.rows[row] = NIL;
            }
        }
    }

    /// Forgets every element; keeps the memory.
    fn clear(&mut self) {
        self.rows.fill(NIL);
        self.row_len.fill(0);
        self.heads.clear();
        self.free_row = NIL;
        self.pool.clear();
    }

    /// Lays the band's lists out in row and cell order (`ListPool::compact_band`), and
    /// re-points `node_of` at their nodes.
    #[inline(never)]
    fn pack(&mut self, cols: u32, node_of: &PerSlot) {
        let (rows, heads) = (&self.rows, &mut self.heads);
        self.pool.compact_band(|visit| {
            for &at in rows {
                if at != NIL {
                    heads[at as usize..][..cols as usize]
                        .iter_mut()
                        .for_each(&mut *visit);
                }
            }
        });
        let in_use = self.pool.in_use();
        for (at, node) in (0u32..).zip(&self.pool.nodes()[..in_use]) {
            node_of.store(node.item, at);
        }
    }

    /// Packs the band's lists once they are scattered ([`ListPool::scattered_after`]), so
    /// that they stay close to traversal order even if `maintain` is never called.
    #[inline]
    fn pack_if_scattered(&mut self, cols: u32, node_of: &PerSlot) {
        if self.pool.scattered_after(BAND_SCATTERED_AFTER_AT_LEAST) {
            self.pack(cols, node_of);
        }
    }

    fn memory_bytes(&self) -> usize {
        (self.rows.capacity() + self.row_len.capacity() + self.heads.capacity()) * size_of::<u32>()
            + self.pool.memory_bytes()
    }
}

/// Calls `f(b, band b, out[b])` for every band of a level (`out` has an entry per band): on
/// rayon's threads with feature `rayon`. The bands' lists and rows are their own; what they
/// write elsewhere goes through [`PerSlot::store`] at slots no other band holds.
fn for_each_band<S: Scalar, O: Send>(
    bands: &mut [Band<S>],
    out: &mut [O],
    f: impl Fn(usize, &mut Band<S>, &mut O) + Sync,
) {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        (bands.par_iter_mut().zip(out))
            .enumerate()
            .for_each(|(b, (band, out))| f(b, band, out));
    }
    #[cfg(not(feature = "rayon"))]
    for (b, (band, out)) in bands.iter_mut().zip(out).enumerate() {
        f(b, band, out);
    }
}

/// `fit` plus a relative margin (infinite stays infinite): if `max - min <= fit` in floating
/// point, the exact difference is at most this.
fn reach_of<S: Scalar>(fit: S) -> S {
    fit + fit * S::RELATIVE_SLACK
}

/// Where an element is filed: its level and cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) level: usize,
    pub(crate) cx: u32,
    pub(crate) cy: u32,
}

/// The elements (in the shared slot table) and the levels they are filed in.
#[derive(Clone, Debug)]
pub(crate) struct Leveled<S, T> {
    /// The world declared; the levels' cells lie over its part within ±MAX/4.
    pub(crate) world: Aabb<S>,
    /// Finest first; each element goes to the first level it fits.
    pub(crate) levels: Vec<Level<S>>,
    /// Per slot: the node that files it, in the pool of its cell's band.
    pub(crate) node_of: PerSlot,
    /// Per slot: the index of its cell (row-major) in its level.
    pub(crate) home: PerSlot,
    pub(crate) slots: Slots<S, T>,
    /// `maintain`'s elements leaving their band, one list per band, kept from one call to
    /// the next so that a warm `maintain` allocates nothing.
    leaving: Vec<Vec<Leaving<S>>>,
}

/// An element that `maintain` takes out of its band for another: its slot, its corner and
/// the cell it goes to.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leaving<S> {
    slot: u32,
    corner: Point<S>,
    cx: u32,
    cy: u32,
}

impl<S: Scalar, T> Leveled<S, T> {
    /// An empty structure over `world` with the given levels (finest first, at most
    /// [`MAX_LEVELS`]).
    pub(crate) fn new(world: Aabb<S>, levels: Vec<Level<S>>) -> Self {
        debug_assert!(!levels.is_empty() && levels.len() <= MAX_LEVELS);
        Self {
            world,
            levels,
            node_of: PerSlot::default(),
            home: PerSlot::default(),
            slots: Slots::default(),
            leaving: Vec::new(),
        }
    }

    /// Reserves room for `additional` more elements.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.node_of.reserve(additional);
        self.home.reserve(additional);
    }

    /// Where a (valid) box is filed ([`mutate::place`]).
    #[inline]
    pub(crate) fn place(&self, b: &Aabb<S>) -> Option<Place> {
        mutate::place(&self.levels, b)
    }

    /// Removes every element; every handle given out so far becomes stale.
    pub(crate) fn clear(&mut self) {
        self.levels.iter_mut().for_each(Level::clear);
        self.node_of.clear();
        self.home.clear();
        self.slots.clear();
    }

    /// Re-files the elements whose corner left their cell ([`Leveled::refile`]), then, band
    /// by band (on rayon's threads with feature `rayon`), releases the rows left empty and
    /// lays the band's lists out in row and cell order once a quarter of its nodes moved
    /// since the last time.
    pub(crate) fn maintain(&mut self) {
        let node_of = &self.node_of;
        for level in &mut self.levels {
            level.refile(node_of, &self.home, &mut self.leaving);
            let cols = level.lattice.cols;
            // One unit per band: this pass has nothing to hand back.
            let mut nothing = vec![(); level.bands.len()];
            for_each_band(&mut level.bands, &mut nothing, |_, band, ()| {
                band.release_empty_rows();
                let relinked = band.pool.relinked();
                if relinked > 0 && relinked * PACK_SHARE >= band.pool.in_use() {
                    band.pack(cols, node_of);
                }
            });
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.node_of.memory_bytes()
            + self.home.memory_bytes()
            + self.levels.capacity() * size_of::<Level<S>>()
            + self.levels.iter().map(Level::memory_bytes).sum::<usize>()
            + self.leaving.capacity() * size_of::<Vec<Leaving<S>>>()
            + (self.leaving.iter())
                .map(|l| l.capacity() * size_of::<Leaving<S>>())
                .sum::<usize>()
    }

    /// Every band's pool, level by level (for tests that count nodes).
    #[cfg(test)]
    pub(crate) fn pools(&self) -> impl Iterator<Item = &ListPool<Point<S>>> {
        self.levels
            .iter()
            .flat_map(|level| level.bands.iter().map(|band| &band.pool))
    }
}

/// A grid that is a [`Leveled`] engine under a name of its own
/// ([`PointGrid`](crate::PointGrid), [`HierarchicalGrid`](crate::HierarchicalGrid)): it keeps
/// the contract, and runs the parallel pair pass, as its engine does.
pub(crate) trait OnLeveled {
    type S: Scalar;
    type T;

    /// The engine.
    fn leveled(&self) -> &Leveled<Self::S, Self::T>;

    /// The engine, mutably.
    fn leveled_mut(&mut self) -> &mut Leveled<Self::S, Self::T>;
}

/// A grid that is the engine under a name of its own (the engine in its field `inner`): its
/// [`OnLeveled`] impl, its public traits (with the docs of its `maintain`) and its byte form's
/// public methods.
macro_rules! leveled_grid {
    ($grid:ident) => {
        /// The grid is its [`Leveled`](crate::grid::leveled::Leveled) engine.
        impl<S: $crate::Scalar, T> $crate::grid::leveled::OnLeveled for $grid<S, T> {
            type S = S;
            type T = T;

            #[inline]
            fn leveled(&self) -> &$crate::grid::leveled::Leveled<S, T> {
                &self.inner
            }

            #[inline]
            fn leveled_mut(&mut self) -> &mut $crate::grid::leveled::Leveled<S, T> {
                &mut self.inner
            }
        }

        $crate::contract::spatial_index!(
            $grid,
            maintain {
                /// Releases the rows of cells left empty and, if any list changed since the
                /// last pack, lays the lists out in memory in level, row and cell order
                /// (O(entries), in place, no allocation), so that the next
                /// [`for_each_pair`](crate::SpatialQuery::for_each_pair) and updates read them
                /// sequentially.
            }
        );

        $crate::bytes::byte_form!($grid);
    };
}
pub(crate) use leveled_grid;

/// What a grid on the engine holds: the engine's slot table.
impl<G: OnLeveled> Holds<G::S, G::T> for G {
    type Table = Slots<G::S, G::T>;

    #[inline]
    fn table(&self) -> &Self::Table {
        &self.leveled().slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.leveled().memory_bytes()
    }
}

/// A grid on the engine searches, pairs, shows and checks itself as its engine does.
impl<G: OnLeveled> Through for G {
    type S = G::S;
    type T = G::T;
    type Engine<'a>
        = &'a Leveled<G::S, G::T>
    where
        Self: 'a;

    #[inline]
    fn engine(&self) -> &Leveled<G::S, G::T> {
        self.leveled()
    }
}

/// Parts: bands of each level's rows ([`Leveled::pair_parts`]).
#[cfg(feature = "rayon")]
impl<G> crate::par::PairParts<G::S, G::T> for G
where
    G: OnLeveled + crate::SpatialQuery<G::S, G::T>,
{
    type Part = (usize, core::ops::Range<u32>);
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>, _: &mut ()) {
        self.leveled().pair_parts(target, parts);
    }

    fn pairs_of_part<F>(&self, (i, rows): &Self::Part, visit: &mut F) -> core::ops::ControlFlow<()>
    where
        F: FnMut(
            crate::Item<'_, G::S, G::T>,
            crate::Item<'_, G::S, G::T>,
        ) -> core::ops::ControlFlow<()>,
    {
        self.leveled().pairs_in_rows(*i, rows.clone(), visit)
    }
}

/// The frame update in parallel parts: [`Leveled::par_update_all`].
#[cfg(feature = "rayon")]
impl<G: OnLeveled> crate::par::UpdateParts<G::S, G::T> for G {
    fn update_in_parts<F: crate::par::MoveFn<G::S, G::T>>(&mut self, f: F) -> Result<(), Error>
    where
        G::T: Send,
    {
        self.leveled_mut().par_update_all(f)
    }
}

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
use crate::base::pool::{Link, ListPool};
use crate::base::slots::Slots;
use crate::{Aabb, Error, Point, Scalar};

use super::lattice::{Lattice, bulk_extent, cell_for_count, extent_of, magnitude, within_quarter};
use crate::contract::{Holds, Through};

mod bytes;
mod mutate;
mod pairs;
mod query;
mod regions;
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
    /// Per row: the offset of its `cols` heads in `heads`, or `NIL` if it has none.
    rows: Vec<u32>,
    /// Per row: the elements filed in it.
    row_len: Vec<u32>,
    /// The heads of the allocated rows' cells, `cols` per row; released rows are chained
    /// through their first head.
    heads: Vec<u32>,
    /// The first released row of `heads`, or `NIL`.
    free_row: u32,
    /// Elements filed in this level.
    pub(crate) len: usize,
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
            rows: vec![NIL; lattice.rows as usize],
            row_len: vec![0; lattice.rows as usize],
            heads: Vec::new(),
            free_row: NIL,
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
        self.heads.len() / self.lattice.cols as usize
    }

    /// The heads of row `cy`, if it has any.
    #[inline]
    pub(crate) fn row_heads(&self, cy: u32) -> Option<&[u32]> {
        let at = self.rows[cy as usize];
        (at != NIL).then(|| &self.heads[at as usize..][..self.lattice.cols as usize])
    }

    /// The head of cell `(cx, cy)` (`NIL` when empty).
    #[inline]
    pub(crate) fn head(&self, cx: u32, cy: u32) -> u32 {
        match self.rows[cy as usize] {
            NIL => NIL,
            at => self.heads[at as usize + cx as usize],
        }
    }

    /// The head of cell `(cx, cy)`, to link or unlink; allocates its row if it has none.
    #[inline]
    fn head_mut(&mut self, cx: u32, cy: u32) -> &mut u32 {
        let row = cy as usize;
        if self.rows[row] == NIL {
            self.rows[row] = self.allocate_row();
        }
        &mut self.heads[self.rows[row] as usize + cx as usize]
    }

    /// A row of empty heads: a released one, or a new one at the end of `heads`.
    fn allocate_row(&mut self) -> u32 {
        let cols = self.lattice.cols as usize;
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
        for cy in 0..self.rows.len() {
            let at = self.rows[cy];
            if at != NIL && self.row_len[cy] == 0 {
                self.heads[at as usize] = self.free_row;
                self.free_row = at;
                self.rows[cy] = NIL;
            }
        }
    }

    /// Forgets every element; keeps the memory.
    fn clear(&mut self) {
        self.overhang = S::ZERO;
        self.rows.fill(NIL);
        self.row_len.fill(0);
        self.heads.clear();
        self.free_row = NIL;
        self.len = 0;
    }

    /// Presents the head of every allocated cell, row by row (for `ListPool::compact`).
    fn for_each_head(&mut self, visit: &mut dyn FnMut(&mut u32)) {
        let cols = self.lattice.cols as usize;
        for &at in &self.rows {
            if at != NIL {
                self.heads[at as usize..][..cols]
                    .iter_mut()
                    .for_each(&mut *visit);
            }
        }
    }

    fn memory_bytes(&self) -> usize {
        (self.rows.capacity() + self.row_len.capacity() + self.heads.capacity()) * size_of::<u32>()
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
    pub(crate) pool: ListPool<Point<S>>,
    /// Per slot: the node that files it.
    pub(crate) node_of: Vec<u32>,
    /// Per slot: the index of its cell (row-major) in its level.
    pub(crate) home: Vec<u32>,
    pub(crate) slots: Slots<S, T>,
}

impl<S: Scalar, T> Leveled<S, T> {
    /// An empty structure over `world` with the given levels (finest first, at most
    /// [`MAX_LEVELS`]).
    pub(crate) fn new(world: Aabb<S>, levels: Vec<Level<S>>) -> Self {
        debug_assert!(!levels.is_empty() && levels.len() <= MAX_LEVELS);
        Self {
            world,
            levels,
            pool: ListPool::default(),
            node_of: Vec::new(),
            home: Vec::new(),
            slots: Slots::default(),
        }
    }

    /// Reserves room for `additional` more elements.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.pool.reserve(additional);
        self.node_of.reserve(additional);
        self.home.reserve(additional);
    }

    /// Where a (valid) box is filed ([`mutate::place`]).
    #[inline]
    pub(crate) fn place(&self, b: &Aabb<S>) -> Option<Place> {
        mutate::place(&self.levels, b)
    }

    /// Lays the lists out in level, row and cell order, and re-points `node_of`.
    fn pack(&mut self) {
        let levels = &mut self.levels;
        self.pool.compact(|visit| {
            for level in levels.iter_mut() {
                level.for_each_head(visit);
            }
        });
        let in_use = self.pool.in_use();
        for (at, node) in self.pool.nodes()[..in_use].iter().enumerate() {
            self.node_of[node.item as usize] = at as u32;
        }
    }

    /// Removes every element; every handle given out so far becomes stale.
    pub(crate) fn clear(&mut self) {
        self.levels.iter_mut().for_each(Level::clear);
        self.pool.clear();
        self.node_of.clear();
        self.home.clear();
        self.slots.clear();
    }

    /// Re-files the elements whose corner left their cell, releases empty rows, and lays the
    /// lists out in traversal order once a quarter of the nodes moved since the last time.
    pub(crate) fn maintain(&mut self) {
        for i in 0..self.levels.len() {
            self.refile(i);
            self.levels[i].release_empty_rows();
        }
        let relinked = self.pool.relinked();
        if relinked > 0 && relinked * PACK_SHARE >= self.pool.in_use() {
            self.pack();
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.pool.memory_bytes()
            + (self.node_of.capacity() + self.home.capacity()) * size_of::<u32>()
            + self.levels.capacity() * size_of::<Level<S>>()
            + self.levels.iter().map(Level::memory_bytes).sum::<usize>()
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

    fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>) {
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

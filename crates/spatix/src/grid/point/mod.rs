//! The point grid (the "uniform size" trick): elements share one upper bound on
//! their size, so each is filed as a single point, in exactly one cell.

use super::lattice::{auto_world, magnitude};
use super::leveled::{Level, Leveled};
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, Writer, corrupt};
use crate::{Aabb, Error, Scalar};

#[cfg(test)]
mod tests;

/// [`PointGrid::auto`]: the bound exceeds the sample's largest half extent by this fraction.
const AUTO_HEADROOM: f64 = 1.0 / 64.0;

/// [`PointGrid::auto`]: cells are at least wide enough for about this many elements each,
/// over the rows the sample spans. Measured on the 1M agents frame (cells of side 8, 12, 16,
/// 24 and 32 at 1 agent per 100 square units): 16, about 2.5 agents a cell, was fastest both
/// for agents of one size and for sizes varying threefold; twice the bound alone gave cells
/// of 9 to 13.
const AUTO_ELEMENTS_PER_CELL: f64 = 2.5;

/// A grid for elements of (roughly) one size: every element's box is at most
/// `2 × max_half_extent` wide and high, so each is filed as one point, the lower-left corner of
/// its box, in exactly one cell, and carries no size in the grid.
///
/// Searches widen their area by the shared bound (a coarse test on the stored points that
/// never misses), then test the true boxes, kept in the slot table, so every result is exact.
/// A box larger than the bound is rejected with [`Error::BoxTooLarge`] rather than silently
/// mis-filed.
///
/// # When to use it
/// Crowds of same-size agents — humans, orcs, particles — moving every frame: no size
/// is stored or tested per element, only a point against the shared bound. An
/// update within the same cell writes only the box and the stored point; the pair pass tests
/// each cell against itself and its four forward neighbours on the packed points and reads a
/// true box only for the few pairs whose points are close. Mix in a few larger elements only
/// through a structure that routes them elsewhere; for sizes that vary a lot use
/// [`HierarchicalGrid`](crate::HierarchicalGrid).
///
/// Elements outside the world are filed in the border cells, so nothing is lost, but a crowd
/// far outside the world piles into few cells and slows down.
///
/// An update writes the box and the stored point; an element whose point leaves its cell
/// stays there (searches widen by how far such points stray, a bounded amount) until
/// [`maintain`](crate::SpatialIndex::maintain) re-files it, so call that once per frame.
///
/// # Complexity
/// With `k` = elements per cell: insert, remove and update O(1); query O(cells under the area
/// widened by the bound · k); for_each_pair O(cells + Σ k² over neighbourhoods); nearest
/// O(cells of the rings searched · k); maintain O(cells + elements).
///
/// # Memory per element
/// The slot table (box, value and generation: 21 bytes for `f32` boxes and `()` values, 28 for
/// `u32` values), one 16-byte list node (next, slot, corner; 24 with `f64`), a 4-byte link
/// from the slot to its node and its 4-byte cell: 45 bytes with `()` values, 52 with `u32`
/// values, plus 4 bytes per cell of the rows in use.
///
/// # Errors
/// [`PointGrid::new`] returns [`Error::InvalidParameter`] for an invalid world or a bound that
/// is negative, NaN or infinite. Insert and update return [`Error::InvalidAabb`] for a NaN,
/// infinite or inverted box, [`Error::BoxTooLarge`] for a box over the bound, and update
/// returns [`Error::StaleHandle`] for a stale handle; nothing changes on error.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Error, Point, PointGrid, SpatialIndex, SpatialQuery};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = PointGrid::new(world, 2.0)?; // boxes up to 4 x 4
/// let orc = grid.insert(Aabb::new(Point::new(5.0, 5.0), Point::new(8.0, 8.0))?, "orc")?;
/// grid.insert(Aabb::new(Point::new(7.0, 7.0), Point::new(9.0, 9.0))?, "elf")?;
/// let dragon = Aabb::new(Point::new(20.0, 20.0), Point::new(60.0, 60.0))?;
/// assert_eq!(grid.insert(dragon, "dragon"), Err(Error::BoxTooLarge));
///
/// let mut pairs = 0;
/// let _ = grid.for_each_pair(|_, _| { pairs += 1; ControlFlow::Continue(()) });
/// assert_eq!(pairs, 1);
///
/// grid.update(orc, Aabb::new(Point::new(50.0, 50.0), Point::new(52.0, 52.0))?)?;
/// grid.check_invariants()?;
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`UniformGrid`](crate::UniformGrid) stores each element's box in every cell it overlaps and
/// needs no bound; [`HierarchicalGrid`](crate::HierarchicalGrid) is the same filing by point
/// over several levels, one per size class, with no bound at all.
#[derive(Clone, Debug)]
pub struct PointGrid<S, T> {
    inner: Leveled<S, T>,
    max_half_extent: S,
}

impl<S: Scalar, T> PointGrid<S, T> {
    /// An empty grid over `world` for boxes at most `2 × max_half_extent` wide and high, with
    /// cells twice that side (or larger, so that there are at most 4096 along the world's
    /// longer side).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box or `max_half_extent` is
    /// negative, NaN or so large that twice it is infinite.
    ///
    /// ```
    /// use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1000.0, 1000.0))?;
    /// let grid = PointGrid::<f64, ()>::new(world, 3.0)?;
    /// assert!(grid.cell_size() >= 6.0);
    /// assert!(PointGrid::<f64, ()>::new(world, -1.0).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, max_half_extent: S) -> Result<Self, Error> {
        Self::with_floor(world, max_half_extent, 0.0)
    }

    /// As [`PointGrid::new`], with cells at least `floor` wide.
    fn with_floor(world: Aabb<S>, max_half_extent: S, floor: f64) -> Result<Self, Error> {
        let fit = Self::fit(max_half_extent)?;
        world.valid_world()?;
        Self::build(world, max_half_extent, Level::pick_cell(&world, fit, floor))
    }

    /// An empty grid over `world` for boxes at most `2 × max_half_extent` wide and high, with
    /// square cells of side `cell_size`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] as for [`PointGrid::new`], and if `cell_size` is not finite,
    /// is less than `2 × max_half_extent` (plus a relative margin of a few hundred ulps at the
    /// world's magnitude), or gives more than 2^28 cells.
    ///
    /// ```
    /// use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 50.0))?;
    /// let grid = PointGrid::<f32, ()>::with_cell_size(world, 1.0, 10.0)?;
    /// assert_eq!(grid.dims(), (10, 5));
    /// assert!(PointGrid::<f32, ()>::with_cell_size(world, 1.0, 1.5).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_cell_size(world: Aabb<S>, max_half_extent: S, cell_size: S) -> Result<Self, Error> {
        Self::fit(max_half_extent)?;
        Self::build(world, max_half_extent, cell_size)
    }

    /// An empty grid over `world` whose bound is the largest half extent in `sample`
    /// (typically the initial boxes themselves) plus headroom for rounding (1/64 of it, and a
    /// few ulps at the world's magnitude: a box that moves is recomputed, and its width may
    /// round differently), with cells as [`PointGrid::new`] picks them but large enough that
    /// the rows the sample spans hold about 2.5 elements of the sample per cell (the fastest
    /// on the agents frame; and small boxes spread thinly over a large world get cells wider
    /// than twice the bound rather than a cell each of their size: memory in proportion to
    /// the elements, not to the world), and room reserved for the sample. Invalid boxes in the sample are ignored; an empty sample
    /// gives a grid for points.
    ///
    /// # Errors
    /// As [`PointGrid::new`].
    ///
    /// ```
    /// use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let sample = [Aabb::new(Point::new(1.0, 1.0), Point::new(3.0, 6.0))?];
    /// let bound = PointGrid::<f32, ()>::auto(world, &sample)?.max_half_extent();
    /// assert!(bound >= 2.5 && bound < 2.6);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto(world: Aabb<S>, sample: &[Aabb<S>]) -> Result<Self, Error> {
        Self::auto_sampled(world, sample, 0)
    }

    /// As [`auto`](Self::auto), when `sample` is a random sample of the `total` elements the
    /// grid will hold (for example while streaming a file too large to keep in memory): the
    /// bound still comes from the sample's largest box, but the floor of about 2.5 elements
    /// per cell counts `total` elements (or the sample's, if more), and room is reserved for
    /// that many.
    ///
    /// # Errors
    /// As [`PointGrid::new`].
    ///
    /// ```
    /// use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1000.0, 1000.0))?;
    /// let dust: Vec<_> = (0..100) // from y = 0 to y = 1000
    ///     .map(|i| Aabb::point(Point::new((i * 10) as f64, (i * 1000 / 99) as f64)))
    ///     .collect::<Result<_, _>>()?;
    /// // 100 sampled points standing for 10,000: 64 x 64 cells (about 2.5 points each), not
    /// // 7 x 7.
    /// let grid = PointGrid::<f64, u64>::auto_sampled(world, &dust, 10_000)?;
    /// assert_eq!(grid.dims(), (64, 64));
    /// assert_eq!(PointGrid::<f64, u64>::auto(world, &dust)?.dims(), (7, 7));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto_sampled(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error> {
        let world = auto_world(&world, sample);
        let (largest, sampled) = sample
            .iter()
            .filter(|b| b.is_valid())
            .map(|b| (b.max.x - b.min.x).max_s(b.max.y - b.min.y))
            .fold((S::ZERO, 0), |(largest, n), e| (largest.max_s(e), n + 1));
        // A box wider than MAX (its width overflows) cannot be held; size for the rest, up to
        // boxes MAX wide (a bound of MAX/2, whose double is finite).
        let largest = largest.min_s(S::MAX);
        let headroom = S::from_f64(AUTO_HEADROOM);
        let half = largest * S::HALF;
        let ulps = magnitude(&world) * S::RELATIVE_SLACK * headroom;
        let bound = (half + half * headroom + ulps).min_s(S::MAX * S::HALF);
        let count = total.max(sampled);
        let floor = Level::sparse_floor(&world, sample, count, AUTO_ELEMENTS_PER_CELL);
        let mut grid = Self::with_floor(world, bound, floor)?;
        grid.reserve(count);
        Ok(grid)
    }

    /// `2 × max_half_extent`, the largest width and height accepted.
    fn fit(max_half_extent: S) -> Result<S, Error> {
        let fit = max_half_extent + max_half_extent;
        if max_half_extent >= S::ZERO && fit.is_finite() {
            Ok(fit)
        } else {
            Err(Error::InvalidParameter(
                "max_half_extent must be finite and not negative",
            ))
        }
    }

    fn build(world: Aabb<S>, max_half_extent: S, cell_size: S) -> Result<Self, Error> {
        let level = Level::new(world, cell_size, Self::fit(max_half_extent)?)?;
        Ok(Self {
            inner: Leveled::new(world, vec![level]),
            max_half_extent,
        })
    }

    /// Reserves room for `additional` more elements, so that inserting them does not
    /// allocate (except for rows of cells used for the first time).
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// let mut grid = PointGrid::<f32, u32>::new(world, 0.5)?;
    /// grid.reserve(1000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.inner.reserve(additional);
    }

    /// The bound on every element's half width and half height.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(PointGrid::<f32, ()>::new(world, 0.5)?.max_half_extent(), 0.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn max_half_extent(&self) -> S {
        self.max_half_extent
    }

    /// Whether [`insert`](crate::SpatialIndex::insert) would accept the box: it is valid and
    /// `max - min <= 2 × max_half_extent` on each axis (computed in `S`).
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// let grid = PointGrid::<f32, ()>::new(world, 0.5)?;
    /// assert!(grid.fits(&Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?));
    /// assert!(!grid.fits(&Aabb::new(Point::new(1.0, 1.0), Point::new(2.5, 2.0))?));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn fits(&self, aabb: &Aabb<S>) -> bool {
        aabb.is_valid() && self.inner.place(aabb).is_some()
    }

    /// The world the grid was declared over.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(PointGrid::<f32, ()>::new(world, 0.5)?.world(), world);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn world(&self) -> Aabb<S> {
        self.inner.world
    }

    /// The side of a cell.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(PointGrid::<f32, ()>::with_cell_size(world, 0.5, 2.5)?.cell_size(), 2.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn cell_size(&self) -> S {
        self.inner.levels[0].lattice.cell_size
    }

    /// Columns and rows.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, PointGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 4.0))?;
    /// assert_eq!(PointGrid::<f32, ()>::with_cell_size(world, 1.0, 3.0)?.dims(), (4, 2));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn dims(&self) -> (u32, u32) {
        let l = &self.inner.levels[0].lattice;
        (l.cols, l.rows)
    }
}

crate::grid::leveled::leveled_grid!(PointGrid);

/// The byte form: the bound on half extents, the world and the level, then the slot table.
impl<S: Scalar, T> Refile for PointGrid<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"points\0\0";

    fn write_config(&self, w: &mut Writer) {
        w.scalar(self.max_half_extent);
        self.inner.write_levels(w);
    }

    fn read_config(r: &mut Reader<'_>) -> Result<Self, Error> {
        let max_half_extent: S = r.scalar("the bound on half extents")?;
        if !(max_half_extent >= S::ZERO && (max_half_extent + max_half_extent).is_finite()) {
            return Err(corrupt("the bound on half extents"));
        }
        Ok(Self {
            inner: Leveled::read_levels(r)?,
            max_half_extent,
        })
    }

    fn slots(&self) -> &Slots<S, T> {
        &self.inner.slots
    }

    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        if let Some(slot) = slots.live_slots().find(|&s| !self.fits(slots.aabb(s))) {
            return Err(corrupt(format!("slot {slot}: a box larger than the bound")));
        }
        self.inner.file_all(slots, r)
    }

    fn check(&self) -> Result<(), Error> {
        crate::SpatialQuery::check_invariants(self)
    }
}

impl<S, T> crate::Listed for PointGrid<S, T> {
    const CLI: &'static str = "point-grid";
    const ABOUT: &'static str = "`PointGrid`: each element as one point, under the largest half extent of the initial boxes (larger boxes are refused).";
}

/// [`PointGrid::auto_sampled`].
impl<S: Scalar, T> crate::ListedIndex<S, T> for PointGrid<S, T> {
    const BOUNDED: bool = true;

    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, crate::Error> {
        Self::auto_sampled(world, sample, total)
    }

    fn with_bound(world: Aabb<S>, half_extent: S, _total: usize) -> Result<Self, crate::Error> {
        Self::new(world, half_extent)
    }
}

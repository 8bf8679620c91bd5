//! The hierarchical grid (a hierarchy of grids by element size): a few levels of
//! grids whose cell sizes grow by a constant factor; each element is filed once, as a point,
//! in the level whose cells fit its size.

use super::lattice::{Lattice, auto_world, extent_of, within_quarter};
use super::leveled::{Level, Leveled, MAX_LEVELS};
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, Writer};
use crate::{Aabb, Error, Handle, Scalar};

#[cfg(test)]
mod tests;

/// The factor between the cell sizes of consecutive levels, unless told otherwise.
const DEFAULT_FACTOR: u32 = 4;

/// [`HierarchicalGrid::auto`]: the share of the sample the finest level should hold (its
/// cells are picked as a [`PointGrid`](crate::PointGrid)'s for the extent below which this
/// share of the boxes fall).
const AUTO_QUANTILE: f64 = 0.98;

/// [`HierarchicalGrid::auto`]: the finest cell is at least wide enough for about this many
/// elements per cell over the rows the sample spans (at most about as many cells in use as
/// elements).
const AUTO_ELEMENTS_PER_CELL: f64 = 1.0;

/// Levels of grids over one world, the finest first, each with cells `factor` times wider
/// than the last; an element is filed once, in the first level whose cells are at least twice
/// as wide and high as its box, as one point (the lower-left corner of its box) in one cell.
/// The last level is a single cell that takes whatever is larger. A dragon among hobbits is
/// one entry in a coarse level, not hundreds in fine cells.
///
/// Within a level an element sticks out of its cell by at most half a cell on the high sides
/// (a little more while it moves, until [`maintain`](crate::SpatialIndex::maintain) re-files
/// it), so searches widen by that on each level, test the stored points, and read true boxes
/// only where the points cannot decide. Rows of cells are allocated when first used and released
/// by [`maintain`](crate::SpatialIndex::maintain) once empty, so empty levels and empty rows
/// cost (almost) nothing.
///
/// Pairs: within a level, each cell against itself and its four forward neighbours (east and
/// the three above); across levels, each element of a coarser level searches the finer levels
/// around its box, so each pair is found once, from its larger element.
///
/// # When to use it
/// Elements whose sizes differ by orders of magnitude — agents, vehicles, buildings — in
/// one index, with no bound to declare. Every level works like a
/// [`PointGrid`](crate::PointGrid) tuned to its size class.
///
/// # Complexity
/// With `L` = levels holding elements and `k` = elements per cell: insert, remove and update
/// O(L) (finding the level; moves are re-filed by `maintain`);
/// query O(Σ over levels of cells under the area widened by a cell · k); for_each_pair
/// O(cells in use + Σ k² + Σ over elements of the cells of finer levels under their box);
/// nearest O(rings searched · k), best first across levels; maintain O(rows + elements).
///
/// # Memory per element
/// As [`PointGrid`](crate::PointGrid): the slot table (21 bytes for `f32` boxes and `()`
/// values, 28 with `u32` values), a 16-byte list node (24 with `f64`), a 4-byte link to it and
/// a 4-byte cell: 45 bytes with `()` values, 52 with `u32` values, whatever the element's
/// size, plus 4 bytes per cell of the rows in use and 8 bytes per row of every level.
///
/// # Errors
/// [`HierarchicalGrid::new`] returns [`Error::InvalidParameter`] for an invalid world, a cell
/// size that is not finite and positive, a factor outside `2..=16`, or a finest level of more
/// than 2^28 cells. Insert and update return [`Error::InvalidAabb`] for a NaN, infinite or
/// inverted box and update returns [`Error::StaleHandle`] for a stale handle; nothing changes
/// on error.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, HierarchicalGrid, Point, SpatialIndex, SpatialQuery};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
/// let mut grid = HierarchicalGrid::new(world, 8.0)?; // cells of 8, 32, 128, 512, then one
/// let hobbit = grid.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(12.0, 12.0))?, "hobbit")?;
/// let dragon = grid.insert(Aabb::new(Point::new(0.0, 0.0), Point::new(90.0, 60.0))?, "dragon")?;
/// assert_eq!(grid.level_of(hobbit), Some(0)); // up to 4 x 4 in cells of 8
/// assert_eq!(grid.level_of(dragon), Some(3)); // up to 256 x 256 in cells of 512
///
/// let mut pairs = Vec::new();
/// let _ = grid.for_each_pair(|a, b| { pairs.push((*a.value, *b.value)); ControlFlow::Continue(()) });
/// assert_eq!(pairs, [("dragon", "hobbit")]);
/// grid.check_invariants()?;
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`PointGrid`](crate::PointGrid) is the single-level version, for one size class;
/// [`UniformGrid`](crate::UniformGrid) files boxes in every cell they overlap, which suits
/// similar sizes only; [`Quadtree`](crate::Quadtree) adapts to uneven density.
#[derive(Clone, Debug)]
pub struct HierarchicalGrid<S, T> {
    inner: Leveled<S, T>,
}

impl<S: Scalar, T> HierarchicalGrid<S, T> {
    /// An empty hierarchy over `world` whose finest cells have side `finest_cell`, each level
    /// 4 times coarser than the last, up to the first level whose cell
    /// covers the world; the last level is one cell.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box, `finest_cell` is not finite
    /// and positive, or the finest level would have more than 2^28 cells.
    ///
    /// ```
    /// use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1000.0, 1000.0))?;
    /// let grid = HierarchicalGrid::<f64, ()>::new(world, 10.0)?;
    /// assert_eq!(grid.levels(), 5); // 10, 40, 160, 640, then the whole world
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, finest_cell: S) -> Result<Self, Error> {
        Self::with_factor(world, finest_cell, DEFAULT_FACTOR)
    }

    /// As [`HierarchicalGrid::new`], with cell sizes growing by `factor` (2 to 16) from one
    /// level to the next.
    ///
    /// # Errors
    /// As [`HierarchicalGrid::new`], and for a factor outside `2..=16`.
    ///
    /// ```
    /// use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
    /// let grid = HierarchicalGrid::<f32, ()>::with_factor(world, 1.0, 2)?;
    /// assert_eq!(grid.levels(), 7); // 1, 2, 4, 8, 16, 32, then one cell
    /// assert!(HierarchicalGrid::<f32, ()>::with_factor(world, 1.0, 1).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_factor(world: Aabb<S>, finest_cell: S, factor: u32) -> Result<Self, Error> {
        if !(2..=16).contains(&factor) {
            return Err(Error::InvalidParameter(
                "the factor between levels must be 2 to 16",
            ));
        }
        if !(finest_cell.is_finite() && finest_cell > S::ZERO) {
            return Err(Error::InvalidParameter(
                "the finest cell size must be finite and positive",
            ));
        }
        world.valid_world()?;
        // The levels' cells lie over the world's part within ±MAX/4.
        let (width, height) = extent_of(&within_quarter(&world));
        let side = width.max(height);
        let mut levels = Vec::new();
        let mut cell = finest_cell.to_f64();
        while cell < side && levels.len() + 1 < MAX_LEVELS {
            let c = S::from_f64(cell);
            match Level::new(world, c, c * S::HALF) {
                Ok(level) => levels.push(level),
                // Cells too fine for the precision of coordinates this far from the origin:
                // start at a coarser level.
                Err(_) if levels.is_empty() && Lattice::new(within_quarter(&world), c).is_ok() => {}
                Err(e) => return Err(e),
            }
            cell *= f64::from(factor);
        }
        if cell < side {
            return Err(Error::InvalidParameter(
                "too many levels: use a larger finest cell or factor",
            ));
        }
        // The catch-all: one cell over the whole world (a little wider where the world's
        // side rounded to `S` falls short of it: the world would take two cells).
        let top = S::from_f64(side.max(finest_cell.to_f64()));
        let top = if top.to_f64() < side {
            top + top * S::RELATIVE_SLACK
        } else {
            top
        };
        levels.push(Level::new(world, top, S::INFINITY)?);
        Ok(Self {
            inner: Leveled::new(world, levels),
        })
    }

    /// An empty hierarchy over `world` whose finest cells are twice the size below which 98%
    /// of the `sample`'s boxes fall (their larger side; plus rounding margins at the world's
    /// magnitude), so that level holds the common elements, with room reserved for the
    /// sample. The finest cells are also large enough that there are at most 4096 along the
    /// world's longer side and that the rows the sample spans hold about one cell per element
    /// of the sample (small boxes spread thinly over a large world get cells wider than twice
    /// their size rather than a cell each of their size: memory in proportion to the elements,
    /// not to the world). Invalid boxes are ignored; an empty sample gives 4096 cells along
    /// the world's longer side at the finest level.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box.
    ///
    /// ```
    /// use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let boxes: Vec<_> = (0..100)
    ///     .map(|i| Aabb::new(Point::new(i as f32, 0.0), Point::new(i as f32 + 4.0, 3.0)))
    ///     .collect::<Result<_, _>>()?;
    /// let grid = HierarchicalGrid::<f32, usize>::auto(world, &boxes)?;
    /// let finest = grid.cell_size(0).unwrap();
    /// assert!(finest >= 8.0 && finest < 8.5); // twice 4, plus rounding margins at 1000 in f32
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto(world: Aabb<S>, sample: &[Aabb<S>]) -> Result<Self, Error> {
        Self::auto_sampled(world, sample, 0)
    }

    /// As [`auto`](Self::auto), when `sample` is a random sample of the `total` elements the
    /// hierarchy will hold (for example while streaming a file too large to keep in memory):
    /// the finest cells still come from the sample's sizes, but the floor of about one cell per
    /// element counts `total` elements (or the sample's, if more), and room is reserved for
    /// that many.
    ///
    /// # Errors
    /// As [`auto`](Self::auto).
    ///
    /// ```
    /// use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1000.0, 1000.0))?;
    /// let dust: Vec<_> = (0..100) // a 10 x 10 lattice over the world
    ///     .map(|i| Aabb::point(Point::new((i % 10 * 1000 / 9) as f64, (i / 10 * 1000 / 9) as f64)))
    ///     .collect::<Result<_, _>>()?;
    /// // 100 sampled points standing for 10,000: finest cells of 10, not 100.
    /// let grid = HierarchicalGrid::<f64, u64>::auto_sampled(world, &dust, 10_000)?;
    /// assert_eq!(grid.cell_size(0), Some(10.0));
    /// assert_eq!(HierarchicalGrid::<f64, u64>::auto(world, &dust)?.cell_size(0), Some(100.0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto_sampled(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error> {
        let world = auto_world(&world, sample);
        world.valid_world()?;
        let mut extents: Vec<f64> = sample
            .iter()
            .filter(|b| b.is_valid())
            .map(|b| {
                let (w, h) = extent_of(b);
                w.max(h)
            })
            .collect();
        let typical = if extents.is_empty() {
            0.0
        } else {
            let at = ((extents.len() - 1) as f64 * AUTO_QUANTILE) as usize;
            // No finer than the world needs: boxes wider than it (or than MAX) go to coarser
            // levels anyway.
            let (width, height) = extent_of(&world);
            extents
                .select_nth_unstable_by(at, f64::total_cmp)
                .1
                .min(width.max(height) * 0.25)
        };
        let count = total.max(extents.len());
        let floor = Level::sparse_floor(&world, sample, count, AUTO_ELEMENTS_PER_CELL);
        let cell = Level::pick_cell(&world, S::from_f64(typical), floor);
        let mut grid = Self::new(world, cell)?;
        grid.inner.reserve(count);
        Ok(grid)
    }

    /// Reserves room for `additional` more elements, so that inserting them does not
    /// allocate (except for rows of cells used for the first time).
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// let mut grid = HierarchicalGrid::<f32, u32>::new(world, 1.0)?;
    /// grid.reserve(1000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.inner.reserve(additional);
    }

    /// The world the hierarchy was declared over.
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(HierarchicalGrid::<f32, ()>::new(world, 1.0)?.world(), world);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn world(&self) -> Aabb<S> {
        self.inner.world
    }

    /// Number of levels, the catch-all single cell included.
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(HierarchicalGrid::<f32, ()>::new(world, 20.0)?.levels(), 1);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn levels(&self) -> usize {
        self.inner.levels.len()
    }

    /// The cell side of a level (`None` past the last).
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let grid = HierarchicalGrid::<f32, ()>::new(world, 2.0)?;
    /// assert_eq!(grid.cell_size(1), Some(8.0));
    /// assert_eq!(grid.cell_size(3), Some(100.0)); // the catch-all
    /// assert_eq!(grid.cell_size(4), None);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn cell_size(&self, level: usize) -> Option<S> {
        self.inner.levels.get(level).map(|l| l.lattice.cell_size)
    }

    /// The number of elements filed in a level (`None` past the last).
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = HierarchicalGrid::new(world, 2.0)?;
    /// grid.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(6.0, 2.0))?, ())?;
    /// assert_eq!((grid.level_len(1), grid.level_len(2)), (Some(0), Some(1)));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn level_len(&self, level: usize) -> Option<usize> {
        self.inner.levels.get(level).map(|l| l.len)
    }

    /// The level an element is filed in, or `None` for a stale handle.
    ///
    /// ```
    /// # use spatix::{Aabb, HierarchicalGrid, Point, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = HierarchicalGrid::new(world, 2.0)?;
    /// let h = grid.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(40.0, 2.0))?, ())?;
    /// assert_eq!(grid.level_of(h), Some(3));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn level_of(&self, handle: Handle) -> Option<usize> {
        let slot = self.inner.slots.slot_of(handle)?;
        Some(self.inner.filed(slot).level)
    }
}

crate::grid::leveled::leveled_grid!(HierarchicalGrid);

/// The byte form: the world and the levels, then the slot table.
impl<S: Scalar, T> Refile for HierarchicalGrid<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"hgrid\0\0\0";

    fn write_config(&self, w: &mut Writer) {
        self.inner.write_levels(w);
    }

    fn read_config(r: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(Self {
            inner: Leveled::read_levels(r)?,
        })
    }

    fn slots(&self) -> &Slots<S, T> {
        &self.inner.slots
    }

    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        self.inner.file_all(slots, r)
    }

    fn check(&self) -> Result<(), Error> {
        crate::SpatialQuery::check_invariants(self)
    }
}

impl<S, T> crate::Listed for HierarchicalGrid<S, T> {
    const CLI: &'static str = "hierarchical";
    const ABOUT: &'static str =
        "`HierarchicalGrid`: levels of grids, each element in the level that fits its size.";
}

/// [`HierarchicalGrid::auto_sampled`].
impl<S: Scalar, T> crate::ListedIndex<S, T> for HierarchicalGrid<S, T> {
    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, crate::Error> {
        Self::auto_sampled(world, sample, total)
    }
}

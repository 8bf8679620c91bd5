//! The loose/tight double grid: every element in exactly one loose cell, chosen
//! by its centre; each loose cell carries a box grown to enclose its elements; a coarser
//! tight grid lists, per tight cell, the loose cells whose boxes reach past their own
//! neighbourhood (the others are found by position).

use super::lattice::{CellRange, Lattice, auto_cell, magnitude};
use crate::base::handle::NIL;
use crate::base::pool::ListPool;
use crate::base::slots::Slots;
use crate::contract::Holds;
use crate::{Aabb, Error, Point, Scalar};
use tight::Tight;

mod bands;
mod bytes;
mod mutate;
mod pairs;
mod query;
mod regions;
#[cfg(test)]
mod tests;
mod tight;
mod validate;

/// [`LooseGrid::auto`]: loose cell side as a multiple of the sample's mean box extent.
const AUTO_EXTENT_FACTOR: f64 = 8.0;

/// [`LooseGrid::auto`]: loose cells hold at least about this many elements on average.
const AUTO_PER_CELL: f64 = 2.0;

/// [`LooseGridConfig::new`]: tight cell side, in loose cells.
const TIGHT_PER_LOOSE: f64 = 2.0;

/// [`LooseGridConfig::new`]: reach, in loose cells.
const REACH_PER_LOOSE: f64 = 0.25;

/// Tuning parameters of a [`LooseGrid`].
///
/// # Example
/// ```
/// use spatix::LooseGridConfig;
/// let config = LooseGridConfig::new(16.0f32);
/// assert_eq!((config.tight_cell_size, config.reach), (32.0, 4.0));
/// assert!(config.validate().is_ok());
/// assert!(LooseGridConfig { reach: -1.0, ..config }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LooseGridConfig<S> {
    /// Side of a loose cell. An element is filed in the loose cell holding its centre.
    pub cell_size: S,
    /// Side of a tight cell, normally a small multiple of `cell_size`: coarser tight cells
    /// list more loose cells each, finer ones list each loose cell in more tight cells.
    pub tight_cell_size: S,
    /// How far an element's box may reach past its loose cell's nominal square while it is
    /// moved by the fast path of `update` (which then touches no cell, see [`LooseGrid`]), and
    /// how far a loose cell's box may reach past its square while the cell is found by
    /// position; beyond it the cell's box grows and the cell is listed in the tight grid.
    /// Choose it above the half-size of typical elements plus how far they move per frame,
    /// and below half a cell (regular cells then meet only their eight neighbours).
    pub reach: S,
}

impl<S: Scalar> LooseGridConfig<S> {
    /// Loose cells of side `cell_size`, tight cells twice as wide, and a reach of a quarter
    /// of a loose cell.
    ///
    /// ```
    /// let config = spatix::LooseGridConfig::new(10.0f64);
    /// assert_eq!(config.cell_size, 10.0);
    /// ```
    pub fn new(cell_size: S) -> Self {
        Self {
            cell_size,
            tight_cell_size: cell_size * S::from_f64(TIGHT_PER_LOOSE),
            reach: cell_size * S::from_f64(REACH_PER_LOOSE),
        }
    }

    /// Checks the parameters (the cell sizes are checked against the world when a grid is
    /// built).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `reach` is negative or not finite.
    ///
    /// ```
    /// let mut config = spatix::LooseGridConfig::new(10.0f32);
    /// config.reach = f32::NAN;
    /// assert!(config.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(self.reach.is_finite() && self.reach >= S::ZERO) {
            return Err(Error::InvalidParameter(
                "reach must be finite and non-negative",
            ));
        }
        Ok(())
    }
}

/// The box of a loose cell with no element: it intersects nothing, and the union with any
/// box is that box.
pub(super) fn empty<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(S::INFINITY, S::INFINITY),
        max: Point::new(-S::INFINITY, -S::INFINITY),
    }
}

/// Whether a loose cell's box encloses anything.
#[inline]
pub(super) fn is_empty<S: Scalar>(b: &Aabb<S>) -> bool {
    b.min.x > b.max.x
}

/// `b` grown by `by` on every side.
#[inline]
fn grown<S: Scalar>(b: &Aabb<S>, by: S) -> Aabb<S> {
    Aabb {
        min: Point::new(b.min.x - by, b.min.y - by),
        max: Point::new(b.max.x + by, b.max.y + by),
    }
}

/// Whether a loose cell with box `b` and square `square` is irregular: its box reaches past
/// the square grown by `pad` (then it is listed in the tight grid; a regular cell is found by
/// its position alone).
#[inline]
fn is_irregular<S: Scalar>(pad: S, b: &Aabb<S>, square: &Aabb<S>) -> bool {
    !is_empty(b) && !grown(square, pad).contains(b)
}

/// The box under which a loose cell with box `b` and square `square` is listed in the tight
/// grid: its box united with its square grown by `pad` (which encloses its region whatever
/// the overhang), if it is irregular; regular cells are not listed.
#[inline]
fn listing<S: Scalar>(pad: S, b: &Aabb<S>, square: &Aabb<S>) -> Option<Aabb<S>> {
    is_irregular(pad, b, square).then(|| b.union(&grown(square, pad)))
}

/// The loose/tight double grid: the structure for hundreds of thousands of
/// moving agents.
///
/// Every element is filed in exactly one *loose cell*, the one holding the centre of its box
/// (clamped into the world). A loose cell is an element list plus a box that grows to enclose
/// the elements filed in it, so it may reach past the cell's nominal square. While a loose
/// cell's box stays within the configured [`reach`](LooseGridConfig::reach) of its square
/// (the common case: elements smaller than the reach), the cell is *regular* and can only
/// meet its neighbours, so queries and the pair pass find it by position. A cell whose box
/// reaches further (it holds a large element, or one far outside the world) is *irregular*
/// and is listed in the coarser *tight grid*, in every tight cell its box overlaps; queries
/// find it there, handling it only in the tight cell that owns a reference point of it.
/// Either way each loose cell is tested once per query, and each element is met once.
///
/// Moving an element is cheap: as long as its box stays within the reach of its cell's
/// square, `update` writes only the element's box and raises one number kept by the whole
/// grid, the largest such overhang since the last `maintain`; every loose cell is then read
/// as its box united with its square grown by that overhang, which encloses every element
/// moved this way. The common update thus reads nothing but the element's own data, even when
/// its centre drifts into a neighbouring cell. A box beyond the reach grows its cell's box
/// instead (listing the cell in the tight grid if it becomes irregular).
/// [`maintain`](crate::SpatialIndex::maintain), once per frame, re-files every element in the cell
/// of its centre, shrinks every loose box to its elements, resets the overhang, and now and
/// then lays the element lists out in memory cell by cell.
///
/// # When to use it
/// Many elements moving every frame over a known world, with similar or moderately varied
/// sizes: an element costs one list entry whatever its size, an update within reach touches
/// only the element, and with a capacity given up front ([`LooseGrid::with_capacity`],
/// [`LooseGrid::auto`]) a running simulation allocates nothing. Call `maintain` once per
/// frame: results are correct without it, but the cells stay as loose as the elements made
/// them.
///
/// Elements outside the world are filed in the border cells, so nothing is lost; a crowd far
/// denser than the rest (or far outside the world) piles into few cells and slows down.
///
/// # Complexity
/// With `k` elements per loose cell: an update within reach O(1), touching nothing but the
/// element; insert O(1), and an update beyond reach O(1), plus the tight cells a grown box
/// newly reaches; remove O(k); query O(loose cells under the area (grown by the reach) + the
/// irregular cells listed under it + elements of the cells met); for_each_pair O(cells · k²)
/// (each cell against its neighbours; an irregular cell against every cell its box meets);
/// nearest O(rings of loose cells searched · k); maintain O(cells + elements).
///
/// # Memory per element
/// The slot table (box, value and generation: 21 bytes for `f32` boxes and `()` values, 28
/// for `u32` values), one list entry holding the element's slot and a copy of its box (24
/// bytes in `f32`, so that the pair pass reads nothing else), and 8 bytes of bookkeeping (the
/// entry and the cell of each slot); plus 20 bytes per loose cell and 4 per tight cell, plus
/// 8 per tight cell an irregular loose cell is listed in. Nothing depends on how big an
/// element is. With [`LooseGrid::auto`]'s cells, the agents of `spatix-workload`
/// take about 62 bytes each with `u32` values.
///
/// # Errors
/// The constructors return [`Error::InvalidParameter`] for an invalid world or
/// configuration, a cell size that is not finite and positive, or more than 2^28 cells.
/// Insert and update return [`Error::InvalidAabb`] for a NaN, infinite or inverted box and
/// update returns [`Error::StaleHandle`] for a stale handle; nothing changes on error.
/// Queries never fail: an invalid area matches nothing.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, LooseGrid, Point, SpatialIndex, SpatialQuery};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = LooseGrid::new(world, 10.0)?;
/// let orc = grid.insert(Aabb::new(Point::new(5.0, 5.0), Point::new(12.0, 8.0))?, "orc")?;
/// grid.insert(Aabb::new(Point::new(11.0, 7.0), Point::new(13.0, 9.0))?, "elf")?;
/// let dragon = Aabb::new(Point::new(40.0, 40.0), Point::new(90.0, 90.0))?;
/// grid.insert(dragon, "dragon")?; // one entry, however big
///
/// let mut pairs = 0;
/// let _ = grid.for_each_pair(|_, _| { pairs += 1; ControlFlow::Continue(()) });
/// assert_eq!(pairs, 1);
///
/// grid.update(orc, Aabb::new(Point::new(50.0, 50.0), Point::new(52.0, 52.0))?)?;
/// grid.maintain();
/// let mut found = Vec::new();
/// let area = Aabb::new(Point::new(45.0, 45.0), Point::new(55.0, 55.0))?;
/// let _ = grid.query(&area, |item| { found.push(*item.value); ControlFlow::Continue(()) });
/// found.sort();
/// assert_eq!(found, ["dragon", "orc"]);
/// grid.check_invariants()?;
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`UniformGrid`](crate::UniformGrid) files an element in every cell it overlaps (no boxes
/// per cell, but a large element costs many entries); [`Quadtree`](crate::Quadtree) adapts
/// to very uneven density.
#[derive(Clone, Debug)]
pub struct LooseGrid<S, T> {
    /// The loose cells' geometry.
    loose: Lattice<S>,
    /// The tight grid (coarser): lists the irregular loose cells.
    tight: Tight<S>,
    /// How far past its cell's square an element may reach on the fast path.
    reach: S,
    /// Absolute margin covering the rounding of cell squares and overhangs at this world's
    /// magnitude: cell squares are always grown by it.
    margin: S,
    /// The largest overhang past its cell's square of an element moved by the fast path
    /// since the last `maintain` (at least 0), or minus infinity if none was.
    overhang: S,
    /// Row-major boxes of the loose cells: each encloses every element filed in its cell
    /// except those moved by the fast path since the last `maintain`; grown on insert and by
    /// the slow path of update, shrunk to the elements by `maintain`; [`empty`] when the cell
    /// holds nothing. (Box and head, a 20-byte loose cell in `f32`, are kept in two arrays.)
    boxes: Vec<Aabb<S>>,
    /// Row-major heads of the loose cells' element lists.
    heads: Vec<u32>,
    /// One node per element, in the list of its loose cell: its slot and a copy of its box.
    elements: ListPool<Aabb<S>>,
    /// The node of each slot in `elements` (`NIL` for a free slot); as long as the slot
    /// table's arrays.
    node_of: Vec<u32>,
    /// The loose cell each slot is filed in (meaningless for a free slot).
    home: Vec<u32>,
    /// Regular loose cells whose regions may meet lie at most this many cells apart.
    pair_radius: u32,
    /// A reference point of a regular loose cell's region lies at most this many cells
    /// away from the cell.
    own_radius: u32,
    slots: Slots<S, T>,
}

impl<S: Scalar, T> LooseGrid<S, T> {
    /// An empty grid over `world` with loose cells of side `cell_size` and the rest of
    /// [`LooseGridConfig::new`]: tight cells twice as wide, a reach of a quarter cell.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box, if `cell_size` is not finite
    /// and positive (or so small that its inverse overflows), or if the grid would have more
    /// than 2^28 cells.
    ///
    /// ```
    /// use spatix::{Aabb, Error, LooseGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 50.0))?;
    /// let grid = LooseGrid::<f64, ()>::new(world, 10.0)?;
    /// assert_eq!((grid.dims(), grid.tight_dims()), ((10, 5), (5, 3)));
    /// assert!(matches!(LooseGrid::<f64, ()>::new(world, -1.0), Err(Error::InvalidParameter(_))));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, cell_size: S) -> Result<Self, Error> {
        Self::with_config(world, LooseGridConfig::new(cell_size))
    }

    /// An empty grid over `world` with the given configuration.
    ///
    /// # Errors
    /// As [`LooseGrid::new`], for either cell size, and as [`LooseGridConfig::validate`].
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, LooseGridConfig, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let config = LooseGridConfig { tight_cell_size: 25.0, ..LooseGridConfig::new(5.0) };
    /// let grid = LooseGrid::<f32, ()>::with_config(world, config)?;
    /// assert_eq!((grid.dims(), grid.tight_dims()), ((20, 20), (4, 4)));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_config(world: Aabb<S>, config: LooseGridConfig<S>) -> Result<Self, Error> {
        config.validate()?;
        let loose = Lattice::new(world, config.cell_size)?;
        let tight = Lattice::new(world, config.tight_cell_size)?;
        let margin = (magnitude(&world) + config.cell_size + config.reach)
            * (S::RELATIVE_SLACK * S::from_f64(1.0 / 8.0));
        let cells = |length: f64| {
            1 + (length / config.cell_size.to_f64()).min(f64::from(u32::MAX / 2)) as u32
        };
        let pad = (config.reach + margin + margin).to_f64();
        let (pair_radius, own_radius) = (cells(2.0 * pad), cells(pad));
        Ok(Self {
            loose,
            tight: Tight::new(tight),
            reach: config.reach,
            margin,
            overhang: -S::INFINITY,
            boxes: vec![empty(); loose.len()],
            heads: vec![NIL; loose.len()],
            elements: ListPool::default(),
            node_of: Vec::new(),
            home: Vec::new(),
            pair_radius,
            own_radius,
            slots: Slots::default(),
        })
    }

    /// An empty grid ([`LooseGrid::new`]) with room for `capacity` elements: inserting that
    /// many, and moving them around afterwards, allocates nothing more.
    ///
    /// # Errors
    /// As [`LooseGrid::new`].
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, Point, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let grid = LooseGrid::<f32, u32>::with_capacity(world, 16.0, 10_000)?;
    /// assert!(grid.memory_bytes() > 10_000 * 24);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_capacity(world: Aabb<S>, cell_size: S, capacity: usize) -> Result<Self, Error> {
        let mut grid = Self::new(world, cell_size)?;
        grid.reserve(capacity);
        Ok(grid)
    }

    /// An empty grid over `world` whose cell sizes are chosen from a sample of the boxes it
    /// will hold (typically the initial boxes themselves), with room reserved for the sample.
    ///
    /// The loose cell side is 8 times the sample's mean box extent (mean of width and height),
    /// tuned on the agents of `spatix-workload` (move every agent, update it, find
    /// all pairs, maintain), raised if needed so that loose cells hold at least 2 sampled
    /// elements on average and so that the grid has at most 2^28 cells; the rest is
    /// [`LooseGridConfig::new`]. Invalid boxes in the sample are ignored; an empty sample
    /// gives 64 loose cells along the world's longer side.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box (or so large that its width
    /// overflows `f64`).
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let boxes: Vec<_> = (0..1000)
    ///     .map(|i| {
    ///         let p = Point::new((i % 40) as f32 * 25.0, (i / 40) as f32 * 40.0);
    ///         Aabb::from_center_half_extents(p, Point::new(2.0, 2.0))
    ///     })
    ///     .collect::<Result<_, _>>()?;
    /// let mut grid = LooseGrid::auto(world, &boxes)?;
    /// assert!(grid.cell_size() >= 32.0);
    /// for (i, b) in boxes.iter().enumerate() {
    ///     grid.insert(*b, i)?;
    /// }
    /// assert_eq!(grid.len(), 1000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto(world: Aabb<S>, sample: &[Aabb<S>]) -> Result<Self, Error> {
        Self::auto_sampled(world, sample, 0)
    }

    /// As [`auto`](Self::auto), when `sample` is a random sample of the `total` elements the
    /// grid will hold (for example while streaming a file too large to keep in memory): the
    /// cell side still comes from the sample's mean extent, but the "at least 2 elements per
    /// loose cell" floor counts `total` elements (or the sample's, if more), and room is
    /// reserved for that many.
    ///
    /// # Errors
    /// As [`auto`](Self::auto).
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let points: Vec<_> = (0..100) // a 10 x 10 lattice over the world
    ///     .map(|i| Aabb::point(Point::new((i % 10 * 1000 / 9) as f32, (i / 10 * 1000 / 9) as f32)))
    ///     .collect::<Result<_, _>>()?;
    /// // 100 sampled points standing for 20,000: cells of 10 (2 points each), not 141.
    /// let grid = LooseGrid::<f32, u64>::auto_sampled(world, &points, 20_000)?;
    /// assert_eq!(grid.cell_size(), 10.0);
    /// assert!(LooseGrid::<f32, u64>::auto(world, &points)?.cell_size() > 140.0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto_sampled(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error> {
        let auto = auto_cell(&world, sample, total, AUTO_EXTENT_FACTOR, AUTO_PER_CELL)?;
        let mut grid = Self::new(auto.world, auto.cell)?;
        grid.reserve(auto.elements);
        Ok(grid)
    }

    /// Reserves room for `additional` more elements (and their list entries), so that
    /// inserting them allocates nothing.
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, Point, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = LooseGrid::<f64, ()>::new(world, 10.0)?;
    /// let before = grid.memory_bytes();
    /// grid.reserve(1000);
    /// assert!(grid.memory_bytes() > before);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.elements.reserve(additional);
        self.node_of.reserve(additional);
        self.home.reserve(additional);
        // Only irregular loose cells are listed in the tight grid: room for a few.
        let loose = self.heads.len().min(self.elements.in_use() + additional);
        let wanted = loose / 16;
        self.tight
            .lists
            .reserve(wanted.saturating_sub(self.tight.lists.allocated()));
    }

    /// The world the grid was declared over.
    ///
    /// ```
    /// # use spatix::{Aabb, LooseGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(LooseGrid::<f32, ()>::new(world, 1.0)?.world(), world);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn world(&self) -> Aabb<S> {
        self.loose.world
    }

    /// The side of a loose cell.
    ///
    /// ```
    /// # use spatix::{Aabb, LooseGrid, Point};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(LooseGrid::<f32, ()>::new(world, 2.5)?.cell_size(), 2.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn cell_size(&self) -> S {
        self.loose.cell_size
    }

    /// Columns and rows of loose cells.
    ///
    /// ```
    /// # use spatix::{Aabb, LooseGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 4.0))?;
    /// assert_eq!(LooseGrid::<f32, ()>::new(world, 3.0)?.dims(), (4, 2));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn dims(&self) -> (u32, u32) {
        (self.loose.cols, self.loose.rows)
    }

    /// Columns and rows of tight cells.
    ///
    /// ```
    /// # use spatix::{Aabb, LooseGrid, Point};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 4.0))?;
    /// assert_eq!(LooseGrid::<f32, ()>::new(world, 1.0)?.tight_dims(), (5, 2));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn tight_dims(&self) -> (u32, u32) {
        (self.tight.lattice.cols, self.tight.lattice.rows)
    }

    /// Calls `visit(region, count)` for every loose cell that holds elements, row by row from
    /// the lower-left corner, with the region queries test it by (a box enclosing its
    /// elements, which only grows until [`maintain`](crate::SpatialIndex::maintain) shrinks it to
    /// them) and how many elements it holds (for drawing the grid).
    ///
    /// ```
    /// # use spatix::{Aabb, LooseGrid, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(20.0, 10.0))?;
    /// let mut grid = LooseGrid::new(world, 10.0)?;
    /// let h = grid.insert(Aabb::new(Point::new(8.0, 2.0), Point::new(12.0, 4.0))?, ())?;
    /// grid.update(h, Aabb::new(Point::new(11.0, 2.0), Point::new(13.0, 3.0))?)?;
    /// let mut grown = Vec::new();
    /// grid.for_each_cell(|b, count| grown.push((b.min.x <= 8.0 && b.max.x >= 13.0, count)));
    /// assert_eq!(grown, [(true, 1)]); // covers both boxes
    /// grid.maintain();
    /// let mut shrunk = Vec::new();
    /// grid.for_each_cell(|b, count| shrunk.push((b.min.x, b.max.x, count)));
    /// assert_eq!(shrunk, [(11.0, 13.0, 1)]); // shrunk to the element
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn for_each_cell(&self, mut visit: impl FnMut(Aabb<S>, usize)) {
        for (cell, &head) in self.heads.iter().enumerate() {
            if head != NIL {
                visit(self.region(cell), self.elements.items(head).count());
            }
        }
    }

    /// The loose cell holding the centre of box `b`.
    #[inline]
    pub(super) fn cell_of(&self, b: &Aabb<S>) -> usize {
        self.loose.index_of(b.center())
    }

    /// Column and row of a loose cell.
    #[inline]
    pub(super) fn coords(&self, cell: usize) -> (u32, u32) {
        let cols = self.loose.cols as usize;
        ((cell % cols) as u32, (cell / cols) as u32)
    }

    /// The nominal square of a loose cell.
    #[inline]
    pub(super) fn square(&self, cell: usize) -> Aabb<S> {
        let (cx, cy) = self.coords(cell);
        self.loose.square(cx, cy)
    }

    /// How far past its square a regular loose cell's region may reach: the reach, plus the
    /// rounding margin.
    #[inline]
    pub(super) fn pad(&self) -> S {
        self.reach + self.margin
    }

    /// Whether a loose cell with box `b` and square `square` is irregular: its box reaches
    /// past the square grown by the reach (then it is listed in the tight grid; a regular
    /// cell is found by its position alone).
    #[inline]
    pub(super) fn is_irregular(&self, b: &Aabb<S>, square: &Aabb<S>) -> bool {
        is_irregular(self.pad(), b, square)
    }

    /// The region of a loose cell with box `b` and square `square`: the box, united (if any
    /// element was moved by the fast path since `maintain`) with the square grown by the
    /// overhang. It encloses every element filed in the cell; empty when the box is.
    #[inline]
    pub(super) fn region_of(&self, b: &Aabb<S>, square: &Aabb<S>) -> Aabb<S> {
        if is_empty(b) || self.overhang < S::ZERO {
            *b
        } else {
            b.union(&grown(square, self.overhang + self.margin))
        }
    }

    /// The region of loose cell `cell`.
    #[inline]
    pub(super) fn region(&self, cell: usize) -> Aabb<S> {
        self.region_of(&self.boxes[cell], &self.square(cell))
    }

    /// The box under which a loose cell with box `b` is listed in the tight grid: its box
    /// united with its square grown by the reach (which encloses its region whatever the
    /// overhang), if it is irregular; regular cells are not listed.
    #[inline]
    pub(super) fn listing(&self, b: &Aabb<S>, square: &Aabb<S>) -> Option<Aabb<S>> {
        listing(self.pad(), b, square)
    }

    /// The tight cells a loose cell with box `b` and square `square` is listed in.
    #[inline]
    pub(super) fn tight_range(&self, b: &Aabb<S>, square: &Aabb<S>) -> Option<CellRange> {
        self.listing(b, square)
            .map(|l| self.tight.lattice.range(&l))
    }

    /// Where an irregular loose cell's listing starts, in tight cells: a tight cell owns the
    /// encounter of a listed cell with an area (or with another listed cell) when it is the
    /// later of the two starting columns and the later of the two starting rows.
    #[inline]
    pub(super) fn listing_start(&self, cell: usize) -> (u32, u32) {
        let square = self.square(cell);
        let start = grown(&square, self.pad()).min;
        let b = self.boxes[cell].min;
        (
            self.tight.lattice.col(b.x.min_s(start.x)),
            self.tight.lattice.row(b.y.min_s(start.y)),
        )
    }

    /// The block of loose cells whose regular regions may meet `b`.
    #[inline]
    pub(super) fn loose_around(&self, b: &Aabb<S>) -> CellRange {
        self.loose.range(&grown(b, self.pad() + self.margin))
    }

    /// The block of loose cells within `radius` of `(cx, cy)`, clamped into the grid.
    #[inline]
    pub(super) fn block(&self, cx: u32, cy: u32, radius: u32) -> CellRange {
        CellRange {
            x0: cx.saturating_sub(radius),
            y0: cy.saturating_sub(radius),
            x1: cx.saturating_add(radius).min(self.loose.cols - 1),
            y1: cy.saturating_add(radius).min(self.loose.rows - 1),
        }
    }

    /// Calls `visit(cell, tx, ty)` for every irregular loose cell listed in a tight cell
    /// `(tx, ty)` that shares points with loose cell `(cx, cy)`. An irregular cell owned by
    /// a reference point is then handled only where both the loose and the tight cell of
    /// the point match.
    #[inline]
    pub(super) fn irregular_near(&self, cx: u32, cy: u32, mut visit: impl FnMut(usize, u32, u32)) {
        if self.tight.irregular == 0 {
            return;
        }
        let square = grown(&self.loose.square(cx, cy), self.margin);
        for (tx, ty) in self.tight.lattice.range(&square).cells() {
            for cell in self.tight.listed(tx, ty) {
                visit(cell as usize, tx, ty);
            }
        }
    }
}

impl<S: Scalar, T> Holds<S, T> for LooseGrid<S, T> {
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.boxes.capacity() * size_of::<Aabb<S>>()
            + self.heads.capacity() * size_of::<u32>()
            + self.elements.memory_bytes()
            + (self.node_of.capacity() + self.home.capacity()) * size_of::<u32>()
            + self.tight.memory_bytes()
    }
}

crate::contract::spatial_index!(
    LooseGrid,
    maintain {
        /// Re-files every element in the loose cell of its centre, shrinks every loose box to its
        /// elements (delisting it from the tight cells it no longer reaches), forgets the
        /// overhang, and, once enough elements changed cells, lays the element lists out in
        /// memory cell by cell. O(cells + elements), in place, no allocation.
    }
);

impl<S, T> crate::Listed for LooseGrid<S, T> {
    const CLI: &'static str = "loose-grid";
    const ABOUT: &'static str =
        "`LooseGrid`: the loose/tight double grid, each element in one loose cell by its centre.";
}

/// [`LooseGrid::auto_sampled`].
impl<S: Scalar, T> crate::ListedIndex<S, T> for LooseGrid<S, T> {
    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, crate::Error> {
        Self::auto_sampled(world, sample, total)
    }
}

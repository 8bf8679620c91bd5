//! The uniform grid: a fixed array of cells, each the head of an index-linked list of the
//! elements whose box overlaps it.

use crate::base::handle::NIL;
use crate::base::pool::BandPools;
use crate::base::slots::Slots;
use crate::contract::Holds;
use crate::grid::lattice::{AutoCells, Lattice, auto_cell};
use crate::{Aabb, Error, Scalar};

mod bytes;
mod mutate;
mod pairs;
mod query;
mod regions;
#[cfg(test)]
mod tests;
mod validate;

/// [`UniformGrid::auto`]: cell side as a multiple of the sample's mean box extent.
const AUTO_EXTENT_FACTOR: f64 = 12.0;

/// [`UniformGrid::auto`]: cells hold at least about this many elements on average.
const AUTO_PER_CELL: f64 = 4.0;

/// A fixed-resolution grid over a declared world: every element is filed in every cell its box
/// overlaps, and each cell is a single `u32`, the head of an index-linked list.
///
/// # When to use it
/// Elements of similar size spread fairly evenly over a known world, such as the agents of a
/// game or a particle simulation: insert, update and remove are O(1) for small boxes, an
/// update that stays within its cells touches nothing but the element's own box, and
/// [`for_each_pair`](crate::SpatialQuery::for_each_pair) is a flat walk over the cells that needs no
/// memory per call. Pick a cell several times larger than a typical element
/// ([`UniformGrid::auto`] measures a sample for you) and call
/// [`maintain`](crate::SpatialIndex::maintain) once per frame: it lays the cells' lists out in
/// memory in cell order, so the next frame reads them sequentially (the grid also does this
/// by itself, less often, when it is never called).
///
/// Elements outside the world are clamped into the border cells, so nothing is lost, but a
/// crowd far outside the world piles into few cells and slows down; so does a crowd much
/// denser than the rest.
///
/// # Complexity
/// With `m` = cells a box overlaps and `k` = entries per cell:
/// insert O(m), remove and moving update O(m·k), update within the same cells O(1);
/// query O(cells under the area · k); for_each_pair O(cells + Σ k²);
/// nearest O(cells of the rings searched · k); maintain O(cells + entries).
///
/// # Memory per element
/// The slot table (box, value and generation: 21 bytes for `f32` boxes and `()` values, 28
/// for `u32` values) plus one 8-byte list entry per cell the box overlaps, plus 4 bytes per
/// cell of the grid. With [`UniformGrid::auto`]'s cells, 12 times the mean box extent, a box
/// overlaps about (1 + 1/12)² ≈ 1.17 cells, so the agents of `spatix-workload`
/// take about 31 bytes each with `()` values (38 with `u32` values).
///
/// # Errors
/// [`UniformGrid::new`] returns [`Error::InvalidParameter`] for an invalid world, a cell size
/// that is not finite and positive, or more than 2^28 cells. Insert and update return
/// [`Error::InvalidAabb`] for a NaN, infinite or inverted box and update returns
/// [`Error::StaleHandle`] for a stale handle; nothing changes on error. Queries never fail:
/// an invalid area matches nothing.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// let orc = grid.insert(Aabb::new(Point::new(5.0, 5.0), Point::new(12.0, 8.0))?, "orc")?;
/// grid.insert(Aabb::new(Point::new(11.0, 7.0), Point::new(13.0, 9.0))?, "elf")?;
/// grid.insert(Aabb::new(Point::new(150.0, 5.0), Point::new(151.0, 6.0))?, "lost")?;
///
/// let mut pairs = 0;
/// let _ = grid.for_each_pair(|_, _| { pairs += 1; ControlFlow::Continue(()) });
/// assert_eq!(pairs, 1);
///
/// // Outside the world, yet still found.
/// let far = Aabb::new(Point::new(140.0, 0.0), Point::new(160.0, 10.0))?;
/// let mut found = Vec::new();
/// let _ = grid.query(&far, |item| { found.push(*item.value); ControlFlow::Continue(()) });
/// assert_eq!(found, ["lost"]);
///
/// grid.update(orc, Aabb::new(Point::new(50.0, 50.0), Point::new(52.0, 52.0))?)?;
/// grid.check_invariants()?;
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`Quadtree`](crate::Quadtree) adapts its resolution to uneven density and to elements of
/// very different sizes (a "dragon" overlapping hundreds of cells costs hundreds of list
/// entries here); [`BruteForce`](crate::BruteForce) is faster below about 64 elements.
#[derive(Clone, Debug)]
pub struct UniformGrid<S, T> {
    lattice: Lattice<S>,
    /// Row-major heads of the cells' lists (`NIL` when empty).
    cells: Vec<u32>,
    /// The cells' lists, one pool per band of rows.
    pools: BandPools,
    slots: Slots<S, T>,
    /// `par_update_all` scratch: the elements changing cells, per chunk of slots, by band.
    #[cfg(feature = "rayon")]
    refile: Vec<mutate::ChunkRefilings>,
}

impl<S: Scalar, T> UniformGrid<S, T> {
    /// An empty grid over `world` with square cells of side `cell_size`:
    /// `max(1, ceil(width / cell_size))` columns and as many rows as the height needs.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box, if `cell_size` is not finite
    /// and positive (or so small that its inverse overflows), or if the grid would have more
    /// than 2^28 cells.
    ///
    /// ```
    /// use spatix::{Aabb, Error, Point, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 50.0))?;
    /// let grid = UniformGrid::<f64, ()>::new(world, 8.0)?;
    /// assert_eq!(grid.dims(), (13, 7));
    /// assert!(matches!(UniformGrid::<f64, ()>::new(world, 0.0), Err(Error::InvalidParameter(_))));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, cell_size: S) -> Result<Self, Error> {
        let lattice = Lattice::new(world, cell_size)?;
        Ok(Self {
            lattice,
            cells: vec![NIL; lattice.len()],
            pools: BandPools::new(lattice.rows, lattice.cols),
            slots: Slots::default(),
            #[cfg(feature = "rayon")]
            refile: Vec::new(),
        })
    }

    /// An empty grid over `world` whose cell size is chosen from a sample of the boxes it will
    /// hold (typically the initial boxes themselves), with room reserved for the sample.
    ///
    /// The cell side is 12 times the mean box extent (mean of width and height), tuned on the
    /// agents of `spatix-workload` (move every agent, update it, find all pairs),
    /// raised if needed so that cells hold at least 4 sampled elements on average (so there
    /// are at most a quarter as many cells as elements; this decides for points and sparse
    /// boxes) and so that the grid has at most 2^28 cells. Invalid boxes in the sample are
    /// ignored; an empty sample gives 64 cells along the world's longer side. Room is reserved
    /// for the sample's elements and their list entries.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box (or so large that its width
    /// overflows `f64`).
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let boxes: Vec<_> = (0..1000)
    ///     .map(|i| {
    ///         let p = Point::new((i % 40) as f32 * 25.0, (i / 40) as f32 * 40.0);
    ///         Aabb::from_center_half_extents(p, Point::new(2.0, 2.0))
    ///     })
    ///     .collect::<Result<_, _>>()?;
    /// let mut grid = UniformGrid::auto(world, &boxes)?;
    /// assert!(grid.cell_size() > 4.0);
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
    /// cell side still comes from the sample's mean extent, but the "at least 4 elements per
    /// cell" floor counts `total` elements (or the sample's, if more), and room is reserved
    /// for that many elements, with as many list entries each as the sample's average.
    ///
    /// # Errors
    /// As [`auto`](Self::auto).
    ///
    /// ```
    /// use spatix::{Aabb, Point, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1000.0, 1000.0))?;
    /// let points: Vec<_> = (0..100) // a 10 x 10 lattice over the world
    ///     .map(|i| Aabb::point(Point::new((i % 10 * 1000 / 9) as f64, (i / 10 * 1000 / 9) as f64)))
    ///     .collect::<Result<_, _>>()?;
    /// // 100 sampled points standing for 40,000: cells of 10 (4 points each), not 200.
    /// let grid = UniformGrid::<f64, u64>::auto_sampled(world, &points, 40_000)?;
    /// assert_eq!(grid.cell_size(), 10.0);
    /// assert_eq!(UniformGrid::<f64, u64>::auto(world, &points)?.cell_size(), 200.0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto_sampled(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error> {
        let AutoCells {
            world,
            cell,
            sampled,
            elements: n,
        } = auto_cell(&world, sample, total, AUTO_EXTENT_FACTOR, AUTO_PER_CELL)?;
        let mut grid = Self::new(world, cell)?;
        grid.slots.reserve(n);
        let sampled_entries: usize = sample
            .iter()
            .filter(|b| b.is_valid())
            .map(|b| grid.lattice.range(b).area())
            .sum();
        let entries = if sampled == 0 {
            0
        } else {
            (sampled_entries as f64 * n as f64 / sampled as f64).ceil() as usize
        };
        grid.pools.reserve(entries + entries / 32);
        Ok(grid)
    }

    /// A grid over `world` holding `items`, built in one go: the cell size is chosen from
    /// the items' boxes as [`auto`](Self::auto) chooses it from a sample, the elements take
    /// slots `0..n` in the order given, and every cell's list is laid out in memory in cell
    /// order by one counting sort (no per-element insert). The result is what inserting the
    /// items one by one into `auto(world, boxes)` and calling
    /// [`maintain`](crate::SpatialIndex::maintain) would hold, at a fraction of the cost.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if any box is invalid (nothing is built);
    /// [`Error::InvalidParameter`] for an invalid world; [`Error::CapacityExceeded`] past
    /// 2^32 - 2 elements.
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let items = (0..100).map(|i| {
    ///     let p = Point::new((i % 10) as f32 * 10.0, (i / 10) as f32 * 10.0);
    ///     (Aabb::new(p, Point::new(p.x + 2.0, p.y + 2.0)).unwrap(), i)
    /// });
    /// let mut grid = UniformGrid::build(world, items)?;
    /// assert_eq!(grid.len(), 100);
    /// grid.check_invariants()?;
    /// let h = grid.iter().next().unwrap().handle;
    /// grid.update(h, Aabb::point(Point::new(50.0, 50.0))?)?;
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn build(
        world: Aabb<S>,
        items: impl IntoIterator<Item = (Aabb<S>, T)>,
    ) -> Result<Self, Error> {
        let items = items.into_iter();
        let (mut boxes, mut values) = (Vec::new(), Vec::new());
        boxes.reserve(items.size_hint().0);
        values.reserve(items.size_hint().0);
        for (aabb, value) in items {
            boxes.push(aabb.validated()?);
            values.push(Some(value));
        }
        let mut grid = Self::auto(world, &boxes)?;
        grid.slots = Slots::from_elements(boxes, values)?;
        let (lattice, slots) = (&grid.lattice, &grid.slots);
        let cols = lattice.cols as usize;
        grid.pools.build(&mut grid.cells, cols, |emit| {
            for slot in 0..slots.len() as u32 {
                let r = lattice.range(slots.aabb(slot));
                for cy in r.y0..=r.y1 {
                    for cx in r.x0..=r.x1 {
                        emit(lattice.index(cx, cy), slot, ());
                    }
                }
            }
        });
        Ok(grid)
    }

    /// The world the grid was declared over.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(UniformGrid::<f32, ()>::new(world, 1.0)?.world(), world);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn world(&self) -> Aabb<S> {
        self.lattice.world
    }

    /// The side of a cell.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, UniformGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(UniformGrid::<f32, ()>::new(world, 2.5)?.cell_size(), 2.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn cell_size(&self) -> S {
        self.lattice.cell_size
    }

    /// Columns and rows.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 4.0))?;
    /// assert_eq!(UniformGrid::<f32, ()>::new(world, 3.0)?.dims(), (4, 2));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn dims(&self) -> (u32, u32) {
        (self.lattice.cols, self.lattice.rows)
    }

    /// Calls `visit(cell_box, count)` for every cell, row by row from the lower-left corner,
    /// with the number of list entries filed there (for drawing the grid). Cell boxes are the
    /// nominal ones: the last column and row may extend past the world's upper edges, and the
    /// border cells also hold the elements outside the world.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(20.0, 10.0))?;
    /// let mut grid = UniformGrid::new(world, 10.0)?;
    /// grid.insert(Aabb::new(Point::new(8.0, 2.0), Point::new(12.0, 4.0))?, ())?;
    /// let mut counts = Vec::new();
    /// grid.for_each_cell(|cell, count| counts.push((cell.min.x, count)));
    /// assert_eq!(counts, [(0.0, 1), (10.0, 1)]);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn for_each_cell(&self, mut visit: impl FnMut(Aabb<S>, usize)) {
        let l = &self.lattice;
        for cy in 0..l.rows {
            for cx in 0..l.cols {
                let head = self.cells[l.index(cx, cy)];
                visit(l.square(cx, cy), self.pools.of_row(cy).items(head).count());
            }
        }
    }

    /// Bytes of the `par_update_all` scratch.
    fn refile_bytes(&self) -> usize {
        #[cfg(feature = "rayon")]
        return self.refile.capacity() * size_of::<mutate::ChunkRefilings>()
            + self
                .refile
                .iter()
                .map(mutate::ChunkRefilings::memory_bytes)
                .sum::<usize>();
        #[cfg(not(feature = "rayon"))]
        0
    }

    /// Lays out, in cell order, the lists of every band relinked since it was last packed
    /// (see `maintain`); the bands in parallel on rayon's pool with feature `rayon`.
    pub(super) fn pack(&mut self) {
        let band_cells = (self.lattice.cols as usize) << self.pools.shift();
        let pack = |(pool, cells): (&mut crate::base::pool::ListPool, &mut [u32])| {
            if pool.relinked() > 0 {
                pool.compact_band(|visit| cells.iter_mut().for_each(visit));
            }
        };
        #[cfg(feature = "rayon")]
        {
            use rayon::prelude::*;
            self.pools
                .pools_mut()
                .par_iter_mut()
                .zip(self.cells.par_chunks_mut(band_cells))
                .for_each(pack);
        }
        #[cfg(not(feature = "rayon"))]
        self.pools
            .pools_mut()
            .iter_mut()
            .zip(self.cells.chunks_mut(band_cells))
            .for_each(pack);
    }
}

impl<S: Scalar, T> Holds<S, T> for UniformGrid<S, T> {
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.cells.capacity() * size_of::<u32>()
            + self.pools.memory_bytes()
            + self.refile_bytes()
    }
}

crate::contract::spatial_index!(
    UniformGrid,
    maintain {
        /// Re-packs the cells' lists in memory in cell order (O(list entries), in place; a
        /// band of rows whose pool has less than a quarter of room spare reserves more), so that the next [`for_each_pair`](crate::SpatialQuery::for_each_pair) and
        /// updates read them sequentially; does nothing if no list changed since the last pack.
        /// The lists are kept in bands of rows, each packed on its own; with feature `rayon`
        /// the bands are packed in parallel on rayon's current pool.
    }
);

impl<S, T> crate::Listed for UniformGrid<S, T> {
    const CLI: &'static str = "grid";
    const ABOUT: &'static str = "`UniformGrid`: cells from the elements' size and count.";
}

/// [`UniformGrid::auto_sampled`].
impl<S: Scalar, T> crate::ListedIndex<S, T> for UniformGrid<S, T> {
    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, crate::Error> {
        Self::auto_sampled(world, sample, total)
    }
}

//! The sweep grid: elements in horizontal bands by the bottom of their box, stored contiguously
//! band by band, sorted by the left of their box inside each band, so that a frame (move every
//! element, find every pair) streams through memory in one order.

use crate::base::handle::{NIL, next_salt};
use crate::base::slots::Elements;
use crate::contract::{Holds, Table, TableMut};
use crate::grid::lattice::{auto_world, bulk_extent, extent_of};
use crate::{Aabb, Error, Handle, Item, Iter, Point, Scalar};

mod bytes;
mod layout;
mod mutate;
mod pairs;
mod query;
mod regions;
#[cfg(test)]
mod tests;
mod validate;

/// Most boxes [`SweepGrid::build_auto`] sizes the grid from (evenly strided through its
/// input).
const AUTO_SAMPLE: usize = 16_384;

/// [`SweepGrid::auto`]: band height as a multiple of the sample's mean box extent.
const AUTO_EXTENT_FACTOR: f64 = 3.0;

/// [`SweepGrid::auto`]: bands hold at least about this many elements on average.
const AUTO_ELEMENTS_PER_BAND: f64 = 8.0;

/// At most this many bands (so that the band table stays small next to the elements).
const MAX_BANDS: f64 = (1u32 << 24) as f64;

/// One band's bookkeeping. Its elements are the positions `starts[b]..starts[b + 1]`.
#[derive(Clone, Copy, Debug)]
struct Band<S> {
    /// Upper bound of `band_of(max.y) - b` over the band's elements: how many bands above it
    /// its elements may reach into.
    reach: u32,
    /// Upper bound of the width (`max.x - min.x`) of the band's elements (0 when empty).
    width: S,
    /// Whether `reach` and `width` may be loose (an element that set them shrank or left
    /// since they were last computed); `maintain` tightens such bands.
    loose: bool,
}

impl<S: Scalar> Band<S> {
    const EMPTY: Self = Self {
        reach: 0,
        width: S::ZERO,
        loose: false,
    };
}

/// The bands' rows: finds the band of a height ([`SweepGrid::band_of`]) without borrowing
/// the grid.
#[derive(Clone, Copy, Debug)]
struct Rows<S> {
    /// The world's bottom.
    min_y: S,
    /// `1 / height`.
    inv_height: S,
    /// The last band.
    last: i64,
}

impl<S: Scalar> Rows<S> {
    /// The band of an element whose box starts at height `y`: clamped into the bands, and
    /// monotone in `y` (what the pair pass and the queries rely on).
    #[inline]
    fn band_of(self, y: S) -> u32 {
        let f = ((y - self.min_y) * self.inv_height).to_i64();
        f.clamp(0, self.last) as u32
    }
}

/// An element waiting, during [`SpatialIndex::update_all`], to be placed in another band.
#[derive(Clone, Debug)]
struct Mover<S, T> {
    aabb: Aabb<S>,
    value: T,
    slot: u32,
    band: u32,
}

/// A free position inside a band ("gap"): it keeps a sort key (`min.x`) that fits its place
/// in the band's order, and a box that intersects nothing (so the pair sweep and the queries
/// pass over it without a test of their own).
#[inline]
fn gap_box<S: Scalar>(key: S) -> Aabb<S> {
    Aabb {
        min: Point::new(key, S::INFINITY),
        max: Point::new(-S::INFINITY, -S::INFINITY),
    }
}

/// The sweep grid: a structure for many moving boxes, built around one frame of a
/// simulation (move every element, then find every intersecting pair).
///
/// The world's `y` range is cut into horizontal *bands* of one height. An element belongs to
/// the band holding the bottom of its box (`min.y`, clamped into the bands, so elements
/// outside the world are stored and found in the border bands). The elements are stored
/// contiguously band by band, as parallel arrays of boxes, values and slots, and inside each
/// band sorted by the left of their box (`min.x`), with a few free positions ("gaps") spread
/// among them so that an element arriving in a band shifts only its neighbours up to the
/// nearest gap. A slot table maps each [`Handle`] to the element's current position.
///
/// * [`for_each_pair`](crate::SpatialQuery::for_each_pair) is a sweep along `x` inside each
///   band, then a merged sweep of each band with the bands above it that its elements reach
///   (each band keeps that reach and its widest element). It reads the boxes in memory order
///   and tests a pair only when the two boxes overlap along `x`.
/// * [`update_all`](crate::SpatialIndex::update_all) walks the elements in memory order: an element
///   that stays in its band is written in place and moved left past the neighbours it has
///   overtaken (an insertion sort, O(1) per element after one frame of motion); one that
///   changes band leaves a gap and is placed in its new band once that band has been walked.
/// * Queries scan the bands under the area (and those below whose elements reach up into it),
///   each from a binary search on `min.x`.
///
/// # When to use it
/// Hundreds of thousands to millions of moving elements of similar size, moved every frame
/// with [`update_all`](crate::SpatialIndex::update_all) (values may be the agents themselves) and
/// paired with [`for_each_pair`](crate::SpatialQuery::for_each_pair). Elements much taller
/// than a band make every band they start in reach far up, which slows pairs and queries
/// near them (but stays correct); elements much wider than the typical one widen their band's
/// query margin.
///
/// # Complexity
/// With `k` elements per band and `w` elements overlapping a given element along `x` inside
/// its band and the bands it reaches: insert, remove and update O(log k) to find the place,
/// plus the shift to the nearest gap (O(1) on average); `update_all` O(n) plus the sort moves
/// of the elements that overtook others; `for_each_pair` O(n · w); query O(bands under the
/// area · log k + elements met); maintain O(bands + elements of loosened bands). When a band
/// finds no gap near its insertion point, every element is laid out again with fresh gaps:
/// O(n), rare.
///
/// # Memory per element
/// A box, a value slot and a slot number per position (20 bytes plus the value for `f32`
/// boxes), with one position in nine a gap; plus 8 bytes in the slot table (position and
/// generation): about 30.5 bytes per element for `f32` boxes, values excluded.
///
/// # Errors
/// The constructors return [`Error::InvalidParameter`] for an invalid world or a band height
/// that is not finite and positive. Insert and update return [`Error::InvalidAabb`] for a
/// NaN, infinite or inverted box and update returns [`Error::StaleHandle`] for a stale
/// handle; nothing changes on error. Queries never fail: an invalid area matches nothing.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, SweepGrid};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = SweepGrid::new(world, 10.0)?;
/// let orc = grid.insert(Aabb::new(Point::new(5.0, 5.0), Point::new(12.0, 8.0))?, "orc")?;
/// grid.insert(Aabb::new(Point::new(11.0, 7.0), Point::new(13.0, 9.0))?, "elf")?;
/// grid.insert(Aabb::new(Point::new(40.0, 40.0), Point::new(90.0, 90.0))?, "dragon")?;
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
/// [`LooseGrid`](crate::LooseGrid) files elements in square cells (better when sizes vary
/// more and elements are moved one by one); [`PackedIndex`](crate::PackedIndex) for content
/// that does not move.
#[derive(Clone, Debug)]
pub struct SweepGrid<S, T> {
    /// The world declared at construction.
    world: Aabb<S>,
    /// Height of a band.
    height: S,
    /// `1 / height`.
    inv_height: S,
    /// Per band.
    bands: Vec<Band<S>>,
    /// `starts[b]..starts[b + 1]` are band `b`'s positions; `starts[bands]` is the number
    /// of positions.
    starts: Vec<u32>,
    /// The largest `reach` of any band (an upper bound).
    max_reach: u32,
    /// By position: the element's box, or a [`gap_box`].
    boxes: Vec<Aabb<S>>,
    /// By position: the element's value (`None` in a gap).
    values: Vec<Option<T>>,
    /// By position: the element's slot ([`NIL`] in a gap).
    owners: Vec<u32>,
    /// By slot: the element's position ([`NIL`] for a free slot).
    positions: Vec<u32>,
    /// By slot: the generation of its handle.
    generations: Vec<u32>,
    /// Free slots, reused last in first out.
    free: Vec<u32>,
    /// Live elements.
    len: usize,
    /// Live elements at the last layout ([`relay`](Self::relay)).
    laid_len: usize,
    /// Every slot's first generation (distinct per structure, so foreign handles are stale).
    salt: u32,
    /// `update_all` scratch: the elements changing band.
    movers: mutate::Movers<S, T>,
    /// `par_update_all` scratch, per run of bands: the elements changing band, and the
    /// slot-table entries to rewrite.
    run_scratch: Vec<mutate::RunScratch<S, T>>,
    /// `par_update_all` scratch: the runs of bands.
    runs: Vec<core::ops::Range<usize>>,
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// An empty grid over `world` with bands of height `band_height`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box or `band_height` is not
    /// finite and positive (or so small that the world would need more than 2^24 bands).
    ///
    /// ```
    /// use spatix::{Aabb, Error, Point, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 50.0))?;
    /// let grid = SweepGrid::<f64, ()>::new(world, 10.0)?;
    /// assert_eq!(grid.band_count(), 5);
    /// assert!(matches!(SweepGrid::<f64, ()>::new(world, 0.0), Err(Error::InvalidParameter(_))));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, band_height: S) -> Result<Self, Error> {
        world.valid_world()?;
        let inv_height = S::ONE / band_height;
        if !(band_height > S::ZERO && band_height.is_finite() && inv_height.is_finite()) {
            return Err(Error::InvalidParameter(
                "band height must be finite and positive",
            ));
        }
        let count = ((world.max.y.to_f64() - world.min.y.to_f64()) / band_height.to_f64())
            .ceil()
            .max(1.0);
        if count > MAX_BANDS {
            return Err(Error::InvalidParameter(
                "band height too small: more than 2^24 bands",
            ));
        }
        let count = count as usize;
        Ok(Self {
            world,
            height: band_height,
            inv_height,
            bands: vec![Band::EMPTY; count],
            starts: vec![0; count + 1],
            max_reach: 0,
            boxes: Vec::new(),
            values: Vec::new(),
            owners: Vec::new(),
            positions: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            len: 0,
            laid_len: 0,
            salt: next_salt(),
            movers: mutate::Movers::default(),
            run_scratch: Vec::new(),
            runs: Vec::new(),
        })
    }

    /// An empty grid over `world` whose band height is chosen from a sample of the boxes it
    /// will hold (typically the initial boxes themselves), with room reserved for the sample.
    ///
    /// The band height is three times the sample's mean box extent (mean of width and height),
    /// tuned on the agents of `spatix-workload` (move every agent, update, find
    /// all pairs, maintain), raised if needed so that bands hold at least 8 sampled elements
    /// on average and the world has at most 2^24 bands. Invalid boxes in the sample are
    /// ignored; an empty sample gives 64 bands.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `world` is not a valid box.
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let boxes: Vec<_> = (0..1000)
    ///     .map(|i| {
    ///         let p = Point::new((i % 40) as f32 * 25.0, (i / 40) as f32 * 40.0);
    ///         Aabb::from_center_half_extents(p, Point::new(2.0, 2.0))
    ///     })
    ///     .collect::<Result<_, _>>()?;
    /// let mut grid = SweepGrid::auto(world, &boxes)?;
    /// assert!(grid.band_height() >= 8.0);
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
    /// grid will hold: the band height still comes from the sample's mean extent, but the
    /// "about 8 elements per band" floor counts `total` elements (or the sample's, if more),
    /// and room is reserved for that many.
    ///
    /// # Errors
    /// As [`auto`](Self::auto).
    ///
    /// ```
    /// use spatix::{Aabb, Point, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
    /// let points: Vec<_> = (0..100) // a 10 x 10 lattice over the world
    ///     .map(|i| Aabb::point(Point::new((i % 10 * 1000 / 9) as f32, (i / 10 * 1000 / 9) as f32)))
    ///     .collect::<Result<_, _>>()?;
    /// // 100 sampled points standing for 100,000: bands of about 8 of them, not 8 of 100.
    /// let grid = SweepGrid::<f32, u64>::auto_sampled(world, &points, 100_000)?;
    /// assert_eq!(grid.band_height(), 0.08);
    /// assert_eq!(SweepGrid::<f32, u64>::auto(world, &points)?.band_height(), 80.0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn auto_sampled(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, Error> {
        let total = total.max(sample.len());
        let (world, height) = auto_layout(&world, sample, total)?;
        let mut grid = Self::new(world, height)?;
        grid.reserve(total);
        Ok(grid)
    }

    /// Reserves room for `additional` more elements, so that inserting them allocates
    /// nothing (unless they crowd into a few bands).
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = SweepGrid::<f64, ()>::new(world, 10.0)?;
    /// let before = grid.memory_bytes();
    /// grid.reserve(1000);
    /// assert!(grid.memory_bytes() > before);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        let positions = additional + additional / layout::GAP_EVERY + self.bands.len();
        self.boxes.reserve(positions);
        self.values.reserve(positions);
        self.owners.reserve(positions);
        self.positions.reserve(additional);
        self.generations.reserve(additional);
    }

    /// The world the grid was declared over.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(SweepGrid::<f32, ()>::new(world, 1.0)?.world(), world);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn world(&self) -> Aabb<S> {
        self.world
    }

    /// The height of a band.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, SweepGrid};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// assert_eq!(SweepGrid::<f32, ()>::new(world, 2.5)?.band_height(), 2.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn band_height(&self) -> S {
        self.height
    }

    /// The number of bands.
    ///
    /// ```
    /// # use spatix::{Aabb, Point, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 4.0))?;
    /// assert_eq!(SweepGrid::<f32, ()>::new(world, 3.0)?.band_count(), 2);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn band_count(&self) -> usize {
        self.bands.len()
    }

    /// The band of an element whose box starts at height `y` ([`Rows::band_of`]).
    #[inline]
    fn band_of(&self, y: S) -> u32 {
        self.rows().band_of(y)
    }

    /// What finding an element's band takes, apart from the grid.
    #[inline]
    fn rows(&self) -> Rows<S> {
        Rows {
            min_y: self.world.min.y,
            inv_height: self.inv_height,
            last: self.bands.len() as i64 - 1,
        }
    }

    /// The positions of band `b`.
    #[inline]
    fn range(&self, b: usize) -> core::ops::Range<usize> {
        self.starts[b] as usize..self.starts[b + 1] as usize
    }

    /// A lower bound of `min.y` for any element in band `b` or above.
    #[inline]
    fn floor_y(&self, b: usize) -> S {
        if b == 0 {
            return -S::INFINITY;
        }
        let y = self.world.min.y + S::from_f64(b as f64) * self.height;
        y - self.slack(y)
    }

    /// An upper bound of `y` for any `y` whose band is `b` or below.
    #[inline]
    fn ceil_y(&self, b: usize) -> S {
        if b + 1 >= self.bands.len() {
            return S::INFINITY;
        }
        let y = self.world.min.y + S::from_f64((b + 1) as f64) * self.height;
        y + self.slack(y)
    }

    /// A margin that covers the rounding of a band edge near `y`.
    #[inline]
    fn slack(&self, y: S) -> S {
        (y.abs_s() + self.world.min.y.abs_s() + self.height) * S::RELATIVE_SLACK
    }

    /// The element at a live position, as a visitor sees it.
    #[inline]
    fn item(&self, p: usize) -> Item<'_, S, T> {
        let slot = self.owners[p];
        Item {
            handle: Handle::new(slot, self.generations[slot as usize]),
            aabb: self.boxes[p],
            value: self.values[p]
                .as_ref()
                .expect("live positions hold a value"),
        }
    }
}

/// The grid keeps its elements itself, by position in band order.
impl<S: Scalar, T> Table<S, T> for SweepGrid<S, T> {
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.resolve(handle).map(|p| self.item(p))
    }

    #[inline]
    fn count(&self) -> usize {
        self.len
    }

    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        Iter::placed(&self.positions, self, self.len)
    }
}

impl<S: Scalar, T> TableMut<S, T> for SweepGrid<S, T> {
    /// A position.
    type At = usize;

    /// The position of a live handle's element.
    #[inline]
    fn resolve(&self, handle: Handle) -> Option<usize> {
        let slot = handle.slot() as usize;
        let p = *self.positions.get(slot)?;
        (p != NIL && Handle::new(handle.slot(), self.generations[slot]) == handle)
            .then_some(p as usize)
    }

    #[inline]
    fn value_of_mut(&mut self, handle: Handle) -> Option<&mut T> {
        let p = self.resolve(handle)?;
        Some(
            self.values[p]
                .as_mut()
                .expect("live positions hold a value"),
        )
    }
}

/// The world and band height [`SweepGrid::auto`] and [`SweepGrid::build_auto`] choose for a
/// sample: the world cut down to where the bulk of the sample lies, as the grids' `auto` do
/// ([`auto_world`]: a few stray elements far away are then filed in the border bands instead
/// of stretching every band), and bands of a few mean extents, holding a few elements each.
fn auto_layout<S: Scalar>(
    world: &Aabb<S>,
    sample: &[Aabb<S>],
    total: usize,
) -> Result<(Aabb<S>, S), Error> {
    let world = &auto_world(world, sample);
    world.valid_world()?;
    let (mut n, mut extent) = (0usize, 0.0f64);
    for b in sample.iter().filter(|b| b.is_valid()) {
        let s = b.size();
        extent += (s.x.to_f64() + s.y.to_f64()) * 0.5;
        n += 1;
    }
    let (width, height) = extent_of(world);
    let by_count = if n == 0 {
        height / 64.0
    } else {
        // Bands of `h` over the bulk's height hold about `n · h / height` elements each.
        AUTO_ELEMENTS_PER_BAND * bulk_extent(world, sample).1 / n.max(total) as f64
    };
    let by_extent = if n == 0 {
        0.0
    } else {
        AUTO_EXTENT_FACTOR * extent / n as f64
    };
    let mut h = by_extent.max(by_count).max(height / MAX_BANDS);
    if !(h > 0.0 && h.is_finite()) {
        h = if width.max(height) > 0.0 {
            width.max(height) / 64.0
        } else {
            1.0
        };
    }
    let h = S::from_f64(h);
    let h = if h > S::ZERO && h.is_finite() {
        h
    } else {
        S::ONE
    };
    Ok((*world, h))
}

impl<S: Scalar, T> Elements<S, T> for SweepGrid<S, T> {
    #[inline]
    fn item(&self, at: u32) -> Item<'_, S, T> {
        SweepGrid::item(self, at as usize)
    }
}

impl<S: Scalar, T> Holds<S, T> for SweepGrid<S, T> {
    type Table = Self;

    #[inline]
    fn table(&self) -> &Self {
        self
    }

    fn do_memory_bytes(&self) -> usize {
        let movers = self.movers.capacity()
            + self
                .run_scratch
                .iter()
                .map(|(movers, _)| movers.capacity())
                .sum::<usize>();
        let placed = self
            .run_scratch
            .iter()
            .map(|(_, placed)| placed.capacity())
            .sum::<usize>();
        self.boxes.capacity() * size_of::<Aabb<S>>()
            + self.values.capacity() * size_of::<Option<T>>()
            + (self.owners.capacity()
                + self.positions.capacity()
                + self.generations.capacity()
                + self.free.capacity()
                + self.starts.capacity())
                * size_of::<u32>()
            + self.bands.capacity() * size_of::<Band<S>>()
            + movers * size_of::<Mover<S, T>>()
            + placed * size_of::<(u32, u32)>()
            + self.run_scratch.capacity() * size_of::<mutate::RunScratch<S, T>>()
            + self.runs.capacity() * size_of::<core::ops::Range<usize>>()
    }
}

crate::contract::spatial_index!(
    SweepGrid,
    maintain {
        /// Tightens the reach and width of every band an element shrank in or left since they
        /// were last computed. O(bands + elements of those bands), no allocation.
    },
    update_all {
        /// Walks the bands in storage order: an element that stays in its band is written in
        /// place and moved left past the elements it overtook; one that changes band is placed in
        /// its new band once that band has been walked. Measures every band's reach and width on
        /// the way. No allocation once warm.
    }
);

impl<S, T> crate::Listed for SweepGrid<S, T> {
    const CLI: &'static str = "sweep";
    const ABOUT: &'static str = "`SweepGrid`: horizontal bands by the bottom of each box, each band sorted by the left; pairs by sweep-and-prune. Made for many similar agents moved every frame.";
}

/// [`SweepGrid::auto_sampled`].
impl<S: Scalar, T> crate::ListedIndex<S, T> for SweepGrid<S, T> {
    const BULK: bool = true;

    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], total: usize) -> Result<Self, crate::Error> {
        Self::auto_sampled(world, sample, total)
    }

    /// In one go: [`SweepGrid::build_auto`].
    fn with_items(world: Aabb<S>, items: Vec<(Aabb<S>, T)>) -> Result<Self, crate::Error> {
        Self::build_auto(world, items)
    }
}

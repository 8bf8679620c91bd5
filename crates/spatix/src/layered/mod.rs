//! Three sets as one index: common-size agents, oversized agents and static
//! scenery, each in the structure that suits it, behind one handle space.

use crate::base::slots::Slots;
use crate::grid::lattice::within_quarter;
use crate::{
    Aabb, Error, Handle, Item, LooseGrid, PackedIndex, PointGrid, Scalar, SpatialIndex, StaticIndex,
};

mod bytes;
mod mutate;
mod pairs;
mod query;
mod regions;
#[cfg(test)]
mod tests;
mod validate;

/// Which part of a [`Layered`] index holds an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Agents,
    Large,
    Static,
}

/// The parts that elements are inserted into, updated in and removed from one by one (the
/// static part is only ever rebuilt whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moving {
    Agents,
    Large,
}

impl From<Moving> for Part {
    fn from(part: Moving) -> Self {
        match part {
            Moving::Agents => Part::Agents,
            Moving::Large => Part::Large,
        }
    }
}

/// Where an element lives: its part and its handle there, and whether it is static (a static
/// element waits in a moving part until `maintain` builds it into the static part).
#[derive(Clone, Copy, Debug)]
struct Route {
    part: Part,
    is_static: bool,
    inner: Handle,
}

impl Route {
    /// The moving part the element is in, or `None` if it is in the static part.
    #[inline]
    fn moving(self) -> Option<Moving> {
        match self.part {
            Part::Agents => Some(Moving::Agents),
            Part::Large => Some(Moving::Large),
            Part::Static => None,
        }
    }
}

const _: () = assert!(size_of::<Route>() == 12);

/// Runs `$body` with `$p` bound to the part `$part` of `$index`: a shared reference to any
/// part, or, after `mut`, a mutable one to a [`Moving`] part; whatever its type.
macro_rules! on_part {
    (mut $index:expr, $part:expr, |$p:ident| $body:expr) => {
        match $part {
            Moving::Agents => {
                let $p = &mut $index.agents;
                $body
            }
            Moving::Large => {
                let $p = &mut $index.large;
                $body
            }
        }
    };
    ($index:expr, $part:expr, |$p:ident| $body:expr) => {
        match $part {
            Part::Agents => {
                let $p = &$index.agents;
                $body
            }
            Part::Large => {
                let $p = &$index.large;
                $body
            }
            Part::Static => {
                let $p = &$index.statics;
                $body
            }
        }
    };
}
use crate::contract::Holds;
use on_part;

/// A world split in three sets: dynamic agents of common size in a point
/// structure, dynamic agents of unusual size in a loose one, static scenery in a structure
/// that is slow to build but fastest to query, answered as one index.
///
/// An element whose box's half-width and half-height are both at most the *threshold* is an
/// agent, filed in part `A` (by default a [`PointGrid`] whose bound is the threshold: one
/// point per agent); a larger one goes to part `L` (by default a [`LooseGrid`], where a
/// dragon costs one entry). If part `A` refuses a box (a point grid refuses one over its
/// bound, which rounding can make of a box at the threshold), it goes to part `L`. An update
/// re-routes an element whose size crosses the threshold; its handle stays the same.
///
/// Elements inserted with [`Layered::insert_static`] are static: part `St` (by default a
/// [`PackedIndex`]) holds them, built from all of them at once by
/// [`maintain`](SpatialIndex::maintain). Until then a new static element waits in part `A`
/// or `L` (by size, as a moving one), so every result is exact at every moment; `maintain`
/// rebuilds the static part only when the static set changed since the last build, so a
/// frame without static changes costs nothing there. Static elements may be removed and
/// updated like any other, at a price: the built part cannot change, so a removed element
/// is only marked gone there (queries skip it), an updated one is marked gone and waits in
/// part `A` or `L` with its new box, and the next `maintain` rebuilds the whole static part.
/// They stay static (and their handles valid) through all of it. Insert the scenery, call
/// `maintain` once, then keep static changes rare.
///
/// Every query runs on the three parts and reports each element once;
/// [`for_each_pair`](crate::SpatialQuery::for_each_pair) runs each part's own pair pass (static
/// pairs included), then pairs across parts by iterating the smaller part of each pair of
/// parts and querying the other with each of its boxes, so each intersecting pair is
/// reported exactly once.
///
/// The parts store, as their value, the element's slot in the layered index, whose own slot
/// table holds the values and hands out the handles: handles are distinct across parts and
/// survive moves between them and rebuilds of the static part.
///
/// # When to use it
/// A game world with many similar agents, a few huge ones, and scenery that never moves:
/// each set in the structure that suits it, one index to query.
///
/// # Complexity
/// Each query is the sum of the three parts' queries; reporting an element also reads the
/// layered slot table (and, while the static part holds elements marked gone, each static
/// hit reads its route). for_each_pair is the three pair passes plus one query per element
/// of the smaller part of each pair of parts. Insert, remove and update are those of the
/// moving part (plus one insert and one remove when an update moves an element between
/// parts). `maintain` is the parts' `maintain`, plus, when the static set changed, one pass
/// over the routes and a build of the static part from every static element (O(n) for the
/// packed index), which allocates.
///
/// # Memory per element
/// The layered slot table (box, value and generation, as every structure's) and a 12-byte
/// route, plus what the element costs in its part (with a `u32` value: the layered slot).
///
/// # Errors
/// [`Layered::new`] and [`Layered::from_parts`] return [`Error::InvalidParameter`] for a
/// negative or non-finite threshold (and as the parts' constructors do); insert and update
/// return [`Error::InvalidAabb`] for an invalid box, update [`Error::StaleHandle`] for a stale
/// handle; nothing changes on error.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Layered, Point, SpatialIndex, SpatialQuery};
///
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
/// let mut index = Layered::new(world, 4.0)?; // agents: half-size up to 4
/// let orc = index.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(13.0, 13.0))?, "orc")?;
/// index.insert(Aabb::new(Point::new(0.0, 0.0), Point::new(200.0, 60.0))?, "dragon")?;
/// index.insert_static(Aabb::new(Point::new(12.0, 0.0), Point::new(14.0, 100.0))?, "wall")?;
/// index.maintain(); // builds the static part: the wall
/// assert_eq!(index.part_lens(), (1, 1, 1));
///
/// let mut pairs = Vec::new();
/// let _ = index.for_each_pair(|a, b| {
///     let mut pair = [*a.value, *b.value];
///     pair.sort();
///     pairs.push(pair);
///     ControlFlow::Continue(())
/// });
/// pairs.sort();
/// assert_eq!(pairs, [["dragon", "orc"], ["dragon", "wall"], ["orc", "wall"]]);
///
/// // The orc grows into a dragon: it moves to the large part, its handle stays valid.
/// index.update(orc, Aabb::new(Point::new(10.0, 10.0), Point::new(90.0, 90.0))?)?;
/// assert_eq!(*index.get(orc).unwrap().value, "orc");
/// index.check_invariants()?;
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`LooseGrid`] alone handles mixed sizes well; [`PointGrid`] alone suits one size class;
/// [`PackedIndex`] alone, scenery that never changes.
#[derive(Clone, Debug)]
pub struct Layered<S, T, A = PointGrid<S, u32>, L = LooseGrid<S, u32>, St = PackedIndex<S, u32>> {
    agents: A,
    large: L,
    statics: St,
    /// Largest half-width and half-height of an agent.
    threshold: S,
    /// Values, boxes and handles of every element.
    slots: Slots<S, T>,
    /// Where each slot's element lives (meaningless for a free slot).
    routes: Vec<Route>,
    /// Static elements waiting in a moving part for the next build of the static part.
    pending: usize,
    /// Elements of the static part that are no longer there (removed, or moved out by an
    /// update or a clear) until the next build; queries skip them.
    dead: usize,
}

impl<S: Scalar, T> Layered<S, T> {
    /// An empty index over `world` for agents whose half-width and half-height are at most
    /// `threshold`, with the default parts: agents in a [`PointGrid`] of that bound (cells
    /// four thresholds wide, at most 1024 along the world's longer side), larger elements
    /// in a [`LooseGrid`] with cells a 64th of the world's longer side (at least sixteen
    /// thresholds), static elements in a [`PackedIndex`] with the default configuration.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid world, a threshold that is negative, not
    /// finite or so large that twice it is not, or cells too small for the world (more than
    /// 2^28).
    ///
    /// ```
    /// use spatix::{Aabb, Layered, Point};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 100.0))?;
    /// let index = Layered::<f64, &str>::new(world, 1.0)?;
    /// assert_eq!(index.threshold(), 1.0);
    /// assert!(Layered::<f64, &str>::new(world, -1.0).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn new(world: Aabb<S>, threshold: S) -> Result<Self, Error> {
        check_threshold(threshold)?;
        // Both grids over the world's part within ±MAX/4 (elements beyond it are filed in
        // their border cells): cells over a wider world would not have a finite size.
        let world = within_quarter(&world.valid_world()?);
        let size = world.size();
        let side = size.x.max_s(size.y);
        let coarse = side * S::from_f64(1.0 / 64.0);
        let cell = coarse.max_s(threshold * S::from_f64(16.0));
        // No wider than the world (sixteen thresholds near MAX/16 reach MAX, whose inverse is
        // subnormal, or overflow): one cell over it holds any element.
        let cell = if cell.is_finite() && cell <= side {
            cell
        } else {
            side
        };
        let agents = PointGrid::new(world, threshold)?;
        let fine = side * S::from_f64(1.0 / MAX_AGENT_CELLS_PER_SIDE);
        let agents = if agents.cell_size() < fine {
            PointGrid::with_cell_size(world, threshold, fine)?
        } else {
            agents
        };
        let large = LooseGrid::new(world, if cell > S::ZERO { cell } else { S::ONE })?;
        let statics = PackedIndex::build([])?;
        Self::from_parts(agents, large, statics, threshold)
    }
}

/// [`Layered::new`]: at most this many cells of the agents' point grid along the world's
/// longer side (a grid search that finds too few elements nearby walks every cell).
const MAX_AGENT_CELLS_PER_SIDE: f64 = 1024.0;

/// [`Error::InvalidParameter`] unless `threshold` is finite and non-negative.
fn check_threshold<S: Scalar>(threshold: S) -> Result<(), Error> {
    if threshold.is_finite() && threshold >= S::ZERO {
        Ok(())
    } else {
        Err(Error::InvalidParameter(
            "the threshold must be finite and non-negative",
        ))
    }
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    /// An index made of three empty structures: `agents` for elements whose half-width and
    /// half-height are at most `threshold`, `large` for the others, `statics` for those
    /// inserted with [`Layered::insert_static`] (rebuilt by `maintain` with their parameters).
    /// Each stores, as its value, the element's slot in the layered index.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a part is not empty or the threshold is negative or not
    /// finite.
    ///
    /// ```
    /// use spatix::{Aabb, Layered, LooseGrid, PackedConfig, PackedIndex, Point};
    /// use spatix::{SpatialIndex, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::<f32, char, _, _, _>::from_parts(
    ///     UniformGrid::new(world, 8.0)?,
    ///     LooseGrid::new(world, 16.0)?,
    ///     PackedIndex::with_config([], PackedConfig { node_size: 8 })?,
    ///     1.0,
    /// )?;
    /// index.insert_static(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, 'r')?;
    /// index.maintain();
    /// assert_eq!(index.part_lens(), (0, 0, 1));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn from_parts(agents: A, large: L, statics: St, threshold: S) -> Result<Self, Error> {
        check_threshold(threshold)?;
        if !(agents.is_empty() && large.is_empty() && statics.is_empty()) {
            return Err(Error::InvalidParameter(
                "the parts of a layered index must be empty",
            ));
        }
        Ok(Self {
            agents,
            large,
            statics,
            threshold,
            slots: Slots::default(),
            routes: Vec::new(),
            pending: 0,
            dead: 0,
        })
    }

    /// The largest half-width and half-height of an agent.
    ///
    /// ```
    /// # use spatix::{Aabb, Layered, Point};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// assert_eq!(Layered::<f32, ()>::new(world, 2.5)?.threshold(), 2.5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn threshold(&self) -> S {
        self.threshold
    }

    /// How many elements each part holds: agents, large, static. A static element inserted
    /// or updated since the last [`maintain`](SpatialIndex::maintain) is counted in the
    /// moving part where it waits.
    ///
    /// ```
    /// # use spatix::{Aabb, Layered, Point, SpatialIndex};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::new(world, 1.0)?;
    /// index.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, ())?;
    /// index.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(9.0, 9.0))?, ())?;
    /// index.insert_static(Aabb::new(Point::new(5.0, 5.0), Point::new(6.0, 6.0))?, ())?;
    /// assert_eq!(index.part_lens(), (2, 1, 0));
    /// index.maintain();
    /// assert_eq!(index.part_lens(), (1, 1, 1));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn part_lens(&self) -> (usize, usize, usize) {
        (
            self.agents.len(),
            self.large.len(),
            self.statics.len().saturating_sub(self.dead),
        )
    }

    /// The element in layered slot `slot`, as a visitor sees it.
    #[inline]
    fn item(&self, slot: &u32) -> Item<'_, S, T> {
        self.slots.item(*slot)
    }

    /// Whether an element the static part reports is still there (not removed, moved out or
    /// cleared since the part was built): its slot is live and routed to it.
    #[inline]
    fn is_built(&self, e: &Item<'_, S, u32>) -> bool {
        self.dead == 0 || {
            let slot = *e.value;
            let route = self.routes[slot as usize];
            route.part == Part::Static && route.inner == e.handle && self.slots.is_live(slot)
        }
    }
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Holds<S, T> for Layered<S, T, A, L, St>
{
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.routes.capacity() * size_of::<Route>()
            + self.agents.memory_bytes()
            + self.large.memory_bytes()
            + self.statics.memory_bytes()
    }
}

crate::contract::spatial_index!(
    impl[A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>]
    Layered<S, T, A, L, St>,
    maintain {
        /// Rebuilds the static part if the static set changed since its last build (moving the
        /// waiting static elements into it), then runs the moving parts' `maintain`.
    }
);

impl<S, T> crate::Listed for Layered<S, T> {
    const CLI: &'static str = "layered";
    const ABOUT: &'static str =
        "`Layered`: agents up to the typical size in a point grid, larger ones in a loose grid.";
}

/// The 95th percentile of the sample's half sizes as the threshold: the common agents in the
/// point grid, the rare large ones in the loose grid.
impl<S: Scalar, T> crate::ListedIndex<S, T> for Layered<S, T> {
    fn for_sample(world: Aabb<S>, sample: &[Aabb<S>], _total: usize) -> Result<Self, Error> {
        Self::new(world, crate::structures::common_half_size(sample))
    }
}

//! Seed 001 §5's three sets as one index: common-size agents, oversized agents and static
//! scenery, each in the structure that suits it, behind one handle space.

use core::ops::ControlFlow;

use crate::handle::Slots;
use crate::{
    Aabb, Error, Handle, Item, Iter, LooseGrid, Neighbor, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, UniformGrid, Workspace,
};

mod mutate;
mod query;
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

/// Where an element lives: its part and its handle there.
#[derive(Clone, Copy, Debug)]
struct Route {
    part: Part,
    inner: Handle,
}

/// Runs `$body` with `$p` bound to the part `$part` of `$index` (a shared reference, or a
/// mutable one after `mut`), whatever its type.
macro_rules! on_part {
    (mut $index:expr, $part:expr, |$p:ident| $body:expr) => {
        match $part {
            Part::Agents => {
                let $p = &mut $index.agents;
                $body
            }
            Part::Large => {
                let $p = &mut $index.large;
                $body
            }
            Part::Static => {
                let $p = &mut $index.statics;
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
use on_part;

/// A world split the way seed 001 §5 proposes: dynamic agents of common size in one
/// structure, dynamic agents of unusual size in another, static scenery in a third, answered
/// as one index.
///
/// An element whose box's half-width and half-height are both at most the *threshold* is an
/// agent, filed in part `A` (by default a [`UniformGrid`]; a point grid suits it best: every
/// agent fits one bound); a larger one goes to part `L` (by default a [`LooseGrid`], where a
/// dragon costs one entry); elements inserted with [`Layered::insert_static`] go to part `St`
/// (by default a [`UniformGrid`]; a packed static index suits it best). An update re-routes an
/// element whose size crosses the threshold, and its handle stays the same; static elements
/// stay static. If part `A` refuses a box (a point grid whose bound is below the threshold),
/// the element goes to part `L` instead.
///
/// Every query runs on the three parts and reports each element once;
/// [`for_each_pair`](SpatialQuery::for_each_pair) runs each part's own pair pass, then pairs
/// across parts by iterating the smaller part of each pair of parts and querying the other
/// with each of its boxes, so each intersecting pair is reported exactly once.
///
/// The parts store, as their value, the element's slot in the layered index, whose own slot
/// table holds the values and hands out the handles: handles are distinct across parts and
/// survive moves between them.
///
/// # When to use it
/// A game world with many similar agents, a few huge ones, and scenery that never moves:
/// each set in the structure that suits it, one index to query.
///
/// # Complexity
/// Each query is the sum of the three parts' queries; reporting an element also reads the
/// layered slot table. for_each_pair is the three pair passes plus one query per element of
/// the smaller part of each pair of parts. Insert, remove and update are those of the part
/// (plus one insert and one remove when an update moves an element between parts).
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
/// [`LooseGrid`] alone handles mixed sizes well; [`UniformGrid`] alone suits one size class.
#[derive(Clone, Debug)]
pub struct Layered<S, T, A = UniformGrid<S, u32>, L = LooseGrid<S, u32>, St = UniformGrid<S, u32>> {
    agents: A,
    large: L,
    statics: St,
    /// Largest half-width and half-height of an agent.
    threshold: S,
    /// Values, boxes and handles of every element.
    slots: Slots<S, T>,
    /// Where each slot's element lives (meaningless for a free slot).
    routes: Vec<Route>,
}

impl<S: Scalar, T> Layered<S, T> {
    /// An empty index over `world` for agents whose half-width and half-height are at most
    /// `threshold`, with the default parts: agents in a [`UniformGrid`] with cells eight
    /// thresholds wide (a few agents across; at least a 256th of the world's longer side),
    /// larger elements in a [`LooseGrid`] with cells a 64th of the world's longer side (at
    /// least sixteen thresholds), static elements in a [`UniformGrid`] with cells a 64th of
    /// the world's longer side.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid world, a threshold that is negative or not
    /// finite, or cells too small for the world (more than 2^28).
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
        let size = world.size();
        let side = size.x.max_s(size.y);
        let coarse = side * S::from_f64(1.0 / 64.0);
        let fine = side * S::from_f64(1.0 / 256.0);
        let positive = |cell: S| if cell > S::ZERO { cell } else { S::ONE };
        let agents = UniformGrid::new(world, positive(fine.max_s(threshold * S::from_f64(8.0))))?;
        let large = LooseGrid::new(world, positive(coarse.max_s(threshold * S::from_f64(16.0))))?;
        let statics = UniformGrid::new(world, positive(coarse))?;
        Self::from_parts(agents, large, statics, threshold)
    }
}

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

impl<S, T, A, L, St> Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: SpatialIndex<S, u32>,
{
    /// An index made of three empty structures: `agents` for elements whose half-width and
    /// half-height are at most `threshold`, `large` for the others, `statics` for those
    /// inserted with [`Layered::insert_static`]. Each stores, as its value, the element's
    /// slot in the layered index.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a part is not empty or the threshold is negative or not
    /// finite.
    ///
    /// ```
    /// use spatix::{Aabb, Layered, LooseGrid, Point, Quadtree, SpatialIndex, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::<f32, char, _, _, _>::from_parts(
    ///     UniformGrid::new(world, 8.0)?,
    ///     LooseGrid::new(world, 16.0)?,
    ///     Quadtree::new(world)?,
    ///     1.0,
    /// )?;
    /// index.insert_static(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, 'r')?;
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

    /// How many elements each part holds: agents, large, static.
    ///
    /// ```
    /// # use spatix::{Aabb, Layered, Point, SpatialIndex};
    /// # let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::new(world, 1.0)?;
    /// index.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, ())?;
    /// index.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(9.0, 9.0))?, ())?;
    /// assert_eq!(index.part_lens(), (1, 1, 0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn part_lens(&self) -> (usize, usize, usize) {
        (self.agents.len(), self.large.len(), self.statics.len())
    }

    /// The element in layered slot `slot`, as a visitor sees it.
    #[inline]
    fn item(&self, slot: &u32) -> Item<'_, S, T> {
        self.slots.item(*slot)
    }
}

impl<S, T, A, L, St> SpatialQuery<S, T> for Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: SpatialIndex<S, u32>,
{
    fn get(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.slots.get(handle)
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn iter(&self) -> Iter<'_, S, T> {
        self.slots.iter()
    }

    fn query<F>(&self, area: &Aabb<S>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.query_parts(area, visit)
    }

    fn for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs(visit)
    }

    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        self.nearest_parts(point, k, workspace)
    }

    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        self.raycast_parts(ray, workspace, visit)
    }

    fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.routes.capacity() * size_of::<Route>()
            + self.agents.memory_bytes()
            + self.large.memory_bytes()
            + self.statics.memory_bytes()
    }

    fn check_invariants(&self) -> Result<(), Error> {
        self.validate()
    }
}

impl<S, T, A, L, St> SpatialIndex<S, T> for Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: SpatialIndex<S, u32>,
{
    fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let aabb = aabb.validated()?;
        let part = self.part_for(&aabb);
        self.insert_in(part, aabb, value)
    }

    fn remove(&mut self, handle: Handle) -> Option<T> {
        self.remove_element(handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        self.update_element(handle, aabb)
    }

    fn clear(&mut self) {
        self.agents.clear();
        self.large.clear();
        self.statics.clear();
        self.slots.clear();
    }

    /// Each part's `maintain`.
    fn maintain(&mut self) {
        self.agents.maintain();
        self.large.maintain();
        self.statics.maintain();
    }
}

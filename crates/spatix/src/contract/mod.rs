//! The contract every structure keeps, and the oracle every structure is tested against.

pub(crate) mod brute;

pub(crate) mod engine;

pub(crate) mod probe;

#[cfg(test)]
mod regions_tests;

use core::ops::ControlFlow;

pub(crate) use engine::{
    Cast, Hits, Holds, Mutates, Nearest, Pairs, Regions, Searches, Table, TableMut, Through,
    Validates, Visits, VisitsPairs, spatial_index, spatial_query,
};

pub use probe::{Probe, QueryCost, Region, RegionKind};

use crate::{Aabb, Error, Handle, Item, Iter, Neighbor, Point, Ray, RayHit, Scalar, Workspace};

/// The read half of the contract: every query, on every structure, static or dynamic.
///
/// * Boxes are closed ([`Aabb::intersects`]).
/// * Every query reports each matching element exactly once; [`for_each_pair`] reports each
///   intersecting unordered pair exactly once.
/// * Queries take `&self` (many threads may query at once) and do not allocate once warm
///   (those that need scratch memory take a caller-owned [`Workspace`]).
/// * Visitors return [`ControlFlow::Break`] to stop early; queries then return `Break` too.
///
/// Static structures (built once) implement this trait; dynamic ones implement
/// [`SpatialIndex`] on top of it.
///
/// [`for_each_pair`]: SpatialQuery::for_each_pair
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, Quadtree, SpatialIndex, SpatialQuery};
///
/// fn colliding<I: SpatialQuery<f32, u32>>(index: &I) -> usize {
///     let mut n = 0;
///     let _ = index.for_each_pair(|_, _| { n += 1; ControlFlow::Continue(()) });
///     n
/// }
/// let world = Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0))?;
/// let mut tree = Quadtree::new(world)?;
/// tree.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(3.0, 3.0))?, 1)?;
/// tree.insert(Aabb::new(Point::new(2.0, 2.0), Point::new(4.0, 4.0))?, 2)?;
/// assert_eq!(colliding(&tree), 1);
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait SpatialQuery<S: Scalar, T> {
    /// The element a handle names, or `None` if the handle is stale.
    fn get(&self, handle: Handle) -> Option<Item<'_, S, T>>;

    /// Number of elements stored.
    fn len(&self) -> usize;

    /// Whether no element is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element, in slot order.
    fn iter(&self) -> Iter<'_, S, T>;

    /// Visits every element whose box intersects `area`, each exactly once. An invalid `area`
    /// matches nothing.
    fn query<F>(&self, area: &Aabb<S>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>;

    /// Visits every unordered pair of distinct elements whose boxes intersect, each exactly
    /// once, in no particular order (the broad phase of a collision pass).
    fn for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>;

    /// The `k` elements nearest to `point` (distance to the nearest point of their box),
    /// ascending; fewer when the structure holds fewer, none for a non-finite point. Ties at
    /// the k-th distance are broken arbitrarily. The result lives in `workspace`, which keeps
    /// its memory for the next call.
    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>];

    /// Visits every element at distance `<= radius` from `point`, each exactly once. A
    /// negative or NaN radius, or a non-finite point, matches nothing; an infinite radius
    /// matches everything.
    fn within<F>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !(point.is_finite() && radius >= S::ZERO) {
            return ControlFlow::Continue(());
        }
        self.query(
            &Aabb::around(point, radius),
            engine::within_filter(point, radius, visit),
        )
    }

    /// Visits every element the ray hits ([`Aabb::ray_entry`] is `Some`), each exactly once,
    /// in ascending order of its entry parameter `t` (ties in any order), with that `t`. An
    /// invalid ray hits nothing. The search's scratch memory lives in `workspace`.
    ///
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, Point, Ray, SpatialIndex, SpatialQuery, UniformGrid, Workspace};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = UniformGrid::new(world, 10.0)?;
    /// for x in [70.0, 30.0, 50.0] {
    ///     grid.insert(Aabb::new(Point::new(x, 0.0), Point::new(x + 1.0, 100.0))?, x)?;
    /// }
    /// let ray = Ray::new(Point::new(0.0, 50.0), Point::new(1.0, 0.0), 60.0)?;
    /// let mut walls = Vec::new();
    /// let _ = grid.raycast_all(&ray, &mut Workspace::new(), |item, t| {
    ///     walls.push((*item.value, t));
    ///     ControlFlow::Continue(())
    /// });
    /// assert_eq!(walls, [(30.0, 30.0), (50.0, 50.0)]);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>;

    /// The first element the ray hits (smallest entry parameter; ties broken arbitrarily), or
    /// `None`.
    fn raycast(&self, ray: &Ray<S>, workspace: &mut Workspace<S>) -> Option<RayHit<S>> {
        let mut first = None;
        let _ = self.raycast_all(ray, workspace, |item, t| {
            first = Some(RayHit {
                handle: item.handle,
                t,
            });
            ControlFlow::Break(())
        });
        first
    }

    /// Visits every region of the structure's shape ([`Region`]), parents before children,
    /// e.g. to draw it: the grids' non-empty cells (per level for the point and hierarchical
    /// grids), the quadtrees' nodes, the sweep grid's bands, the packed index's nodes, the
    /// kd-tree's splits and buckets, [`Layered`](crate::Layered)'s parts each followed by its
    /// own regions, a brute-force index's one cell. Every element is listed by at least one
    /// region whose box it meets (clamped into the structure's world, for the structures that
    /// file elements outside it in their border cells or nodes). Allocates nothing. Returns
    /// `Break` if `visit` did.
    ///
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, Point, Quadtree, RegionKind, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
    /// let mut tree = Quadtree::new(world)?;
    /// for i in 0..40 {
    ///     tree.insert(Aabb::point(Point::new(i as f32 + 0.5, i as f32 + 0.5))?, i)?;
    /// }
    /// let (mut listed, mut deepest) = (0, 0);
    /// let _ = tree.visit_regions(|r| {
    ///     if r.kind == RegionKind::Leaf {
    ///         listed += r.elements;
    ///     }
    ///     deepest = deepest.max(r.depth);
    ///     ControlFlow::Continue(())
    /// });
    /// assert_eq!(listed, 40); // points lie in one leaf each
    /// assert!(deepest >= 2);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn visit_regions<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(&Region<S>) -> ControlFlow<()>;

    /// [`query`](Self::query), telling `probe` every region it enters and every element whose
    /// box it tests ([`Probe`]); the answers are the same.
    ///
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, Point, QueryCost, SpatialIndex, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut sweep = SweepGrid::new(world, 10.0)?;
    /// for i in 0..100 {
    ///     sweep.insert(Aabb::point(Point::new(i as f32, i as f32))?, i)?;
    /// }
    /// let area = Aabb::new(Point::new(0.0, 0.0), Point::new(10.0, 10.0))?;
    /// let (mut cost, mut found) = (QueryCost::default(), 0);
    /// let _ = sweep.query_probed(&area, &mut cost, |_| { found += 1; ControlFlow::Continue(()) });
    /// assert_eq!(found, 11);
    /// assert!(cost.candidates >= found && cost.candidates < 100 && cost.regions >= 1);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn query_probed<P: Probe<S>, F>(
        &self,
        area: &Aabb<S>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>;

    /// [`nearest`](Self::nearest), telling `probe` every region it enters and every element
    /// whose distance it computes ([`Probe`]); the answers are the same.
    ///
    /// ```
    /// use spatix::{KdTree, Point, QueryCost, SpatialQuery, Workspace};
    /// let points = (0..1000).map(|i| (Point::new((i % 40) as f64, (i / 40) as f64), i));
    /// let tree = KdTree::build(points)?;
    /// let mut cost = QueryCost::default();
    /// let mut workspace = Workspace::new();
    /// let found = tree.nearest_probed(Point::new(10.2, 10.1), 6, &mut workspace, &mut cost);
    /// assert_eq!(found.len(), 6);
    /// assert!(cost.candidates >= 6 && cost.candidates < 1000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn nearest_probed<'w, P: Probe<S>>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        probe: &mut P,
    ) -> &'w [Neighbor<S>];

    /// [`raycast_all`](Self::raycast_all), telling `probe` every region it enters and every
    /// element whose box it tests against the ray ([`Probe`]); the answers are the same.
    ///
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, Point, QueryCost, Ray, SpatialIndex, SpatialQuery, UniformGrid, Workspace};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = UniformGrid::new(world, 10.0)?;
    /// for i in 0..10 {
    ///     grid.insert(Aabb::point(Point::new(5.0, i as f32 * 10.0 + 5.0))?, i)?;
    /// }
    /// let ray = Ray::new(Point::new(0.0, 5.0), Point::new(1.0, 0.0), 100.0)?;
    /// let mut cost = QueryCost::default();
    /// let mut hits = 0;
    /// let _ = grid.raycast_all_probed(&ray, &mut Workspace::new(), &mut cost, |_, _| {
    ///     hits += 1;
    ///     ControlFlow::Continue(())
    /// });
    /// assert_eq!(hits, 1);
    /// assert!(cost.candidates >= 1 && cost.regions >= 1);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn raycast_all_probed<P: Probe<S>, F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>;

    /// Bytes of heap memory the structure holds (capacity, not length), values included.
    fn memory_bytes(&self) -> usize;

    /// Checks every structural invariant; used by the tests after every mutation.
    ///
    /// # Errors
    /// [`Error::InvariantViolated`] naming the first inconsistency found.
    fn check_invariants(&self) -> Result<(), Error>;
}

/// A dynamic 2D spatial index of boxes with values: the contract every dynamic structure in
/// spatix keeps, so that they can be swapped for one another and all be checked against
/// [`BruteForce`](crate::BruteForce). Its queries are those of [`SpatialQuery`].
///
/// * A NaN, infinite or inverted box is rejected with [`Error::InvalidAabb`] and nothing
///   changes; a stale handle is rejected with `None` or [`Error::StaleHandle`].
/// * Holds outside a structure's declared world are still stored and found.
///
/// # Example
/// ```
/// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
///
/// fn spawn<I: SpatialIndex<f32, &'static str>>(index: &mut I) -> Result<(), spatix::Error> {
///     let h = index.insert(Aabb::point(Point::new(5.0, 5.0))?, "orc")?;
///     index.update(h, Aabb::point(Point::new(6.0, 5.0))?)?;
///     assert_eq!(index.remove(h), Some("orc"));
///     assert_eq!(index.remove(h), None);
///     Ok(())
/// }
/// let world = Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// spawn(&mut grid)?;
/// assert!(grid.is_empty());
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait SpatialIndex<S: Scalar, T>: SpatialQuery<S, T> {
    /// Stores `value` with box `aabb` and returns its handle.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] for an invalid box; [`Error::CapacityExceeded`] past 2^32 - 2
    /// elements. Nothing changes on error.
    fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error>;

    /// Removes an element and returns its value; `None` (and no change) for a stale handle.
    fn remove(&mut self, handle: Handle) -> Option<T>;

    /// Moves an element to a new box. When it stays in its cell or leaf this touches nothing
    /// but the element's own box.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] for an invalid box, [`Error::StaleHandle`] for a stale handle;
    /// nothing changes on error.
    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error>;

    /// The value of the element a handle names, for changing it in place; `None` for a stale
    /// handle.
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = LooseGrid::new(world, 10.0)?;
    /// let h = grid.insert(Aabb::point(Point::new(5.0, 5.0))?, 1u32)?;
    /// *grid.value_mut(h).unwrap() += 1;
    /// assert_eq!(*grid.get(h).unwrap().value, 2);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn value_mut(&mut self, handle: Handle) -> Option<&mut T>;

    /// The frame pass: calls `f(handle, &mut value, &box)` once for every element, in the
    /// order the structure stores them, and moves the element to the box `f` returns (as
    /// [`update`](Self::update) would). Walking the structure's own memory in order, rather
    /// than visiting elements by handle in the caller's order, is what makes a frame of many
    /// moving agents cheap: keep each agent's state (position, velocity) as its value, and
    /// step it inside `f`.
    ///
    /// `f` may change the value; it must not assume any particular order between elements,
    /// and it sees every element exactly once, with the box it had before this call.
    ///
    /// # Errors
    /// When `f` returns a box the structure refuses ([`Error::InvalidAabb`] for a NaN,
    /// infinite or inverted box; [`Error::BoxTooLarge`] where a structure bounds the size),
    /// that element keeps its previous box (its value keeps what `f` wrote), the pass goes on
    /// with the other elements, and the call returns the error of the first refusal. To know
    /// which elements were refused, compare the returned box inside `f` yourself (for
    /// example with [`Aabb::is_valid`]) or read [`get`](SpatialQuery::get) afterwards:
    /// a refused element still has the box `f` was given.
    ///
    /// # Example
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, LooseGrid, Point, SpatialIndex, SpatialQuery};
    ///
    /// struct Agent { velocity: Point<f32> }
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = LooseGrid::new(world, 10.0)?;
    /// for x in [10.0, 20.0] {
    ///     let b = Aabb::new(Point::new(x, 10.0), Point::new(x + 2.0, 12.0))?;
    ///     grid.insert(b, Agent { velocity: Point::new(4.0, 0.0) })?;
    /// }
    /// // One frame: every agent moves by its velocity, then the colliding pairs.
    /// grid.update_all(|_, agent, b| {
    ///     let v = agent.velocity;
    ///     Aabb { min: Point::new(b.min.x + v.x, b.min.y), max: Point::new(b.max.x + v.x, b.max.y) }
    /// })?;
    /// let mut pairs = 0;
    /// let _ = grid.for_each_pair(|_, _| { pairs += 1; ControlFlow::Continue(()) });
    /// assert_eq!(pairs, 0);
    /// assert_eq!(grid.iter().filter(|item| item.aabb.min.x == 24.0).count(), 1);
    ///
    /// // A refused box leaves its element where it was; the others still move.
    /// let result = grid.update_all(|_, _, b| {
    ///     if b.min.x < 20.0 { Aabb { min: b.max, max: b.min } } else { *b }
    /// });
    /// assert_eq!(result, Err(spatix::Error::InvalidAabb));
    /// assert_eq!(grid.len(), 2);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
    {
        update_by_walk(self, f)
    }

    /// Removes every element; every handle given out so far becomes stale. Keeps the
    /// allocated memory for reuse.
    fn clear(&mut self);

    /// Deferred tidying, once per frame (collapse empty branches, shrink loose boxes).
    /// Results are correct whether or not it is called.
    fn maintain(&mut self) {}
}

/// [`SpatialIndex::update_all`] element by element: the elements in table order, each moved
/// with [`SpatialIndex::update`] when `f` changes its box.
#[inline]
fn update_by_walk<S: Scalar, T, I, F>(index: &mut I, mut f: F) -> Result<(), Error>
where
    I: SpatialIndex<S, T> + ?Sized,
    F: FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
{
    let mut outcome = Ok(());
    let mut cursor = 0;
    while let Some((handle, old)) = index.iter().element_from(&mut cursor) {
        let Some(value) = index.value_mut(handle) else {
            continue;
        };
        let new = f(handle, value, &old);
        if new != old {
            if let Err(e) = index.update(handle, new) {
                outcome = outcome.and(Err(e));
            }
        }
    }
    outcome
}

/// A static structure (built once from all its elements, [`SpatialQuery`] only) that can be
/// built again from a new set: what [`Layered`](crate::Layered) needs of its static part.
/// [`PackedIndex`](crate::PackedIndex) implements it.
///
/// # Example
/// ```
/// use spatix::{Aabb, PackedIndex, Point, SpatialQuery, StaticIndex};
/// let mut index = PackedIndex::<f32, char>::build([])?;
/// index.rebuild([(Aabb::point(Point::new(1.0, 2.0))?, 'a')])?;
/// assert_eq!(index.iter().map(|item| *item.value).collect::<Vec<_>>(), ['a']);
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait StaticIndex<S: Scalar, T>: SpatialQuery<S, T> {
    /// Replaces every element with `items`, keeping the structure's parameters. Every handle
    /// given out before becomes stale; [`iter`](SpatialQuery::iter) gives the new ones.
    ///
    /// # Errors
    /// What the structure's build returns ([`Error::InvalidAabb`] for an invalid box,
    /// [`Error::CapacityExceeded`] past its capacity); nothing changes on error.
    fn rebuild<I>(&mut self, items: I) -> Result<(), Error>
    where
        I: IntoIterator<Item = (Aabb<S>, T)>;
}

//! The static kd-tree, built the fast way: one flat array of points reordered in
//! place by median selection, implicit nodes, contiguous leaf buckets.

mod build;
mod bytes;
mod metric;
mod pairs;
mod query;
mod regions;
mod select;
mod splits;
#[cfg(test)]
mod tests;
mod validate;
#[cfg(feature = "views")]
mod view;

use core::ops::ControlFlow;

use self::metric::Magnitudes;
use self::splits::Splits;
#[cfg(feature = "views")]
pub use self::view::KdTreeView;
use crate::base::slots::Iter;
use crate::contract::{Holds, Table, Through};
use crate::{Aabb, Error, Handle, Item, Point, Scalar};

/// How a node of a [`KdTree`] chooses the axis it splits.
///
/// ```
/// use spatix::{KdTreeConfig, SplitRule};
/// let config = KdTreeConfig { split: SplitRule::Cycle, ..KdTreeConfig::default() };
/// assert_eq!(KdTreeConfig::default().split, SplitRule::Spread);
/// # let _ = config;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitRule {
    /// The axis along which the node's points spread widest (largest `max - min`): one cheap
    /// pass over the node's points. The default.
    #[default]
    Spread,
    /// The axis of larger variance (the classic rule): one pass over the node's points,
    /// accumulated in `f64`.
    Variance,
    /// x at even depths and y at odd depths (the cheapest rule): no pass at all, but
    /// poor splits for data much longer on one axis than on the other.
    Cycle,
}

/// Tuning parameters of a [`KdTree`].
///
/// # Example
/// ```
/// use spatix::KdTreeConfig;
/// let config = KdTreeConfig { bucket_size: 32, ..KdTreeConfig::default() };
/// assert!(config.validate().is_ok());
/// assert!(KdTreeConfig { bucket_size: 0, ..config }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdTreeConfig {
    /// Most points a leaf holds. The tree halves its points until every leaf holds at most
    /// this many, so leaves hold between about half of it and all of it (and never none).
    /// Default 16: of 8, 16, 32 and 64, the fastest for 8-nearest queries on a million
    /// points (32 builds about 10% faster, and answers them about 10% slower). Range
    /// 2..=65536.
    pub bucket_size: u32,
    /// How each node picks its split axis. Default [`SplitRule::Spread`].
    pub split: SplitRule,
}

impl Default for KdTreeConfig {
    fn default() -> Self {
        Self {
            bucket_size: 16,
            split: SplitRule::Spread,
        }
    }
}

impl KdTreeConfig {
    /// Checks the parameters' ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the parameter out of range.
    ///
    /// ```
    /// use spatix::KdTreeConfig;
    /// assert!(KdTreeConfig { bucket_size: 100_000, ..Default::default() }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(2..=65536).contains(&self.bucket_size) {
            return Err(Error::InvalidParameter("bucket_size must be in 2..=65536"));
        }
        Ok(())
    }
}

/// The deepest tree there can be: fewer than 2^32 points, halved down to at most two per
/// leaf.
const MAX_HEIGHT: usize = 31;

/// Most entries a depth-first walk keeps pending: one per level, plus the root.
const MAX_PENDING: usize = MAX_HEIGHT + 2;

/// An internal node: the splitting coordinate and its axis. Points in the left subtree have a
/// coordinate `<= value` on that axis, points in the right subtree `>= value` (points equal
/// to the median may fall on either side, which is what keeps the tree balanced however many
/// coordinates are equal).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Split<S> {
    value: S,
    /// 0 for x, 1 for y.
    axis: u32,
}

const _: () = assert!(size_of::<Split<f32>>() == 8 && size_of::<Split<f64>>() == 16);

impl<S: Scalar> Split<S> {
    /// A node's region cut at this split: the left child's part and the right child's
    /// (closed: both hold the split line).
    #[inline]
    fn cut(&self, region: &Aabb<S>) -> (Aabb<S>, Aabb<S>) {
        let axis = self.axis as usize;
        let (mut left, mut right) = (*region, *region);
        set_coord(&mut left.max, axis, self.value);
        set_coord(&mut right.min, axis, self.value);
        (left, right)
    }
}

/// The whole plane: the region of the root when only splits bound regions.
fn everywhere<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(-S::INFINITY, -S::INFINITY),
        max: Point::new(S::INFINITY, S::INFINITY),
    }
}

/// The implicit shape of the tree: with `n` points and `height` levels of internal nodes,
/// leaf `j` (of `2^height`) holds the points at positions `floor(j·n / 2^height)` up to
/// `floor((j+1)·n / 2^height)`. Every node's range and median position follow from its
/// first leaf and its height, so nodes store nothing but their split.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Shape {
    n: usize,
    height: u32,
}

impl Shape {
    /// The lowest tree whose leaves hold at most `bucket` of `n` points. With `bucket >= 2`,
    /// every leaf holds more than `bucket / 2` points, so none is empty and every node's
    /// right half holds at least one point.
    fn new(n: usize, bucket: u32) -> Self {
        let mut height = 0;
        while n as u64 > u64::from(bucket) << height {
            height += 1;
        }
        Self { n, height }
    }

    /// Internal nodes: `2^height - 1`.
    fn nodes(&self) -> usize {
        (1usize << self.height) - 1
    }

    /// The first position of leaf `leaf` (or `n` for `leaf == 2^height`).
    #[inline]
    fn start(&self, leaf: usize) -> usize {
        ((leaf as u64 * self.n as u64) >> self.height) as usize
    }

    #[inline]
    fn root(&self) -> Cursor {
        Cursor {
            leaf: 0,
            height: self.height,
        }
    }

    /// The positions of a node's points.
    #[inline]
    fn range(&self, c: Cursor) -> core::ops::Range<usize> {
        let leaf = c.leaf as usize;
        self.start(leaf)..self.start(leaf + (1 << c.height))
    }
}

/// A node during a traversal: its first leaf and its height (0 for a leaf). A node of height
/// `h` is the one whose leaves are `leaf..leaf + 2^h`, with `leaf` a multiple of `2^h`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cursor {
    leaf: u32,
    height: u32,
}

impl Cursor {
    /// One child of an internal node: the right one (coordinates `>=` the split) if `right`.
    #[inline]
    fn child(self, right: bool) -> Self {
        Self {
            leaf: self.leaf + (u32::from(right) << (self.height - 1)),
            height: self.height - 1,
        }
    }

    /// The two children of an internal node (left: coordinates `<=` the split).
    #[inline]
    fn children(self) -> (Self, Self) {
        (self.child(false), self.child(true))
    }
}

/// A coordinate of a point by axis (0: x, 1: y).
#[inline]
fn coord<S: Scalar>(p: &Point<S>, axis: usize) -> S {
    if axis == 0 { p.x } else { p.y }
}

/// Sets a coordinate of a point by axis.
#[inline]
fn set_coord<S: Scalar>(p: &mut Point<S>, axis: usize, v: S) {
    if axis == 0 { p.x = v } else { p.y = v }
}

/// A static kd-tree of points with a value each, built once and then queried:
/// k-nearest neighbours, points within a radius, points in a rectangle, coincident pairs and
/// ray casts, from many threads at once.
///
/// Every node splits its points at their median, on the axis along which
/// they spread widest ([`SplitRule`]: the variance and cycling rules are options), and
/// the nearest-neighbour search descends towards the query point and backtracks into the
/// other side of a split only when the split line is closer than the k-th best so far.
/// Built the fast way: the points are copied once into one flat array that the build reorders
/// in place by median selection (O(n log n), no allocation per node); nodes are implicit
/// (each stores only its split, in cache-line blocks), and the leaves are contiguous runs of
/// the points in tree order, scanned linearly. Splitting by position rather than by value
/// keeps the tree balanced whatever the data: any number of equal coordinates, even all
/// points identical, gives a tree of the same depth, `ceil(log2(n / bucket_size))`.
///
/// Elements are points: each is the zero-size box of its point, so the contract's rules apply
/// unchanged (two elements intersect only where they coincide). Distances are exact for every
/// finite coordinate: where squares could overflow or underflow (coordinates beyond about
/// 10^18 in `f32` or 10^153 in `f64`, or tiny ones), the search ranks by scaled distances
/// instead, so far points never tie at infinity nor near ones at zero.
///
/// # Handles
/// The tree keeps no slot table. An element's [`Handle`] names its position in the tree
/// order ([`Handle::slot`] is in `0..len`, the order of [`iter`](crate::SpatialQuery::iter),
/// **not** the point's position in the input), with one generation per tree, so
/// [`get`](crate::SpatialQuery::get) is one array access and a handle from another tree is
/// stale here. To find an input's element, keep its input position in the value (as the
/// example does).
///
/// # When to use it
/// Points that do not move (or that are rebuilt every frame: building a million points takes
/// tens of milliseconds), queried often, above all for nearest neighbours and radius queries.
/// For boxes, or for points that move a little every frame, use a dynamic structure such as
/// [`UniformGrid`](crate::UniformGrid), which updates in place.
///
/// # Complexity
/// Build O(n log n). Nearest O(log n + k) on typical data. Query O(log n + reported).
/// Within O(log n + reported). `for_each_pair` O(n + pairs) on typical data (a point on a
/// split line is looked up in the rest of the tree). Raycast: best-first over node regions.
///
/// Memory per element: the point (8 bytes in `f32`) and the value, in tree order, plus the
/// splits in blocks of 15 (64 bytes in `f32`) for every `bucket_size / 2` to `bucket_size`
/// points: 12.3 bytes per point in `f32` with `u32` values.
///
/// # Errors
/// Building fails with [`Error::InvalidAabb`] for a NaN or infinite coordinate,
/// [`Error::CapacityExceeded`] past 2^32 - 2 points, and [`Error::InvalidParameter`] for a
/// configuration out of range. Queries never fail.
///
/// # Example
/// ```
/// use spatix::{KdTree, Point, SpatialQuery, Workspace};
/// let towns = [("Arles", 4.6, 43.7), ("Nîmes", 4.4, 43.8), ("Lyon", 4.8, 45.8)];
/// let tree = KdTree::build(towns.iter().map(|&(name, x, y)| (Point::new(x, y), name)))?;
/// let mut ws = Workspace::new();
/// let two = tree.nearest(Point::new(4.5, 43.7), 2, &mut ws);
/// let names: Vec<_> = two.iter().map(|n| *tree.get(n.handle).unwrap().value).collect();
/// assert_eq!(names, ["Arles", "Nîmes"]);
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`BruteForce`](crate::BruteForce) below about 64 points; the dynamic structures when
/// points come and go.
#[derive(Clone, Debug)]
pub struct KdTree<S, T> {
    config: KdTreeConfig,
    shape: Shape,
    /// The internal nodes' splits, in cache-line blocks.
    splits: Splits<S>,
    /// The points in tree order: each leaf is a contiguous run. A handle's slot is an index
    /// here.
    points: Vec<[S; 2]>,
    /// The values in tree order, read only for the elements a query reports.
    values: Vec<T>,
    /// The smallest box holding every point (the root's region).
    bounds: Aabb<S>,
    /// Where the points' coordinates lie, for the choice of distance arithmetic.
    magnitudes: Magnitudes,
    /// The generation of every element's handle: a per-tree salt, so that another tree's
    /// handles are stale here.
    generation: u32,
}

impl<S: Scalar, T> KdTree<S, T> {
    /// The configuration the tree was built with.
    ///
    /// ```
    /// use spatix::{KdTree, KdTreeConfig, Point};
    /// let tree = KdTree::build([(Point::new(0.0f32, 0.0), ())])?;
    /// assert_eq!(tree.config(), KdTreeConfig::default());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn config(&self) -> KdTreeConfig {
        self.config
    }

    /// Levels of internal nodes: `ceil(log2(len / bucket_size))`, 0 when every point fits
    /// in one leaf. It depends only on the number of points, never on their coordinates.
    ///
    /// ```
    /// use spatix::{KdTree, Point};
    /// let same = (0..1000).map(|i| (Point::new(1.0f64, 1.0), i));
    /// assert_eq!(KdTree::build(same)?.height(), 6); // 1000 / 2^6 <= 16
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.shape.height
    }

    /// The tree's arrays, borrowed: what every query reads (a [`KdTreeView`] lends the same
    /// from its bytes).
    #[inline]
    pub(crate) fn tree(&self) -> Kd<'_, S, T> {
        Kd {
            config: self.config,
            shape: self.shape,
            splits: self.splits.as_ref(),
            points: &self.points,
            values: &self.values,
            bounds: self.bounds,
            magnitudes: self.magnitudes,
            generation: self.generation,
        }
    }
}

/// A kd-tree's arrays, borrowed from a [`KdTree`] or from the bytes a [`KdTreeView`] reads:
/// every query, the pair pass and the self-check are written once, over this. The shape
/// follows from the point count and the bucket size, and a view's splits, points and values
/// are as many as the shape has (checked when it is opened), so no traversal indexes past an
/// array, whatever the coordinates hold.
#[derive(Debug)]
pub(crate) struct Kd<'a, S, T> {
    config: KdTreeConfig,
    shape: Shape,
    splits: splits::SplitsRef<'a, S>,
    points: &'a [[S; 2]],
    values: &'a [T],
    bounds: Aabb<S>,
    magnitudes: Magnitudes,
    generation: u32,
}

impl<S: Copy, T> Clone for Kd<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: Copy, T> Copy for Kd<'_, S, T> {}

impl<'a, S: Scalar, T> Kd<'a, S, T> {
    /// The handle of the element at tree position `i`.
    #[inline]
    fn handle(&self, i: usize) -> Handle {
        Handle::new(i as u32, self.generation)
    }

    /// The element at tree position `i`, as a visitor sees it.
    #[inline]
    fn item(&self, i: usize) -> Item<'a, S, T> {
        let p = self.point(i);
        Item {
            handle: self.handle(i),
            aabb: Aabb { min: p, max: p },
            value: &self.values[i],
        }
    }

    /// The element a handle names: the one at its slot's tree position, if the generation
    /// is this tree's.
    #[inline]
    fn get(&self, handle: Handle) -> Option<Item<'a, S, T>> {
        let i = handle.slot() as usize;
        (i < self.points.len() && handle == self.handle(i)).then(|| self.item(i))
    }

    /// Every element, in tree order.
    #[inline]
    fn iter(&self) -> Iter<'a, S, T> {
        Iter::points(self.points, self.values, self.generation)
    }

    /// The point at tree position `i`.
    #[inline]
    fn point(&self, i: usize) -> Point<S> {
        let [x, y] = self.points[i];
        Point::new(x, y)
    }

    /// Visits every element in tree positions `range`.
    #[inline]
    fn visit_range<F>(&self, range: core::ops::Range<usize>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        for i in range {
            visit(self.item(i))?;
        }
        ControlFlow::Continue(())
    }
}

/// The tree keeps its elements itself, in tree order.
impl<S: Scalar, T> Table<S, T> for Kd<'_, S, T> {
    /// The element a handle names: the one at its slot's tree position, if the generation
    /// is this tree's.
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.get(handle)
    }

    #[inline]
    fn count(&self) -> usize {
        self.points.len()
    }

    /// Every element, in tree order (the order of the handles' slots).
    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        self.iter()
    }
}

/// A kd-tree's table: the elements by tree position, its handles naming them.
impl<S: Scalar, T> Table<S, T> for KdTree<S, T> {
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.tree().get(handle)
    }

    #[inline]
    fn count(&self) -> usize {
        self.points.len()
    }

    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        Iter::points(&self.points, &self.values, self.generation)
    }
}

impl<S: Scalar, T> Holds<S, T> for KdTree<S, T> {
    type Table = Self;

    #[inline]
    fn table(&self) -> &Self {
        self
    }

    fn do_memory_bytes(&self) -> usize {
        self.splits.memory_bytes()
            + self.points.capacity() * size_of::<[S; 2]>()
            + self.values.capacity() * size_of::<T>()
    }
}

/// The tree searches its arrays, borrowed ([`Kd`]), as a view does.
impl<S: Scalar, T> Through for KdTree<S, T> {
    type S = S;
    type T = T;
    type Engine<'a>
        = Kd<'a, S, T>
    where
        Self: 'a;

    #[inline]
    fn engine(&self) -> Kd<'_, S, T> {
        self.tree()
    }
}

crate::contract::spatial_query!(KdTree);

impl<S, T> crate::Listed for KdTree<S, T> {
    const CLI: &'static str = "kd-tree";
    const ABOUT: &'static str = "`KdTree`: points only, built once.";
}

/// Points: each box's lower-left corner.
impl<S: Scalar, T> crate::ListedStatic<S, T> for KdTree<S, T> {
    fn build_from(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error> {
        Self::build(items.into_iter().map(|(b, v)| (b.min, v)))
    }
}

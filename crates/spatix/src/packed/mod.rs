//! The packed static index (for static content: built once from all boxes, fastest
//! to query): boxes sorted along a Hilbert curve and packed bottom-up into one array of
//! union boxes with a fixed fan-out.

mod build;
mod bytes;
pub(crate) mod pairs;
mod query;
mod regions;
#[cfg(test)]
mod tests;
mod validate;
#[cfg(feature = "views")]
mod view;

use crate::base::slots::{StaticSlots, StaticTable};
use crate::{Aabb, Error, Handle, Scalar, StaticIndex};

use crate::contract::{Holds, Through};
use build::Curve;
#[cfg(feature = "views")]
pub use view::PackedView;

/// Tuning parameters of a [`PackedIndex`].
///
/// # Example
/// ```
/// use spatix::PackedConfig;
/// assert_eq!(PackedConfig::default().node_size, 16);
/// assert!(PackedConfig { node_size: 4 }.validate().is_ok());
/// assert!(PackedConfig { node_size: 1 }.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedConfig {
    /// Children per node (the last node of a level may have fewer). Default 16. Range
    /// 2..=64 ([`PackedConfig::MAX_NODE_SIZE`]). Larger nodes make the tree shallower and
    /// the build cheaper; smaller ones test fewer boxes per visited node.
    pub node_size: u32,
}

impl Default for PackedConfig {
    fn default() -> Self {
        Self { node_size: 16 }
    }
}

impl PackedConfig {
    /// The largest fan-out: queries keep the children of a node still to visit as one `u64`
    /// bit mask.
    ///
    /// ```
    /// assert_eq!(spatix::PackedConfig::MAX_NODE_SIZE, 64);
    /// ```
    pub const MAX_NODE_SIZE: u32 = 64;

    /// Checks the parameters' ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `node_size` is not in 2..=64.
    ///
    /// ```
    /// use spatix::PackedConfig;
    /// assert!(PackedConfig { node_size: 65 }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(2..=Self::MAX_NODE_SIZE).contains(&self.node_size) {
            return Err(Error::InvalidParameter("node_size must be in 2..=64"));
        }
        Ok(())
    }
}

/// Most node levels a tree can have: level 1 holds at most 2^31 nodes (fewer than 2^32
/// elements, at least two per node), and each level above at most half as many.
const MAX_LEVELS: usize = 32;

/// A static index of boxes, built once from all of them: the fastest structure to query.
///
/// The boxes are sorted by the Hilbert index of their centres (on a 2^16 × 2^16 grid over the
/// data's extent), so that boxes close in the order are close in space, then packed bottom-up:
/// every run of `node_size` consecutive boxes gets a node holding their union box, every run
/// of `node_size` consecutive nodes a parent, up to a single root. The nodes are one
/// contiguous array of boxes, level after level (the root last), with no pointers: the
/// children of node `k` of a level are nodes `k * node_size ..` of the level below, found
/// from the levels' offsets. The element boxes themselves, in curve order, are the level
/// below the lowest nodes.
///
/// Elements are stored in curve order (boxes and values side by side, what the queries
/// stream through); a [`Handle`]'s slot is the element's index in the input to
/// [`PackedIndex::build`] ([`PackedIndex::handle`] gives it), mapped to its position by a
/// table, so [`get`](crate::SpatialQuery::get) is O(1). There is no insert, remove or update: it
/// implements [`SpatialQuery`](crate::SpatialQuery) only. Every handle stays valid for the index's lifetime.
///
/// # When to use it
/// Static content (walls, rocks, buildings, map tiles) queried many times, kept apart
/// from a dynamic structure for the agents. Rebuild it when the content changes
/// (a bulk build of a million boxes takes tens of milliseconds).
///
/// # Complexity
/// Build: O(n) for the keys, the radix sort and the packing (plus the gathering of boxes
/// and values into curve order). Query: O(node_size · log n + hits) for small areas.
/// `for_each_pair`: a simultaneous traversal of the tree with itself, testing only the
/// children of node pairs whose boxes intersect. `nearest` and `raycast_all`: best-first
/// by node box. Memory per element: its box and value, two `u32` (slot ↔ position), and
/// about `1 / (node_size - 1)` node boxes.
///
/// # Errors
/// [`Error::InvalidAabb`] if any input box is invalid (nothing is built);
/// [`Error::InvalidParameter`] for a bad [`PackedConfig`]; [`Error::CapacityExceeded`] past
/// 2^32 - 2 elements.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, PackedIndex, Point, SpatialQuery};
/// let walls = [
///     (Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 1.0))?, "south"),
///     (Aabb::new(Point::new(0.0f32, 9.0), Point::new(10.0, 10.0))?, "north"),
///     (Aabb::new(Point::new(0.0f32, 0.0), Point::new(1.0, 10.0))?, "west"),
/// ];
/// let index = PackedIndex::build(walls)?;
/// let mut touching = Vec::new();
/// let area = Aabb::new(Point::new(-1.0, 8.0), Point::new(0.5, 9.5))?;
/// let _ = index.query(&area, |item| { touching.push(*item.value); ControlFlow::Continue(()) });
/// touching.sort();
/// assert_eq!(touching, ["north", "west"]);
/// let north = index.handle(1).unwrap();
/// assert_eq!(*index.get(north).unwrap().value, "north");
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # Saving and loading
/// [`ByteForm`](crate::ByteForm) saves the index as bytes (its arrays, about
/// [`memory_bytes`](crate::SpatialQuery::memory_bytes) in size) and loads it back by copying
/// and checking them, without sorting: much faster than building it again. Handles given out
/// before saving name the same elements after loading. Bytes that are not a consistent index
/// are refused with [`Error::Corrupt`]; the one thing loading does not check is that the
/// elements are in the curve's order, which only speed depends on (docs/ARCHITECTURE.md,
/// "Byte form").
///
/// ```
/// use spatix::{Aabb, ByteForm, PackedIndex, Point, SpatialQuery};
/// let rocks = (0..1000).map(|i| (Aabb::point(Point::new(i as f32, 0.5)).unwrap(), i));
/// let index = PackedIndex::<f32, u32>::build(rocks)?;
/// let bytes = index.to_bytes();
/// let loaded = PackedIndex::<f32, u32>::from_bytes(&bytes)?;
/// let h = index.handle(500).unwrap();
/// assert_eq!(*loaded.get(h).unwrap().value, 500);
/// assert!(PackedIndex::<f32, u32>::from_bytes(&bytes[..bytes.len() - 1]).is_err());
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`UniformGrid`](crate::UniformGrid) and [`Quadtree`](crate::Quadtree) for content that
/// moves.
#[derive(Clone, Debug)]
pub struct PackedIndex<S, T> {
    config: PackedConfig,
    /// The elements, in curve order: level 0 of the tree.
    elements: StaticSlots<S, T>,
    /// Union boxes of node levels 1, 2, ... one after another; the root is the last.
    nodes: Vec<Aabb<S>>,
    /// Node level `l` (from 1) occupies `nodes[levels[l - 1]..levels[l]]`; `levels[0] == 0`.
    /// One entry (no node level) when the index is empty.
    levels: Vec<u32>,
    /// The grid the Hilbert keys were computed on (kept to check the order).
    curve: Curve,
}

impl<S: Scalar, T> PackedIndex<S, T> {
    /// Builds the index from `(box, value)` pairs with the default [`PackedConfig`]. The
    /// handle of the `i`-th pair is [`PackedIndex::handle(i)`](PackedIndex::handle).
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if a box is invalid; [`Error::CapacityExceeded`] past 2^32 - 2
    /// elements.
    ///
    /// ```
    /// use spatix::{Aabb, PackedIndex, Point, SpatialQuery};
    /// let rocks = (0..100).map(|i| (Aabb::point(Point::new(i as f64, 0.0)).unwrap(), i));
    /// let index = PackedIndex::build(rocks)?;
    /// assert_eq!(index.len(), 100);
    /// let bad = Aabb { min: Point::new(1.0, 0.0), max: Point::new(0.0, 0.0) };
    /// assert!(PackedIndex::build([(bad, 0)]).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn build(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error> {
        Self::with_config(items, PackedConfig::default())
    }

    /// Builds the index with the given parameters.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for parameters out of range, [`Error::InvalidAabb`] if a
    /// box is invalid, [`Error::CapacityExceeded`] past 2^32 - 2 elements.
    ///
    /// ```
    /// use spatix::{Aabb, PackedConfig, PackedIndex, Point, SpatialQuery};
    /// let boxes = (0..10).map(|i| (Aabb::point(Point::new(i as f32, 1.0)).unwrap(), ()));
    /// let index = PackedIndex::with_config(boxes, PackedConfig { node_size: 4 })?;
    /// assert_eq!(index.config().node_size, 4);
    /// index.check_invariants()?;
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_config(
        items: impl IntoIterator<Item = (Aabb<S>, T)>,
        config: PackedConfig,
    ) -> Result<Self, Error> {
        config.validate()?;
        Self::build_with(items.into_iter(), config)
    }

    /// [`PackedIndex::build`] on rayon's thread pool (feature `rayon`): the index is
    /// identical to the one `build` makes (same order, nodes and handles).
    ///
    /// # Errors
    /// As [`PackedIndex::build`].
    ///
    /// ```
    /// use spatix::{Aabb, PackedIndex, Point, SpatialQuery};
    /// let rocks: Vec<_> = (0..100_000)
    ///     .map(|i| (Aabb::point(Point::new((i % 317) as f32, (i / 317) as f32)).unwrap(), i))
    ///     .collect();
    /// let index = PackedIndex::par_build(rocks.iter().copied())?;
    /// assert_eq!(index.len(), 100_000);
    /// let serial = PackedIndex::build(rocks)?;
    /// assert!(index.iter().zip(serial.iter()).all(|(a, b)| a.aabb == b.aabb && a.value == b.value));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_build(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error>
    where
        T: Send,
    {
        Self::par_with_config(items, PackedConfig::default())
    }

    /// [`PackedIndex::with_config`] on rayon's thread pool (feature `rayon`). The input is
    /// collected on the calling thread; the boxes are validated, keyed, sorted, gathered
    /// into curve order and packed into the first node level in parallel (the values are
    /// gathered meanwhile on one thread). The index is identical to the one `with_config`
    /// makes, element by element.
    ///
    /// # Errors
    /// As [`PackedIndex::with_config`] (the same error for the same input).
    ///
    /// ```
    /// use spatix::{Aabb, Error, PackedConfig, PackedIndex, Point, SpatialQuery};
    /// let boxes = (0..1000).map(|i| (Aabb::point(Point::new(i as f64, 1.0)).unwrap(), i));
    /// let index = PackedIndex::par_with_config(boxes, PackedConfig { node_size: 4 })?;
    /// assert_eq!(index.config().node_size, 4);
    /// index.check_invariants()?;
    /// let bad = Aabb { min: Point::new(1.0, 0.0), max: Point::new(0.0, 0.0) };
    /// assert_eq!(
    ///     PackedIndex::par_with_config([(bad, 0)], PackedConfig::default()).unwrap_err(),
    ///     Error::InvalidAabb
    /// );
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_with_config(
        items: impl IntoIterator<Item = (Aabb<S>, T)>,
        config: PackedConfig,
    ) -> Result<Self, Error>
    where
        T: Send,
    {
        config.validate()?;
        Self::par_build_with(items, config)
    }

    /// The handle of the element that was `index`-th in the input, or `None` past the end.
    ///
    /// ```
    /// use spatix::{Aabb, PackedIndex, Point, SpatialQuery};
    /// let index = PackedIndex::build([(Aabb::point(Point::new(1.0f32, 2.0))?, 'a')])?;
    /// let h = index.handle(0).unwrap();
    /// assert_eq!(h.slot(), 0);
    /// assert_eq!(*index.get(h).unwrap().value, 'a');
    /// assert!(index.handle(1).is_none());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn handle(&self, index: usize) -> Option<Handle> {
        self.elements.handle_of_slot(index)
    }

    /// The parameters the index was built with.
    ///
    /// ```
    /// use spatix::{PackedConfig, PackedIndex};
    /// let index = PackedIndex::<f32, ()>::build([])?;
    /// assert_eq!(index.config(), PackedConfig::default());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn config(&self) -> PackedConfig {
        self.config
    }

    /// Visits every node, root first, level by level, with its union box, its level (1 for
    /// the nodes just above the elements) and the number of elements beneath it, e.g. to
    /// draw the tree.
    ///
    /// ```
    /// use spatix::{Aabb, PackedConfig, PackedIndex, Point};
    /// let boxes = (0..20).map(|i| (Aabb::point(Point::new(i as f32, 0.0)).unwrap(), i));
    /// let index = PackedIndex::with_config(boxes, PackedConfig { node_size: 4 })?;
    /// let mut leaves = 0;
    /// index.traverse(|_aabb, level, elements| {
    ///     if level == 1 { leaves += 1; assert!(elements <= 4); }
    /// });
    /// assert_eq!(leaves, 5);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn traverse(&self, visit: impl FnMut(&Aabb<S>, u32, usize)) {
        self.tree().traverse(visit);
    }

    /// The index's arrays, borrowed: what every query reads (a [`PackedView`] lends the same
    /// from its bytes).
    #[inline]
    pub(crate) fn tree(&self) -> Tree<'_, S, T> {
        Tree {
            node_size: self.config.node_size,
            curve: self.curve,
            elements: self.elements.table(),
            nodes: &self.nodes,
            levels: &self.levels,
        }
    }

    /// The root's box, if the index is not empty.
    #[cfg(test)]
    fn root(&self) -> Option<&Aabb<S>> {
        self.nodes.last()
    }
}

/// A packed index's arrays, borrowed from a [`PackedIndex`] or from the bytes a
/// [`PackedView`] reads: every query, the pair pass and the self-check are written once, over
/// this. A view's tree has levels of exactly the sizes its node size makes, over at most
/// `MAX_LEVELS`, and every position below the element count (checked when it is opened), so
/// no traversal indexes past an array, whatever the boxes hold.
pub(crate) struct Tree<'a, S, T> {
    node_size: u32,
    curve: Curve,
    elements: StaticTable<'a, S, T>,
    nodes: &'a [Aabb<S>],
    levels: &'a [u32],
}

impl<S, T> Clone for Tree<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, T> Copy for Tree<'_, S, T> {}

impl<'a, S: Scalar, T> Tree<'a, S, T> {
    /// As [`PackedIndex::traverse`].
    fn traverse(&self, mut visit: impl FnMut(&Aabb<S>, u32, usize)) {
        let span = self.span() as usize;
        for level in (1..self.levels.len()).rev() {
            let below = self.elements_per_node(level);
            for (k, aabb) in self.level(level).iter().enumerate() {
                let first = k * below;
                visit(aabb, level as u32, below.min(span - first));
            }
        }
    }

    /// Number of node levels (0 when empty): the root's level.
    #[inline]
    fn depth(&self) -> u32 {
        (self.levels.len() - 1) as u32
    }

    /// Number of elements.
    #[inline]
    fn span(&self) -> u32 {
        self.elements.len() as u32
    }

    /// The boxes of level `level`: the elements' for 0, else the nodes'.
    #[inline]
    fn level(&self, level: usize) -> &'a [Aabb<S>] {
        if level == 0 {
            self.elements.boxes
        } else {
            &self.nodes[self.levels[level - 1] as usize..self.levels[level] as usize]
        }
    }

    /// The range of indices, in level `level - 1`, of the children of node `node` of level
    /// `level` (from 1).
    #[inline]
    fn children(&self, level: u32, node: u32) -> (u32, u32) {
        let b = self.node_size;
        let below = self.level_len(level - 1);
        let first = node * b;
        (first, (first + b).min(below))
    }

    /// Number of boxes in level `level`.
    #[inline]
    fn level_len(&self, level: u32) -> u32 {
        if level == 0 {
            self.span()
        } else {
            let l = level as usize;
            self.levels[l] - self.levels[l - 1]
        }
    }

    /// Elements beneath each full node of level `level`: `node_size ^ level`, capped at the
    /// element count.
    fn elements_per_node(&self, level: usize) -> usize {
        let b = self.node_size as usize;
        (0..level).fold(1usize, |acc, _| acc.saturating_mul(b))
    }

    /// The root's box, if the index is not empty.
    #[inline]
    fn root(&self) -> Option<&'a Aabb<S>> {
        self.nodes.last()
    }
}

/// Bit `i` set for each box `boxes[i]` (at most 64) that intersects `area`: one branch-free
/// pass over a node's children, which compiles to vector compares.
#[inline]
fn overlapping<S: Scalar>(boxes: &[Aabb<S>], area: &Aabb<S>) -> u64 {
    let mut mask = 0u64;
    for (i, b) in boxes.iter().enumerate() {
        mask |= u64::from(b.intersects_branchless(area)) << i;
    }
    mask
}

/// The set bits of a mask, lowest first.
#[inline]
fn bits(mut mask: u64) -> impl Iterator<Item = u32> {
    core::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros();
            mask &= mask - 1;
            bit
        })
    })
}

impl<S: Scalar, T> Holds<S, T> for PackedIndex<S, T> {
    type Table = StaticSlots<S, T>;

    #[inline]
    fn table(&self) -> &StaticSlots<S, T> {
        &self.elements
    }

    fn do_memory_bytes(&self) -> usize {
        self.elements.memory_bytes()
            + self.nodes.capacity() * size_of::<Aabb<S>>()
            + self.levels.capacity() * size_of::<u32>()
    }
}

/// The index searches its arrays, borrowed ([`Tree`]), as a view does.
impl<S: Scalar, T> Through for PackedIndex<S, T> {
    type S = S;
    type T = T;
    type Engine<'a>
        = Tree<'a, S, T>
    where
        Self: 'a;

    #[inline]
    fn engine(&self) -> Tree<'_, S, T> {
        self.tree()
    }
}

crate::contract::spatial_query!(PackedIndex);

/// A new index built from `items` with the same [`PackedConfig`].
impl<S: Scalar, T> StaticIndex<S, T> for PackedIndex<S, T> {
    fn rebuild<I>(&mut self, items: I) -> Result<(), Error>
    where
        I: IntoIterator<Item = (Aabb<S>, T)>,
    {
        *self = Self::with_config(items, self.config)?;
        Ok(())
    }
}

impl<S, T> crate::Listed for PackedIndex<S, T> {
    const CLI: &'static str = "packed";
    const ABOUT: &'static str =
        "`PackedIndex`: boxes (or points) built once into one Hilbert-sorted packed tree.";
}

/// [`PackedIndex::build`].
impl<S: Scalar, T> crate::ListedStatic<S, T> for PackedIndex<S, T> {
    fn build_from(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error> {
        Self::build(items)
    }
}

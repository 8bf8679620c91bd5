//! The tight quadtree: 8-byte nodes, elements in every leaf they overlap.

mod bytes;
mod mutate;
mod pairs;
mod query;
#[cfg(test)]
mod tests;
mod validate;

use core::ops::ControlFlow;

use crate::base::pool::ListPool;
use crate::base::slots::Slots;
use crate::contract::probe::Region;
use crate::contract::{Holds, Regions};
use crate::tree::{BRANCH, EMPTY_LEAF, Frame, MAX_PENDING, Node, NodeKind, TreeBase, TreeConfig};
use crate::{Aabb, Scalar};

/// The tight quadtree: each element is stored once, and listed in every leaf
/// its box overlaps.
///
/// The layout fits a node in 8 bytes (`first_child`, `count`), all in one array, the four
/// children of a branch contiguous, freed child groups recycled as units through a free list;
/// node boxes never stored but computed on the way down from the world box; each leaf a
/// singly linked list of 8-byte element nodes in one shared, free-listed pool; explicit-stack
/// traversals that stay off the heap. A running simulation stops allocating once warm.
///
/// # When to use it
/// Uneven density with elements of similar size: the tree spends resolution where the
/// elements are. For even density a [`UniformGrid`](crate::UniformGrid) is simpler and usually
/// faster; for sizes that vary by orders of magnitude, large elements are listed in many
/// leaves here.
///
/// # Complexity
/// Insert: O(depth + leaves overlapped). Remove: O(leaves overlapped), starting from the
/// element's home node. Update: O(1) when the element stays in the same leaves and those
/// are its home node or the home's children (no traversal at all), else a traversal from its
/// home node (from the root only when it leaves
/// that node) that writes only to the leaves whose membership changes. Query: O(depth + leaves visited + elements in them). `for_each_pair`: one pass
/// over the leaves, O(Σ leaf size²) pair tests. `maintain`: O(nodes).
///
/// Memory per element: the element's box, value and generation, 24 bytes (f32) of home
/// node, 8 bytes per leaf it is listed in, plus 8 bytes per node (about 1 node per
/// 3–4 elements at the default split threshold). See the benchmarks for measured figures.
///
/// # Errors
/// Invalid boxes give [`Error::InvalidAabb`](crate::Error::InvalidAabb); stale handles `None`/[`Error::StaleHandle`](crate::Error::StaleHandle);
/// elements outside the world are clamped onto its border leaves, so they are still stored
/// and found (but crowd those leaves).
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, Quadtree, SpatialIndex, SpatialQuery};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(256.0, 256.0))?;
/// let mut tree = Quadtree::new(world)?;
/// let h = tree.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(12.0, 12.0))?, "agent")?;
/// tree.update(h, Aabb::new(Point::new(11.0, 10.0), Point::new(13.0, 12.0))?)?;
/// let mut hits = 0;
/// let area = Aabb::new(Point::new(0.0, 0.0), Point::new(11.0, 11.0))?;
/// let _ = tree.query(&area, |_| { hits += 1; ControlFlow::Continue(()) });
/// assert_eq!(hits, 1);
/// tree.maintain(); // once per frame
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`UniformGrid`](crate::UniformGrid) for even density, [`BruteForce`](crate::BruteForce)
/// for tiny sets.
#[derive(Clone, Debug)]
pub struct Quadtree<S, T> {
    /// World, parameters, and the nodes; a leaf's list holds the elements overlapping it.
    base: TreeBase<S, Node>,
    /// Element nodes of every leaf.
    links: ListPool,
    slots: Slots<S, T>,
    /// By slot: the element's home, the deepest node that holds every leaf it overlaps (a
    /// leaf when it overlaps one). Updates start there instead of at the root. A home stays
    /// valid through splits, and is never freed while the element is listed beneath it.
    homes: Vec<Frame<S>>,
    /// The traversal stack of mutations, kept to reuse its memory.
    stack: Vec<Frame<S>>,
}

crate::tree::tree_constructors!(Quadtree, leaf_sizes: 6.0, example_depth: 8, depth: with_leaf_side_across);

impl<S: Scalar, T> Quadtree<S, T> {
    /// The empty tree (parameters checked by `with_config`).
    fn empty(world: Aabb<S>, config: TreeConfig) -> Self {
        Self {
            base: TreeBase::new(world, config, EMPTY_LEAF),
            links: ListPool::default(),
            slots: Slots::default(),
            homes: Vec::new(),
            stack: Vec::with_capacity(MAX_PENDING),
        }
    }

    /// The quadtree's default parameters, [`TreeConfig::default`].
    pub const DEFAULT_CONFIG: TreeConfig = TreeConfig::DEFAULT;

    /// Reserves room for `additional` more elements (and, as an estimate, one and a half list
    /// entries each), so that inserting them does not reallocate and memory holds no
    /// growth slack.
    ///
    /// ```
    /// use spatix::{Aabb, Point, Quadtree, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut tree = Quadtree::<f32, u32>::new(world)?;
    /// tree.reserve(1000);
    /// let before = tree.memory_bytes();
    /// tree.insert(Aabb::point(Point::new(1.0, 1.0))?, 7)?;
    /// assert_eq!(tree.memory_bytes(), before);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.homes.reserve(additional);
        self.links.reserve(additional + additional / 2);
    }

    /// Visits every node, parents before children, with its computed box, its depth and its
    /// kind, e.g. to draw the tree.
    ///
    /// ```
    /// use spatix::{Aabb, NodeKind, Point, Quadtree, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
    /// let mut tree = Quadtree::new(world)?;
    /// for i in 0..20 {
    ///     tree.insert(Aabb::point(Point::new(i as f32, i as f32))?, i)?;
    /// }
    /// let mut leaves = 0;
    /// tree.traverse(|_aabb, _depth, kind| {
    ///     if let NodeKind::Leaf { .. } = kind { leaves += 1 }
    /// });
    /// assert!(leaves >= 4);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn traverse(&self, visit: impl FnMut(&Aabb<S>, u32, NodeKind)) {
        self.base.traverse(Node::shown, visit);
    }

    /// Whether two boxes inside branch `f` overlap the same children of it, all
    /// [settled](Self::settled) leaves: then they overlap the same leaves (the usual case for
    /// an element straddling a split line), and the new box cannot let one of them split.
    #[inline]
    fn same_leaf_children(&self, f: &Frame<S>, first_child: u32, a: &Aabb<S>, b: &Aabb<S>) -> bool {
        let mid = f.mid();
        let mask = Frame::quadrants(mid, a);
        mask == Frame::quadrants(mid, b)
            && (0..4).all(|i| {
                let count = || self.base.nodes[(first_child + i) as usize].count;
                mask & (1 << i) == 0
                    || count() <= self.base.config.max_elements
                    || self.settled(&f.child(first_child, i, mid), count())
            })
    }

    /// Whether the node at `f`, whose count is `count`, is a leaf that no change of its
    /// elements' boxes can make split: it does not overflow, or it may not split at all.
    #[inline]
    fn settled(&self, f: &Frame<S>, count: u32) -> bool {
        count <= self.base.config.max_elements
            || (count != BRANCH && !f.can_split(self.base.config.max_depth))
    }

    /// The element's box clamped into the world: where it is filed.
    #[inline]
    fn filed_box(&self, aabb: &Aabb<S>) -> Aabb<S> {
        aabb.clamped_to(&self.base.world)
    }
}

impl<S: Scalar, T> Regions<S> for Quadtree<S, T> {
    /// Every node ([`TreeBase::regions`](crate::tree::TreeBase)): its box, and for a leaf the
    /// elements it lists (an element is listed in every leaf its box, clamped into the world,
    /// overlaps).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        visit: F,
    ) -> ControlFlow<()> {
        self.base.regions(
            |f, node| match node.count {
                BRANCH => (f.aabb, Some(node.first_child), 0),
                count => (f.aabb, None, count as usize),
            },
            visit,
        )
    }
}

impl<S: Scalar, T> Holds<S, T> for Quadtree<S, T> {
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.base.nodes.capacity() * size_of::<Node>()
            + self.links.memory_bytes()
            + self.slots.memory_bytes()
            + (self.homes.capacity() + self.stack.capacity()) * size_of::<Frame<S>>()
    }
}

crate::contract::spatial_index!(Quadtree);

impl<S, T> crate::Listed for Quadtree<S, T> {
    const CLI: &'static str = "quadtree";
    const ABOUT: &'static str = "`Quadtree`: tight quadtree, depth from the elements' size.";
}

//! The MX-CIF quadtree: every element stored once, in the smallest node that
//! contains its box.

mod bytes;
mod mutate;
mod pairs;
mod query;
mod runs;
#[cfg(test)]
mod tests;
mod validate;

use core::ops::ControlFlow;

use self::runs::Runs;
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::probe::Region;
use crate::contract::{Holds, Regions};
use crate::tree::{Frame, TreeBase, TreeConfig};
use crate::{Aabb, NodeKind, Point, Scalar};

/// A node: 16 bytes, no box (boxes are computed on the way down from the world's). Its
/// elements are the run `start .. start + len` of the tree's shared element arrays, of which
/// it owns `start .. start + cap`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
struct Node {
    /// Branch: index of the first of its four contiguous children. Leaf: [`NIL`].
    /// First node of a free group: the next free group.
    first_child: u32,
    /// First entry of the node's run (meaningless while `cap == 0`).
    start: u32,
    /// Elements in the run. [`FREE`] for the nodes of a free group.
    len: u32,
    /// Entries the run owns: 0 or the capacity of a size class.
    cap: u32,
}

const _: () = assert!(size_of::<Node>() == 16);

/// Marks the nodes of a freed child group in [`Node::len`].
const FREE: u32 = u32::MAX;

const EMPTY_LEAF: Node = Node {
    first_child: NIL,
    start: 0,
    len: 0,
    cap: 0,
};

impl Node {
    #[inline]
    fn is_branch(&self) -> bool {
        self.first_child != NIL
    }

    /// What a traversal shows of the node (a branch's own elements are not counted), and
    /// its first child (for a branch).
    fn shown(self) -> (NodeKind, u32) {
        let kind = if self.is_branch() {
            NodeKind::Branch
        } else {
            NodeKind::Leaf {
                elements: self.len as usize,
            }
        };
        (kind, self.first_child)
    }

    /// The entries of the node's run.
    #[inline]
    fn run(&self) -> core::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// Where an element is: its node and its entry in the element arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Place {
    node: u32,
    at: u32,
}

/// The child of a node (split at `mid`) that a (clamped) box goes down to, or `None` when it
/// stays in the node: the box must lie strictly beside both split lines. A box touching a
/// split line stays up, because closed boxes that touch intersect, and the pair pass relies
/// on elements of different subtrees never intersecting.
#[inline]
fn quadrant<S: Scalar>(mid: Point<S>, c: &Aabb<S>) -> Option<u32> {
    let right = c.min.x > mid.x;
    let top = c.min.y > mid.y;
    let beside_x = right || c.max.x < mid.x;
    let beside_y = top || c.max.y < mid.y;
    (beside_x && beside_y).then_some(u32::from(right) | u32::from(top) << 1)
}

/// The MX-CIF quadtree: each element is stored exactly once, in the smallest node
/// whose box contains its box (clamped into the world), so a large element sits high in the
/// tree instead of being listed in many leaves, and nothing is ever duplicated.
///
/// The layout: 16-byte nodes in one array, the four children of a branch
/// contiguous, freed child groups recycled whole through a free list; node boxes computed on
/// the way down from the world box; no container per node. Each node owns a contiguous run
/// of the tree's shared element arrays (the elements' boxes, copied, and their slots), so a
/// node's elements are read as one slice and removal is a swap-with-last. Runs come
/// in free-listed size classes and are compacted in place when a quarter of the arrays is
/// free, so a running simulation stops allocating once warm.
///
/// # When to use it
/// Elements of very different sizes ("dragons among hobbits"), moving, with every colliding
/// pair wanted: [`for_each_pair`](crate::SpatialQuery::for_each_pair) pairs node by node
/// (pairs within each node, then each node's elements against its descendants'), with no
/// per-element query and nothing to de-duplicate, and a dragon costs one entry. On the
/// mixed-size agents of `spatix-workload` its frame (move, update, all pairs,
/// maintain) measured within about 10% of a [`UniformGrid`](crate::UniformGrid)'s and 1.4 to
/// 1.7 times faster than a [`Quadtree`](crate::Quadtree)'s; for similar sizes the grid is
/// faster.
/// Configure it with [`for_element_size`](MxCifQuadtree::for_element_size): an element that straddles a split
/// line stays in the node above it, where every query passing by and every element below
/// it are tested against it, so a tree deeper than needed costs.
///
/// # Complexity
/// Insert: O(depth). Remove: O(1) (swap-with-last in the node's run). Update: O(1) when the
/// element's new box still fits its node and no child of it (only the box changes), else a
/// removal and a descent from the node (or from the root when the box left the node).
/// Query: O(depth + nodes visited + elements in them). `for_each_pair`: within each node all
/// pairs of its elements, plus for each element a walk over the descendants its box overlaps.
/// `maintain`: O(nodes).
///
/// Memory per element: the slot table's box, value and generation; its place (node and
/// entry, 8 bytes); its run entry (the box copy and the slot: 20 bytes with `f32`, 36 with
/// `f64`) times about 1.4 for the room runs keep, plus up to a quarter of the entries free
/// between compactions; and per node 16 bytes plus its recorded box (24 bytes with `f32`).
/// About 80 bytes with `f32` boxes and `u32` values for the agents of
/// `spatix-workload` after [`MxCifQuadtree::reserve`].
///
/// # Errors
/// Invalid boxes give [`Error::InvalidAabb`](crate::Error::InvalidAabb); stale handles `None`/[`Error::StaleHandle`](crate::Error::StaleHandle);
/// elements outside the world are placed by their box clamped onto the world's border, so
/// they are still stored and found (but crowd the border nodes).
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, MxCifQuadtree, Point, SpatialIndex, SpatialQuery};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(256.0, 256.0))?;
/// let mut tree = MxCifQuadtree::new(world)?;
/// let dragon = Aabb::new(Point::new(100.0, 100.0), Point::new(160.0, 160.0))?;
/// tree.insert(dragon, "dragon")?;
/// let orc = tree.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(12.0, 12.0))?, "orc")?;
/// tree.update(orc, Aabb::new(Point::new(110.0, 110.0), Point::new(112.0, 112.0))?)?;
/// let mut pairs = Vec::new();
/// let _ = tree.for_each_pair(|a, b| {
///     pairs.push((*a.value, *b.value));
///     ControlFlow::Continue(())
/// });
/// assert_eq!(pairs.len(), 1);
/// tree.maintain(); // once per frame
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`Quadtree`](crate::Quadtree) (elements listed in every leaf they overlap),
/// [`UniformGrid`](crate::UniformGrid) for even density and similar sizes.
#[derive(Clone, Debug)]
pub struct MxCifQuadtree<S, T> {
    /// World, parameters, and the nodes; a node's run holds the elements it is the
    /// smallest to contain.
    base: TreeBase<S, Node>,
    /// The element arrays the nodes' runs live in.
    runs: Runs<S>,
    slots: Slots<S, T>,
    /// By slot: where the element is.
    places: Vec<Place>,
    /// By node: its box, depth and border sides, as traversals compute them, kept so that
    /// `update` can tell in O(1) whether an element still belongs to its node. Written when a
    /// node is created; nodes never move.
    frames: Vec<Frame<S>>,
    /// Whether an element left a node since the last merge pass.
    removed: bool,
}

// Deepest nodes twelve typical element sizes wide: an element straddling a split line stays
// above it, where every query passing by tests it, so a tree deeper than needed costs.
crate::tree::tree_constructors!(MxCifQuadtree, leaf_sizes: 12.0, example_depth: 7, depth: with_leaf_side);

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// The MX-CIF tree's default parameters: [`TreeConfig::default`] with a split threshold
    /// of 16 (its nodes are split less eagerly: an element stays in every node whose split
    /// lines it straddles).
    pub const DEFAULT_CONFIG: TreeConfig = TreeConfig {
        max_elements: 16,
        max_depth: 8,
    };

    /// The empty tree (parameters checked by `with_config`).
    fn empty(world: Aabb<S>, config: TreeConfig) -> Self {
        Self {
            base: TreeBase::new(world, config, EMPTY_LEAF),
            runs: Runs::default(),
            slots: Slots::default(),
            places: Vec::new(),
            frames: vec![Frame::root(world)],
            removed: false,
        }
    }

    /// Reserves room for `additional` more elements (and, as an estimate, two run entries and
    /// a tenth of a node each: runs keep room to grow, and up to a quarter of the entries
    /// may lie in free runs before they are compacted), so that inserting and moving them
    /// usually does not reallocate.
    ///
    /// ```
    /// use spatix::{Aabb, MxCifQuadtree, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut tree = MxCifQuadtree::<f32, u32>::new(world)?;
    /// tree.reserve(1000);
    /// let before = tree.memory_bytes();
    /// tree.insert(Aabb::point(Point::new(1.0, 1.0))?, 7)?;
    /// assert_eq!(tree.memory_bytes(), before);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.places.reserve(additional);
        self.runs.reserve(2 * additional);
        self.base.nodes.reserve(additional / 10);
        self.frames.reserve(additional / 10);
    }

    /// Visits every node, parents before children, with its computed box, its depth and its
    /// kind, e.g. to draw the tree. Branches hold elements too here (those that straddle
    /// their split lines); [`NodeKind::Branch`] does not count them.
    ///
    /// ```
    /// use spatix::{Aabb, MxCifQuadtree, NodeKind, Point, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
    /// let mut tree = MxCifQuadtree::new(world)?;
    /// for i in 0..40 {
    ///     tree.insert(Aabb::point(Point::new(i as f32 + 0.5, i as f32 + 0.5))?, i)?;
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

    /// The element's box clamped into the world: what decides its node.
    #[inline]
    fn filed_box(&self, aabb: &Aabb<S>) -> Aabb<S> {
        aabb.clamped_to(&self.base.world)
    }

    /// The elements of a node: their boxes and their slots.
    #[inline]
    fn elements(&self, node: &Node) -> (&[Aabb<S>], &[u32]) {
        let run = node.run();
        (&self.runs.boxes[run.clone()], &self.runs.items[run])
    }
}

impl<S: Scalar, T> Regions<S> for MxCifQuadtree<S, T> {
    /// Every node ([`TreeBase::regions`](crate::tree::TreeBase)): its box and the elements it
    /// lists itself (a branch lists those straddling its split lines).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        visit: F,
    ) -> ControlFlow<()> {
        self.base.regions(
            |f, node| {
                (
                    f.aabb,
                    node.is_branch().then_some(node.first_child),
                    node.run().len(),
                )
            },
            visit,
        )
    }
}

impl<S: Scalar, T> Holds<S, T> for MxCifQuadtree<S, T> {
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.base.nodes.capacity() * size_of::<Node>()
            + self.runs.memory_bytes()
            + self.slots.memory_bytes()
            + self.places.capacity() * size_of::<Place>()
            + self.frames.capacity() * size_of::<Frame<S>>()
    }
}

crate::contract::spatial_index!(
    MxCifQuadtree,
    maintain {
        /// Merges every branch whose four children are leaves holding, with it, no more than
        /// `max_elements` into one leaf, bottom-up, so a whole emptied subtree folds in one call.
        /// Deferred to here rather than done on every removal: moving
        /// agents leave and re-enter the same nodes within a frame, and merging eagerly would
        /// split and merge them over and over.
    }
);

impl<S, T> crate::Listed for MxCifQuadtree<S, T> {
    const CLI: &'static str = "mxcif";
    const ABOUT: &'static str = "`MxCifQuadtree`: each element in the smallest node that contains it; depth from the elements' size.";
}

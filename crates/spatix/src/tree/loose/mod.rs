//! The loose quadtree: each element in exactly one leaf, chosen by its centre;
//! every node carries a box grown to enclose everything below it.

mod bytes;
mod mutate;
mod pairs;
mod query;
#[cfg(test)]
mod tests;
mod validate;

use core::ops::ControlFlow;

use crate::base::handle::NIL;
use crate::base::pool::{Link, ListPool};
use crate::base::slots::Slots;
use crate::contract::probe::Region;
use crate::contract::{Holds, Regions};
use crate::tree::{BRANCH, EMPTY_LEAF, Node};
use crate::tree::{Frame, Stack, TreeBase, TreeConfig};
use crate::{Aabb, NodeKind, Point, Scalar};

/// `maintain` lays the element lists out in tree order again once the nodes linked or
/// unlinked since the last time reach this fraction of the entries. Measured on 1M agents:
/// every frame, the layout cost 40 ms of a 60 ms `maintain`, and the pair pass was no faster
/// for it than with the layout renewed every few frames.
pub(super) const COMPACT_ONE_IN: usize = 2;

/// One node as [`LooseQuadtree::traverse`] shows it.
///
/// ```
/// use spatix::{Aabb, LooseNode, NodeKind, Point};
/// let cell = Aabb::new(Point::new(0.0f32, 0.0), Point::new(8.0, 8.0))?;
/// let node = LooseNode { cell, loose: None, depth: 0, kind: NodeKind::Leaf { elements: 0 } };
/// assert!(node.loose.is_none());
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LooseNode<S> {
    /// The node's quadrant of the world: it decides which elements are filed below the node
    /// (those whose clamped centre lies in it).
    pub cell: Aabb<S>,
    /// The node's loose box, which encloses every element filed below it; `None` when
    /// nothing has been filed below it since the last [`maintain`](crate::SpatialIndex::maintain).
    pub loose: Option<Aabb<S>>,
    /// The node's depth (the root is 0).
    pub depth: u32,
    /// Branch or leaf.
    pub kind: NodeKind,
}

/// What a child group records: the branch it belongs to, and the depth of its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    parent: u32,
    depth: u32,
}

/// The loose box of a node below which nothing is filed: inverted, so that it intersects and
/// contains nothing, every box contains it, and its union with a box is that box.
#[inline]
fn nothing<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(S::INFINITY, S::INFINITY),
        max: Point::new(-S::INFINITY, -S::INFINITY),
    }
}

/// Whether a loose box encloses something (is not [`nothing`]).
#[inline]
fn is_something<S: Scalar>(b: &Aabb<S>) -> bool {
    b.min.x <= b.max.x
}

/// Whether the region a node owns (its cell, open to infinity across the world's border,
/// half-open) holds the clamped centre `c`: the same test as [`Frame::owns`], precomputed.
#[inline]
fn owns<S: Scalar>(region: &Aabb<S>, c: Point<S>) -> bool {
    region.min.x <= c.x && c.x < region.max.x && region.min.y <= c.y && c.y < region.max.y
}

/// The child of a branch (split at `mid`) whose quadrant holds the centre `c`, numbered as
/// [`Frame::child`] numbers them.
#[inline]
fn quadrant<S: Scalar>(mid: Point<S>, c: Point<S>) -> u32 {
    u32::from(c.x >= mid.x) | (u32::from(c.y >= mid.y) << 1)
}

/// Iterator over the element nodes of one list: `(index, node)`.
struct Walk<'a, S> {
    links: &'a ListPool<Aabb<S>>,
    at: u32,
}

impl<S: Scalar> Iterator for Walk<'_, S> {
    type Item = (u32, Link<Aabb<S>>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.at == NIL {
            return None;
        }
        let at = self.at;
        let link = self.links.link(at);
        self.at = link.next;
        Some((at, link))
    }
}

/// The loose quadtree: every element is listed in exactly one leaf, the one
/// whose quadrant holds its (world-clamped) centre, and every node carries a loose box that
/// encloses the boxes of all the elements below it.
///
/// Nodes live in one array, the four children of a branch contiguous,
/// freed child groups recycled as units through a free list, the leaves' element lists in one
/// shared, free-listed pool of links (each carrying a copy of its element's box, so that
/// walking a leaf reads nothing else). Unlike the tight tree's, node boxes are loose, so they
/// cannot be computed on the way down: each node's loose box is stored, in an array of its
/// own next to the 8-byte nodes (the queries read four sibling boxes at once and only then
/// the nodes they descend into). Each node also stores the region whose centres it owns, and
/// each child group its parent, so that an element moving within its leaf is handled without
/// a descent.
///
/// Loose boxes grow on insert (along the path from the root) and when an element moves within
/// its leaf (the leaf's and its ancestors', up to the first that already encloses the new
/// box); [`maintain`](crate::SpatialIndex::maintain) recomputes them all bottom-up, so they shrink
/// after removals and moves, and collapses branches that hold nothing.
///
/// # When to use it
/// Element sizes that vary enormously in one dynamic world: the largest element costs one
/// list entry, like the smallest, and updates rarely leave their leaf. Configured with
/// [`for_element_size`](LooseQuadtree::for_element_size), it measured about as fast as a
/// [`UniformGrid`](crate::UniformGrid) on the agents frame at 100k and 1M agents, of uniform
/// or mixed sizes, with faster rectangle queries than the tight
/// [`Quadtree`](crate::Quadtree) (`cargo bench -p spatix-bench -- loose_quadtree`). Every
/// loose box on the way is tested, so a query over a region crowded with large elements
/// visits more nodes than in a tight tree.
///
/// # Complexity
/// Insert: O(depth). Remove: O(1). Update: O(1) when the centre stays in its leaf (plus the
/// ancestors whose boxes grow), else O(levels climbed and descended). Query: O(nodes whose
/// loose box meets the area + their elements). `for_each_pair`: one simultaneous traversal
/// of the tree against itself, visiting the pairs of nodes whose loose boxes intersect.
/// `maintain`: O(nodes + elements).
///
/// Memory per element: the element's box, value and generation (28 bytes with `f32` boxes
/// and `u32` values), a 24-byte list node (8 bytes of links, the box's copy), its leaf and
/// list node (8 bytes), plus per node 8 bytes of node and 16 each of loose box and region,
/// and 8 bytes per child group; with the tuned depth a node serves tens of elements, so
/// about 62 bytes in all (measured at 1M agents).
///
/// # Errors
/// Invalid boxes give [`Error::InvalidAabb`](crate::Error::InvalidAabb); stale handles `None`/[`Error::StaleHandle`](crate::Error::StaleHandle).
/// An element whose centre lies outside the world is filed by its centre clamped onto the
/// world's border; the loose boxes enclose its true box, so it is still found.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, LooseQuadtree, Point, SpatialIndex, SpatialQuery};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(256.0, 256.0))?;
/// let mut tree = LooseQuadtree::new(world)?;
/// let dragon = tree.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(200.0, 200.0))?, "dragon")?;
/// tree.insert(Aabb::new(Point::new(150.0, 150.0), Point::new(151.0, 151.0))?, "hobbit")?;
/// let mut pairs = 0;
/// let _ = tree.for_each_pair(|_, _| { pairs += 1; ControlFlow::Continue(()) });
/// assert_eq!(pairs, 1);
/// tree.update(dragon, Aabb::new(Point::new(12.0, 10.0), Point::new(202.0, 200.0))?)?;
/// tree.maintain(); // once per frame: loose boxes shrink to fit
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`Quadtree`](crate::Quadtree) (tight: elements in every leaf they overlap),
/// [`UniformGrid`](crate::UniformGrid) for even density and similar sizes.
#[derive(Clone, Debug)]
pub struct LooseQuadtree<S, T> {
    /// World, parameters, and the nodes; a leaf's list holds the elements whose clamped
    /// centre its quadrant owns.
    base: TreeBase<S, Node>,
    /// By node: its loose box, enclosing the boxes of every element below it ([`nothing`]
    /// when none has been filed there since the last `maintain`).
    loose: Vec<Aabb<S>>,
    /// By node: the region whose centres it owns ([`Frame::reach`] of its quadrant, tested
    /// half-open by [`owns`]).
    regions: Vec<Aabb<S>>,
    /// By child group (`(node - 1) / 4`): the branch it belongs to and its depth.
    groups: Vec<Group>,
    /// Element nodes of every leaf, each with a copy of its element's box, so that walking a
    /// leaf reads nothing else (laid out leaf after leaf by `maintain`).
    links: ListPool<Aabb<S>>,
    slots: Slots<S, T>,
    /// By slot: the leaf listing the element.
    leaves: Vec<u32>,
    /// By slot: the element node carrying it (and its box's copy).
    entries: Vec<u32>,
}

crate::tree::tree_constructors!(LooseQuadtree, leaf_sizes: 12.0, example_depth: 7, depth: with_leaf_side);

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// The empty tree (parameters checked by `with_config`).
    fn empty(world: Aabb<S>, config: TreeConfig) -> Self {
        Self {
            base: TreeBase::new(world, config, EMPTY_LEAF),
            loose: vec![nothing()],
            regions: vec![Frame::root(world).reach()],
            groups: Vec::new(),
            links: ListPool::default(),
            slots: Slots::default(),
            leaves: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// The loose quadtree's default parameters, [`TreeConfig::default`].
    pub const DEFAULT_CONFIG: TreeConfig = TreeConfig::DEFAULT;

    /// Reserves room for `additional` more elements (and their list entries), so that
    /// inserting them does not reallocate.
    ///
    /// ```
    /// use spatix::{Aabb, LooseQuadtree, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut tree = LooseQuadtree::<f32, u32>::new(world)?;
    /// tree.reserve(1000);
    /// let before = tree.memory_bytes();
    /// tree.insert(Aabb::point(Point::new(1.0, 1.0))?, 7)?;
    /// assert_eq!(tree.memory_bytes(), before);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.leaves.reserve(additional);
        self.entries.reserve(additional);
        self.links.reserve(additional);
    }

    /// Visits every node, parents before children, with its quadrant, its loose box, its
    /// depth and its kind, e.g. to draw the tree.
    ///
    /// ```
    /// use spatix::{Aabb, LooseQuadtree, NodeKind, Point, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
    /// let mut tree = LooseQuadtree::new(world)?;
    /// for i in 0..20 {
    ///     let c = Point::new(i as f32 * 3.0, i as f32 * 3.0);
    ///     tree.insert(Aabb::from_center_half_extents(c, Point::new(2.0, 2.0))?, i)?;
    /// }
    /// let mut spill = 0;
    /// tree.traverse(|node| {
    ///     if let (NodeKind::Leaf { .. }, Some(loose)) = (node.kind, node.loose) {
    ///         spill += usize::from(!node.cell.contains(&loose)); // loose boxes overhang
    ///     }
    /// });
    /// assert!(spill > 0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn traverse(&self, mut visit: impl FnMut(LooseNode<S>)) {
        let mut stack = Stack::new();
        stack.push(Frame::root(self.base.world));
        while let Some(f) = stack.pop() {
            let node = self.base.nodes[f.node as usize];
            let loose = self.loose[f.node as usize];
            let kind = if node.count == BRANCH {
                for child in f.children(node.first_child).into_iter().rev() {
                    stack.push(child);
                }
                NodeKind::Branch
            } else {
                NodeKind::Leaf {
                    elements: node.count as usize,
                }
            };
            visit(LooseNode {
                cell: f.aabb,
                loose: is_something(&loose).then_some(loose),
                depth: u32::from(f.depth),
                kind,
            });
        }
    }

    /// Where an element with box `b` is filed: its centre, clamped into the world.
    #[inline]
    fn centre(&self, b: &Aabb<S>) -> Point<S> {
        self.base.world.closest_point(b.center())
    }

    /// The element nodes of the list starting at `head`, front to back, with their indices.
    #[inline]
    fn walk(&self, head: u32) -> Walk<'_, S> {
        Walk {
            links: &self.links,
            at: head,
        }
    }

    /// The branch a node belongs to (the node must not be the root).
    #[inline]
    fn parent(&self, node: u32) -> u32 {
        self.groups[(node as usize - 1) / 4].parent
    }

    /// The depth of a node (the root is 0).
    #[inline]
    fn depth(&self, node: u32) -> u32 {
        if node == 0 {
            0
        } else {
            self.groups[(node as usize - 1) / 4].depth
        }
    }
}

impl<S: Scalar, T> Regions<S> for LooseQuadtree<S, T> {
    /// Every node ([`TreeBase::regions`](crate::tree::TreeBase)): its loose box (enclosing
    /// everything below it; the node's cell while nothing is below it), and for a leaf the
    /// elements it lists.
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        visit: F,
    ) -> ControlFlow<()> {
        self.base.regions(
            |f, node| {
                let loose = self.loose[f.node as usize];
                let bounds = if is_something(&loose) { loose } else { f.aabb };
                match node.count {
                    BRANCH => (bounds, Some(node.first_child), 0),
                    count => (bounds, None, count as usize),
                }
            },
            visit,
        )
    }
}

impl<S: Scalar, T> Holds<S, T> for LooseQuadtree<S, T> {
    type Table = Slots<S, T>;

    #[inline]
    fn table(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn do_memory_bytes(&self) -> usize {
        self.base.nodes.capacity() * size_of::<Node>()
            + (self.loose.capacity() + self.regions.capacity()) * size_of::<Aabb<S>>()
            + self.groups.capacity() * size_of::<Group>()
            + (self.leaves.capacity() + self.entries.capacity()) * size_of::<u32>()
            + self.links.memory_bytes()
            + self.slots.memory_bytes()
    }
}

crate::contract::spatial_index!(LooseQuadtree);

impl<S, T> crate::Listed for LooseQuadtree<S, T> {
    const CLI: &'static str = "loose-quadtree";
    const ABOUT: &'static str = "`LooseQuadtree`: each element in one leaf by its centre, loose node boxes; depth from the elements' size.";
}

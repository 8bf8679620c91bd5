//! The structure's shape and what a search costs: the regions every structure reports
//! ([`SpatialQuery::visit_regions`](crate::SpatialQuery::visit_regions)), and the probes the
//! probed searches tell what they looked at ([`Probe`], [`QueryCost`]).
//!
//! Inside the crate the searches see a probe through [`Watch`], whose arguments are computed
//! only when a probe is attached: the plain queries run with [`Quiet`], which computes and
//! records nothing, so their code is what it was before probes existed.

use crate::{Aabb, Handle, Scalar};

/// One region of a structure's shape: a grid cell, a tree node, a sweep band, a kd-tree split,
/// a part of [`Layered`](crate::Layered). What
/// [`SpatialQuery::visit_regions`](crate::SpatialQuery::visit_regions) reports.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, Region, RegionKind, SpatialIndex, SpatialQuery, UniformGrid};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(20.0, 10.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// grid.insert(Aabb::new(Point::new(8.0, 2.0), Point::new(12.0, 4.0))?, ())?;
/// let mut cells = Vec::new();
/// let _ = grid.visit_regions(|r: &Region<f32>| {
///     assert_eq!((r.kind, r.depth), (RegionKind::Cell, 0));
///     cells.push((r.bounds.min.x, r.elements));
///     ControlFlow::Continue(())
/// });
/// assert_eq!(cells, [(0.0, 1), (10.0, 1)]); // the box is listed in both cells it overlaps
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region<S: Scalar> {
    /// The region's box: a cell's or node's box (its loose box in the loose structures, which
    /// encloses what it holds), a band's extent, a packed node's union box, the box a kd-tree
    /// split divides, the union of a [`Layered`](crate::Layered) part's elements.
    pub bounds: Aabb<S>,
    /// The region's depth: tree depth (0 at the root), grid level, packed level (1 for the
    /// nodes just above the elements), kd-tree split depth; 0 for a flat grid, a band or a
    /// part.
    pub depth: u32,
    /// What the region is.
    pub kind: RegionKind,
    /// How many elements the region itself lists (0 for inner nodes that list none, and for
    /// [`RegionKind::Part`]).
    pub elements: usize,
}

/// What a [`Region`] is.
///
/// ```
/// use spatix::RegionKind;
/// assert_ne!(RegionKind::Node, RegionKind::Leaf);
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionKind {
    /// A grid cell (uniform, loose, point and hierarchical grids; the whole of a brute-force
    /// index).
    Cell,
    /// A tree node with children (a quadtree branch, a packed index's node above level 1).
    Node,
    /// A tree node without children (a quadtree leaf, a packed node of level 1, a kd-tree
    /// bucket).
    Leaf,
    /// A band of the sweep grid.
    Band,
    /// A kd-tree split: the box it divides in two.
    Split,
    /// One of [`Layered`](crate::Layered)'s three parts.
    Part,
}

/// What a search looked at on its way: the probed searches
/// ([`SpatialQuery::query_probed`](crate::SpatialQuery::query_probed),
/// [`nearest_probed`](crate::SpatialQuery::nearest_probed),
/// [`raycast_all_probed`](crate::SpatialQuery::raycast_all_probed)) call it for every region
/// they enter and every element whose box they test. Both methods do nothing by default; the
/// plain searches run with no probe at all.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Handle, Point, Probe, Quadtree, SpatialIndex, SpatialQuery};
///
/// /// Records which elements a search tested.
/// #[derive(Default)]
/// struct Tested(Vec<Handle>);
/// impl Probe<f32> for Tested {
///     fn candidate(&mut self, handle: Handle) {
///         self.0.push(handle);
///     }
/// }
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(64.0, 64.0))?;
/// let mut tree = Quadtree::new(world)?;
/// let h = tree.insert(Aabb::point(Point::new(1.0, 1.0))?, ())?;
/// let mut tested = Tested::default();
/// let area = Aabb::new(Point::new(0.0, 0.0), Point::new(2.0, 2.0))?;
/// let _ = tree.query_probed(&area, &mut tested, |_| ControlFlow::Continue(()));
/// assert_eq!(tested.0, [h]);
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait Probe<S: Scalar> {
    /// A region the search entered (a cell, a node, a band, ...), with its box as the search
    /// knows it.
    #[inline]
    fn region(&mut self, bounds: &Aabb<S>) {
        let _ = bounds;
    }

    /// An element whose box the search tested.
    #[inline]
    fn candidate(&mut self, handle: Handle) {
        let _ = handle;
    }
}

/// A probe that counts: the regions a search entered and the elements it tested, added up
/// over every search it is passed to.
///
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, Point, QueryCost, SpatialIndex, SpatialQuery, UniformGrid};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// for i in 0..10 {
///     grid.insert(Aabb::point(Point::new(i as f32 * 10.0 + 5.0, 5.0))?, i)?;
/// }
/// let mut cost = QueryCost::default();
/// let area = Aabb::new(Point::new(0.0, 0.0), Point::new(19.0, 9.0))?;
/// let mut found = 0;
/// let _ = grid.query_probed(&area, &mut cost, |_| { found += 1; ControlFlow::Continue(()) });
/// assert_eq!(found, 2);
/// assert_eq!(cost, QueryCost { regions: 2, candidates: 2 }); // two cells, one element each
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCost {
    /// Regions entered.
    pub regions: usize,
    /// Elements tested.
    pub candidates: usize,
}

impl<S: Scalar> Probe<S> for QueryCost {
    #[inline]
    fn region(&mut self, _: &Aabb<S>) {
        self.regions += 1;
    }

    #[inline]
    fn candidate(&mut self, _: Handle) {
        self.candidates += 1;
    }
}

/// How a search sees its probe: arguments computed only when one is attached
/// ([`ACTIVE`](Self::ACTIVE)), so that [`Quiet`] costs nothing at all.
pub(crate) trait Watch<S: Scalar> {
    /// Whether a probe is attached (false only for [`Quiet`]).
    const ACTIVE: bool;

    /// The search entered the region whose box `bounds` computes.
    fn region(&mut self, bounds: impl FnOnce() -> Aabb<S>);

    /// The search tested the element whose handle `handle` computes.
    fn candidate(&mut self, handle: impl FnOnce() -> Handle);
}

/// No probe: what the plain searches run with.
pub(crate) struct Quiet;

impl<S: Scalar> Watch<S> for Quiet {
    const ACTIVE: bool = false;

    #[inline(always)]
    fn region(&mut self, _: impl FnOnce() -> Aabb<S>) {}

    #[inline(always)]
    fn candidate(&mut self, _: impl FnOnce() -> Handle) {}
}

/// A caller's probe, attached.
pub(crate) struct Probed<'p, P>(pub(crate) &'p mut P);

impl<S: Scalar, P: Probe<S>> Watch<S> for Probed<'_, P> {
    const ACTIVE: bool = true;

    #[inline]
    fn region(&mut self, bounds: impl FnOnce() -> Aabb<S>) {
        self.0.region(&bounds());
    }

    #[inline]
    fn candidate(&mut self, handle: impl FnOnce() -> Handle) {
        self.0.candidate(handle());
    }
}

/// A [`Watch`] seen as a [`Probe`], for passing down to a part searched through the public
/// trait ([`Layered`](crate::Layered)'s parts), with the part's handles translated into the
/// caller's by `handle`.
pub(crate) struct Relay<'a, W, H> {
    pub(crate) watch: &'a mut W,
    pub(crate) handle: H,
}

impl<S: Scalar, W: Watch<S>, H: FnMut(Handle) -> Option<Handle>> Probe<S> for Relay<'_, W, H> {
    #[inline]
    fn region(&mut self, bounds: &Aabb<S>) {
        self.watch.region(|| *bounds);
    }

    #[inline]
    fn candidate(&mut self, handle: Handle) {
        if let Some(h) = (self.handle)(handle) {
            self.watch.candidate(|| h);
        }
    }
}

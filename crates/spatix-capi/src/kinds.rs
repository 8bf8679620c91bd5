//! Generated from `spatix::for_each_structure!` by
//! `SPATIX_BLESS=1 cargo test -p spatix-capi --test header` (which fails when it drifts):
//! do not edit. A kind keeps its number; a new structure takes the next one.

/// Which structure an index is: every structure of spatix but its brute-force oracle.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpatixKind {
    /// `SweepGrid`: horizontal bands by the bottom of each box, each band sorted by the left; pairs
    /// by sweep-and-prune. Made for many similar agents moved every frame.
    SweepGrid = 1,
    /// `UniformGrid`: cells from the elements' size and count.
    UniformGrid = 2,
    /// `LooseGrid`: the loose/tight double grid, each element in one loose cell by its centre.
    LooseGrid = 3,
    /// `PackedIndex`: boxes (or points) built once into one Hilbert-sorted packed tree.
    PackedIndex = 4,
    /// `KdTree`: points only, built once.
    KdTree = 5,
    /// `Quadtree`: tight quadtree, depth from the elements' size.
    Quadtree = 6,
    /// `LooseQuadtree`: each element in one leaf by its centre, loose node boxes; depth from the
    /// elements' size.
    LooseQuadtree = 7,
    /// `MxCifQuadtree`: each element in the smallest node that contains it; depth from the
    /// elements' size.
    MxCifQuadtree = 8,
    /// `PointGrid`: each element as one point, under the largest half extent of the initial boxes
    /// (larger boxes are refused).
    PointGrid = 9,
    /// `HierarchicalGrid`: levels of grids, each element in the level that fits its size.
    HierarchicalGrid = 10,
    /// `Layered`: agents up to the typical size in a point grid, larger ones in a loose grid.
    Layered = 11,
}

impl SpatixKind {
    /// Every kind, with the name of its structure's type.
    pub(crate) const ALL: [(Self, &'static str); 11] = [
        (Self::SweepGrid, "SweepGrid"),
        (Self::UniformGrid, "UniformGrid"),
        (Self::LooseGrid, "LooseGrid"),
        (Self::PackedIndex, "PackedIndex"),
        (Self::KdTree, "KdTree"),
        (Self::Quadtree, "Quadtree"),
        (Self::LooseQuadtree, "LooseQuadtree"),
        (Self::MxCifQuadtree, "MxCifQuadtree"),
        (Self::PointGrid, "PointGrid"),
        (Self::HierarchicalGrid, "HierarchicalGrid"),
        (Self::Layered, "Layered"),
    ];
}

/// How many kinds there are: `SpatixKind`'s values are 1 to `SPATIX_KIND_COUNT`.
pub const SPATIX_KIND_COUNT: i32 = 11;

//! # spatix
//!
//! 2D spatial indexes for collision detection and proximity queries: "what overlaps what" and
//! "what is near what" for thousands to millions of boxes, many of them moving every frame.
//!
//! Every structure keeps one contract, [`SpatialIndex`]: closed boxes, generational
//! [`Handle`]s, each result exactly once, nothing lost (elements outside the declared world are
//! still stored and found), no panic on bad input ([`Error::InvalidAabb`]), and queries that
//! take `&self` and allocate nothing once warm. Structures built once implement its query
//! half, [`SpatialQuery`].
//!
//! Every structure also shows its shape and what a search cost:
//! [`visit_regions`](SpatialQuery::visit_regions) reports its cells, nodes, bands or splits
//! ([`Region`]), and [`query_probed`](SpatialQuery::query_probed),
//! [`nearest_probed`](SpatialQuery::nearest_probed) and
//! [`raycast_all_probed`](SpatialQuery::raycast_all_probed) tell a [`Probe`] (such as the
//! counting [`QueryCost`]) every region entered and every element tested, with the same
//! answers as the plain searches, which pay nothing for it.
//!
//! | structure | elements live in | best for |
//! | --- | --- | --- |
//! | [`BruteForce`] | one array | fewer than ~64 elements; the oracle of every test |
//! | [`Quadtree`] | every leaf they overlap | uneven density, similar sizes |
//! | [`MxCifQuadtree`] | the smallest node that contains them | mixed sizes, every colliding pair |
//! | [`LooseQuadtree`] | one leaf (by centre); nodes carry grown boxes | sizes that vary enormously, one structure for a whole world |
//! | [`UniformGrid`] | every cell they overlap | even density, similar sizes |
//! | [`PointGrid`] | one cell, as a point (their size has a shared bound) | same-size agents |
//! | [`HierarchicalGrid`] | one cell of the level that fits their size | sizes over orders of magnitude |
//! | [`LooseGrid`] | one loose cell, by centre; cells carry grown boxes | many moving agents, moderately mixed sizes |
//! | [`SweepGrid`] | one horizontal band (by `min.y`), stored band by band sorted by `min.x` | millions of similar-size agents moved every frame ([`SpatialIndex::update_all`]) and paired |
//! | [`Layered`] | agents in a [`PointGrid`], large ones in a [`LooseGrid`], static ones in a [`PackedIndex`] (rebuilt by `maintain`) | a world of common agents, a few giants and static scenery |
//! | [`PackedIndex`] (static) | one array, in Hilbert order | static content: built once, fastest queries |
//! | [`KdTree`] (static points) | leaves of a median-split tree | k-nearest neighbours on points built once |
//!
//! ```
//! use core::ops::ControlFlow;
//! use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid};
//!
//! let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1000.0, 1000.0))?;
//! let mut grid = UniformGrid::new(world, 16.0)?;
//! let a = grid.insert(Aabb::new(Point::new(10.0, 10.0), Point::new(14.0, 14.0))?, "orc")?;
//! let b = grid.insert(Aabb::new(Point::new(13.0, 13.0), Point::new(17.0, 17.0))?, "elf")?;
//! let mut pairs = Vec::new();
//! let _ = grid.for_each_pair(|x, y| { pairs.push((*x.value, *y.value)); ControlFlow::Continue(()) });
//! assert_eq!(pairs.len(), 1);
//!
//! grid.update(b, Aabb::new(Point::new(50.0, 50.0), Point::new(54.0, 54.0))?)?; // b walks away
//! grid.remove(a);
//! assert_eq!(grid.len(), 1);
//! # Ok::<(), spatix::Error>(())
//! ```
//!
//! ## Features
//! * `serde`: `Serialize`/`Deserialize` for [`Point`], [`Aabb`] and [`Handle`].
//! * `rayon`: `ParallelPairs`, the pair pass of the quadtrees and the grids spread over
//!   rayon's thread pool (to one shared visitor, folded into state per thread, or into
//!   reusable `PairBuffers`), and `par_update_all` (the sweep grid's frame update over runs of
//!   bands); `ParallelQuery`, batch queries on every structure (`query_batch`,
//!   `within_batch`, `nearest_batch`, `raycast_batch`) answered on all threads into reusable
//!   `BatchBuffers`, in input order; `KdTree::par_build`; `PackedIndex::par_build` (and
//!   `par_with_config`).
#![deny(missing_docs)]

mod base;
mod bytes;
mod contract;
mod error;
mod geom;
mod grid;
mod kdtree;
mod layered;
mod packed;
#[cfg(feature = "rayon")]
mod par;
mod search;
mod structures;
mod sweep;
#[cfg(test)]
mod test_util;
mod tree;

pub use base::handle::Handle;
pub use base::slots::{Item, Iter};
#[cfg(feature = "views")]
pub use bytes::view::{AlignedBytes, ViewValue};
pub use bytes::{ByteForm, ByteHeader, ByteValue, checksum};
pub use contract::brute::BruteForce;
pub use contract::{Probe, QueryCost, Region, RegionKind, SpatialIndex, SpatialQuery, StaticIndex};
pub use error::Error;
pub use geom::{Aabb, Point, Scalar};
pub use grid::{HierarchicalGrid, LooseGrid, LooseGridConfig, PointGrid, UniformGrid};
#[cfg(feature = "views")]
pub use kdtree::KdTreeView;
pub use kdtree::{KdTree, KdTreeConfig, SplitRule};
pub use layered::Layered;
#[cfg(feature = "views")]
pub use packed::PackedView;
pub use packed::{PackedConfig, PackedIndex};
#[cfg(feature = "rayon")]
pub use par::{BatchAnswers, BatchBuffers, PairBuffers, ParallelPairs, ParallelQuery};
pub use search::nearest::Neighbor;
pub use search::ray::{Ray, RayHit};
pub use search::workspace::Workspace;
#[doc(hidden)]
pub use structures::{LISTED, Listed, ListedIndex, ListedStatic};
pub use sweep::SweepGrid;
pub use tree::loose::{LooseNode, LooseQuadtree};
pub use tree::mxcif::MxCifQuadtree;
pub use tree::quadtree::Quadtree;
pub use tree::{NodeKind, TreeConfig};

/// The two traits every user of spatix needs in scope: `use spatix::prelude::*;`.
///
/// ```
/// use spatix::prelude::*;
/// use spatix::{Aabb, BruteForce, Point};
/// let mut index = BruteForce::<f32, ()>::new();
/// index.insert(Aabb::point(Point::new(1.0, 1.0))?, ())?; // SpatialIndex
/// assert_eq!(index.len(), 1); // SpatialQuery
/// # Ok::<(), spatix::Error>(())
/// ```
pub mod prelude {
    pub use crate::{ByteForm, Probe, SpatialIndex, SpatialQuery};
}

/// The README's examples, compiled and run as doctests so that they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

//! The grids: [`UniformGrid`] (every cell an element overlaps), [`LooseGrid`] (one loose cell by
//! centre), and [`PointGrid`] and [`HierarchicalGrid`] over the shared leveled engine
//! (`leveled/`: a stack of uniform grids of growing cell sizes, each element filed once by its
//! corner in the level that fits its size). `lattice/` is the cell arithmetic they all share.

mod hierarchical;
pub(crate) mod lattice;
mod leveled;
mod loose;
mod point;
mod uniform;

pub use hierarchical::HierarchicalGrid;
pub use loose::{LooseGrid, LooseGridConfig};
pub use point::PointGrid;
pub use uniform::UniformGrid;

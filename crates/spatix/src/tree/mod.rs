//! What the three quadtrees ([`Quadtree`](crate::Quadtree),
//! [`MxCifQuadtree`](crate::MxCifQuadtree), [`LooseQuadtree`](crate::LooseQuadtree)) share: the
//! 8-byte node and its kinds, the parameters' limits, node geometry carried down by traversals
//! ([`Frame`]), free child groups, best-first searches over frames, and the structural checks.

mod config;
mod frame;
mod groups;
mod search;
mod validate;

pub(crate) use config::MAX_DEPTH;
pub use config::TreeConfig;
#[cfg(feature = "rayon")]
pub(crate) use frame::split_frames;
pub(crate) use frame::{Frame, MAX_PENDING, NodeStack, RIGHT, Stack, TOP, traverse};
pub(crate) use groups::{FREE, check_free_groups, compact_leaf_lists, release_group, take_group};
pub(crate) use search::{cast_frames, nearest_in_frames};
pub(crate) use validate::{check_tree, fail};

use crate::handle::NIL;

/// What [`Quadtree::traverse`](crate::Quadtree::traverse) says about a node.
///
/// ```
/// use spatix::NodeKind;
/// assert_ne!(NodeKind::Branch, NodeKind::Leaf { elements: 0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A node with four children.
    Branch,
    /// A node with an element list.
    Leaf {
        /// How many elements the leaf lists.
        elements: usize,
    },
}

/// Marks a branch in [`Node::count`].
pub(crate) const BRANCH: u32 = u32::MAX;

/// A quadtree node: 8 bytes, no box (boxes are computed on
/// the way down from the root's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Node {
    /// Branch: index of the first of its four contiguous children.
    /// Leaf: head of its element list in the list pool ([`NIL`] when empty).
    /// Free group: the next free group.
    pub(crate) first_child: u32,
    /// Leaf: number of elements. Branch: [`BRANCH`].
    pub(crate) count: u32,
}

const _: () = assert!(size_of::<Node>() == 8);

pub(crate) const EMPTY_LEAF: Node = Node {
    first_child: NIL,
    count: 0,
};

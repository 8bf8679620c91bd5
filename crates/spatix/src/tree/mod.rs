//! What the three quadtrees ([`Quadtree`](crate::Quadtree),
//! [`MxCifQuadtree`](crate::MxCifQuadtree), [`LooseQuadtree`](crate::LooseQuadtree)) share: the
//! 8-byte node and its kinds, the parameters' limits, node geometry carried down by traversals
//! ([`Frame`]), free child groups, best-first searches over frames, and the structural checks.

mod config;
mod frame;
mod groups;
mod regions;
mod search;
mod validate;

pub(crate) mod loose;
pub(crate) mod mxcif;
pub(crate) mod quadtree;

pub use config::TreeConfig;
pub(crate) use config::{MAX_DEPTH, read_tree_config, tree_config_form, write_tree_config};
pub(crate) use frame::{Frame, MAX_PENDING, NodeStack, RIGHT, Stack, TOP};
pub(crate) use groups::{FREE, check_free_groups, compact_leaf_lists, release_group, take_group};
pub(crate) use search::{cast_frames, nearest_in_frames};
pub(crate) use validate::{check_tree, fail};

use crate::base::handle::NIL;
use crate::{Aabb, Scalar};

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

impl Node {
    /// What a traversal shows of the node, and its first child (for a branch).
    pub(crate) fn shown(self) -> (NodeKind, u32) {
        let kind = match self.count {
            BRANCH => NodeKind::Branch,
            elements => NodeKind::Leaf {
                elements: elements as usize,
            },
        };
        (kind, self.first_child)
    }
}

pub(crate) const EMPTY_LEAF: Node = Node {
    first_child: NIL,
    count: 0,
};

/// What every quadtree holds alike: its world and parameters, and its nodes (node 0 the
/// root, then groups of four children) with the list of freed child groups.
#[derive(Clone, Debug)]
pub(crate) struct TreeBase<S, N> {
    pub(crate) world: Aabb<S>,
    pub(crate) config: TreeConfig,
    pub(crate) nodes: Vec<N>,
    /// Head of the list of freed child groups (linked through their first node).
    pub(crate) free_group: u32,
}

impl<S: Scalar, N: Copy> TreeBase<S, N> {
    /// Visits every node, parents before children, with its computed box, its depth and its
    /// kind: what the trees' `traverse` gives. `shown` tells a node's kind and, for a branch,
    /// the first of its four contiguous children.
    pub(crate) fn traverse(
        &self,
        shown: impl Fn(N) -> (NodeKind, u32),
        mut visit: impl FnMut(&Aabb<S>, u32, NodeKind),
    ) {
        let mut stack = Stack::new();
        stack.push(Frame::root(self.world));
        while let Some(f) = stack.pop() {
            let (kind, first_child) = shown(self.nodes[f.node as usize]);
            visit(&f.aabb, u32::from(f.depth), kind);
            if kind == NodeKind::Branch {
                for child in f.children(first_child).into_iter().rev() {
                    stack.push(child);
                }
            }
        }
    }

    /// The tree cut breadth first into subtrees, for a parallel pass, in place of what
    /// `parts` held: branches are replaced by their children, a level at a time, until there
    /// are at least `target` subtrees or only leaves remain. A branch replaced on the way
    /// (whose own elements, if the tree keeps any in branches, belong to no subtree) stays
    /// as a part of its own where the part type keeps one. `shown` as for
    /// [`traverse`](Self::traverse).
    #[cfg(feature = "rayon")]
    pub(crate) fn split<P: SplitPart<S>>(
        &self,
        target: usize,
        shown: impl Fn(N) -> (NodeKind, u32),
        parts: &mut Vec<P>,
    ) {
        parts.clear();
        parts.push(P::subtree(Frame::root(self.world)));
        let mut subtrees = 1;
        while subtrees < target {
            let before = subtrees;
            for i in 0..parts.len() {
                let Some(f) = parts[i].as_subtree() else {
                    continue;
                };
                let (NodeKind::Branch, first_child) = shown(self.nodes[f.node as usize]) else {
                    continue;
                };
                let [first, rest @ ..] = f.children(first_child);
                match P::branch(f) {
                    Some(branch) => {
                        parts[i] = branch;
                        parts.push(P::subtree(first));
                    }
                    None => parts[i] = P::subtree(first),
                }
                parts.extend(rest.map(P::subtree));
                subtrees += 3;
            }
            if subtrees == before {
                break; // only leaves
            }
        }
    }
}

/// A part of a tree's parallel pass, as [`TreeBase::split`] cuts them: a subtree, or a
/// branch above the cut.
#[cfg(feature = "rayon")]
pub(crate) trait SplitPart<S>: Copy {
    /// The part for the subtree below `f`.
    fn subtree(f: Frame<S>) -> Self;
    /// The subtree's frame, if this part is one.
    fn as_subtree(&self) -> Option<Frame<S>>;
    /// The part for branch `f` once its children replace it in the cut, if it keeps one (a
    /// tree that keeps elements in its branches).
    fn branch(f: Frame<S>) -> Option<Self>;
}

/// A subtree alone: for a tree that keeps no elements in its branches.
#[cfg(feature = "rayon")]
impl<S: Copy> SplitPart<S> for Frame<S> {
    fn subtree(f: Frame<S>) -> Self {
        f
    }

    fn as_subtree(&self) -> Option<Frame<S>> {
        Some(*self)
    }

    fn branch(_: Frame<S>) -> Option<Self> {
        None
    }
}

impl<S, N> TreeBase<S, N> {
    /// A tree of one node, `root`, over `world` (both parameters already checked).
    pub(crate) fn new(world: Aabb<S>, config: TreeConfig, root: N) -> Self {
        Self {
            world,
            config,
            nodes: vec![root],
            free_group: NIL,
        }
    }
}

/// What the trees' `auto` builds a tree from: `world` cut to where the bulk of `sample` lies
/// ([`Aabb::bulk_of`], kept only if it leaves an area), and the mean extent (mean of width
/// and height) of the sample's valid boxes, or `None` when no valid box has any size.
pub(crate) fn sized_from_sample<S: Scalar>(
    world: Aabb<S>,
    sample: &[Aabb<S>],
) -> (Aabb<S>, Option<S>) {
    let (mut total, mut n) = (0.0f64, 0usize);
    for b in sample.iter().filter(|b| b.is_valid()) {
        let size = b.size();
        total += size.x.to_f64() + size.y.to_f64();
        n += 1;
    }
    let world = Aabb::bulk_of(sample)
        .map(|bulk| bulk.clamped_to(&world))
        .filter(|w| w.size().x > S::ZERO && w.size().y > S::ZERO)
        .unwrap_or(world);
    let typical_size = (total != 0.0).then(|| S::from_f64(total / (2 * n) as f64));
    (world, typical_size)
}

/// Writes what the three quadtrees have alike: `new`, `for_element_size`, `auto`,
/// `with_config`, `world`, `config` and how it sets itself up from a sample (`ListedIndex`). The tree provides `DEFAULT_CONFIG`, a private
/// `fn empty(world, config) -> Self` (the empty tree, parameters already checked) and its
/// [`TreeBase`] in the field `base`; the macro is given the deepest nodes' side in typical element
/// sizes (`leaf_sizes`) and, for the example, the depth that gives for elements 4 wide in a
/// world 10,000 wide, and the [`TreeConfig`](crate::TreeConfig) method that sets the depth
/// (`with_leaf_side_across` for the tree that files an element in every leaf it overlaps).
macro_rules! tree_constructors {
    ($tree:ident, leaf_sizes: $leaf_sizes:literal, example_depth: $depth:literal, depth: $rule:ident) => {
        impl<S: $crate::Scalar, T> $tree<S, T> {
            #[doc = concat!("An empty tree over `world` with [`", stringify!($tree), "::DEFAULT_CONFIG`].")]
            ///
            /// # Errors
            /// [`Error::InvalidAabb`](crate::Error::InvalidAabb) if `world` is not a valid box.
            ///
            /// ```
            #[doc = concat!("use spatix::{Aabb, Point, SpatialQuery, ", stringify!($tree), "};")]
            /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 100.0))?;
            #[doc = concat!("let tree = ", stringify!($tree), "::<f64, u32>::new(world)?;")]
            /// assert!(tree.is_empty());
            #[doc = concat!("assert_eq!(tree.config(), ", stringify!($tree), "::<f64, u32>::DEFAULT_CONFIG);")]
            /// # Ok::<(), spatix::Error>(())
            /// ```
            pub fn new(world: $crate::Aabb<S>) -> Result<Self, $crate::Error> {
                Self::with_config(world, Self::DEFAULT_CONFIG)
            }

            #[doc = concat!(
                "An empty tree over `world` for elements about `typical_size` wide: the default ",
                "split threshold, and a depth limit that puts the deepest nodes about ",
                stringify!($leaf_sizes),
                " typical element sizes wide (tuned on the agents workload).",
            )]
            ///
            /// # Errors
            /// [`Error::InvalidAabb`](crate::Error::InvalidAabb) if `world` is not a valid box.
            ///
            /// ```
            #[doc = concat!("use spatix::{Aabb, Point, ", stringify!($tree), "};")]
            /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10_000.0, 10_000.0))?;
            #[doc = concat!("let tree = ", stringify!($tree), "::<f32, u32>::for_element_size(world, 4.0)?;")]
            #[doc = concat!("assert_eq!(tree.config().max_depth, ", stringify!($depth), ");")]
            /// # Ok::<(), spatix::Error>(())
            /// ```
            pub fn for_element_size(world: $crate::Aabb<S>, typical_size: S) -> Result<Self, $crate::Error> {
                let leaf_side = $leaf_sizes * typical_size.to_f64();
                Self::with_config(world, Self::DEFAULT_CONFIG.$rule(&world, leaf_side))
            }

            /// An empty tree sized from a sample of the boxes it will hold:
            #[doc = concat!("[`", stringify!($tree), "::for_element_size`]")]
            /// for their mean extent (mean of width and height), or
            #[doc = concat!("[`", stringify!($tree), "::new`]")]
            /// when the sample holds no valid box of any size (invalid ones are ignored; for
            /// points, the depth limit cannot come from their size). As the grids' `auto`, the
            /// tree covers `world` cut to where the bulk of the sample lies
            /// ([`Aabb::bulk_of`](crate::Aabb::bulk_of)), so that a stray box that widened the
            /// declared world does not leave the data in one node at the deepest depth;
            /// elements outside are kept in the border nodes.
            ///
            /// # Errors
            /// [`Error::InvalidAabb`](crate::Error::InvalidAabb) if `world` is not a valid box.
            ///
            /// ```
            #[doc = concat!("use spatix::{Aabb, Point, ", stringify!($tree), "};")]
            /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10_000.0, 10_000.0))?;
            /// let sample = (0..100)
            ///     .map(|i| {
            ///         let p = Point::new((i % 10) as f32 * 1000.0, (i / 10) as f32 * 1000.0);
            ///         Aabb::new(p, Point::new(p.x + 2.0, p.y + 6.0))
            ///     })
            ///     .collect::<Result<Vec<_>, _>>()?;
            #[doc = concat!("let tree = ", stringify!($tree), "::<f32, u32>::auto(world, &sample)?;")]
            /// assert!(tree.config().max_depth > 0);
            #[doc = concat!("assert_eq!(tree.config(), ", stringify!($tree), "::<f32, u32>::for_element_size(tree.world(), 4.0)?.config());")]
            #[doc = concat!("assert_eq!(", stringify!($tree), "::<f32, u32>::auto(world, &[])?.config(), ", stringify!($tree), "::<f32, u32>::DEFAULT_CONFIG);")]
            /// # Ok::<(), spatix::Error>(())
            /// ```
            pub fn auto(world: $crate::Aabb<S>, sample: &[$crate::Aabb<S>]) -> Result<Self, $crate::Error> {
                match $crate::tree::sized_from_sample(world, sample) {
                    (world, Some(typical_size)) => Self::for_element_size(world, typical_size),
                    (world, None) => Self::new(world),
                }
            }

            /// An empty tree over `world` with the given parameters.
            ///
            /// # Errors
            /// [`Error::InvalidAabb`](crate::Error::InvalidAabb) for an invalid world,
            /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for parameters out of
            /// range.
            ///
            /// ```
            #[doc = concat!("use spatix::{Aabb, Point, TreeConfig, ", stringify!($tree), "};")]
            /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
            /// let config = TreeConfig { max_elements: 4, max_depth: 6 };
            #[doc = concat!("let tree = ", stringify!($tree), "::<f32, ()>::with_config(world, config)?;")]
            /// assert_eq!(tree.config(), config);
            /// assert_eq!(tree.world(), world);
            /// # Ok::<(), spatix::Error>(())
            /// ```
            pub fn with_config(world: $crate::Aabb<S>, config: $crate::TreeConfig) -> Result<Self, $crate::Error> {
                let world = world.validated()?;
                config.validate()?;
                Ok(Self::empty(world, config))
            }

            /// The world box given at construction.
            pub fn world(&self) -> $crate::Aabb<S> {
                self.base.world
            }

            /// The parameters given at construction.
            pub fn config(&self) -> $crate::TreeConfig {
                self.base.config
            }
        }

        /// A tree for the sample's typical element size, room reserved for `total`.
        impl<S: $crate::Scalar, T> $crate::ListedIndex<S, T> for $tree<S, T> {
            fn for_sample(
                world: $crate::Aabb<S>,
                sample: &[$crate::Aabb<S>],
                total: usize,
            ) -> Result<Self, $crate::Error> {
                let typical = $crate::structures::typical_size(&world, sample, total);
                let mut tree = Self::for_element_size(world, typical)?;
                tree.reserve(total);
                Ok(tree)
            }
        }
    };
}
pub(crate) use tree_constructors;

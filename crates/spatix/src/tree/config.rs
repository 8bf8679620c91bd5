//! The two parameters every quadtree takes.

use crate::bytes::{Reader, Writer};
use crate::{Aabb, Error, Scalar};

/// The deepest tree a configuration may ask for: past this, floats stop halving usefully.
pub(crate) const MAX_DEPTH: u32 = 30;

/// [`TreeConfig::with_leaf_side_across`]: the deepest nodes are at least `leaf_side` over
/// this across the world's shorter side.
const SHORT_SIDE_LEAVES: f64 = 4.0;

/// The depth at which nodes are about `leaf_side` across `side` (at most [`MAX_DEPTH`]; 0
/// for a side no longer, or a `leaf_side` that is not positive).
fn depth_for(side: f64, leaf_side: f64) -> u32 {
    if leaf_side > 0.0 && side > leaf_side {
        (side / leaf_side).log2().floor().min(f64::from(MAX_DEPTH)) as u32
    } else {
        0
    }
}

/// Tuning parameters of the quadtrees: [`Quadtree`](crate::Quadtree),
/// [`MxCifQuadtree`](crate::MxCifQuadtree) and [`LooseQuadtree`](crate::LooseQuadtree).
/// Each tree's `for_element_size` constructor picks them from a typical element size.
///
/// # Example
/// ```
/// use spatix::{Aabb, Point, Quadtree, TreeConfig};
/// let config = TreeConfig { max_elements: 16, ..TreeConfig::default() };
/// assert!(config.validate().is_ok());
/// assert!(TreeConfig { max_depth: 99, ..config }.validate().is_err());
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let tree = Quadtree::<f32, ()>::with_config(world, config)?;
/// assert_eq!(tree.config(), config);
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeConfig {
    /// The split threshold: a leaf holding more elements than this splits (unless it is at
    /// `max_depth`). [`MxCifQuadtree`](crate::MxCifQuadtree) also merges four leaves into
    /// their parent at `maintain` when the five hold no more than this together. Default 8
    /// (16 for the MX-CIF tree's `new` and `for_element_size`). Range 1..=65536.
    pub max_elements: u32,
    /// Depth of the deepest nodes (the root is depth 0). Default 8. Range
    /// 0..=[`TreeConfig::MAX_DEPTH`]. Required even for points: coincident points would
    /// otherwise split forever. Choose it so that the smallest node is slightly larger than a
    /// typical element (what the trees' `for_element_size` do).
    pub max_depth: u32,
}

impl Default for TreeConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl TreeConfig {
    /// The deepest tree a configuration may ask for: past this, floats stop halving usefully.
    ///
    /// ```
    /// assert_eq!(spatix::TreeConfig::MAX_DEPTH, 30);
    /// ```
    pub const MAX_DEPTH: u32 = MAX_DEPTH;

    /// The default: a split threshold of 8 and a depth of 8.
    ///
    /// ```
    /// use spatix::TreeConfig;
    /// assert_eq!(TreeConfig::DEFAULT, TreeConfig { max_elements: 8, max_depth: 8 });
    /// ```
    pub const DEFAULT: Self = Self {
        max_elements: 8,
        max_depth: 8,
    };

    /// This configuration with `max_depth` set so that the deepest nodes of a tree over
    /// `world` are about `leaf_side` wide (at most [`TreeConfig::MAX_DEPTH`]; 0 for a world
    /// no wider, or a `leaf_side` that is not positive).
    ///
    /// ```
    /// use spatix::{Aabb, Point, TreeConfig};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1024.0, 1024.0))?;
    /// assert_eq!(TreeConfig::default().with_leaf_side(&world, 16.0).max_depth, 6);
    /// assert_eq!(TreeConfig::default().with_leaf_side(&world, 0.0).max_depth, 0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_leaf_side<S: Scalar>(self, world: &Aabb<S>, leaf_side: f64) -> Self {
        let size = world.size();
        let side = size.x.max_s(size.y).to_f64();
        Self {
            max_depth: depth_for(side, leaf_side),
            ..self
        }
    }

    /// [`TreeConfig::with_leaf_side`], with the depth also kept low enough that the deepest
    /// nodes are at least a quarter of `leaf_side` across the world's shorter side: for a tree
    /// that files an element in every leaf it overlaps, so that an element about `leaf_side`
    /// over a few wide overlaps a few leaves, however elongated the world (a world of
    /// 10^12 × 2·10^4, made long by one stray box, gave nodes 10^-7 tall at the long side's
    /// depth, and every element was filed in ten million of them).
    pub(crate) fn with_leaf_side_across<S: Scalar>(self, world: &Aabb<S>, leaf_side: f64) -> Self {
        let size = world.size();
        let short = size.x.min_s(size.y).to_f64() * SHORT_SIDE_LEAVES;
        let config = self.with_leaf_side(world, leaf_side);
        Self {
            max_depth: config.max_depth.min(depth_for(short, leaf_side)),
            ..config
        }
    }

    /// Checks the parameters' ranges.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the parameter out of range.
    ///
    /// ```
    /// use spatix::TreeConfig;
    /// assert!(TreeConfig { max_elements: 0, max_depth: 8 }.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=65536).contains(&self.max_elements) {
            return Err(Error::InvalidParameter("max_elements must be in 1..=65536"));
        }
        if self.max_depth > MAX_DEPTH {
            return Err(Error::InvalidParameter("max_depth must be at most 30"));
        }
        Ok(())
    }
}

/// Writes a tree's world and configuration: the first section of every quadtree's byte form.
pub(crate) fn write_tree_config<S: Scalar>(w: &mut Writer, world: &Aabb<S>, config: TreeConfig) {
    w.aabb(world);
    w.u32(config.max_elements);
    w.u32(config.max_depth);
}

/// Inside a quadtree's `impl Refile`: `write_config` and `read_config` (its world and
/// configuration: [`write_tree_config`], [`read_tree_config`]) and `slots`, the same for the
/// three quadtrees.
macro_rules! tree_config_form {
    () => {
        fn write_config(&self, w: &mut $crate::bytes::Writer) {
            $crate::tree::write_tree_config(w, &self.base.world, self.base.config);
        }

        fn read_config(r: &mut $crate::bytes::Reader<'_>) -> Result<Self, $crate::Error> {
            let (world, config) = $crate::tree::read_tree_config(r)?;
            Self::with_config(world, config).map_err(|e| $crate::bytes::corrupt(e.to_string()))
        }

        fn slots(&self) -> &$crate::base::slots::Slots<S, T> {
            &self.slots
        }
    };
}
pub(crate) use tree_config_form;

/// The world and configuration [`write_tree_config`] wrote.
pub(crate) fn read_tree_config<S: Scalar>(
    r: &mut Reader<'_>,
) -> Result<(Aabb<S>, TreeConfig), Error> {
    let world = r.aabb("the world")?;
    let config = TreeConfig {
        max_elements: r.u32("the split threshold")?,
        max_depth: r.u32("the depth limit")?,
    };
    Ok((world, config))
}

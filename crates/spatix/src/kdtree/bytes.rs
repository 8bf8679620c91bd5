//! The tree's byte form (the format of `crate::bytes`): the configuration, the generation, the
//! bounds, the splits in preorder, then the points and the values in tree order. Loading
//! copies them and checks the tree; it never sorts.

use super::metric::Magnitudes;
use super::{Cursor, KdTree, KdTreeConfig, Shape, Split, SplitRule, Splits};
use crate::bytes::{ByteValue, Reader, Writer, corrupt};
use crate::handle::NIL;
use crate::{Error, Scalar};

/// The structure's name in the header.
const NAME: [u8; 8] = *b"kd-tree\0";

/// A check's failure on loaded bytes, as the corruption it is.
fn inconsistent(e: Error) -> Error {
    match e {
        Error::InvariantViolated(why) => corrupt(why),
        other => corrupt(other.to_string()),
    }
}

/// The split rule's byte.
fn rule_byte(rule: SplitRule) -> u8 {
    match rule {
        SplitRule::Spread => 0,
        SplitRule::Variance => 1,
        SplitRule::Cycle => 2,
    }
}

impl<S: Scalar, T: ByteValue> KdTree<S, T> {
    /// The tree's byte form, for [`KdTree::from_bytes`]: a versioned little-endian format
    /// (docs/ARCHITECTURE.md, "Byte form") that holds the configuration, the splits, the
    /// points and the values in tree order, and the generation of the tree's handles, so that
    /// a handle given out before saving names the same element after loading.
    ///
    /// ```
    /// use spatix::{KdTree, Point, SpatialQuery, Workspace};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f32, 0.0), i as u32)))?;
    /// let bytes = tree.to_bytes();
    /// let loaded = KdTree::<f32, u32>::from_bytes(&bytes)?;
    /// let mut ws = Workspace::new();
    /// let near = loaded.nearest(Point::new(41.8, 0.0), 1, &mut ws)[0].handle;
    /// assert_eq!(*tree.get(near).unwrap().value, 42); // the same handle in both
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.points.len();
        let size =
            96 + self.shape.nodes() * (size_of::<S>() + 1) + n * (2 * size_of::<S>() + T::SIZE);
        let mut w = Writer::new::<S, T>(NAME, size);
        w.u32(self.config.bucket_size);
        w.u8(rule_byte(self.config.split));
        w.u32(self.generation);
        w.aabb(&self.bounds);
        w.u64(self.shape.nodes() as u64);
        self.preorder(self.shape.root(), &mut |split| {
            w.scalar(split.value);
            w.u8(split.axis as u8);
        });
        w.points(&self.points);
        w.values(&self.values);
        w.finish()
    }

    /// Calls `f` with the splits of the subtree at `node`, in preorder.
    fn preorder(&self, node: Cursor, f: &mut impl FnMut(Split<S>)) {
        if node.height == 0 {
            return;
        }
        f(self.splits.get(node));
        let (left, right) = node.children();
        self.preorder(left, f);
        self.preorder(right, f);
    }

    /// The tree whose byte form is `bytes` ([`KdTree::to_bytes`]): its arrays copied, then
    /// the whole tree checked ([`check_invariants`](crate::SpatialQuery::check_invariants))
    /// before it is handed out. Nothing is sorted or rebuilt, and nothing is allocated beyond
    /// what the bytes' length allows.
    ///
    /// # Errors
    /// [`Error::Corrupt`], saying what is wrong, for bytes of another format version,
    /// structure, scalar or value type, cut short or followed by more, or whose tree is
    /// inconsistent (a split out of its node's region, a point that is not finite, ...).
    ///
    /// ```
    /// use spatix::{Error, KdTree, Point};
    /// let tree = KdTree::build([(Point::new(1.0f64, 2.0), 7u8)])?;
    /// let bytes = tree.to_bytes();
    /// assert!(KdTree::<f64, u8>::from_bytes(&bytes).is_ok());
    /// assert!(matches!(KdTree::<f32, u8>::from_bytes(&bytes), Err(Error::Corrupt(_))));
    /// assert!(matches!(KdTree::<f64, u8>::from_bytes(&bytes[..20]), Err(Error::Corrupt(_))));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new::<S, T>(bytes, NAME)?;
        let bucket_size = r.u32("the bucket size")?;
        let split = match r.u8("the split rule")? {
            0 => SplitRule::Spread,
            1 => SplitRule::Variance,
            2 => SplitRule::Cycle,
            other => return Err(corrupt(format!("split rule {other}"))),
        };
        let config = KdTreeConfig { bucket_size, split };
        config
            .validate()
            .map_err(|e| corrupt(format!("the configuration: {e}")))?;
        let generation = r.u32("the generation")?;
        let bounds = r.aabb("the bounds")?;
        let nodes = r.count(size_of::<S>() + 1, "the splits")?;
        let mut preorder = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            let value = r.scalar("a split")?;
            let axis = r.u8("a split's axis")?;
            if axis > 1 {
                return Err(corrupt(format!("a split on axis {axis}")));
            }
            preorder.push(Split {
                value,
                axis: u32::from(axis),
            });
        }
        let points = r.points::<S>("the points")?;
        let n = points.len();
        if n >= NIL as usize - 1 {
            return Err(corrupt(format!("{n} points, more than a tree holds")));
        }
        let shape = Shape::new(n, bucket_size);
        if shape.nodes() != nodes {
            return Err(corrupt(format!(
                "{nodes} splits for {n} points in buckets of {bucket_size}"
            )));
        }
        let values = r.values::<T>(n, "the values")?;
        r.finish()?;
        let mut tree = Self {
            config,
            shape,
            splits: Splits::from_preorder(&preorder, shape.height),
            points,
            values,
            bounds,
            magnitudes: Magnitudes::default(),
            generation,
        };
        // The checks of `check_invariants`, with the magnitudes taken from the points instead
        // of compared with them (they are not saved).
        let checked = tree.check_shape().and_then(|()| tree.measure());
        let (measured, magnitudes) = checked.map_err(inconsistent)?;
        if measured != tree.bounds {
            return Err(corrupt(format!(
                "bounds {:?}, but the points span {measured:?}",
                tree.bounds
            )));
        }
        tree.magnitudes = magnitudes;
        tree.check_splits().map_err(inconsistent)?;
        Ok(tree)
    }
}

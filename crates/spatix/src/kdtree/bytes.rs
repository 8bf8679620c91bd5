//! The tree's byte form (the format of `crate::bytes`): the configuration, the generation, the
//! bounds, the splits in preorder, then the points and the values in tree order. Loading
//! copies them and checks the tree; it never sorts.

use super::metric::Magnitudes;
use super::{Cursor, KdTree, KdTreeConfig, Shape, Split, SplitRule, Splits};
use crate::base::handle::NIL;
use crate::bytes::{Layout, Reader, TakeValues, Writer, byte_form, corrupt};
use crate::{Error, Scalar};

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

byte_form!(KdTree);

impl<S: Scalar, T> Layout for KdTree<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"kd-tree\0";

    fn size_hint(&self) -> usize {
        64 + self.shape.nodes() * (size_of::<S>() + 1) + self.points.len() * 2 * size_of::<S>()
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.values.iter()
    }

    fn value_count(&self) -> usize {
        self.values.len()
    }

    /// The configuration, the generation of the tree's handles, the bounds, the splits in
    /// preorder, the points in tree order, then the values.
    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
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
        values(w, self);
    }

    /// The tree's arrays copied, then the whole tree checked as
    /// [`check_invariants`](crate::SpatialQuery::check_invariants) does. Nothing is sorted or
    /// rebuilt.
    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, T>) -> Result<Self, Error> {
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
        let values = take(r, n)?;
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

impl<S: Scalar, T> KdTree<S, T> {
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
}

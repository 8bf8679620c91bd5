//! The tree's byte form (the format of `crate::bytes`): the configuration, the generation, the
//! bounds, whether every coordinate is of an ordinary magnitude, the split blocks as the tree
//! holds them, then the points and the values in tree order (version 2: no magnitudes, and
//! the splits in preorder). Loading copies them and checks the tree; it never sorts.

use super::metric::Magnitudes;
use super::splits::Block;
use super::{KdTree, KdTreeConfig, Shape, Split, SplitRule, Splits};
use crate::base::handle::NIL;
use crate::bytes::{Layout, Reader, TakeValues, Writer, byte_form, corrupt};
use crate::{Aabb, Error, Scalar};

/// A check's failure on loaded bytes, as the corruption it is.
fn inconsistent(e: Error) -> Error {
    match e {
        Error::InvariantViolated(why) => corrupt(why),
        other => corrupt(other.to_string()),
    }
}

/// The split rule's byte.
pub(super) fn rule_byte(rule: SplitRule) -> u8 {
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

    /// The configuration, the generation of the tree's handles, the bounds, whether every
    /// coordinate is ordinary, the split blocks (each its axes, zeros up to the values'
    /// alignment, and its values), the points in tree order, then the values.
    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
        w.u32(self.config.bucket_size);
        w.u8(rule_byte(self.config.split));
        w.u32(self.generation);
        w.aabb(&self.bounds);
        w.u8(u8::from(self.magnitudes.all_ordinary()));
        let blocks = self.splits.blocks();
        w.count(blocks.len());
        for block in blocks {
            w.u32(block.axes);
            if size_of::<S>() == 8 {
                w.u32(0);
            }
            for &v in &block.values {
                w.scalar(v);
            }
        }
        w.points(&self.points);
        values(w, self);
    }

    /// The tree's arrays copied, then the whole tree checked as
    /// [`check_invariants`](crate::SpatialQuery::check_invariants) does. Nothing is sorted or
    /// rebuilt.
    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, T>) -> Result<Self, Error> {
        let (config, generation, bounds) = read_head(r)?;
        let bucket_size = config.bucket_size;
        let (splits, saved, points) = if r.version() >= 3 {
            let ordinary = match r.u8("the magnitudes")? {
                0 => false,
                1 => true,
                other => return Err(corrupt(format!("magnitudes byte {other}"))),
            };
            let blocks = r.array(size_of::<Block<S>>(), "the splits")?;
            let blocks = r.blocks(blocks, size_of::<Block<S>>(), "the splits", |bytes, out| {
                for b in bytes.chunks_exact(size_of::<Block<S>>()) {
                    out.push(block(b)?);
                }
                Ok(())
            })?;
            let points = r.points::<S>("the points")?;
            let n = points.len();
            let shape = shape(n, bucket_size)?;
            let splits = Splits::from_blocks(blocks, shape.height).ok_or_else(|| {
                corrupt(format!(
                    "split blocks not those of {n} points in buckets of {bucket_size}"
                ))
            })?;
            (splits, Some(Magnitudes::saved(ordinary)), points)
        } else {
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
            let shape = shape(n, bucket_size)?;
            if shape.nodes() != nodes {
                return Err(corrupt(format!(
                    "{nodes} splits for {n} points in buckets of {bucket_size}"
                )));
            }
            let splits = Splits::from_preorder(&preorder, shape.height);
            (splits, None, points)
        };
        let n = points.len();
        let shape = Shape::new(n, bucket_size);
        let values = take(r, n)?;
        let mut tree = Self {
            config,
            shape,
            splits,
            points,
            values,
            bounds,
            magnitudes: Magnitudes::default(),
            generation,
        };
        // The checks of `check_invariants`, with the magnitudes taken from the points (version
        // 2 does not save them; version 3's must be theirs).
        let checked = tree
            .tree()
            .check_shape()
            .and_then(|()| tree.tree().measure());
        let (measured, magnitudes) = checked.map_err(inconsistent)?;
        if measured != tree.bounds {
            return Err(corrupt(format!(
                "bounds {:?}, but the points span {measured:?}",
                tree.bounds
            )));
        }
        if let Some(saved) = saved.filter(|&saved| saved != magnitudes) {
            return Err(corrupt(format!(
                "magnitudes {saved:?} saved, but the points have {magnitudes:?}"
            )));
        }
        tree.magnitudes = magnitudes;
        tree.tree().check_splits().map_err(inconsistent)?;
        Ok(tree)
    }
}

/// The shape of a tree of `n` points in buckets of `bucket`, if it holds that many.
pub(super) fn shape(n: usize, bucket: u32) -> Result<Shape, Error> {
    if n >= NIL as usize - 1 {
        return Err(corrupt(format!("{n} points, more than a tree holds")));
    }
    Ok(Shape::new(n, bucket))
}

/// A split block from its bytes: its axes, zeros up to its values' alignment, its values.
fn block<S: Scalar>(bytes: &[u8]) -> Result<Block<S>, Error> {
    let size = size_of::<S>();
    let start = size.max(4);
    let (head, rest) = bytes.split_at(start);
    let axes = u32::from_le_bytes(head[..4].try_into().expect("four bytes"));
    if head[4..].iter().any(|&b| b != 0) {
        return Err(corrupt("a split block's padding is not zeros"));
    }
    let mut values = [S::ZERO; 15];
    for (v, c) in values.iter_mut().zip(rest.chunks_exact(size)) {
        *v = crate::bytes::scalar(c);
    }
    Ok(Block { axes, values })
}

/// The head of the kd-tree's layout, before its arrays: the configuration (checked), the
/// generation of its handles and the points' bounds. Read by the copying load and by the view.
pub(super) fn read_head<S: Scalar>(
    r: &mut Reader<'_>,
) -> Result<(KdTreeConfig, u32, Aabb<S>), Error> {
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
    Ok((config, generation, bounds))
}

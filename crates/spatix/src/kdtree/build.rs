//! Building: one flat array of points reordered in place, node by node, by median selection.

use super::metric::Magnitudes;
use super::select::select;
use super::{KdTree, KdTreeConfig, Shape, Split, SplitRule, Splits};
use crate::base::handle::{NIL, next_salt};
use crate::{Aabb, Error, Point, Scalar};

/// A point and its slot, as the build moves them together, padded to 16 bytes for `f32` (one
/// 16-byte move: the selections were about 7% faster than with 12-byte records) and 24 for
/// `f64` (aligning those to 16 made them 32 bytes, a third more to move: 1M uniform `f64`
/// points built 6% slower).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Rec<S> {
    p: [S; 2],
    slot: u32,
    /// Always 0.
    pad: u32,
}

/// Below this many points a subtree is built on the current thread (`par_build`).
#[cfg(feature = "rayon")]
const PARALLEL_CUTOFF: usize = 1 << 15;

impl<S: Scalar, T> KdTree<S, T> {
    /// Builds a tree of `points` (each with its value) with the default [`KdTreeConfig`].
    /// Handles name tree positions, not input positions (see [`KdTree`]'s "Handles").
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if a coordinate is NaN or infinite, [`Error::CapacityExceeded`]
    /// past 2^32 - 2 points.
    ///
    /// ```
    /// use spatix::{Error, KdTree, Point, SpatialQuery};
    /// let tree = KdTree::build((0..100).map(|i| (Point::new(i as f32, 0.0), i)))?;
    /// assert_eq!(tree.len(), 100);
    /// assert_eq!(
    ///     KdTree::build([(Point::new(f32::NAN, 0.0), 0)]).unwrap_err(),
    ///     Error::InvalidAabb
    /// );
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn build(points: impl IntoIterator<Item = (Point<S>, T)>) -> Result<Self, Error> {
        Self::with_config(points, KdTreeConfig::default())
    }

    /// Builds a tree of `points` with the given parameters.
    ///
    /// # Errors
    /// As [`KdTree::build`], and [`Error::InvalidParameter`] for a configuration out of
    /// range.
    ///
    /// ```
    /// use spatix::{KdTree, KdTreeConfig, Point, SplitRule};
    /// let config = KdTreeConfig { bucket_size: 4, split: SplitRule::Variance };
    /// let tree = KdTree::with_config((0..64).map(|i| (Point::new(i as f64, 0.0), ())), config)?;
    /// assert_eq!(tree.height(), 4);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn with_config(
        points: impl IntoIterator<Item = (Point<S>, T)>,
        config: KdTreeConfig,
    ) -> Result<Self, Error> {
        Self::build_above(points, config, usize::MAX)
    }

    /// [`KdTree::with_config`] with the subtrees of more than 32,768 points built in
    /// parallel on rayon's thread pool (feature `rayon`). The tree is identical to the one
    /// `with_config` builds.
    ///
    /// # Errors
    /// As [`KdTree::with_config`].
    ///
    /// ```
    /// use spatix::{KdTree, KdTreeConfig, Point, SpatialQuery};
    /// let points: Vec<_> = (0..100_000).map(|i| (Point::new((i % 317) as f32, (i / 317) as f32), i)).collect();
    /// let tree = KdTree::par_build(points.iter().copied(), KdTreeConfig::default())?;
    /// assert_eq!(tree.len(), 100_000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_build(
        points: impl IntoIterator<Item = (Point<S>, T)>,
        config: KdTreeConfig,
    ) -> Result<Self, Error> {
        Self::build_above(points, config, PARALLEL_CUTOFF)
    }

    /// The build, with subtrees of more than `parallel_above` points built in parallel.
    fn build_above(
        points: impl IntoIterator<Item = (Point<S>, T)>,
        config: KdTreeConfig,
        parallel_above: usize,
    ) -> Result<Self, Error> {
        config.validate()?;
        let Gathered {
            mut values,
            mut recs,
            bounds,
            smallest,
        } = gather(points)?;
        let shape = Shape::new(recs.len(), config.bucket_size);
        let mut splits = vec![Split::default(); shape.nodes()];
        let mut points = vec![[S::ZERO; 2]; recs.len()];
        let job = Job {
            shape,
            rule: config.split,
            parallel_above,
        };
        job.subtree(&mut recs, &mut points, &mut splits, 0, shape.height);
        let splits = Splits::from_preorder(&splits, shape.height);
        let values = in_tree_order(&mut values, &recs);
        Ok(Self {
            config,
            shape,
            splits,
            points,
            values,
            bounds,
            magnitudes: Magnitudes::of(&bounds, smallest),
            generation: next_salt(),
        })
    }
}

/// The input, copied: the values in input order (each taken once by the build), the build
/// records, the points' bounds and their smallest non-zero coordinate magnitude (infinite if
/// none).
struct Gathered<S, T> {
    values: Vec<Option<T>>,
    recs: Vec<Rec<S>>,
    bounds: Aabb<S>,
    smallest: S,
}

/// Copies the points into build records (slot `i` for input `i`) and the values into one
/// array, in input order.
fn gather<S: Scalar, T>(
    points: impl IntoIterator<Item = (Point<S>, T)>,
) -> Result<Gathered<S, T>, Error> {
    let points = points.into_iter();
    let (lower, _) = points.size_hint();
    let mut values = Vec::with_capacity(lower);
    let mut recs = Vec::with_capacity(lower);
    let (mut lo, mut hi) = ([S::INFINITY; 2], [-S::INFINITY; 2]);
    let mut smallest = S::INFINITY;
    for (p, value) in points {
        if !p.is_finite() {
            return Err(Error::InvalidAabb);
        }
        if recs.len() >= NIL as usize - 1 {
            return Err(Error::CapacityExceeded);
        }
        let c = [p.x, p.y];
        for a in 0..2 {
            lo[a] = lo[a].min_s(c[a]);
            hi[a] = hi[a].max_s(c[a]);
            let m = c[a].abs_s();
            smallest = smallest.min_s(if m == S::ZERO { S::INFINITY } else { m });
        }
        recs.push(Rec {
            p: c,
            slot: recs.len() as u32,
            pad: 0,
        });
        values.push(Some(value));
    }
    // A static structure keeps no room to grow (an iterator without a size hint leaves some).
    values.shrink_to_fit();
    let bounds = if recs.is_empty() {
        Aabb::default()
    } else {
        Aabb {
            min: Point::new(lo[0], lo[1]),
            max: Point::new(hi[0], hi[1]),
        }
    };
    Ok(Gathered {
        values,
        recs,
        bounds,
        smallest,
    })
}

/// The values in tree order: `recs[i].slot` is the input position of the point at tree
/// position `i`. One gather, whose reads are independent of one another, so their cache
/// misses overlap (following the permutation's cycles in place was a chain of dependent
/// misses: 1M points, build 140 → 400 ms).
fn in_tree_order<S, T>(values: &mut [Option<T>], recs: &[Rec<S>]) -> Vec<T> {
    recs.iter()
        .map(|r| {
            values[r.slot as usize]
                .take()
                .expect("the records name each input position once")
        })
        .collect()
}

/// What every node of one build shares.
#[derive(Clone, Copy)]
struct Job {
    shape: Shape,
    rule: SplitRule,
    /// Subtrees with more points than this build their halves in parallel (with the feature
    /// `rayon`; one after the other without it).
    parallel_above: usize,
}

impl Job {
    /// Builds the subtree whose first leaf is `leaf` and whose height is `height`: `recs`
    /// are its points, `points` receive them in tree order, and `splits` its internal
    /// nodes, in preorder. A leaf copies its points out as soon as they are in place, while
    /// they are in cache.
    fn subtree<S: Scalar>(
        self,
        recs: &mut [Rec<S>],
        points: &mut [[S; 2]],
        splits: &mut [Split<S>],
        leaf: usize,
        height: u32,
    ) {
        if height == 0 {
            for (point, rec) in points.iter_mut().zip(recs.iter()) {
                *point = rec.p;
            }
            return;
        }
        let total = recs.len();
        let half = 1usize << (height - 1);
        let mid = self.shape.start(leaf + half) - self.shape.start(leaf);
        let axis = self.axis(recs, height);
        // One closure per axis, so that the key indexes a constant.
        if axis == 0 {
            select(recs, mid, |r: &Rec<S>| r.p[0]);
        } else {
            select(recs, mid, |r: &Rec<S>| r.p[1]);
        }
        splits[0] = Split {
            value: recs[mid].p[axis],
            axis: axis as u32,
        };
        let (left_recs, right_recs) = recs.split_at_mut(mid);
        let (left_points, right_points) = points.split_at_mut(mid);
        let (left_splits, right_splits) = splits[1..].split_at_mut(half - 1);
        join(
            total > self.parallel_above,
            || self.subtree(left_recs, left_points, left_splits, leaf, height - 1),
            || {
                self.subtree(
                    right_recs,
                    right_points,
                    right_splits,
                    leaf + half,
                    height - 1,
                );
            },
        );
    }

    /// The axis a node of `height` over `recs` splits.
    fn axis<S: Scalar>(self, recs: &[Rec<S>], height: u32) -> usize {
        match self.rule {
            SplitRule::Cycle => ((self.shape.height - height) % 2) as usize,
            SplitRule::Spread => {
                let (lo, hi) = extent(recs);
                let spread = |a: usize| hi[a].to_f64() - lo[a].to_f64();
                usize::from(spread(1) > spread(0))
            }
            SplitRule::Variance => {
                // Shifted by the first point, so that far-away data loses no precision.
                let first = recs[0].p.map(Scalar::to_f64);
                let (mut sum, mut squares) = ([0.0f64; 2], [0.0f64; 2]);
                let mut n = 0usize;
                for r in sample(recs) {
                    n += 1;
                    for a in 0..2 {
                        let d = r.p[a].to_f64() - first[a];
                        sum[a] += d;
                        squares[a] += d * d;
                    }
                }
                let n = n as f64;
                let variance = |a: usize| squares[a] / n - (sum[a] / n) * (sum[a] / n);
                usize::from(variance(1) > variance(0))
            }
        }
    }
}

/// Runs both, on rayon's thread pool if `parallel`.
#[cfg(feature = "rayon")]
fn join(parallel: bool, a: impl FnOnce() + Send, b: impl FnOnce() + Send) {
    if parallel {
        rayon::join(a, b);
    } else {
        a();
        b();
    }
}

/// Runs both, one after the other (no thread pool without the feature `rayon`).
#[cfg(not(feature = "rayon"))]
fn join(_parallel: bool, a: impl FnOnce(), b: impl FnOnce()) {
    a();
    b();
}

/// Nodes of up to this many points measure their spread on every point; larger ones on an
/// evenly spaced sample of about this many (the axis choice only steers the tree's quality,
/// never its correctness, and a full pass over a large node costs as much as its selection).
const SAMPLE: usize = 1024;

/// The records a node measures its spread on: all of them, or an evenly spaced sample.
fn sample<S: Scalar>(recs: &[Rec<S>]) -> impl Iterator<Item = &Rec<S>> {
    recs.iter().step_by(recs.len().div_ceil(SAMPLE))
}

/// The smallest and the largest coordinates, per axis, of the records [`sample`] picks. Four
/// independent minima and maxima per axis, so that a pass over a small node is not one long
/// chain of dependent comparisons.
fn extent<S: Scalar>(recs: &[Rec<S>]) -> ([S; 2], [S; 2]) {
    let step = recs.len().div_ceil(SAMPLE);
    let count = recs.len().div_ceil(step);
    let first = recs[0].p;
    let (mut lo, mut hi) = ([first; 4], [first; 4]);
    let mut take = |lane: usize, i: usize| {
        let p = recs[i * step].p;
        for a in 0..2 {
            lo[lane][a] = lo[lane][a].min_s(p[a]);
            hi[lane][a] = hi[lane][a].max_s(p[a]);
        }
    };
    for quad in 0..count / 4 {
        for lane in 0..4 {
            take(lane, quad * 4 + lane);
        }
    }
    for i in count / 4 * 4..count {
        take(0, i);
    }
    let fold = |v: [[S; 2]; 4], f: fn(S, S) -> S| {
        [0, 1].map(|a| f(f(v[0][a], v[1][a]), f(v[2][a], v[3][a])))
    };
    (fold(lo, S::min_s), fold(hi, S::max_s))
}

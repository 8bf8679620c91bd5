//! The structural self-check.

use super::metric::Magnitudes;
use super::{Cursor, Kd, MAX_PENDING, Shape, coord, everywhere};
use crate::base::stack::ArrayStack;
use crate::contract::Validates;
use crate::{Aabb, Error, Scalar};

fn violated<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<'a, S: Scalar, T> Kd<'a, S, T> {
    /// The configuration, the arrays' lengths and the shape.
    pub(super) fn check_shape(&self) -> Result<(), Error> {
        self.config.validate()?;
        let n = self.points.len();
        if self.values.len() != n || self.shape.n != n {
            return violated(format!(
                "{n} points, but {} values and a shape for {}",
                self.values.len(),
                self.shape.n
            ));
        }
        if self.shape != Shape::new(n, self.config.bucket_size) {
            return violated(format!(
                "height {} for {n} points in buckets of {}",
                self.shape.height, self.config.bucket_size
            ));
        }
        if self.splits.height() != self.shape.height {
            return violated(format!(
                "splits of a tree of height {} in a tree of height {}",
                self.splits.height(),
                self.shape.height
            ));
        }
        Ok(())
    }

    /// The bounds and the magnitudes of the points, all of which must be finite.
    pub(super) fn measure(&self) -> Result<(Aabb<S>, Magnitudes), Error> {
        let mut bounds: Option<Aabb<S>> = None;
        let mut smallest = S::INFINITY;
        for i in 0..self.points.len() {
            let p = self.point(i);
            if !p.is_finite() {
                return violated(format!("position {i} holds {p:?}"));
            }
            for c in [p.x, p.y] {
                if c != S::ZERO {
                    smallest = smallest.min_s(c.abs_s());
                }
            }
            let b = Aabb { min: p, max: p };
            bounds = Some(bounds.map_or(b, |a| a.union(&b)));
        }
        let bounds = bounds.unwrap_or_default();
        Ok((bounds, Magnitudes::of(&bounds, smallest)))
    }

    /// The kd property, node by node, with each node's region carried down.
    pub(super) fn check_splits(&self) -> Result<(), Error> {
        let mut stack = ArrayStack::<(Cursor, Aabb<S>), MAX_PENDING>::new();
        stack.push((self.shape.root(), everywhere()));
        while let Some((node, region)) = stack.pop() {
            if node.height == 0 {
                for i in self.shape.range(node) {
                    let p = self.point(i);
                    if !region.contains_point(p) {
                        return violated(format!(
                            "point {p:?} at position {i} lies outside its leaf's region {region:?}"
                        ));
                    }
                }
                continue;
            }
            let split = self.splits.get(node);
            let axis = split.axis as usize;
            let inside =
                coord(&region.min, axis) <= split.value && split.value <= coord(&region.max, axis);
            if !split.value.is_finite() || !inside {
                return violated(format!(
                    "node {node:?} splits axis {} at {:?}, outside its region {region:?}",
                    split.axis, split.value
                ));
            }
            let (left, right) = node.children();
            let (lo, hi) = split.cut(&region);
            stack.push((right, hi));
            stack.push((left, lo));
        }
        Ok(())
    }
}

impl<S: Scalar, T> Validates for Kd<'_, S, T> {
    /// Checks the arrays' lengths, the shape (height minimal for the bucket size, one split
    /// per internal node), that every point is finite, the bounds, the magnitudes, and the
    /// kd property: every point lies in the region its ancestors' splits give it (left of a
    /// split `<=`, right `>=`), and every split lies in its node's region.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.check_shape()?;
        let (bounds, magnitudes) = self.measure()?;
        if bounds != self.bounds {
            return violated(format!(
                "bounds {:?}, but the points span {bounds:?}",
                self.bounds
            ));
        }
        if magnitudes != self.magnitudes {
            return violated(format!(
                "magnitudes {:?} for points spanning {bounds:?}, but {magnitudes:?}",
                self.magnitudes
            ));
        }
        self.check_splits()
    }
}

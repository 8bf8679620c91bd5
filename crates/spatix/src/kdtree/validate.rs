//! The structural self-check.

use super::{Cursor, Entry, KdTree, MAX_PENDING, Shape, coord, everywhere};
use crate::pool::ArrayStack;
use crate::{Aabb, Error, Handle, Scalar};

fn violated<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar, T> KdTree<S, T> {
    /// Checks the element store, the shape (height minimal for the bucket size, one split
    /// per internal node), that the tree order is a permutation of the slots holding exactly
    /// their points, the bounds, and the kd property: every point lies in the region its
    /// ancestors' splits give it (left of a split `<=`, right `>=`), and every split lies in
    /// its node's region.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.slots.check()?;
        self.config.validate()?;
        let n = self.slots.len();
        if self.entries.len() != n || self.shape.n != n {
            return violated(format!(
                "{n} elements, but {} points in tree order and a shape for {}",
                self.entries.len(),
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
        self.check_elements()?;
        self.check_splits()
    }

    /// Every slot appears once in tree order, holds the zero-size box of its point, and has
    /// the tree's one generation; the bounds are the points' bounds.
    fn check_elements(&self) -> Result<(), Error> {
        let n = self.entries.len();
        let mut seen = vec![false; n];
        let mut bounds: Option<Aabb<S>> = None;
        for (i, &Entry { slot, .. }) in self.entries.iter().enumerate() {
            let s = slot as usize;
            if s >= n || seen[s] || !self.slots.is_live(slot) {
                return violated(format!(
                    "position {i} names slot {slot}: out of range, repeated or empty"
                ));
            }
            seen[s] = true;
            let p = self.point(i);
            let b = Aabb { min: p, max: p };
            if *self.slots.aabb(slot) != b || !p.is_finite() {
                return violated(format!(
                    "position {i} holds {p:?}, but slot {slot}'s box is {:?}",
                    self.slots.aabb(slot)
                ));
            }
            let handle = Handle::new(slot, self.generation);
            if self.slots.get(handle).is_none() {
                return violated(format!("slot {slot} is not at the tree's generation"));
            }
            bounds = Some(bounds.map_or(b, |a| a.union(&b)));
        }
        if let Some(b) = bounds
            && b != self.bounds
        {
            return violated(format!(
                "bounds {:?}, but the points span {b:?}",
                self.bounds
            ));
        }
        Ok(())
    }

    /// The kd property, node by node, with each node's region carried down.
    fn check_splits(&self) -> Result<(), Error> {
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

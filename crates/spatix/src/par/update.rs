//! The parallel frame update: what [`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)
//! needs of a structure, apart from how its pair pass splits.

use crate::{Aabb, Error, Handle, Scalar, SpatialIndex};

/// The mover of a parallel frame pass: called from many threads, with each element's handle,
/// value and box, it returns the element's new box.
pub(crate) trait MoveFn<S, T>: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync {}

impl<S, T, F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync> MoveFn<S, T> for F {}

/// How a structure walks its storage for the frame update in parallel parts: implemented in
/// each structure's `mutate.rs`, empty (the default: [`SpatialIndex::update_all`] on the
/// calling thread) where the structure's re-filing does not split.
pub(crate) trait UpdateParts<S: Scalar, T> {
    /// [`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all):
    /// [`SpatialIndex::update_all`] on the calling thread unless the structure walks its
    /// storage in parallel parts.
    fn update_in_parts<F: MoveFn<S, T>>(&mut self, f: F) -> Result<(), Error>
    where
        Self: SpatialIndex<S, T>,
        T: Send,
    {
        self.update_all(f)
    }
}

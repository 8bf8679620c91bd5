//! Parallel pair finding (feature `rayon`).

use core::ops::ControlFlow;

use crate::{Item, Scalar, SpatialIndex};

/// Structures whose pair pass splits into independent parts that run on rayon's thread pool.
///
/// Each pair is still reported exactly once (the reference-point rule needs no coordination
/// between parts), but `visit` may be called from several threads at once and in any order.
/// Splitting allocates a small list of parts per call.
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use spatix::{Aabb, ParallelPairs, Point, Quadtree, SpatialIndex, SpatialQuery};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut tree = Quadtree::new(world)?;
/// for i in 0..100 {
///     let x = (i % 10) as f32 * 10.0;
///     let y = (i / 10) as f32 * 10.0;
///     tree.insert(Aabb::new(Point::new(x, y), Point::new(x + 10.0, y + 1.0))?, i)?;
/// }
/// let pairs = AtomicUsize::new(0);
/// let _ = tree.par_for_each_pair(|_, _| {
///     pairs.fetch_add(1, Ordering::Relaxed);
///     ControlFlow::Continue(())
/// });
/// assert_eq!(pairs.into_inner(), 90); // each box touches its right-hand neighbour
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait ParallelPairs<S: Scalar, T: Sync>: SpatialIndex<S, T> + Sync {
    /// [`SpatialQuery::for_each_pair`](crate::SpatialQuery::for_each_pair) on all threads. Returns `Break` if a visitor broke
    /// (other threads stop soon after).
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync;
}

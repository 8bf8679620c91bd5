//! Parallel frames (feature `rayon`): pair finding and the bulk update.

use core::ops::ControlFlow;

use crate::{Aabb, Error, Handle, Item, Scalar, SpatialIndex};

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

    /// [`SpatialIndex::update_all`] on all threads: `f` is called once for every element,
    /// with the same arguments and the same handling of refused boxes, but from several
    /// threads at once, each walking its own part of the storage in order (so the order
    /// across parts is unspecified). [`SweepGrid`](crate::SweepGrid) splits its bands into
    /// runs walked in parallel; the other structures run [`SpatialIndex::update_all`] on the
    /// calling thread.
    ///
    /// # Errors
    /// As [`SpatialIndex::update_all`]: the error of a refusal (which refusal, when several
    /// threads met one, is unspecified).
    ///
    /// # Example
    /// ```
    /// use spatix::{Aabb, ParallelPairs, Point, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// // Agents as values: a velocity each.
    /// let items = (0..1000).map(|i| {
    ///     let p = Point::new((i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0);
    ///     (Aabb::from_center_half_extents(p, Point::new(0.5, 0.5)).unwrap(), 0.25f32)
    /// });
    /// let mut grid = SweepGrid::build_auto(world, items)?;
    /// grid.par_update_all(|_, vx, b| Aabb {
    ///     min: Point::new(b.min.x + *vx, b.min.y),
    ///     max: Point::new(b.max.x + *vx, b.max.y),
    /// })?;
    /// // The 25 agents of the left column (centre x = 0) moved right by a quarter.
    /// assert_eq!(grid.iter().filter(|item| item.aabb.min.x == -0.25).count(), 25);
    /// assert_eq!(grid.len(), 1000);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn par_update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        T: Send,
    {
        self.update_all(f)
    }
}

//! Parallel frames (feature `rayon`): pair finding and the bulk update, written once over
//! each structure's split of its pair pass ([`PairParts`], implemented in its `pairs.rs`).

use core::ops::{ControlFlow, Range};

use rayon::prelude::*;

use crate::{Aabb, Error, Handle, Item, Scalar, SpatialIndex};

/// How many parts per thread a pair pass is cut into: parts differ in work (a crowded band,
/// a deep subtree), and rayon balances them only if there are several per thread.
const PARTS_PER_THREAD: usize = 8;

/// How a structure's pair pass splits into independent parts: the one thing the parallel
/// layer needs of a structure, implemented in each structure's `pairs.rs`. [`ParallelPairs`]
/// is written once, for every structure that implements this.
pub(crate) trait PairParts<S: Scalar, T>: SpatialIndex<S, T> {
    /// One part of the pass (a run of rows or bands, a subtree, ...).
    type Part: Sync;

    /// The pass cut into about `target` parts (fewer when the structure is small) that
    /// together report every pair exactly once, with no coordination between them.
    fn pair_parts(&self, target: usize) -> Vec<Self::Part>;

    /// The pairs of one part, reported to `visit`.
    fn pairs_of_part<F>(&self, part: &Self::Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>;

    /// [`ParallelPairs::par_update_all`]: [`SpatialIndex::update_all`] on the calling thread
    /// unless the structure walks its storage in parallel parts.
    fn update_in_parts<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        T: Send,
    {
        self.update_all(f)
    }
}

/// `0..count` cut into at most `parts` consecutive ranges of about equal length (rows of a
/// grid into bands).
pub(crate) fn even_ranges(count: u32, parts: usize) -> Vec<Range<u32>> {
    let count = u64::from(count);
    let parts = (parts as u64).clamp(1, count.max(1));
    let at = |k: u64| (count * k / parts) as u32;
    (0..parts).map(|k| at(k)..at(k + 1)).collect()
}

/// Structures whose pair pass splits into independent parts that run on rayon's thread pool:
/// [`UniformGrid`](crate::UniformGrid), [`LooseGrid`](crate::LooseGrid),
/// [`PointGrid`](crate::PointGrid), [`HierarchicalGrid`](crate::HierarchicalGrid),
/// [`Quadtree`](crate::Quadtree), [`LooseQuadtree`](crate::LooseQuadtree),
/// [`MxCifQuadtree`](crate::MxCifQuadtree) and [`SweepGrid`](crate::SweepGrid). The crate
/// implements it once for all of them, from how each cuts its pass into parts, so it cannot
/// be implemented outside.
///
/// ```
/// use spatix::*;
/// fn parallel<I: ParallelPairs<f32, u32>>() {}
/// parallel::<UniformGrid<f32, u32>>();
/// parallel::<LooseGrid<f32, u32>>();
/// parallel::<PointGrid<f32, u32>>();
/// parallel::<HierarchicalGrid<f32, u32>>();
/// parallel::<Quadtree<f32, u32>>();
/// parallel::<LooseQuadtree<f32, u32>>();
/// parallel::<MxCifQuadtree<f32, u32>>();
/// parallel::<SweepGrid<f32, u32>>();
/// ```
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
    /// [`SpatialQuery::for_each_pair`](crate::SpatialQuery::for_each_pair) on all threads:
    /// the pass is cut into about eight parts per thread (runs of rows or bands, subtrees),
    /// which rayon runs in parallel. Returns `Break` if a visitor broke (other threads stop
    /// soon after).
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
        T: Send;
}

/// The one implementation, over each structure's `PairParts`.
impl<S: Scalar, T: Sync, I: PairParts<S, T> + Sync> ParallelPairs<S, T> for I {
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
    {
        let parts = self.pair_parts(rayon::current_num_threads() * PARTS_PER_THREAD);
        parts
            .par_iter()
            .try_for_each(|part| self.pairs_of_part(part, &mut &visit))
    }

    fn par_update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        T: Send,
    {
        self.update_in_parts(f)
    }
}

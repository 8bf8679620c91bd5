//! Batch queries for many query points on rayon's thread pool (feature `rayon`).

use rayon::prelude::*;

use super::KdTree;
use crate::{Item, Neighbor, Point, Scalar, SpatialQuery, Workspace};

/// Query points one rayon task answers, one after the other, with one [`Workspace`]: few
/// enough that 10k queries still spread evenly over many threads, enough that the task's
/// bookkeeping (and the workspace's allocation) is spread over many queries.
const CHUNK: usize = 64;

impl<S: Scalar, T: Sync> KdTree<S, T> {
    /// [`nearest`](SpatialQuery::nearest) for every point of `points`, spread over rayon's
    /// thread pool: `visit(i, neighbours)` receives the `k` nearest elements of `points[i]`,
    /// ascending, from whichever thread answered it, in no particular order of `i`. The
    /// points are answered in runs of 64 consecutive ones, each run by one rayon task with
    /// one [`Workspace`].
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use spatix::{KdTree, Point};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f32, 0.0), i)))?;
    /// let queries: Vec<_> = (0..100).map(|i| Point::new(i as f32 * 10.0 + 0.1, 1.0)).collect();
    /// let nearest = Mutex::new(vec![0; queries.len()]);
    /// tree.nearest_batch(&queries, 1, |i, found| {
    ///     nearest.lock().unwrap()[i] = found[0].handle.slot();
    /// });
    /// assert_eq!(nearest.into_inner().unwrap()[42], 420);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn nearest_batch<F>(&self, points: &[Point<S>], k: usize, visit: F)
    where
        F: Fn(usize, &[Neighbor<S>]) + Sync,
    {
        points
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(run, chunk)| {
                // Room for the candidate buffer of 2k (k > 16) and a few pending nodes.
                let mut workspace = Workspace::with_capacity(2 * k, 16);
                for (j, &p) in chunk.iter().enumerate() {
                    visit(run * CHUNK + j, self.nearest(p, k, &mut workspace));
                }
            });
    }

    /// [`within`](SpatialQuery::within) for every point of `points`, spread over rayon's
    /// thread pool: `visit(i, item)` receives each element within `radius` of `points[i]`,
    /// from whichever thread answered it, in no particular order (in runs of 64 consecutive
    /// points, each run by one rayon task).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use spatix::{KdTree, Point};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f64, 0.0), i)))?;
    /// let queries = [Point::new(10.0, 0.0), Point::new(500.5, 0.0)];
    /// let found = AtomicUsize::new(0);
    /// tree.within_batch(&queries, 1.0, |_, _| {
    ///     found.fetch_add(1, Ordering::Relaxed);
    /// });
    /// assert_eq!(found.into_inner(), 3 + 2);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn within_batch<F>(&self, points: &[Point<S>], radius: S, visit: F)
    where
        F: Fn(usize, Item<'_, S, T>) + Sync,
    {
        points
            .par_chunks(CHUNK)
            .enumerate()
            .for_each(|(run, chunk)| {
                for (j, &p) in chunk.iter().enumerate() {
                    let _ = self.within(p, radius, |item| {
                        visit(run * CHUNK + j, item);
                        core::ops::ControlFlow::Continue(())
                    });
                }
            });
    }
}

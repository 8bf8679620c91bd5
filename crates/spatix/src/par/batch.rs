//! Batch queries (feature `rayon`): many queries at once on rayon's thread pool, written once
//! for every structure over its own per-query methods, with the answers kept in input order
//! in reusable [`BatchBuffers`].

use core::fmt;
use core::ops::ControlFlow;

use rayon::prelude::*;

use super::PARTS_PER_THREAD;
use crate::{Aabb, Handle, Neighbor, Point, Ray, RayHit, Scalar, SpatialQuery, Workspace};

/// The fewest queries one part of a batch answers: a part is one rayon task, whose cost
/// (scheduling, and a cache that warms to the part's region of the structure) is spread over
/// its queries.
const MIN_PER_PART: usize = 32;

/// The memory of batch queries, kept from one batch to the next so that a warm batch
/// allocates nothing: a [`Workspace`] and the answer lists of each part of the batch.
///
/// A batch of `n` queries is cut into consecutive runs of queries (about eight per thread,
/// at least 32 queries each); each run is one rayon task, answered by one thread with its
/// part's workspace into its part's lists. The answers therefore come out in input order,
/// and are the same answers, in the same order within each query, as the per-query calls
/// give. Make one per recurring batch (one per AI tick, one per thread that asks batches)
/// and pass it to every call; it grows to the largest batch it has answered.
///
/// # Example
/// ```
/// use spatix::{BatchBuffers, KdTree, ParallelQuery, Point, SpatialQuery};
/// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f32, 0.0), i)))?;
/// let queries: Vec<_> = (0..100).map(|i| Point::new(i as f32 * 10.0 + 0.1, 1.0)).collect();
/// let mut buffers = BatchBuffers::new();
/// let nearest = tree.nearest_batch(&queries, 2, &mut buffers);
/// assert_eq!(nearest.len(), 100);
/// let value = |n: &spatix::Neighbor<f32>| *tree.get(n.handle).unwrap().value;
/// assert_eq!((value(&nearest.get(42)[0]), value(&nearest.get(42)[1])), (420, 421));
/// # Ok::<(), spatix::Error>(())
/// ```
pub struct BatchBuffers<S> {
    /// One per part; the first `used` hold the last batch's answers, the rest keep their
    /// memory for a batch cut into more parts.
    parts: Vec<Part<S>>,
    /// How many parts the last batch used.
    used: usize,
    /// Queries per part in the last batch (the last part may have fewer).
    per: usize,
    /// Queries in the last batch.
    count: usize,
}

/// One run of a batch's queries: its search memory and its answers.
struct Part<S> {
    workspace: Workspace<S>,
    /// The end of each query's answers in the list the batch fills, in query order.
    ends: Vec<usize>,
    handles: Vec<Handle>,
    neighbors: Vec<Neighbor<S>>,
    rays: Vec<RayHit<S>>,
}

impl<S: Scalar> Part<S> {
    fn new() -> Self {
        Self {
            workspace: Workspace::new(),
            ends: Vec::new(),
            handles: Vec::new(),
            neighbors: Vec::new(),
            rays: Vec::new(),
        }
    }
}

impl<S: Scalar> Default for BatchBuffers<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> fmt::Debug for BatchBuffers<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchBuffers")
            .field("parts", &self.parts.len())
            .field("queries", &self.count)
            .finish_non_exhaustive()
    }
}

impl<S: Scalar> BatchBuffers<S> {
    /// Empty buffers; they allocate nothing until the first batch.
    ///
    /// ```
    /// let buffers = spatix::BatchBuffers::<f64>::new();
    /// # let _ = buffers;
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            parts: Vec::new(),
            used: 0,
            per: 1,
            count: 0,
        }
    }

    /// Answers `count` queries on rayon's current pool: `answer(i, part)` answers query `i`
    /// into `part`'s lists (one of them) and the query's end is recorded after it.
    fn run<A>(&mut self, count: usize, answer: A)
    where
        A: Fn(usize, &mut Part<S>) + Sync,
        S: Send,
    {
        let threads = rayon::current_num_threads();
        let parts = (threads * PARTS_PER_THREAD)
            .min(count.div_ceil(MIN_PER_PART))
            .max(1);
        let per = count.div_ceil(parts).max(1);
        let parts = count.div_ceil(per).max(1);
        if self.parts.len() < parts {
            self.parts.resize_with(parts, Part::new);
        }
        self.used = parts;
        self.per = per;
        self.count = count;
        let work = |(j, part): (usize, &mut Part<S>)| {
            part.ends.clear();
            part.handles.clear();
            part.neighbors.clear();
            part.rays.clear();
            for i in j * per..((j + 1) * per).min(count) {
                answer(i, part);
                let end = part.handles.len() + part.neighbors.len() + part.rays.len();
                part.ends.push(end);
            }
        };
        if parts == 1 {
            work((0, &mut self.parts[0]));
        } else {
            self.parts[..parts]
                .par_iter_mut()
                .enumerate()
                .for_each(work);
        }
    }

    /// The last batch's answers, read from each part's list that `list` picks.
    fn answers<R>(&self, list: fn(&Part<S>) -> &[R]) -> BatchAnswers<'_, S, R> {
        BatchAnswers {
            buffers: self,
            list,
        }
    }
}

/// The answers of one batch, in input order: [`get(i)`](BatchAnswers::get) is what query `i`
/// found (handles for windows and radii, [`Neighbor`]s for k nearest, at most one
/// [`RayHit`] for rays). Borrowed from the [`BatchBuffers`] the batch filled.
pub struct BatchAnswers<'b, S, R> {
    buffers: &'b BatchBuffers<S>,
    /// The list of a part that holds answers of this kind.
    list: fn(&Part<S>) -> &[R],
}

impl<S, R> Clone for BatchAnswers<'_, S, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, R> Copy for BatchAnswers<'_, S, R> {}

impl<S, R> fmt::Debug for BatchAnswers<'_, S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchAnswers")
            .field("queries", &self.buffers.count)
            .finish_non_exhaustive()
    }
}

impl<'b, S: Scalar, R: 'b> BatchAnswers<'b, S, R> {
    /// How many queries the batch asked.
    ///
    /// ```
    /// use spatix::{BatchBuffers, BruteForce, ParallelQuery, Point};
    /// let index = BruteForce::<f32, ()>::new();
    /// let mut buffers = BatchBuffers::new();
    /// assert_eq!(index.within_batch(&[Point::new(0.0, 0.0); 3], 1.0, &mut buffers).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.buffers.count
    }

    /// Whether the batch asked no query.
    ///
    /// ```
    /// use spatix::{BatchBuffers, BruteForce, ParallelQuery};
    /// let index = BruteForce::<f32, ()>::new();
    /// let mut buffers = BatchBuffers::new();
    /// assert!(index.query_batch(&[], &mut buffers).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.buffers.count == 0
    }

    /// What query `i` found, as the per-query call reports it (in its order).
    ///
    /// # Panics
    /// If `i` is not below [`len`](Self::len).
    ///
    /// ```
    /// use spatix::{Aabb, BatchBuffers, BruteForce, ParallelQuery, Point, SpatialIndex};
    /// let mut index = BruteForce::new();
    /// let h = index.insert(Aabb::point(Point::new(1.0f64, 1.0))?, 'a')?;
    /// let mut buffers = BatchBuffers::new();
    /// let far = Point::new(9.0, 9.0);
    /// let found = index.within_batch(&[Point::new(1.5, 1.0), far], 1.0, &mut buffers);
    /// assert_eq!(found.get(0), [h]);
    /// assert!(found.get(1).is_empty());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn get(&self, i: usize) -> &'b [R] {
        assert!(
            i < self.buffers.count,
            "query {i} of a batch of {}",
            self.buffers.count
        );
        let part = &self.buffers.parts[i / self.buffers.per];
        let at = i % self.buffers.per;
        let start = if at == 0 { 0 } else { part.ends[at - 1] };
        &(self.list)(part)[start..part.ends[at]]
    }

    /// Every query's answers, in input order.
    ///
    /// ```
    /// use spatix::{Aabb, BatchBuffers, BruteForce, ParallelQuery, Point, SpatialIndex};
    /// let mut index = BruteForce::new();
    /// index.insert(Aabb::new(Point::new(0.0f32, 0.0), Point::new(2.0, 2.0))?, ())?;
    /// let windows = [Aabb::point(Point::new(1.0, 1.0))?, Aabb::point(Point::new(5.0, 5.0))?];
    /// let mut buffers = BatchBuffers::new();
    /// let counts: Vec<usize> =
    ///     index.query_batch(&windows, &mut buffers).iter().map(<[_]>::len).collect();
    /// assert_eq!(counts, [1, 0]);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'b [R]> + 'b {
        let this = *self;
        (0..self.buffers.count).map(move |i| this.get(i))
    }

    /// Every query's answers, in input order, as a parallel iterator: for reading the answers
    /// on all threads too (each element's value with [`get`](SpatialQuery::get), say), which
    /// on one thread would be the batch's serial part.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// use spatix::{BatchBuffers, KdTree, ParallelQuery, Point, SpatialQuery};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f32, 0.0), i as u64)))?;
    /// let queries: Vec<_> = (0..500).map(|i| Point::new(i as f32 * 2.0, 0.0)).collect();
    /// let mut buffers = BatchBuffers::new();
    /// let found = tree.within_batch(&queries, 1.0, &mut buffers);
    /// let values = |hits: &[spatix::Handle]| -> u64 {
    ///     hits.iter().map(|&h| *tree.get(h).unwrap().value).sum()
    /// };
    /// let sum: u64 = found.par_iter().map(values).sum();
    /// assert_eq!(sum, 1 + (1..500).map(|i| 3 * (2 * i)).sum::<u64>()); // 0 finds 0 and 1
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = &'b [R]> + 'b
    where
        R: Sync,
    {
        let this = *self;
        (0..self.buffers.count)
            .into_par_iter()
            .map(move |i| this.get(i))
    }

    /// How many answers the whole batch found.
    ///
    /// ```
    /// use spatix::{BatchBuffers, KdTree, ParallelQuery, Point};
    /// let tree = KdTree::build((0..10).map(|i| (Point::new(i as f32, 0.0), i)))?;
    /// let mut buffers = BatchBuffers::new();
    /// let queries = [Point::new(0.0, 0.0), Point::new(9.0, 0.0)];
    /// assert_eq!(tree.nearest_batch(&queries, 3, &mut buffers).total(), 6);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn total(&self) -> usize {
        self.buffers.parts[..self.buffers.used]
            .iter()
            .map(|p| (self.list)(p).len())
            .sum()
    }
}

/// Batch queries on rayon's thread pool, for every structure ([`SpatialQuery`] and `Sync`):
/// many windows, radii, k-nearest searches or rays at once, answered by the structure's own
/// per-query methods on all threads, into [`BatchBuffers`] that keep their memory.
///
/// Each answer is exactly what the per-query call gives (the same elements in the same
/// order), and a warm batch allocates nothing. The batch runs on the pool it is called from:
/// wrap it in [`rayon::ThreadPool::install`] to choose the threads.
///
/// # Example
/// ```
/// use spatix::{Aabb, BatchBuffers, ParallelQuery, Point, SpatialIndex, UniformGrid};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// for i in 0..100 {
///     let p = Point::new((i % 10) as f32 * 10.0, (i / 10) as f32 * 10.0);
///     grid.insert(Aabb::point(p)?, i)?;
/// }
/// let windows: Vec<_> = (0..10)
///     .map(|i| Aabb::new(Point::new(i as f32 * 10.0, 0.0), Point::new(i as f32 * 10.0, 100.0)))
///     .collect::<Result<_, _>>()?;
/// let mut buffers = BatchBuffers::new();
/// let columns = grid.query_batch(&windows, &mut buffers);
/// assert!(columns.iter().all(|found| found.len() == 10));
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait ParallelQuery<S: Scalar, T>: SpatialQuery<S, T> + Sync {
    /// [`query`](SpatialQuery::query) for every window of `areas`: the handles each finds.
    fn query_batch<'b>(
        &self,
        areas: &[Aabb<S>],
        buffers: &'b mut BatchBuffers<S>,
    ) -> BatchAnswers<'b, S, Handle> {
        buffers.run(areas.len(), |i, part| {
            let _ = self.query(&areas[i], |item| {
                part.handles.push(item.handle);
                ControlFlow::Continue(())
            });
        });
        buffers.answers(|p| &p.handles)
    }

    /// [`within`](SpatialQuery::within) `radius` of every point of `points`: the handles
    /// each finds.
    ///
    /// ```
    /// use spatix::{BatchBuffers, KdTree, ParallelQuery, Point};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f64, 0.0), i)))?;
    /// let mut buffers = BatchBuffers::new();
    /// let found = tree.within_batch(&[Point::new(10.0, 0.0), Point::new(500.5, 0.0)], 1.0, &mut buffers);
    /// assert_eq!((found.get(0).len(), found.get(1).len()), (3, 2));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn within_batch<'b>(
        &self,
        points: &[Point<S>],
        radius: S,
        buffers: &'b mut BatchBuffers<S>,
    ) -> BatchAnswers<'b, S, Handle> {
        buffers.run(points.len(), |i, part| {
            let _ = self.within(points[i], radius, |item| {
                part.handles.push(item.handle);
                ControlFlow::Continue(())
            });
        });
        buffers.answers(|p| &p.handles)
    }

    /// [`nearest`](SpatialQuery::nearest) `k` of every point of `points`: each point's
    /// neighbours, ascending.
    fn nearest_batch<'b>(
        &self,
        points: &[Point<S>],
        k: usize,
        buffers: &'b mut BatchBuffers<S>,
    ) -> BatchAnswers<'b, S, Neighbor<S>> {
        buffers.run(points.len(), |i, part| {
            let found = self.nearest(points[i], k, &mut part.workspace);
            part.neighbors.extend_from_slice(found);
        });
        buffers.answers(|p| &p.neighbors)
    }

    /// [`raycast`](SpatialQuery::raycast) of every ray of `rays`: the first element each
    /// hits, if any.
    ///
    /// ```
    /// use spatix::{Aabb, BatchBuffers, ParallelQuery, Point, Quadtree, Ray, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut tree = Quadtree::new(world)?;
    /// let wall = tree.insert(Aabb::new(Point::new(50.0, 0.0), Point::new(51.0, 100.0))?, ())?;
    /// let rays = [
    ///     Ray::new(Point::new(0.0, 10.0), Point::new(1.0, 0.0), 100.0)?,
    ///     Ray::new(Point::new(0.0, 10.0), Point::new(-1.0, 0.0), 100.0)?,
    /// ];
    /// let mut buffers = BatchBuffers::new();
    /// let hits = tree.raycast_batch(&rays, &mut buffers);
    /// assert_eq!(hits.get(0)[0].handle, wall);
    /// assert_eq!(hits.get(0)[0].t, 50.0);
    /// assert!(hits.get(1).is_empty());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn raycast_batch<'b>(
        &self,
        rays: &[Ray<S>],
        buffers: &'b mut BatchBuffers<S>,
    ) -> BatchAnswers<'b, S, RayHit<S>> {
        buffers.run(rays.len(), |i, part| {
            if let Some(hit) = self.raycast(&rays[i], &mut part.workspace) {
                part.rays.push(hit);
            }
        });
        buffers.answers(|p| &p.rays)
    }
}

impl<S: Scalar, T, I: SpatialQuery<S, T> + Sync> ParallelQuery<S, T> for I {}

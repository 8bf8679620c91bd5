//! The caller-owned scratch memory of nearest and ray searches.

use crate::search::nearest::{Pending, Search, cmp};
use crate::search::ray::{Hit, RaySearch};
use crate::{Handle, Neighbor, Scalar};

/// Reusable memory for [`SpatialQuery::nearest`](crate::SpatialQuery::nearest): keep one per
/// thread and pass it to every call, so that no call allocates once warm.
///
/// # Example
/// ```
/// use spatix::{Aabb, Point, SpatialIndex, SpatialQuery, UniformGrid, Workspace};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// for i in 0..10 {
///     grid.insert(Aabb::point(Point::new(i as f32 * 10.0, 5.0))?, i)?;
/// }
/// let mut ws = Workspace::new();
/// let two = grid.nearest(Point::new(21.0, 5.0), 2, &mut ws);
/// assert_eq!(two.len(), 2);
/// assert_eq!(two[0].distance, 1.0);
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Workspace<S> {
    /// The best candidates so far: sorted ascending for small `k`, else an unsorted buffer
    /// of up to `2k`, cut to the best `k` and sorted at the end.
    best: Vec<Neighbor<S>>,
    /// The `k` of the search in progress.
    k: usize,
    /// Min-heap (by key) of nodes still to visit.
    queue: Vec<Pending<S>>,
    /// Min-heap (by ray parameter) of ray hits waiting to be reported.
    hits: Vec<Hit<S>>,
    /// The workspace a structure made of other structures lends to its parts while it merges
    /// their results in this one (created on first use).
    nested: Option<Box<Workspace<S>>>,
    /// Whether the search in progress ranks by squared distances ([`Workspace::begin`]) rather
    /// than by distances ([`Workspace::begin_exact`]).
    squared: bool,
}

impl<S: Scalar> Workspace<S> {
    /// An empty workspace; it grows to the largest `k` and search front it has seen.
    ///
    /// ```
    /// let ws = spatix::Workspace::<f32>::new();
    /// # let _ = ws;
    /// ```
    pub fn new() -> Self {
        Self {
            best: Vec::new(),
            k: 0,
            queue: Vec::new(),
            hits: Vec::new(),
            nested: None,
            squared: false,
        }
    }

    /// A workspace with room for `k` results (or ray hits) and `pending` nodes waiting in a
    /// search, so that even the first searches up to that size do not allocate.
    ///
    /// ```
    /// let ws = spatix::Workspace::<f64>::with_capacity(8, 1024);
    /// # let _ = ws;
    /// ```
    pub fn with_capacity(k: usize, pending: usize) -> Self {
        Self {
            best: Vec::with_capacity(k),
            k: 0,
            queue: Vec::with_capacity(pending),
            hits: Vec::with_capacity(k),
            nested: None,
            squared: false,
        }
    }

    /// Starts a search for the `k` nearest whose keys are squared distances (the kd-tree's;
    /// they overflow beyond `sqrt(MAX)`): [`Workspace::finish`] reports their square roots
    /// as the distances.
    pub(crate) fn begin(&mut self, k: usize) -> Search<'_, S> {
        self.squared = true;
        self.search(k)
    }

    /// Starts a search for the `k` nearest whose keys are [`Aabb::distance_key`]s (the
    /// distance, compressed beyond `2^(MAX_EXP - 4)` so that it never overflows), exact for
    /// every finite coordinate.
    pub(crate) fn begin_exact(&mut self, k: usize) -> Search<'_, S> {
        self.squared = false;
        self.search(k)
    }

    fn search(&mut self, k: usize) -> Search<'_, S> {
        self.k = k;
        Search::new(k, &mut self.best, &mut self.queue)
    }

    /// The empty result, for a search with nothing to find.
    pub(crate) fn none(&mut self) -> &[Neighbor<S>] {
        self.best.clear();
        self.k = 0;
        &self.best
    }

    /// Starts a ray cast.
    pub(crate) fn begin_ray(&mut self) -> RaySearch<'_, S> {
        RaySearch::new(&mut self.queue, &mut self.hits)
    }

    /// Starts a search for the `k` nearest that merges the results of searches run in the nested
    /// workspace.
    pub(crate) fn begin_nested(&mut self, k: usize) -> (Search<'_, S>, &mut Workspace<S>) {
        self.squared = false;
        let nested = self.nested.get_or_insert_with(Box::default);
        self.k = k;
        let search = Search::new(k, &mut self.best, &mut self.queue);
        (search, nested)
    }

    /// Starts a ray cast that merges the hits of casts run in the nested workspace.
    pub(crate) fn begin_ray_nested(&mut self) -> (RaySearch<'_, S>, &mut Workspace<S>) {
        let nested = self.nested.get_or_insert_with(Box::default);
        (RaySearch::new(&mut self.queue, &mut self.hits), nested)
    }

    /// Sorts the best `k` candidates by their keys (a search whose keys are not monotone in
    /// the reported distance's rounding: the kd-tree's scaled squares), then replaces each
    /// key with `distances(handle)`, the exact distance and squared distance to report, and
    /// returns them; a stable sort by the distances keeps the keys' order among equal ones.
    pub(crate) fn finish_with(&mut self, distances: impl Fn(Handle) -> (S, S)) -> &[Neighbor<S>] {
        self.keep_best();
        self.best
            .sort_unstable_by(|a, b| cmp(a.distance, b.distance));
        for n in &mut self.best {
            (n.distance, n.distance_2) = distances(n.handle);
        }
        self.best.sort_by(|a, b| cmp(a.distance, b.distance));
        &self.best
    }

    /// Cuts the candidates to the best `k` (a buffer may hold up to `2k`).
    #[inline(always)]
    fn keep_best(&mut self) {
        if self.best.len() > self.k {
            let k = self.k.max(1);
            self.best
                .select_nth_unstable_by(k - 1, |a, b| cmp(a.distance, b.distance));
            self.best.truncate(self.k);
        }
    }

    /// Sorts the candidates ascending (unless they already are), fills in the distance the
    /// key does not give (the square, or the square root), and returns them.
    #[inline(never)]
    pub(crate) fn finish(&mut self) -> &[Neighbor<S>] {
        self.keep_best();
        if !self.best.is_sorted_by(|a, b| a.distance <= b.distance) {
            self.best
                .sort_unstable_by(|a, b| cmp(a.distance, b.distance));
        }
        if self.squared {
            for n in &mut self.best {
                n.distance_2 = n.distance;
                n.distance = n.distance.sqrt_s();
            }
        } else {
            for n in &mut self.best {
                n.distance = n.distance.key_distance();
                n.distance_2 = n.distance * n.distance;
            }
        }
        &self.best
    }
}

//! k-nearest-neighbour machinery shared by every structure: the result type, the caller-owned
//! workspace, the bounded candidate heap and the best-first node queue.

use core::cmp::Ordering;

use crate::ray::{Hit, RaySearch};
use crate::{Aabb, Handle, Scalar};

/// One result of [`SpatialQuery::nearest`](crate::SpatialQuery::nearest).
///
/// # Example
/// ```
/// use spatix::{Aabb, BruteForce, Point, SpatialIndex, SpatialQuery, Workspace};
/// let mut index = BruteForce::<f64, ()>::new();
/// let h = index.insert(Aabb::point(Point::new(3.0, 4.0))?, ())?;
/// let mut ws = Workspace::new();
/// let best = index.nearest(Point::new(0.0, 0.0), 1, &mut ws);
/// assert_eq!((best[0].handle, best[0].distance, best[0].distance_2), (h, 5.0, 25.0));
///
/// // Distances are exact for any finite coordinates, however large or small.
/// let far = index.insert(Aabb::point(Point::new(1e200, 0.0))?, ())?;
/// let best = index.nearest(Point::new(1e200, 1e200), 1, &mut ws);
/// assert_eq!((best[0].handle, best[0].distance), (far, 1e200));
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbor<S> {
    /// The element.
    pub handle: Handle,
    /// Euclidean distance from the query point to the nearest point of the element's box
    /// ([`Aabb::distance_to_point`]): within a few ulps of the true distance for any finite
    /// coordinates, infinite only when the true distance exceeds the type's maximum. Results
    /// are ranked by it.
    pub distance: S,
    /// `distance` squared, rounded: infinite when the square exceeds the type's maximum, 0
    /// when it underflows.
    pub distance_2: S,
}

/// A node or cell waiting in a best-first search: its key (a lower bound: the distance
/// for nearest, the ray parameter for ray casts), its index, one word of structure-specific data
/// (depth, flags) and its box.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pending<S> {
    pub(crate) key: S,
    pub(crate) node: u32,
    pub(crate) aux: u32,
    pub(crate) aabb: Aabb<S>,
}

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
        self.best.clear();
        self.k = k;
        self.queue.clear();
        Search {
            k,
            limit: first_bound(k),
            best: &mut self.best,
            queue: &mut self.queue,
        }
    }

    /// Starts a ray cast.
    pub(crate) fn begin_ray(&mut self) -> RaySearch<'_, S> {
        self.queue.clear();
        self.hits.clear();
        RaySearch {
            queue: &mut self.queue,
            hits: &mut self.hits,
        }
    }

    /// Starts a search for the `k` nearest that merges the results of searches run in the nested
    /// workspace.
    pub(crate) fn begin_nested(&mut self, k: usize) -> (Search<'_, S>, &mut Workspace<S>) {
        self.squared = false;
        let nested = self.nested.get_or_insert_with(Box::default);
        self.best.clear();
        self.k = k;
        self.queue.clear();
        let search = Search {
            k,
            limit: first_bound(k),
            best: &mut self.best,
            queue: &mut self.queue,
        };
        (search, nested)
    }

    /// Starts a ray cast that merges the hits of casts run in the nested workspace.
    pub(crate) fn begin_ray_nested(&mut self) -> (RaySearch<'_, S>, &mut Workspace<S>) {
        let nested = self.nested.get_or_insert_with(Box::default);
        self.queue.clear();
        self.hits.clear();
        let search = RaySearch {
            queue: &mut self.queue,
            hits: &mut self.hits,
        };
        (search, nested)
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

/// The bound of a search before its first candidate.
#[inline]
fn first_bound<S: Scalar>(k: usize) -> S {
    if k == 0 { -S::INFINITY } else { S::INFINITY }
}

/// Total order on distances (which are never NaN: boxes are valid and the point is finite).
#[inline]
fn cmp<S: Scalar>(a: S, b: S) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// Up to this `k`, a search keeps its best candidates sorted by insertion: for small `k`
/// a few moves within one or two cache lines cost less than a heap's sifts, and the result
/// needs no final sort.
const SORTED_UP_TO: usize = 16;

/// One search in progress: the best `k` candidates so far (sorted for small `k`, a bounded
/// max-heap beyond) and a min-heap of pending nodes, both array-backed (the binary-heap index
/// arithmetic is written out so the two heaps can share it without wrapper types).
pub(crate) struct Search<'w, S> {
    /// How many candidates the search keeps.
    k: usize,
    /// [`Search::bound`], kept up to date by every offer.
    limit: S,
    best: &'w mut Vec<Neighbor<S>>,
    queue: &'w mut Vec<Pending<S>>,
}

impl<S: Scalar> Search<'_, S> {
    /// The key (distance, or squared distance) a candidate must beat (`<=` keeps ties) to
    /// enter the best `k`: infinite
    /// until `k` candidates are in (and minus infinity for `k = 0`, which ends every
    /// search at once).
    #[inline]
    pub(crate) fn bound(&self) -> S {
        self.limit
    }

    /// Whether the best so far are `len` elements: all of them, in a structure of `len`
    /// elements that offers each at most once, so nothing is left to search (with `k` at
    /// least `len`, the bound stays infinite and would never stop a search).
    #[inline]
    pub(crate) fn has_all(&self, len: usize) -> bool {
        self.best.len() == len
    }

    /// Offers a candidate, by its key (its distance key, or its squared distance in a search
    /// begun by [`Workspace::begin`]), to the best `k`: up to [`SORTED_UP_TO`] kept sorted by
    /// insertion; beyond it pushed on an unsorted buffer of up to `2k`, which a selection
    /// cuts back to the best `k` whenever it fills (the bound is then the k-th key; in
    /// between it is the k-th key of the last cut, looser but never wrong). A push is O(1)
    /// and a cut O(k) per k pushes, where a bounded max-heap paid O(log k) sifts per offer:
    /// k = 64 on the kd-tree, 10k queries on 1M points, about -15% (see ARCHITECTURE).
    #[inline]
    pub(crate) fn offer(&mut self, handle: Handle, key: S) {
        let n = Neighbor {
            handle,
            distance: key,
            distance_2: S::ZERO,
        };
        let k = self.k;
        let full = self.best.len() >= k;
        if full && key >= self.limit {
            return;
        }
        if k <= SORTED_UP_TO {
            if !full {
                self.best.push(n);
            }
            let best = &mut self.best[..];
            let last = best.len() - 1;
            let mut i = last;
            while i > 0 && best[i - 1].distance > key {
                best[i] = best[i - 1];
                i -= 1;
            }
            best[i] = n;
            if last + 1 == k {
                self.limit = best[last].distance;
            }
        } else {
            self.best.push(n);
            let len = self.best.len();
            if len == k {
                self.limit = self
                    .best
                    .iter()
                    .fold(-S::INFINITY, |m, c| m.max_s(c.distance));
            } else if len == k.saturating_mul(2) {
                let (_, kth, _) = self
                    .best
                    .select_nth_unstable_by(k - 1, |a, b| cmp(a.distance, b.distance));
                self.limit = kth.distance;
                self.best.truncate(k);
            }
        }
    }

    /// Queues a node for best-first search.
    #[inline]
    pub(crate) fn push(&mut self, pending: Pending<S>) {
        self.queue.push(pending);
        sift_up(self.queue, |a, b| a.key < b.key);
    }

    /// The nearest pending node, if any.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Pending<S>> {
        pop_min(self.queue, |a, b| a.key < b.key)
    }
}

/// Removes and returns the top of a heap ordered by `above`.
#[inline]
pub(crate) fn pop_min<E: Copy>(heap: &mut Vec<E>, above: impl Fn(&E, &E) -> bool) -> Option<E> {
    let last = heap.pop()?;
    if heap.is_empty() {
        return Some(last);
    }
    let top = core::mem::replace(&mut heap[0], last);
    sift_down(heap, above);
    Some(top)
}

/// Restores the heap property after a push; `above(a, b)` says `a` belongs above `b`.
#[inline]
pub(crate) fn sift_up<E: Copy>(heap: &mut [E], above: impl Fn(&E, &E) -> bool) {
    let mut i = heap.len() - 1;
    while i > 0 {
        let parent = (i - 1) / 2;
        if !above(&heap[i], &heap[parent]) {
            break;
        }
        heap.swap(i, parent);
        i = parent;
    }
}

/// Restores the heap property after the root was replaced.
#[inline]
fn sift_down<E: Copy>(heap: &mut [E], above: impl Fn(&E, &E) -> bool) {
    let mut i = 0;
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            break;
        }
        let r = l + 1;
        let child = if r < heap.len() && above(&heap[r], &heap[l]) {
            r
        } else {
            l
        };
        if !above(&heap[child], &heap[i]) {
            break;
        }
        heap.swap(i, child);
        i = child;
    }
}

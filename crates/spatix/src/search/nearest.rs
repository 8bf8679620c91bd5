//! k-nearest-neighbour machinery shared by every structure: the result type, the bounded
//! candidate heap and the best-first node queue (whose memory lives in a
//! [`Workspace`](crate::Workspace)).

use core::cmp::Ordering;

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

/// The bound of a search before its first candidate.
#[inline]
fn first_bound<S: Scalar>(k: usize) -> S {
    if k == 0 { -S::INFINITY } else { S::INFINITY }
}

/// Total order on distances (which are never NaN: boxes are valid and the point is finite).
#[inline]
pub(crate) fn cmp<S: Scalar>(a: S, b: S) -> Ordering {
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

impl<'w, S: Scalar> Search<'w, S> {
    /// A search for the best `k` over emptied candidate and queue arrays.
    pub(crate) fn new(
        k: usize,
        best: &'w mut Vec<Neighbor<S>>,
        queue: &'w mut Vec<Pending<S>>,
    ) -> Self {
        best.clear();
        queue.clear();
        Self {
            k,
            limit: first_bound(k),
            best,
            queue,
        }
    }
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
    /// k = 64 on the kd-tree, 10k queries on 1M points, about -15% (docs/BENCHMARKS.md, History).
    ///
    /// Out of line, in every build (issue 47: inlined or not by how the caller's crate
    /// happened to be cut into codegen units, it made the same search differ by build; with
    /// its turning-away test inlined and the rest out of line, the kd-tree's 8-nearest was no
    /// faster): the searches test a candidate against [`Search::bound`] before offering it
    /// where that saves calls.
    #[inline(never)]
    pub(crate) fn offer(&mut self, handle: Handle, key: S) {
        self.offer_inlined(handle, key);
    }

    /// [`Search::offer`] inlined into a caller that is itself out of line and offers a run of
    /// candidates (the kd-tree's leaf scan).
    #[inline(always)]
    pub(crate) fn offer_inlined(&mut self, handle: Handle, key: S) {
        if self.best.len() >= self.k && key >= self.limit {
            return;
        }
        let n = Neighbor {
            handle,
            distance: key,
            distance_2: S::ZERO,
        };
        let k = self.k;
        let full = self.best.len() >= k;
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

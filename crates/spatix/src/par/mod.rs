//! The parallel layer (feature `rayon`): pair finding, written once over each structure's
//! split of its pair pass ([`PairParts`], implemented in its `pairs.rs`); the bulk update,
//! over each structure's parallel frame pass ([`UpdateParts`], in its `mutate.rs`,
//! `update.rs` here); and batch queries, written once over the per-query methods (`batch.rs`).

mod batch;
mod update;

pub use batch::{BatchAnswers, BatchBuffers, ParallelQuery};
pub(crate) use update::{MoveFn, UpdateParts};

use core::any::Any;
use core::fmt;
use core::ops::{ControlFlow, Range};
use core::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::{Aabb, Error, Handle, Item, Scalar, SpatialIndex, SpatialQuery};

/// How many parts per thread a pair pass is cut into: parts differ in work (a crowded band,
/// a deep subtree), and rayon balances them only if there are several per thread.
const PARTS_PER_THREAD: usize = 8;

/// How many parts a pass on rayon's current pool is cut into.
fn target() -> usize {
    rayon::current_num_threads() * PARTS_PER_THREAD
}

/// How a structure's pair pass splits into independent parts: the one thing the parallel
/// layer needs of a structure, implemented in each structure's `pairs.rs`. [`ParallelPairs`]
/// is written once, for every structure that implements this.
pub(crate) trait PairParts<S: Scalar, T>: SpatialQuery<S, T> {
    /// One part of the pass (a run of rows or bands, a subtree, ...). `'static` so that a
    /// [`PairBuffers`] can keep a list of them from one pass to the next.
    type Part: Send + Sync + 'static;

    /// What cutting the pass keeps from one pass to the next besides the parts themselves
    /// (a structure made of others keeps their lists of parts here), so that a warm
    /// [`ParallelPairs::par_collect_pairs`] allocates nothing: `()` for most.
    type Scratch: Default + Send + Sync + 'static;

    /// Replaces the contents of `parts` with the pass cut into about `target` parts (fewer
    /// when the structure is small) that together report every pair exactly once, with no
    /// coordination between them. Allocates only when `parts` has to grow.
    fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>, scratch: &mut Self::Scratch);

    /// The pairs of one part, reported to `visit`.
    fn pairs_of_part<F>(&self, part: &Self::Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>;
}

/// `0..count` cut into at most `parts` consecutive ranges of about equal length (rows of a
/// grid into bands).
pub(crate) fn even_ranges(count: u32, parts: usize) -> impl Iterator<Item = Range<u32>> {
    let count = u64::from(count);
    let parts = (parts as u64).clamp(1, count.max(1));
    let at = move |k: u64| (count * k / parts) as u32;
    (0..parts).map(move |k| at(k)..at(k + 1))
}

/// The pairs found by [`ParallelPairs::par_collect_pairs`], one list per part of the pass,
/// kept from one call to the next so that a warm call allocates nothing.
///
/// Each part of the pass (a run of rows or bands, a subtree) fills its own list, so threads
/// never share one, and the lists come out in the order of the parts: for the same data and
/// the same number of threads, the same pairs in the same order. Make one per pair pass
/// that recurs (one per frame loop), and pass it to every call; it grows to the largest
/// result it has held and keeps that memory until dropped. A pair is two
/// [`Handle`]s; read the elements with [`get`](crate::SpatialQuery::get).
///
/// # Example
/// ```
/// use spatix::{Aabb, PairBuffers, ParallelPairs, Point, SpatialIndex, UniformGrid};
/// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::new(world, 10.0)?;
/// let a = grid.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(3.0, 3.0))?, 'a')?;
/// let b = grid.insert(Aabb::new(Point::new(2.0, 2.0), Point::new(4.0, 4.0))?, 'b')?;
/// grid.insert(Aabb::new(Point::new(50.0, 50.0), Point::new(51.0, 51.0))?, 'c')?;
/// let mut buffers = PairBuffers::new();
/// grid.par_collect_pairs(&mut buffers);
/// let pairs: Vec<_> = buffers.iter().collect();
/// assert!(pairs == [(a, b)] || pairs == [(b, a)]);
/// assert_eq!(buffers.len(), 1);
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Default)]
pub struct PairBuffers {
    /// One list per part; the first `used` hold the last pass's pairs, the rest keep their
    /// memory for a pass cut into more parts.
    lists: Vec<Vec<(Handle, Handle)>>,
    /// How many lists the last pass filled.
    used: usize,
    /// The last pass's parts (a `Vec` of its structure's part type, with its scratch), so
    /// that the next cut reuses their memory.
    parts: Option<Box<dyn Any + Send + Sync>>,
}

impl PairBuffers {
    /// Empty buffers; they allocate nothing until the first pass.
    ///
    /// ```
    /// let buffers = spatix::PairBuffers::new();
    /// assert!(buffers.is_empty());
    /// assert_eq!(buffers.parts().len(), 0);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            lists: Vec::new(),
            used: 0,
            parts: None,
        }
    }

    /// How many pairs the last pass found.
    ///
    /// ```
    /// use spatix::{Aabb, PairBuffers, ParallelPairs, Point, Quadtree, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(10.0, 10.0))?;
    /// let mut tree = Quadtree::new(world)?;
    /// for x in 0..4 {
    ///     // Unit squares side by side: each touches the next.
    ///     let x = f64::from(x);
    ///     tree.insert(Aabb::new(Point::new(x, 0.0), Point::new(x + 1.0, 1.0))?, ())?;
    /// }
    /// let mut buffers = PairBuffers::new();
    /// tree.par_collect_pairs(&mut buffers);
    /// assert_eq!(buffers.len(), 3);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.parts().map(<[_]>::len).sum()
    }

    /// Whether the last pass found no pair (or there was none yet).
    ///
    /// ```
    /// use spatix::{Aabb, PairBuffers, ParallelPairs, Point, SpatialIndex, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(10.0, 10.0))?;
    /// let mut grid = SweepGrid::new(world, 1.0)?;
    /// grid.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, ())?;
    /// grid.insert(Aabb::new(Point::new(5.0, 5.0), Point::new(6.0, 6.0))?, ())?;
    /// let mut buffers = PairBuffers::new();
    /// grid.par_collect_pairs(&mut buffers);
    /// assert!(buffers.is_empty());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts().all(<[_]>::is_empty)
    }

    /// Every pair the last pass found, each once, part after part.
    ///
    /// ```
    /// use spatix::{Aabb, LooseGrid, PairBuffers, ParallelPairs, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut grid = LooseGrid::new(world, 4.0)?;
    /// for i in 0..50u32 {
    ///     // Pairs of coincident squares along the diagonal.
    ///     let p = (i / 2) as f32 * 4.0;
    ///     grid.insert(Aabb::new(Point::new(p, p), Point::new(p + 1.0, p + 1.0))?, i)?;
    /// }
    /// let mut buffers = PairBuffers::new();
    /// grid.par_collect_pairs(&mut buffers);
    /// for (a, b) in buffers.iter() {
    ///     let (a, b) = (grid.get(a).unwrap().value, grid.get(b).unwrap().value);
    ///     assert_eq!(a / 2, b / 2);
    /// }
    /// assert_eq!(buffers.iter().count(), 25);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Handle, Handle)> + '_ {
        self.parts().flatten().copied()
    }

    /// The last pass's pairs as one slice per part, in the order of the parts: to spread
    /// further work on the pairs over threads, or to read them without flattening.
    ///
    /// ```
    /// use spatix::{Aabb, PairBuffers, ParallelPairs, Point, SpatialIndex, UniformGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(64.0, 64.0))?;
    /// let mut grid = UniformGrid::new(world, 4.0)?;
    /// for i in 0..64 {
    ///     // A column of boxes 1.5 tall, one a unit: each overlaps the next.
    ///     let y = f64::from(i);
    ///     grid.insert(Aabb::new(Point::new(0.0, y), Point::new(1.0, y + 1.5))?, i)?;
    /// }
    /// let mut buffers = PairBuffers::new();
    /// grid.par_collect_pairs(&mut buffers);
    /// assert!(buffers.parts().len() >= 1);
    /// assert_eq!(buffers.parts().map(|part| part.len()).sum::<usize>(), 63);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn parts(&self) -> impl ExactSizeIterator<Item = &[(Handle, Handle)]> + '_ {
        self.lists[..self.used].iter().map(Vec::as_slice)
    }
}

/// The kept list of parts as a list of `P`, with its structure's scratch `C`: the last
/// pass's memory when it was of the same types, new and empty otherwise (the first pass, or
/// another kind of structure).
fn part_list<P: Send + Sync + 'static, C: Default + Send + Sync + 'static>(
    kept: &mut Option<Box<dyn Any + Send + Sync>>,
) -> (&mut Vec<P>, &mut C) {
    let kept = kept.get_or_insert_with(|| Box::new((Vec::<P>::new(), C::default())));
    if !kept.is::<(Vec<P>, C)>() {
        *kept = Box::new((Vec::<P>::new(), C::default()));
    }
    let (parts, scratch) = kept
        .downcast_mut::<(Vec<P>, C)>()
        .expect("the kept parts were just made a list of P");
    (parts, scratch)
}

impl fmt::Debug for PairBuffers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PairBuffers")
            .field("pairs", &self.len())
            .field("parts", &self.used)
            .finish_non_exhaustive()
    }
}

/// Structures whose pair pass splits into independent parts that run on rayon's thread pool:
/// [`UniformGrid`](crate::UniformGrid), [`LooseGrid`](crate::LooseGrid),
/// [`PointGrid`](crate::PointGrid), [`HierarchicalGrid`](crate::HierarchicalGrid),
/// [`Quadtree`](crate::Quadtree), [`LooseQuadtree`](crate::LooseQuadtree),
/// [`MxCifQuadtree`](crate::MxCifQuadtree), [`SweepGrid`](crate::SweepGrid),
/// [`Layered`](crate::Layered) (over parts that have it: each part's pass cut as the part
/// cuts it, and the pairs across parts by runs of elements) and the static
/// [`PackedIndex`](crate::PackedIndex) (its pair forms only: [`par_update_all`](Self::par_update_all)
/// is for dynamic structures). The crate implements it once for all of them, from how each
/// cuts its pass into parts, so it cannot be implemented outside.
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
/// parallel::<Layered<f32, u32>>();
/// parallel::<PackedIndex<f32, u32>>();
/// ```
///
/// The pass is cut into about eight parts per thread (runs of rows or bands, subtrees), which
/// rayon runs in parallel; each pair is still reported exactly once (the reference-point rule
/// needs no coordination between parts), in an order that depends on the threads. Three
/// forms, for three kinds of work on the pairs:
///
/// | form | the caller's work sees | for |
/// | --- | --- | --- |
/// | [`par_for_each_pair`](Self::par_for_each_pair) | one `Fn + Sync` visitor, called from every thread | work that needs no state of its own |
/// | [`par_fold_pairs`](Self::par_fold_pairs) | `&mut` state of its thread's own, states reduced at the end | counting, sums, per-thread lists of contacts |
/// | [`par_collect_pairs`](Self::par_collect_pairs) | the pairs' handles in a reusable [`PairBuffers`] | collecting every pair each frame, allocating nothing once warm |
///
/// Counting or collecting through the first form's one visitor means state shared by every
/// thread (an atomic counter, a locked list), which every thread then waits on; the other
/// two give each thread state of its own. The first two allocate a small list of parts per
/// call; the third keeps it in its buffers.
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
pub trait ParallelPairs<S: Scalar, T: Sync>: SpatialQuery<S, T> + Sync {
    /// [`SpatialQuery::for_each_pair`](crate::SpatialQuery::for_each_pair) on all threads:
    /// the pass is cut into about eight parts per thread (runs of rows or bands, subtrees),
    /// which rayon runs in parallel. Returns `Break` if a visitor broke (other threads stop
    /// soon after).
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync;

    /// The pairs folded into state of each thread's own, then reduced: counting, summing or
    /// collecting pairs on every thread without atomics or locks.
    ///
    /// `init` makes a state for each piece of work rayon hands a thread (so about one per
    /// thread, more when threads steal work; never one per pair or per part); `fold` visits
    /// the pairs with the state of the thread it runs on; `reduce` combines two states, and
    /// is applied until one is left (with `init()`'s state where there was no work at all).
    /// `reduce` should combine as the work does (associative, and `init()` neutral), since
    /// which states meet in which order depends on the threads; the states' contents (a list's
    /// order) may differ between runs, the pairs they saw never do.
    ///
    /// Returns `Continue` with the reduced state when every pair was visited, and `Break`
    /// with the reduced state of every thread when a `fold` broke: the other threads stop
    /// once their current part is done (so their states may hold pairs visited after the
    /// break), and no part starts after it. Splitting allocates a small list of parts per
    /// call.
    ///
    /// # Example
    /// ```
    /// use core::ops::ControlFlow;
    /// use spatix::{Aabb, ParallelPairs, Point, Quadtree, SpatialIndex};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut tree = Quadtree::new(world)?;
    /// for i in 0..100 {
    ///     let x = (i % 10) as f32 * 10.0;
    ///     let y = (i / 10) as f32 * 10.0;
    ///     tree.insert(Aabb::new(Point::new(x, y), Point::new(x + 10.0, y + 1.0))?, i)?;
    /// }
    /// // Each thread counts its pairs and lists those in the bottom row; then the counts
    /// // are added and the lists joined.
    /// let (ControlFlow::Continue((count, mut bottom)) | ControlFlow::Break((count, mut bottom))) =
    ///     tree.par_fold_pairs(
    ///         || (0, Vec::new()),
    ///         |(count, bottom), a, b| {
    ///             *count += 1;
    ///             if a.aabb.min.y == 0.0 {
    ///                 bottom.push((*a.value).min(*b.value));
    ///             }
    ///             ControlFlow::Continue(())
    ///         },
    ///         |(n, mut list), (m, more)| {
    ///             list.extend(more);
    ///             (n + m, list)
    ///         },
    ///     );
    /// bottom.sort_unstable();
    /// assert_eq!(count, 90); // each box touches its right-hand neighbour
    /// assert_eq!(bottom, (0..9).collect::<Vec<_>>());
    ///
    /// // A fold that breaks stops the pass, and says so.
    /// let flow = tree.par_fold_pairs(|| (), |_, _, _| ControlFlow::Break(()), |_, _| ());
    /// assert!(flow.is_break());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn par_fold_pairs<A, Init, Fold, Reduce>(
        &self,
        init: Init,
        fold: Fold,
        reduce: Reduce,
    ) -> ControlFlow<A, A>
    where
        A: Send,
        Init: Fn() -> A + Sync,
        Fold: Fn(&mut A, Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
        Reduce: Fn(A, A) -> A + Sync;

    /// Every pair's handles into `buffers`, replacing what they held: one list per part of
    /// the pass, each filled by the thread that runs the part, so no thread waits on another.
    ///
    /// The buffers keep their memory, and the list of parts, from one call to the next: a
    /// call on the same data with the same number of threads allocates nothing, and while
    /// the data changes, nothing once each list has held its largest count (the moving
    /// agents of a frame loop settle within a few frames). Called from a thread outside
    /// rayon's pool, rayon itself allocates a block of its queue of injected jobs now and then
    /// (once every few dozen calls); from inside the pool
    /// ([`ThreadPool::install`](rayon::ThreadPool::install)), nothing.
    ///
    /// # Example
    /// ```
    /// use spatix::{Aabb, PairBuffers, ParallelPairs, Point, SpatialIndex, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let items = (0..1000).map(|i| {
    ///     // Agents on a lattice 2.5 apart, 3 wide: each overlaps its left and right neighbours.
    ///     let p = Point::new((i % 40) as f32 * 2.5, (i / 40) as f32 * 4.0);
    ///     (Aabb::from_center_half_extents(p, Point::new(1.5, 1.5)).unwrap(), i)
    /// });
    /// let grid = SweepGrid::build_auto(world, items)?;
    /// let mut buffers = PairBuffers::new(); // kept across frames
    /// for _frame in 0..3 {
    ///     grid.par_collect_pairs(&mut buffers);
    ///     assert_eq!(buffers.len(), 25 * 39);
    ///     for (a, b) in buffers.iter() {
    ///         let (a, b) = (grid.get(a).unwrap(), grid.get(b).unwrap());
    ///         assert_eq!(a.value / 40, b.value / 40); // neighbours in a row
    ///     }
    /// }
    /// # Ok::<(), spatix::Error>(())
    /// ```
    fn par_collect_pairs(&self, buffers: &mut PairBuffers);

    /// [`SpatialIndex::update_all`] on all threads (dynamic structures only): `f` is called
    /// once for every element, with the same arguments and the same handling of refused
    /// boxes, but from several threads at once, each walking its own part of the storage in
    /// order (so the order across parts is unspecified). [`SweepGrid`](crate::SweepGrid)
    /// splits its bands into runs walked in parallel; the four grids
    /// ([`UniformGrid`](crate::UniformGrid), [`LooseGrid`](crate::LooseGrid),
    /// [`PointGrid`](crate::PointGrid), [`HierarchicalGrid`](crate::HierarchicalGrid)) walk
    /// chunks of their slot tables in parallel and move in place every element that stays
    /// in its cells; the uniform grid then re-files the others band of rows by band of rows
    /// in parallel, the other three on the calling thread, all leaving exactly the state
    /// [`SpatialIndex::update_all`] leaves; the quadtrees run [`SpatialIndex::update_all`]
    /// on the calling thread.
    ///
    /// # Errors
    /// As [`SpatialIndex::update_all`]: the error of a refusal (on the grids the first in
    /// slot order, as `update_all`'s; on the sweep grid, which refusal when several threads
    /// met one is unspecified).
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
        Self: SpatialIndex<S, T>,
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        T: Send;
}

/// The one implementation, over each structure's `PairParts` (and `UpdateParts`).
impl<S: Scalar, T: Sync, I: PairParts<S, T> + UpdateParts<S, T> + Sync> ParallelPairs<S, T> for I {
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
    {
        let mut parts = Vec::new();
        self.pair_parts(target(), &mut parts, &mut I::Scratch::default());
        parts
            .par_iter()
            .try_for_each(|part| self.pairs_of_part(part, &mut &visit))
    }

    fn par_fold_pairs<A, Init, Fold, Reduce>(
        &self,
        init: Init,
        fold: Fold,
        reduce: Reduce,
    ) -> ControlFlow<A, A>
    where
        A: Send,
        Init: Fn() -> A + Sync,
        Fold: Fn(&mut A, Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
        Reduce: Fn(A, A) -> A + Sync,
    {
        let mut parts = Vec::new();
        self.pair_parts(target(), &mut parts, &mut I::Scratch::default());
        // Set once, by the fold that breaks; read once per part.
        let stop = AtomicBool::new(false);
        let state = parts
            .par_iter()
            .fold(&init, |mut state, part| {
                if !stop.load(Ordering::Relaxed) {
                    let mut visit = |a: Item<'_, S, T>, b: Item<'_, S, T>| fold(&mut state, a, b);
                    if self.pairs_of_part(part, &mut visit).is_break() {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                state
            })
            .reduce(&init, &reduce);
        if stop.into_inner() {
            ControlFlow::Break(state)
        } else {
            ControlFlow::Continue(state)
        }
    }

    fn par_collect_pairs(&self, buffers: &mut PairBuffers) {
        let PairBuffers { lists, used, parts } = buffers;
        let (parts, scratch) = part_list::<I::Part, I::Scratch>(parts);
        self.pair_parts(target(), parts, scratch);
        if lists.len() < parts.len() {
            lists.resize_with(parts.len(), Vec::new);
        }
        *used = parts.len();
        lists[..parts.len()]
            .par_iter_mut()
            .zip(&*parts)
            .for_each(|(list, part)| {
                list.clear();
                let _ = self.pairs_of_part(part, &mut |a, b| {
                    list.push((a.handle, b.handle));
                    ControlFlow::Continue(())
                });
            });
    }

    fn par_update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        Self: SpatialIndex<S, T>,
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        T: Send,
    {
        self.update_in_parts(f)
    }
}

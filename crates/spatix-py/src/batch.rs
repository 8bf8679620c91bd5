//! Batch queries over any spatix structure: many query points or windows in, flat arrays
//! out, on the calling thread or, through [`ParallelQuery`], on a kept rayon pool of
//! `workers` threads. Callers run these with the GIL released.

use core::ops::{ControlFlow, Range};
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::iter::{IntoParallelIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;
use rayon::{ThreadPool, ThreadPoolBuilder};
use spatix::{
    BatchAnswers, BatchBuffers, Handle, PackedIndex, ParallelPairs, ParallelQuery, Point,
    SpatialQuery, Workspace,
};

use crate::array::{
    PyScalar, Rows, aabb, boxes, check_boxes, check_points, point, points, vec1, vec2,
};

/// How many threads a batch runs on: `workers` as scipy reads it (`-1`: every core).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Workers(usize);

/// The pools batches run on: the process that started them (a child forked from it has none
/// of their threads) and one pool per thread count, each started by the first batch that
/// asks for its count and kept for the life of that process. Counts are clamped to the
/// cores, so there are at most as many pools as cores.
static POOLS: Mutex<(u32, Vec<(usize, &'static ThreadPool)>)> = Mutex::new((0, Vec::new()));

impl Workers {
    /// Reads scipy's `workers` argument: a positive count, or `-1` for every core. A count
    /// beyond the cores runs on every core (more threads than cores only add switching; a
    /// count of 2^40 would try to start them all).
    ///
    /// # Errors
    /// `ValueError` for 0 or a negative count other than `-1`.
    pub(crate) fn new(workers: i64) -> PyResult<Self> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        match workers {
            -1 => Ok(Self(cores)),
            n if n >= 1 => Ok(Self(usize::try_from(n).map_or(cores, |n| n.min(cores)))),
            n => Err(PyValueError::new_err(format!(
                "workers must be a positive number of threads or -1 (every core), got {n}"
            ))),
        }
    }

    /// The pool of this many threads, started on first use and kept; `None` for one thread
    /// (the batch runs on the calling thread). A process forked from the one that started
    /// the pools starts its own: the inherited ones have no threads in it (they are left
    /// allocated, at most one set per fork).
    ///
    /// # Errors
    /// The message when the threads cannot start.
    pub(crate) fn pool(self) -> Result<Option<&'static ThreadPool>, String> {
        if self.0 == 1 {
            return Ok(None);
        }
        let mut guard = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
        let (owner, pools) = &mut *guard;
        let pid = std::process::id();
        if *owner != pid {
            *owner = pid;
            pools.clear();
        }
        if let Some(&(_, pool)) = pools.iter().find(|(n, _)| *n == self.0) {
            return Ok(Some(pool));
        }
        let pool = ThreadPoolBuilder::new()
            .num_threads(self.0)
            .thread_name(|i| format!("spatix-{i}"))
            .build()
            .map_err(|e| format!("could not start {} threads: {e}", self.0))?;
        let pool: &'static ThreadPool = Box::leak(Box::new(pool));
        pools.push((self.0, pool));
        Ok(Some(pool))
    }
}

/// A batch's failure to start its threads, as a Python error.
pub(crate) fn pool_error(why: String) -> PyErr {
    PyRuntimeError::new_err(why)
}

/// Two result arrays.
pub(crate) type Arrays<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// A k-nearest call from Python: reads the `(m, 2)` points of `obj` (named `what` in errors)
/// in precision `S`, checks them, `k` and `workers`, runs `run` (e.g. [`nearest`]) on them
/// with the GIL released, and shapes its `(distances, ids)` as scipy does: `(m,)` for
/// `k = 1`, else `(m, k)`.
///
/// # Errors
/// `ValueError` for bad points, `k = 0` or bad `workers`; `OverflowError` or `MemoryError`,
/// naming `k` and the size, when the `m × k` results cannot be held (checked before the
/// search allocates them); `RuntimeError` if the threads cannot start.
pub(crate) fn nearest_call<'py, S, R>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    k: usize,
    workers: i64,
    run: R,
) -> PyResult<Arrays<'py>>
where
    S: PyScalar,
    R: FnOnce(&[S], Workers) -> Result<(Vec<S>, Vec<i64>), String> + Send,
{
    let workers = Workers::new(workers)?;
    let py = obj.py();
    let rows = Rows::<S>::read_one_or_many(obj, 2, what)?;
    let flat = rows.flat();
    check_points(what, flat)?;
    results_fit::<S>(rows.len, k)?;
    let (d, found) = py.detach(|| run(flat, workers)).map_err(pool_error)?;
    if rows.single {
        // scipy's shapes for one point: scalars for k = 1, else (k,).
        let (d, found) = (vec1(py, d), vec1(py, found));
        return if k == 1 {
            Ok((d.get_item(0)?, found.get_item(0)?))
        } else {
            Ok((d, found))
        };
    }
    Ok((
        vec2(py, d, rows.len, k, true)?,
        vec2(py, found, rows.len, k, true)?,
    ))
}

/// Reads the number of neighbours `k` asked for.
///
/// # Errors
/// `ValueError` for `k < 1`.
pub(crate) fn neighbours(k: i64) -> PyResult<usize> {
    usize::try_from(k)
        .ok()
        .filter(|&k| k >= 1)
        .ok_or_else(|| PyValueError::new_err(format!("k must be at least 1, got {k}")))
}

/// Result sizes above which [`results_fit`] asks the allocator before the search.
const PROBE_ABOVE: usize = 1 << 30;

/// Checks that `m × k` results (a distance in `S` and an 8-byte id each) can be allocated,
/// so that a `k` far beyond the elements fails with an error naming it instead of aborting.
///
/// # Errors
/// `OverflowError` if the size overflows, `MemoryError` if the allocator refuses it.
pub(crate) fn results_fit<S>(m: usize, k: usize) -> PyResult<()> {
    let bytes = m
        .checked_mul(k)
        .and_then(|n| n.checked_mul(size_of::<S>() + 8))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            PyOverflowError::new_err(format!(
                "k = {k}: {m} queries times k results are more than memory can address"
            ))
        })?;
    // Sizes up to a gibibyte are left to the search's own allocation: only beyond that is
    // the allocator asked first (a second, untouched reservation, freed at once).
    if bytes <= PROBE_ABOVE {
        return Ok(());
    }
    Vec::<u8>::new().try_reserve_exact(bytes).map_err(|_| {
        PyMemoryError::new_err(format!(
            "k = {k}: {m} queries times k results need {bytes} bytes, more than can be allocated"
        ))
    })
}

/// A call from Python that finds elements for each of many queries: reads the rows of `obj`
/// (`cols` = 2: points, 4: windows; named `what` in errors) in precision `S`, checks them and
/// `workers`, runs `run` (e.g. [`windows`]) with the GIL released and returns what it found
/// as two flat arrays: `(query_index, id)`.
///
/// # Errors
/// `ValueError` for bad rows or `workers`; `RuntimeError` if the threads cannot start.
pub(crate) fn hits_call<'py, S, R>(
    obj: &Bound<'py, PyAny>,
    cols: usize,
    what: &str,
    workers: i64,
    run: R,
) -> PyResult<Arrays<'py>>
where
    S: PyScalar,
    R: FnOnce(&[S], Workers) -> Result<Hits, String> + Send,
{
    let workers = Workers::new(workers)?;
    let py = obj.py();
    let rows = Rows::<S>::read(obj, cols, what)?;
    let flat = rows.flat();
    if cols == 2 {
        check_points(what, flat)?;
    } else {
        check_boxes(what, flat)?;
    }
    let (queries, found) = py
        .detach(|| run(flat, workers).map(|hits| (hits.queries(), hits.found)))
        .map_err(pool_error)?;
    Ok((vec1(py, queries), vec1(py, found)))
}

/// The `k` nearest elements of each point of `points` (flat `(m, 2)`): distances and ids,
/// `m × k` each, row by row, ascending; rows with fewer than `k` elements are padded with an
/// infinite distance and `missing`. `id` names an element for Python. One worker asks the
/// points one by one on the calling thread; more ask them all at once
/// ([`ParallelQuery::nearest_batch`]) on their pool.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn nearest<S, T, I>(
    index: &I,
    flat: &[S],
    k: usize,
    workers: Workers,
    missing: i64,
    id: impl Fn(Handle) -> i64,
) -> Result<(Vec<S>, Vec<i64>), String>
where
    S: PyScalar,
    I: ParallelQuery<S, T>,
{
    let m = flat.len() / 2;
    let mut distances = vec![S::INFINITY; m * k];
    let mut ids = vec![missing; m * k];
    let mut fill = |q: usize, found: &[spatix::Neighbor<S>]| {
        let row = q * k..q * k + found.len();
        for ((d, i), n) in distances[row.clone()]
            .iter_mut()
            .zip(&mut ids[row])
            .zip(found)
        {
            *d = n.distance;
            *i = id(n.handle);
        }
    };
    match workers.pool()? {
        None => {
            let mut workspace = Workspace::new();
            for (q, p) in points(flat).enumerate() {
                fill(q, index.nearest(p, k, &mut workspace));
            }
        }
        Some(pool) => {
            let queries: Vec<Point<S>> = points(flat).collect();
            let mut buffers = BatchBuffers::new();
            let found = pool.install(|| index.nearest_batch(&queries, k, &mut buffers));
            for (q, found) in found.iter().enumerate() {
                fill(q, found);
            }
        }
    }
    Ok((distances, ids))
}

/// What a batch of `m` queries found: the ids each query found, query after query, and
/// where each query's run starts (`m + 1` offsets, from 0; query `q`'s ids are
/// `found[offsets[q]..offsets[q + 1]]`).
pub(crate) struct Hits {
    /// Where each query's ids start in `found`, and the end of the last.
    pub(crate) offsets: Vec<usize>,
    /// The ids found, query after query.
    pub(crate) found: Vec<i64>,
}

impl Hits {
    /// The query index of each id of `found`: `q` repeated once per id query `q` found.
    pub(crate) fn queries(&self) -> Vec<i64> {
        let mut queries = Vec::with_capacity(self.found.len());
        for (q, w) in self.offsets.windows(2).enumerate() {
            queries.extend(core::iter::repeat_n(q as i64, w[1] - w[0]));
        }
        queries
    }
}

/// Every element `m` queries find, query by query: one worker asks `one(q, found)`, which
/// calls `found` with each element query `q` finds, for each query in turn on the calling
/// thread; more run `batch` (a [`ParallelQuery`] batch of all the queries) on their pool.
fn gather<S, O, B>(
    m: usize,
    workers: Workers,
    one: O,
    batch: B,
    id: impl Fn(Handle) -> i64,
) -> Result<Hits, String>
where
    S: PyScalar,
    O: Fn(usize, &mut dyn FnMut(Handle)),
    B: for<'b> FnOnce(&'b mut BatchBuffers<S>) -> BatchAnswers<'b, S, Handle> + Send,
{
    let mut offsets = Vec::with_capacity(m + 1);
    offsets.push(0);
    let mut found = Vec::new();
    match workers.pool()? {
        None => {
            for q in 0..m {
                one(q, &mut |h| found.push(id(h)));
                offsets.push(found.len());
            }
        }
        Some(pool) => {
            let mut buffers = BatchBuffers::new();
            let answers = pool.install(|| batch(&mut buffers));
            found.reserve_exact(answers.total());
            for hits in answers.iter() {
                found.extend(hits.iter().map(|&h| id(h)));
                offsets.push(found.len());
            }
        }
    }
    Ok(Hits { offsets, found })
}

/// Every element whose box intersects each window of `windows` (flat `(m, 4)`, valid),
/// window by window ([`ParallelQuery::query_batch`] on more
/// than one worker).
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn windows<S, T, I>(
    index: &I,
    windows: &[S],
    workers: Workers,
    id: impl Fn(Handle) -> i64,
) -> Result<Hits, String>
where
    S: PyScalar,
    I: ParallelQuery<S, T>,
{
    gather(
        windows.len() / 4,
        workers,
        |q, found| {
            let _ = index.query(&aabb(windows, q), |item| {
                found(item.handle);
                ControlFlow::Continue(())
            });
        },
        |buffers| {
            let areas: Vec<_> = boxes(windows).collect();
            index.query_batch(&areas, buffers)
        },
        id,
    )
}

/// The radii of a radius batch: one for every query, or one each.
#[derive(Clone, Copy)]
pub(crate) enum Radii<'a, S> {
    /// The same radius for every query.
    One(S),
    /// Query `q`'s radius at `q` (a negative or NaN one finds nothing).
    Each(&'a [S]),
}

/// Every element within its query's radius of each point of `flat` (`(m, 2)`, finite),
/// point by point ([`ParallelQuery::within_batch`] on more than one worker for one radius;
/// the queries spread over the workers for one each).
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn within<S, T, I>(
    index: &I,
    flat: &[S],
    radii: Radii<'_, S>,
    workers: Workers,
    id: impl Fn(Handle) -> i64 + Sync,
) -> Result<Hits, String>
where
    S: PyScalar,
    I: ParallelQuery<S, T>,
{
    let radius = match radii {
        Radii::One(radius) => radius,
        Radii::Each(radii) => {
            let (offsets, found) = per_query(flat.len() / 2, workers, |q, found| {
                let _ = index.within(point(flat, q), radii[q], |item| {
                    found.push(id(item.handle));
                    ControlFlow::Continue(())
                });
            })?;
            return Ok(Hits { offsets, found });
        }
    };
    gather(
        flat.len() / 2,
        workers,
        |q, found| {
            let _ = index.within(point(flat, q), radius, |item| {
                found(item.handle);
                ControlFlow::Continue(())
            });
        },
        |buffers| {
            let queries: Vec<_> = points(flat).collect();
            index.within_batch(&queries, radius, buffers)
        },
        id,
    )
}

/// Every intersecting pair of elements, as a flat `(m, 2)` list of ids, smaller first.
pub(crate) fn pairs<S, T, I>(index: &I, id: impl Fn(Handle) -> i64) -> Vec<i64>
where
    S: PyScalar,
    I: SpatialQuery<S, T>,
{
    let mut out = Vec::new();
    let _ = index.for_each_pair(|a, b| {
        let (a, b) = (id(a.handle), id(b.handle));
        out.extend_from_slice(&[a.min(b), a.max(b)]);
        ControlFlow::Continue(())
    });
    out
}

/// [`pairs`] on `workers` threads (`ParallelPairs::par_fold_pairs`: each thread lists the
/// pairs it finds, and the lists are joined), in an order that depends on the threads.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn par_pairs<S, T, I>(
    index: &I,
    workers: Workers,
    id: impl Fn(Handle) -> i64 + Sync,
) -> Result<Vec<i64>, String>
where
    S: PyScalar,
    T: Sync,
    I: ParallelPairs<S, T>,
{
    let Some(pool) = workers.pool()? else {
        return Ok(pairs(index, id));
    };
    Ok(pool.install(|| {
        let (ControlFlow::Continue(out) | ControlFlow::Break(out)) = index.par_fold_pairs(
            Vec::new,
            |out, a, b| {
                let (a, b) = (id(a.handle), id(b.handle));
                out.extend_from_slice(&[a.min(b), a.max(b)]);
                ControlFlow::Continue(())
            },
            |mut out, mut more| {
                if out.len() < more.len() {
                    core::mem::swap(&mut out, &mut more);
                }
                out.append(&mut more);
                out
            },
        );
        out
    }))
}

/// What `one(q, found)` pushes onto `found` for each query `q` of `0..m`, in query order: the
/// offsets of each query's results in the flat list (`m + 1` of them, from 0) and that list.
/// One worker asks the queries in turn on the calling thread; more split them into blocks
/// (several per thread, so that uneven queries even out) on their pool.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn per_query<T, F>(
    m: usize,
    workers: Workers,
    one: F,
) -> Result<(Vec<usize>, Vec<T>), String>
where
    T: Send,
    F: Fn(usize, &mut Vec<T>) + Sync,
{
    per_query_with(m, workers, || (), |q, (), found| one(q, found))
}

/// [`per_query`] with scratch state: `one(q, scratch, found)`, each block of queries with the
/// `scratch` that `init` makes for it (a search's workspace, kept from query to query).
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn per_query_with<W, T, I, F>(
    m: usize,
    workers: Workers,
    init: I,
    one: F,
) -> Result<(Vec<usize>, Vec<T>), String>
where
    T: Send,
    I: Fn() -> W + Sync,
    F: Fn(usize, &mut W, &mut Vec<T>) + Sync,
{
    let run = |queries: Range<usize>| {
        let mut scratch = init();
        let mut ends = Vec::with_capacity(queries.len());
        let mut found = Vec::new();
        for q in queries {
            one(q, &mut scratch, &mut found);
            ends.push(found.len());
        }
        (ends, found)
    };
    let mut offsets = Vec::with_capacity(m + 1);
    offsets.push(0);
    let Some(pool) = workers.pool()? else {
        let (ends, found) = run(0..m);
        offsets.extend(ends);
        return Ok((offsets, found));
    };
    let size = m.div_ceil(workers.0 * 16).max(1);
    let blocks: Vec<(Vec<usize>, Vec<T>)> = pool.install(|| {
        (0..m.div_ceil(size))
            .into_par_iter()
            .map(|b| run(b * size..m.min((b + 1) * size)))
            .collect()
    });
    let mut found = Vec::with_capacity(blocks.iter().map(|(_, f)| f.len()).sum());
    for (ends, block) in blocks {
        let base = found.len();
        offsets.extend(ends.into_iter().map(|e| base + e));
        found.extend(block);
    }
    Ok((offsets, found))
}

/// The pairs of the valid boxes of `flat` (fewer than `u32::MAX`) as keys `i << 32 | j`
/// (`i < j`), sorted: a
/// [`PackedIndex`] built over them (its handles' slots are the rows), its pair pass, and a
/// sort, each on `workers` threads.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn sorted_pairs<S: PyScalar>(flat: &[S], workers: Workers) -> Result<Vec<u64>, String> {
    let items = || boxes(flat).map(|b| (b, ()));
    let key = |a: Handle, b: Handle| {
        let (a, b) = (a.slot(), b.slot());
        (u64::from(a.min(b)) << 32) | u64::from(a.max(b))
    };
    let built = "valid boxes, fewer than 2^32 - 1";
    match workers.pool()? {
        None => {
            let index = PackedIndex::build(items()).expect(built);
            let mut keys = Vec::new();
            let _ = index.for_each_pair(|a, b| {
                keys.push(key(a.handle, b.handle));
                ControlFlow::Continue(())
            });
            keys.sort_unstable();
            Ok(keys)
        }
        Some(pool) => Ok(pool.install(|| {
            let index = PackedIndex::par_build(items()).expect(built);
            let (ControlFlow::Continue(mut keys) | ControlFlow::Break(mut keys)) = index
                .par_fold_pairs(
                    Vec::new,
                    |keys, a, b| {
                        keys.push(key(a.handle, b.handle));
                        ControlFlow::Continue(())
                    },
                    |mut keys, mut more| {
                        if keys.len() < more.len() {
                            core::mem::swap(&mut keys, &mut more);
                        }
                        keys.append(&mut more);
                        keys
                    },
                );
            keys.par_sort_unstable();
            keys
        })),
    }
}

/// Flat pairs `[i, j, ...]` sorted by `i`, then `j`.
pub(crate) fn sort_pairs(flat: Vec<i64>) -> Vec<i64> {
    let mut pairs: Vec<(i64, i64)> = flat.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    pairs.sort_unstable();
    pairs.into_iter().flat_map(|(i, j)| [i, j]).collect()
}

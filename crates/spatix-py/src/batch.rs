//! Batch queries over any spatix structure: many query points or windows in, flat arrays
//! out, on the calling thread or spread over a rayon pool of `workers` threads. Callers run
//! these with the GIL released.

use core::ops::ControlFlow;

use pyo3::exceptions::{PyMemoryError, PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use spatix::{Handle, ParallelPairs, SpatialQuery, Workspace};

use crate::array::{Coord, Rows, aabb, check_boxes, check_points, point, vec1, vec2};

/// Queries per rayon task: enough to pay for the task, few enough to balance the threads.
const CHUNK: usize = 256;

/// How many threads a batch runs on: `workers` as scipy reads it (`-1`: every core).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Workers(usize);

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

    /// Runs `job` on a pool of this many threads (on the caller's when it is one).
    fn run<R: Send>(self, job: impl FnOnce() -> R + Send) -> Result<R, String> {
        if self.0 == 1 {
            return Ok(job());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.0)
            .build()
            .map_err(|e| format!("could not start {} threads: {e}", self.0))?;
        Ok(pool.install(job))
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
    S: Coord,
    R: FnOnce(&[S], Workers) -> Result<(Vec<S>, Vec<i64>), String> + Send,
{
    if k == 0 {
        return Err(PyValueError::new_err("k must be at least 1"));
    }
    let workers = Workers::new(workers)?;
    let py = obj.py();
    let rows = Rows::<S>::read(obj, 2, what)?;
    let flat = rows.flat();
    check_points(what, flat)?;
    results_fit::<S>(rows.len, k)?;
    let (d, found) = py.detach(|| run(flat, workers)).map_err(pool_error)?;
    Ok((
        vec2(py, d, rows.len, k, true)?,
        vec2(py, found, rows.len, k, true)?,
    ))
}

/// Result sizes above which [`results_fit`] asks the allocator before the search.
const PROBE_ABOVE: usize = 1 << 30;

/// Checks that `m × k` results (a distance in `S` and an 8-byte id each) can be allocated,
/// so that a `k` far beyond the elements fails with an error naming it instead of aborting.
///
/// # Errors
/// `OverflowError` if the size overflows, `MemoryError` if the allocator refuses it.
fn results_fit<S>(m: usize, k: usize) -> PyResult<()> {
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
/// `workers`, runs `run` (e.g. [`windows`]) with the GIL released and returns its two flat
/// arrays.
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
    S: Coord,
    R: FnOnce(&[S], Workers) -> Result<(Vec<i64>, Vec<i64>), String> + Send,
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
    let (queries, found) = py.detach(|| run(flat, workers)).map_err(pool_error)?;
    Ok((vec1(py, queries), vec1(py, found)))
}

/// The `k` nearest elements of each point of `points` (flat `(m, 2)`): distances and ids,
/// `m × k` each, row by row, ascending; rows with fewer than `k` elements are padded with an
/// infinite distance and `missing`. `id` names an element for Python.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn nearest<S, T, I>(
    index: &I,
    points: &[S],
    k: usize,
    workers: Workers,
    missing: i64,
    id: impl Fn(Handle) -> i64 + Sync,
) -> Result<(Vec<S>, Vec<i64>), String>
where
    S: Coord,
    I: SpatialQuery<S, T> + Sync,
{
    let m = points.len() / 2;
    let mut distances = vec![S::INFINITY; m * k];
    let mut ids = vec![missing; m * k];
    if k == 0 {
        return Ok((distances, ids));
    }
    let fill = |ws: &mut Workspace<S>, first: usize, d: &mut [S], ids: &mut [i64]| {
        for (j, (d, ids)) in d
            .chunks_exact_mut(k)
            .zip(ids.chunks_exact_mut(k))
            .enumerate()
        {
            let found = index.nearest(point(points, first + j), k, ws);
            for (n, (d, i)) in found.iter().zip(d.iter_mut().zip(ids.iter_mut())) {
                *d = n.distance;
                *i = id(n.handle);
            }
        }
    };
    workers.run(|| {
        if workers.0 == 1 {
            fill(&mut Workspace::new(), 0, &mut distances, &mut ids);
        } else {
            distances
                .par_chunks_mut(CHUNK * k)
                .zip(ids.par_chunks_mut(CHUNK * k))
                .enumerate()
                .for_each_init(Workspace::new, |ws, (c, (d, ids))| {
                    fill(ws, c * CHUNK, d, ids);
                });
        }
    })?;
    Ok((distances, ids))
}

/// Every (query, element) pair of a batch of queries, in query order: `visit(q, found)`
/// calls `found(id)` for each element query `q` finds.
fn gather<V>(m: usize, workers: Workers, visit: V) -> Result<(Vec<i64>, Vec<i64>), String>
where
    V: Fn(usize, &mut dyn FnMut(i64)) + Sync,
{
    let run = |range: core::ops::Range<usize>| {
        let mut queries = Vec::new();
        let mut found = Vec::new();
        for q in range {
            visit(q, &mut |id| {
                queries.push(q as i64);
                found.push(id);
            });
        }
        (queries, found)
    };
    workers.run(|| {
        if workers.0 == 1 {
            return run(0..m);
        }
        let parts: Vec<(Vec<i64>, Vec<i64>)> = (0..m.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| run(c * CHUNK..((c + 1) * CHUNK).min(m)))
            .collect();
        let total = parts.iter().map(|p| p.0.len()).sum();
        let mut queries = Vec::with_capacity(total);
        let mut found = Vec::with_capacity(total);
        for (q, f) in parts {
            queries.extend_from_slice(&q);
            found.extend_from_slice(&f);
        }
        (queries, found)
    })
}

/// Every element whose box intersects each window of `windows` (flat `(m, 4)`, valid):
/// `(window_index, id)` arrays, in window order.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn windows<S, T, I>(
    index: &I,
    windows: &[S],
    workers: Workers,
    id: impl Fn(Handle) -> i64 + Sync,
) -> Result<(Vec<i64>, Vec<i64>), String>
where
    S: Coord,
    I: SpatialQuery<S, T> + Sync,
{
    gather(windows.len() / 4, workers, |q, found| {
        let _ = index.query(&aabb(windows, q), |item| {
            found(id(item.handle));
            ControlFlow::Continue(())
        });
    })
}

/// Every element within `radius` of each point of `points` (flat `(m, 2)`, finite):
/// `(point_index, id)` arrays, in point order.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn within<S, T, I>(
    index: &I,
    points: &[S],
    radius: S,
    workers: Workers,
    id: impl Fn(Handle) -> i64 + Sync,
) -> Result<(Vec<i64>, Vec<i64>), String>
where
    S: Coord,
    I: SpatialQuery<S, T> + Sync,
{
    gather(points.len() / 2, workers, |q, found| {
        let _ = index.within(point(points, q), radius, |item| {
            found(id(item.handle));
            ControlFlow::Continue(())
        });
    })
}

/// Every intersecting pair of elements, as a flat `(m, 2)` list of ids, smaller first.
pub(crate) fn pairs<S, T, I>(index: &I, id: impl Fn(Handle) -> i64) -> Vec<i64>
where
    S: Coord,
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
    S: Coord,
    T: Sync,
    I: ParallelPairs<S, T>,
{
    if workers.0 == 1 {
        return Ok(pairs(index, id));
    }
    workers.run(|| {
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
    })
}

//! Raycasts on the box indexes: `raycast` (the first box each ray hits, in a batch on
//! `workers` threads) and `raycast_all` (every box each ray hits, in order along it).

use core::ops::ControlFlow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spatix::{BatchBuffers, Handle, ParallelQuery, Ray, Workspace};

use crate::array::{PyScalar, Rows, check_points, point, vec1, vec2};
use crate::batch::{Arrays, Workers, pool_error};

/// Reads `m` rays: `origins` and `directions` `(m, 2)` (or one of each as `(2,)`), and
/// `max_t`, how far along each ray (in lengths of its direction) to look.
///
/// # Errors
/// `ValueError` naming the row of a non-finite origin or direction or of a zero direction,
/// for arrays of different lengths, or a `max_t` below 0 or NaN.
pub(crate) fn read<S: PyScalar>(
    origins: &Bound<'_, PyAny>,
    directions: &Bound<'_, PyAny>,
    max_t: f64,
) -> PyResult<(Vec<Ray<S>>, bool)> {
    let o = Rows::<S>::read_one_or_many(origins, 2, "origins")?;
    let d = Rows::<S>::read_one_or_many(directions, 2, "directions")?;
    check_points("origins", o.flat())?;
    check_points("directions", d.flat())?;
    if o.len != d.len {
        return Err(PyValueError::new_err(format!(
            "origins and directions must have as many rows, got {} and {}",
            o.len, d.len
        )));
    }
    if max_t.is_nan() || max_t < 0.0 {
        return Err(PyValueError::new_err(format!(
            "max_t must be at least 0, got {max_t}"
        )));
    }
    let max_t = S::from_f64(max_t);
    let rays = (0..o.len)
        .map(|i| {
            Ray::new(point(o.flat(), i), point(d.flat(), i), max_t).map_err(|_| {
                PyValueError::new_err(format!(
                    "directions row {i} is zero: a ray needs a direction"
                ))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((rays, o.single))
}

/// The first element each ray hits: its entry parameter `t` and its id, `inf` and `missing`
/// for a ray that hits nothing. One worker casts on the calling thread; more cast the batch
/// ([`ParallelQuery::raycast_batch`]) on their pool.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn first<S, T, I>(
    index: &I,
    rays: &[Ray<S>],
    workers: Workers,
    missing: i64,
    id: impl Fn(Handle) -> i64,
) -> Result<(Vec<S>, Vec<i64>), String>
where
    S: PyScalar,
    I: ParallelQuery<S, T>,
{
    let mut ts = Vec::with_capacity(rays.len());
    let mut ids = Vec::with_capacity(rays.len());
    let mut push = |hit: Option<&spatix::RayHit<S>>| match hit {
        Some(hit) => {
            ts.push(hit.t);
            ids.push(id(hit.handle));
        }
        None => {
            ts.push(S::INFINITY);
            ids.push(missing);
        }
    };
    match workers.pool()? {
        None => {
            let mut workspace = Workspace::new();
            for ray in rays {
                push(index.raycast(ray, &mut workspace).as_ref());
            }
        }
        Some(pool) => {
            let mut buffers = BatchBuffers::new();
            let answers = pool.install(|| index.raycast_batch(rays, &mut buffers));
            for hits in answers.iter() {
                push(hits.first());
            }
        }
    }
    Ok((ts, ids))
}

/// Every element each ray hits, as `(ray_index, id, t)`, ray by ray, in ascending `t` and
/// then id.
pub(crate) fn all<S, T, I>(
    index: &I,
    rays: &[Ray<S>],
    id: impl Fn(Handle) -> i64,
) -> (Vec<i64>, Vec<i64>, Vec<S>)
where
    S: PyScalar,
    I: ParallelQuery<S, T>,
{
    let mut workspace = Workspace::new();
    let mut hits: Vec<(S, i64)> = Vec::new();
    let (mut queries, mut found, mut ts) = (Vec::new(), Vec::new(), Vec::new());
    for (r, ray) in rays.iter().enumerate() {
        hits.clear();
        let _ = index.raycast_all(ray, &mut workspace, |item, t| {
            hits.push((t, id(item.handle)));
            ControlFlow::Continue(())
        });
        // In ascending `t` already (never NaN); ties by id.
        hits.sort_unstable_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(core::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        for &(t, i) in &hits {
            queries.push(r as i64);
            found.push(i);
            ts.push(t);
        }
    }
    (queries, found, ts)
}

/// The Python call `raycast`: reads the rays, casts them with the GIL released (`cast`, see
/// [`first`]) and shapes the result: `(t, ids)`, scalars for one ray.
pub(crate) fn first_call<'py, S, C>(
    origins: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
    max_t: f64,
    workers: i64,
    cast: C,
) -> PyResult<Arrays<'py>>
where
    S: PyScalar,
    C: FnOnce(&[Ray<S>], Workers) -> Result<(Vec<S>, Vec<i64>), String> + Send,
{
    let workers = Workers::new(workers)?;
    let py = origins.py();
    let (rays, single) = read::<S>(origins, directions, max_t)?;
    let (ts, ids) = py.detach(|| cast(&rays, workers)).map_err(pool_error)?;
    let (ts, ids) = (vec1(py, ts), vec1(py, ids));
    if single {
        return Ok((ts.get_item(0)?, ids.get_item(0)?));
    }
    Ok((ts, ids))
}

/// The Python call `raycast_all`: reads the rays, casts them with the GIL released (`cast`,
/// see [`all`]) and shapes the result: the `(2, n)` ray indices and ids, and the `t`s.
pub(crate) fn all_call<'py, S, C>(
    origins: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
    max_t: f64,
    cast: C,
) -> PyResult<Arrays<'py>>
where
    S: PyScalar,
    C: FnOnce(&[Ray<S>]) -> (Vec<i64>, Vec<i64>, Vec<S>) + Send,
{
    let py = origins.py();
    let (rays, _) = read::<S>(origins, directions, max_t)?;
    let (queries, found, ts) = py.detach(|| cast(&rays));
    let n = found.len();
    let mut both = queries;
    both.extend(found);
    Ok((vec2(py, both, 2, n, false)?, vec1(py, ts)))
}

//! `spatix.KdTree`: the static kd-tree over points, with scipy's `cKDTree.query` shape.

use core::ops::ControlFlow;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyImportError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PySet, PyTuple};
use spatix::{Aabb, KdTree, KdTreeConfig, KdTreeView, Point, Scalar, SpatialQuery};

use crate::array::{
    PyScalar, Rows, bad_row, check_points, first_bad_point, is_float32, point, points, vec1, vec2,
};
use crate::batch::{self, Arrays, Workers};
use crate::fixed::{Fixed, Saved, dispatch_fixed, open_kd_tree};
use crate::join;

/// A static kd-tree over 2D points, built once and queried many times: k-nearest
/// neighbours shaped like ``scipy.spatial.cKDTree.query``, and radius queries.
///
/// Parameters
/// ----------
/// points : array_like, shape (n, 2)
///     The points. ``float32`` arrays are indexed in float32, anything else in float64
///     (never rounded); other dtypes and non-contiguous arrays are converted.
/// leafsize : int, default 16
///     Most points a leaf holds (1 to 65536), as scipy's and pykdtree's ``leafsize``:
///     larger builds faster and answers a little slower (1 builds as 2 does: the answers
///     are the same).
///
/// Raises
/// ------
/// ValueError
///     For another shape, or a NaN or infinite coordinate (the message names the row).
///
/// Examples
/// --------
/// >>> import numpy as np, spatix
/// >>> tree = spatix.KdTree(np.array([[0.0, 0.0], [3.0, 4.0], [10.0, 0.0]]))
/// >>> tree.query([[3.0, 3.0]], k=2)
/// (array([[1.        , 4.24264069]]), array([[1, 0]]))
#[pyclass(name = "KdTree", module = "spatix", frozen)]
pub(crate) struct PyKdTree {
    tree: Held,
}

/// The tree built or loaded, or read in place, in either precision.
type Held = Fixed<
    KdTree<f32, u32>,
    KdTree<f64, u32>,
    KdTreeView<'static, f32, u32>,
    KdTreeView<'static, f64, u32>,
>;

/// Builds a tree of the `(n, 2)` points of `obj` in precision `S`, the GIL released.
fn build<S: PyScalar>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    config: KdTreeConfig,
) -> PyResult<KdTree<S, u32>> {
    let rows = Rows::<S>::read(obj, 2, "points")?;
    let flat = rows.flat();
    match py.detach(|| KdTree::with_config(points(flat).zip(0u32..), config)) {
        Ok(tree) => Ok(tree),
        Err(spatix::Error::InvalidAabb) => match first_bad_point(flat) {
            Some(row) => Err(bad_row("points", flat, 2, row)),
            None => Err(PyValueError::new_err("points: invalid coordinates")),
        },
        Err(e) => Err(PyValueError::new_err(format!("points: {e}"))),
    }
}

/// A point's position in the input the tree was built from: its value (the tree's handles
/// name positions in tree order).
fn position<S: spatix::Scalar>(tree: &impl SpatialQuery<S, u32>, handle: spatix::Handle) -> i64 {
    tree.get(handle).map_or(-1, |item| i64::from(*item.value))
}

/// `ValueError` unless `p` and `eps` are scipy's defaults, the one metric spatix computes:
/// exact Euclidean distances.
fn euclidean(p: f64, eps: f64) -> PyResult<()> {
    if p != 2.0 || eps != 0.0 {
        return Err(PyValueError::new_err(format!(
            "only p=2 (Euclidean distance) and eps=0 (exact answers) are supported, got p={p}, \
             eps={eps}"
        )));
    }
    Ok(())
}

/// `ValueError` for a NaN `r` (named `what`); any other radius is one (a negative one finds
/// nothing).
fn radius(what: &str, r: f64) -> PyResult<()> {
    if r.is_nan() {
        return Err(PyValueError::new_err(format!(
            "{what} must be a number, got {r}"
        )));
    }
    Ok(())
}

/// scipy's `k`: a number of nearest neighbours, or the ranks (from 1) of those to return.
enum Ks {
    /// The `k` nearest.
    Count(usize),
    /// The neighbours of these ranks, in this order.
    Ranks(Vec<usize>),
}

impl Ks {
    /// Reads `k`: an integer, or a sequence of integers, each at least 1.
    ///
    /// # Errors
    /// `ValueError` for a `k` below 1 or an empty sequence, `OverflowError` for an integer
    /// beyond 64 bits, `TypeError` for anything else.
    fn read(k: &Bound<'_, PyAny>) -> PyResult<Self> {
        let at_least_one = |n: i64| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| PyValueError::new_err(format!("k must be at least 1, got {n}")))
        };
        if let Ok(n) = k.extract::<i64>() {
            return at_least_one(n).map(Self::Count);
        }
        if k.is_instance_of::<PyInt>() {
            return Err(PyOverflowError::new_err(format!("k = {k} is too large")));
        }
        let ranks = k.extract::<Vec<i64>>().map_err(|_| {
            PyTypeError::new_err(format!(
                "k must be an int or a sequence of ints, got {}",
                k.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })?;
        if ranks.is_empty() {
            return Err(PyValueError::new_err("k must not be an empty sequence"));
        }
        ranks
            .into_iter()
            .map(at_least_one)
            .collect::<PyResult<_>>()
            .map(Self::Ranks)
    }

    /// How many nearest neighbours the search must find.
    fn most(&self) -> usize {
        match self {
            Self::Count(k) => *k,
            Self::Ranks(ranks) => ranks.iter().copied().max().unwrap_or(1),
        }
    }

    /// Neighbours returned per query point.
    fn len(&self) -> usize {
        match self {
            Self::Count(k) => *k,
            Self::Ranks(ranks) => ranks.len(),
        }
    }

    /// The columns of the `(m, most)` results `d` and `i` that `k` asks for.
    fn pick<S: Copy>(&self, d: Vec<S>, i: Vec<i64>) -> (Vec<S>, Vec<i64>) {
        let Self::Ranks(ranks) = self else {
            return (d, i);
        };
        let most = self.most();
        let rows = d.len() / most;
        let at: Vec<usize> = (0..rows)
            .flat_map(|q| ranks.iter().map(move |r| q * most + r - 1))
            .collect();
        (
            at.iter().map(|&a| d[a]).collect(),
            at.iter().map(|&a| i[a]).collect(),
        )
    }
}

/// The tree's points, indexed by their row in the input it was built from.
fn by_row<S: Scalar>(tree: &impl SpatialQuery<S, u32>) -> Vec<Point<S>> {
    let mut out = vec![Point::new(S::ZERO, S::ZERO); SpatialQuery::<S, u32>::len(tree)];
    for item in SpatialQuery::<S, u32>::iter(tree) {
        out[*item.value as usize] = item.aabb.min;
    }
    out
}

/// Every pair `i < j` of `points` at most `r` apart (as [`Aabb::within_distance`] decides,
/// which the radius search uses too), as flat `[i, j, ...]` sorted: [`batch::sorted_pairs`]
/// of boxes of side `r` around the points (boxes intersect where
/// points are at most `r` apart on each axis), widened by the coordinates' rounding, each
/// candidate then tested. One pass instead of a radius search per point. `None` where the
/// boxes do not fit the type (an infinite `r`, coordinates near the largest finite value).
///
/// # Errors
/// The message when the threads cannot start.
fn close_pairs<S: PyScalar>(
    points: &[Point<S>],
    r: S,
    workers: Workers,
) -> Result<Option<Vec<i64>>, String> {
    let largest = points.iter().fold(0.0f64, |m, p| {
        m.max(p.x.to_f64().abs()).max(p.y.to_f64().abs())
    });
    let slack = S::RELATIVE_SLACK.to_f64();
    let half = S::from_f64((0.5 * r.to_f64() + largest * slack) * (1.0 + slack));
    let mut flat = Vec::with_capacity(4 * points.len());
    for p in points {
        let b = [p.x - half, p.y - half, p.x + half, p.y + half];
        if !b.iter().all(|v| v.is_finite()) {
            return Ok(None);
        }
        flat.extend(b);
    }
    let keys = batch::sorted_pairs(&flat, workers)?;
    Ok(Some(
        keys.into_iter()
            .map(|key| ((key >> 32) as usize, (key & u64::from(u32::MAX)) as usize))
            .filter(|&(i, j)| {
                let a = points[i];
                Aabb { min: a, max: a }.within_distance(points[j], r)
            })
            .flat_map(|(i, j)| [i as i64, j as i64])
            .collect(),
    ))
}

/// Every pair `i < j` of `points` at most `r` apart by one radius search per point, as flat
/// `[i, j, ...]` sorted: [`close_pairs`]'s fallback for boxes that do not fit the type.
///
/// # Errors
/// The message when the threads cannot start.
fn radius_pairs<S: PyScalar>(
    tree: &(impl SpatialQuery<S, u32> + Sync),
    points: &[Point<S>],
    r: S,
    workers: Workers,
) -> Result<Vec<i64>, String> {
    let (offsets, found) = batch::per_query(points.len(), workers, |i, found| {
        let start = found.len();
        let _ = tree.within(points[i], r, |item| {
            let j = i64::from(*item.value);
            if j > i as i64 {
                found.push(j);
            }
            ControlFlow::Continue(())
        });
        found[start..].sort_unstable();
    })?;
    let mut pairs = Vec::with_capacity(2 * found.len());
    for (i, w) in offsets.windows(2).enumerate() {
        for &j in &found[w[0]..w[1]] {
            pairs.extend_from_slice(&[i as i64, j]);
        }
    }
    Ok(pairs)
}

/// The radii of `r` (a number, or one per query point: anything numpy broadcasts to
/// `(m,)`), checked.
///
/// # Errors
/// `ValueError` for values that are not numbers, a shape that does not broadcast, or a NaN
/// radius (the message names its position); a negative one finds nothing.
fn radii(r: &Bound<'_, PyAny>, m: usize) -> PyResult<Vec<f64>> {
    let numpy = r.py().import("numpy")?;
    let radii = numpy
        .getattr("asarray")?
        .call1((r, "float64"))
        .and_then(|a| numpy.getattr("broadcast_to")?.call1((a, (m,))))
        .and_then(|a| numpy.getattr("ascontiguousarray")?.call1((a,)))
        .map_err(|e| {
            PyValueError::new_err(format!(
                "r must be a number or one per query point ({m}): {}",
                e.value(r.py())
            ))
        })?;
    let radii = radii.cast::<PyArray1<f64>>()?.to_vec()?;
    if let Some(at) = radii.iter().position(|r| r.is_nan()) {
        return Err(PyValueError::new_err(format!(
            "r[{at}] = {} must be a number",
            radii[at]
        )));
    }
    Ok(radii)
}

#[pymethods]
impl PyKdTree {
    #[new]
    #[pyo3(signature = (points, leafsize = 16))]
    fn new(py: Python<'_>, points: &Bound<'_, PyAny>, leafsize: u32) -> PyResult<Self> {
        let config = KdTreeConfig {
            bucket_size: leafsize.max(2),
            ..KdTreeConfig::default()
        };
        if leafsize == 0 || config.validate().is_err() {
            return Err(PyValueError::new_err(format!(
                "leafsize = {leafsize}: a leaf holds 1 to 65536 points"
            )));
        }
        let tree = if is_float32(points) {
            Fixed::F32(build(py, points, config)?)
        } else {
            Fixed::F64(build(py, points, config)?)
        };
        Ok(Self { tree })
    }

    /// The nearest points of each row of ``x``: ``scipy.spatial.cKDTree.query``, with its
    /// arguments, shapes, dtypes and fill values.
    ///
    /// Parameters
    /// ----------
    /// x : array_like, shape (2,), (m, 2) or (..., 2)
    ///     One query point, ``m`` of them, or an array of any number of dimensions whose last
    ///     holds the points (the results then take its leading shape, as scipy's).
    /// k : int or sequence of int, default 1
    ///     As scipy: the ``k`` nearest neighbours, or, for a sequence, the neighbours of
    ///     those ranks (1-based: ``k=[1, 3]`` is the nearest and the third nearest).
    /// eps : float, default 0
    ///     Only 0 (exact answers): scipy's approximate search is not offered.
    /// p : float, default 2
    ///     Only 2 (Euclidean distance): scipy's other Minkowski norms are not offered.
    /// distance_upper_bound : float, default inf
    ///     As scipy: only neighbours at a distance strictly below it are returned.
    /// workers : int, default 1
    ///     As scipy: threads to spread the queries over; -1 for every core.
    ///
    /// Returns
    /// -------
    /// d : float or ndarray
    ///     Euclidean distances, ascending along each row: as scipy, a Python ``float`` (and
    ///     ``int`` for ``i``) for one point and ``k = 1``, shape ``(k,)`` for one point, ``(m,)`` for ``k = 1`` and ``(m, k)``
    ///     otherwise (``(m, len(k))`` and ``(len(k),)`` for a sequence). ``inf`` where a
    ///     neighbour is missing (fewer than ``k`` points, or none below
    ///     ``distance_upper_bound``). ``float64``, as scipy's, except for a tree built from
    ///     ``float32`` points, whose distances are ``float32``.
    /// i : int or ndarray of intp
    ///     Same shape: the neighbours' rows in the ``points`` the tree was built from;
    ///     ``len(tree)`` (scipy's ``self.n``) where a neighbour is missing.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``p != 2``, ``eps != 0``, a ``k`` below 1, a NaN ``distance_upper_bound``,
    ///     bad ``workers``, ``x`` of another shape or a NaN or infinite coordinate (the
    ///     message names the row).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> tree = spatix.KdTree(np.array([[0.0, 0.0], [3.0, 4.0], [10.0, 0.0]]))
    /// >>> tree.query([3.0, 3.0])
    /// (1.0, 1)
    /// >>> tree.query([[3.0, 3.0], [9.0, 0.0]], k=[1, 3])
    /// (array([[1.        , 7.61577311],
    ///        [1.        , 9.        ]]), array([[1, 2],
    ///        [2, 0]]))
    /// >>> tree.query([3.0, 3.0], k=2, distance_upper_bound=2.0)
    /// (array([ 1., inf]), array([1, 3]))
    #[pyo3(signature = (x, k = None, eps = 0.0, p = 2.0, distance_upper_bound = f64::INFINITY, workers = 1))]
    #[pyo3(text_signature = "(self, x, k=1, eps=0, p=2, distance_upper_bound=inf, workers=1)")]
    fn query<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        k: Option<&Bound<'py, PyAny>>,
        eps: f64,
        p: f64,
        distance_upper_bound: f64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        if let Some((flat, leading)) = points_of_many_dimensions(x)? {
            let (d, i) = self.query(&flat, k, eps, p, distance_upper_bound, workers)?;
            let shape = |a: &Bound<'py, PyAny>| -> PyResult<Bound<'py, PyTuple>> {
                let of_rows: Vec<usize> = a.getattr("shape")?.extract()?;
                let whole: Vec<usize> = leading.iter().chain(&of_rows[1..]).copied().collect();
                PyTuple::new(x.py(), whole)
            };
            let (d_shape, i_shape) = (shape(&d)?, shape(&i)?);
            return Ok((
                d.call_method1("reshape", (d_shape,))?,
                i.call_method1("reshape", (i_shape,))?,
            ));
        }
        euclidean(p, eps)?;
        if distance_upper_bound.is_nan() {
            return Err(PyValueError::new_err(
                "distance_upper_bound must not be NaN",
            ));
        }
        let ks = k.map_or(Ok(Ks::Count(1)), Ks::read)?;
        let workers = Workers::new(workers)?;
        let py = x.py();
        dispatch_fixed!(&self.tree, tree: S => {
            let missing = SpatialQuery::<S, u32>::len(tree) as i64;
            let rows = Rows::<S>::read_one_or_many(x, 2, "x")?;
            let flat = rows.flat();
            check_points("x", flat)?;
            let most = ks.most();
            batch::results_fit::<S>(rows.len, most)?;
            let (d, i) = py
                .detach(|| {
                    let (mut d, mut i) =
                        batch::nearest(tree, flat, most, workers, missing, |h| position(tree, h))?;
                    // An infinite bound keeps everything found, distances beyond the
                    // type's range (infinite) included.
                    if distance_upper_bound < f64::INFINITY {
                        for (d, i) in d.iter_mut().zip(&mut i) {
                            if d.to_f64() >= distance_upper_bound {
                                *d = S::INFINITY;
                                *i = missing;
                            }
                        }
                    }
                    Ok(ks.pick(d, i))
                })
                .map_err(batch::pool_error)?;
            let (cols, squeeze) = (ks.len(), matches!(ks, Ks::Count(1)));
            if !rows.single {
                return Ok((
                    vec2(py, d, rows.len, cols, squeeze)?,
                    vec2(py, i, rows.len, cols, squeeze)?,
                ));
            }
            let (d, i) = (vec1(py, d), vec1(py, i));
            if squeeze {
                Ok((d.call_method0("item")?, i.call_method0("item")?))
            } else {
                Ok((d, i))
            }
        })
    }

    /// Every point within distance ``r`` (inclusive) of each row of ``x``.
    ///
    /// Returns
    /// -------
    /// query_index, point_index : ndarray of int64
    ///     One entry per (query, point) pair found, grouped by query in query order (flat
    ///     arrays, not lists of lists).
    #[pyo3(signature = (x, r, workers = 1))]
    fn query_radius<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        r: f64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        radius("r", r)?;
        dispatch_fixed!(&self.tree, tree: S => {
            batch::hits_call::<S, _>(x, 2, "x", workers, |flat, workers| {
                batch::within(tree, flat, batch::Radii::One(S::from_f64(r)), workers, |h| {
                    position(tree, h)
                })
            })
        })
    }

    /// The points within distance ``r`` (inclusive) of each row of ``x``:
    /// ``scipy.spatial.cKDTree.query_ball_point``, with its arguments and output.
    ///
    /// Parameters
    /// ----------
    /// x : array_like, shape (2,) or (m, 2)
    ///     One query point, or ``m`` of them.
    /// r : float or array_like of float
    ///     As scipy: one radius, or one per query point (broadcast to ``(m,)``).
    /// p : float, default 2
    ///     Only 2 (Euclidean distance).
    /// eps : float, default 0
    ///     Only 0 (exact answers).
    /// workers : int, default 1
    ///     As scipy: threads to spread the queries over; -1 for every core.
    /// return_sorted : bool or None, default None
    ///     As scipy, ``False`` leaves each list in the tree's order; ``None`` and ``True``
    ///     sort them (scipy leaves a single point's list unsorted for ``None``: sorted is
    ///     one of the orders it allows).
    /// return_length : bool, default False
    ///     As scipy: return the number of points found instead of the points.
    ///
    /// Returns
    /// -------
    /// list of int, or ndarray of object
    ///     As scipy: for one point, the list of the rows (in ``points``) found; for ``m``
    ///     points, an ``(m,)`` object array of such lists. With ``return_length``, the
    ///     counts: an ``intp`` scalar for one point, else an ``(m,)`` array of ``intp``.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``p != 2``, ``eps != 0``, a NaN radius (a negative one finds nothing; scipy's
    ///     squares it), a shape of ``r`` that does not broadcast, bad ``workers``, ``x`` of
    ///     another shape or a NaN or infinite coordinate (the message names the row).
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> tree = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]]))
    /// >>> tree.query_ball_point([0.0, 0.0], 1.0)
    /// [0, 1]
    /// >>> tree.query_ball_point([[0.0, 0.0], [3.0, 0.0]], [0.5, 2.0])
    /// array([list([0]), list([1, 2])], dtype=object)
    /// >>> tree.query_ball_point([[0.0, 0.0], [3.0, 0.0]], 2.0, return_length=True)
    /// array([2, 2])
    #[pyo3(signature = (x, r, p = 2.0, eps = 0.0, workers = 1, return_sorted = None, return_length = false))]
    #[allow(clippy::too_many_arguments)]
    fn query_ball_point<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        r: &Bound<'py, PyAny>,
        p: f64,
        eps: f64,
        workers: i64,
        return_sorted: Option<bool>,
        return_length: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        euclidean(p, eps)?;
        let workers = Workers::new(workers)?;
        let py = x.py();
        let sorted = return_sorted != Some(false);
        let (offsets, found, single) = dispatch_fixed!(&self.tree, tree: S => {
            let rows = Rows::<S>::read_one_or_many(x, 2, "x")?;
            let flat = rows.flat();
            check_points("x", flat)?;
            let radii = radii(r, rows.len)?;
            let ball = |q: usize, mut visit: Box<dyn FnMut(i64) + '_>| {
                let _ = tree.within(point(flat, q), S::from_f64(radii[q]), |item| {
                    visit(i64::from(*item.value));
                    ControlFlow::Continue(())
                });
            };
            let (offsets, found) = py
                .detach(|| {
                    if return_length {
                        let (offsets, _) = batch::per_query(rows.len, workers, |q, found| {
                            ball(q, Box::new(|_| found.push(())));
                        })?;
                        return Ok((offsets, Vec::new()));
                    }
                    batch::per_query(rows.len, workers, |q, found| {
                        let start = found.len();
                        ball(q, Box::new(|i| found.push(i)));
                        if sorted {
                            found[start..].sort_unstable();
                        }
                    })
                })
                .map_err(batch::pool_error)?;
            (offsets, found, rows.single)
        });
        if return_length {
            let counts = vec1(
                py,
                offsets.windows(2).map(|w| (w[1] - w[0]) as i64).collect(),
            );
            return if single {
                counts.get_item(0)
            } else {
                Ok(counts)
            };
        }
        let lists = offsets
            .windows(2)
            .map(|w| PyList::new(py, &found[w[0]..w[1]]).map(Bound::unbind))
            .collect::<PyResult<Vec<Py<PyList>>>>()?;
        if single {
            return Ok(lists[0].bind(py).clone().into_any());
        }
        let objects: Vec<Py<PyAny>> = lists.into_iter().map(Py::into_any).collect();
        Ok(PyArray1::from_vec(py, objects).into_any())
    }

    /// Every pair of points within distance ``r`` (inclusive) of each other:
    /// ``scipy.spatial.cKDTree.query_pairs``, with its arguments and output.
    ///
    /// Parameters
    /// ----------
    /// r : float
    ///     The distance.
    /// p : float, default 2
    ///     Only 2 (Euclidean distance).
    /// eps : float, default 0
    ///     Only 0 (exact answers).
    /// output_type : {'set', 'ndarray'}, default 'set'
    ///     As scipy: a set of ``(i, j)`` tuples, or an ``(p, 2)`` array of ``intp``.
    /// workers : int, default 1
    ///     Threads to spread the search over; -1 for every core (spatix's addition: scipy's
    ///     ``query_pairs`` runs on one).
    ///
    /// Returns
    /// -------
    /// set of tuple or ndarray of intp
    ///     The pairs of rows ``i < j`` (in ``points``); the array sorted by ``i``, then ``j``.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``p != 2``, ``eps != 0``, a NaN ``r`` (a negative one finds nothing; scipy's
    ///     squares it), another ``output_type`` or bad ``workers``.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> tree = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0], [0.0, 1.0]]))
    /// >>> sorted(tree.query_pairs(1.0))
    /// [(0, 1), (0, 3)]
    /// >>> tree.query_pairs(1.5, output_type="ndarray")
    /// array([[0, 1],
    ///        [0, 3],
    ///        [1, 3]])
    #[pyo3(signature = (r, p = 2.0, eps = 0.0, output_type = "set", workers = 1))]
    fn query_pairs<'py>(
        &self,
        py: Python<'py>,
        r: f64,
        p: f64,
        eps: f64,
        output_type: &str,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        euclidean(p, eps)?;
        radius("r", r)?;
        if !matches!(output_type, "set" | "ndarray") {
            return Err(PyValueError::new_err(format!(
                "output_type must be 'set' or 'ndarray', got {output_type:?}"
            )));
        }
        let workers = Workers::new(workers)?;
        let pairs = dispatch_fixed!(&self.tree, tree: S => py.detach(|| {
            if r < 0.0 {
                return Ok(Vec::new());
            }
            let points = by_row(tree);
            let r = S::from_f64(r);
            match close_pairs(&points, r, workers)? {
                Some(pairs) => Ok(pairs),
                None => radius_pairs(tree, &points, r, workers),
            }
        }))
        .map_err(batch::pool_error)?;
        if output_type == "ndarray" {
            let n = pairs.len() / 2;
            return vec2(py, pairs, n, 2, false);
        }
        Ok(PySet::new(py, pairs.chunks_exact(2).map(|p| (p[0], p[1])))?.into_any())
    }

    /// The distances of every pair of a point of this tree and a point of ``other`` at
    /// most ``max_distance`` apart: ``scipy.spatial.cKDTree.sparse_distance_matrix``, with
    /// its arguments and output.
    ///
    /// Parameters
    /// ----------
    /// other : KdTree
    ///     The other tree (it may be this one). Where the two trees' dtypes differ, this
    ///     tree's points are converted to ``other``'s.
    /// max_distance : float
    ///     The largest distance kept (inclusive).
    /// p : float, default 2
    ///     Only 2 (Euclidean distance).
    /// output_type : {'dok_matrix', 'coo_matrix', 'dict', 'ndarray'}, default 'dok_matrix'
    ///     As scipy: a ``scipy.sparse`` matrix of shape ``(len(self), len(other))`` (these
    ///     two need scipy), a dict ``{(i, j): distance}``, or a record array with fields
    ///     ``i``, ``j`` (``intp``) and ``v`` (``float64``), sorted by ``i``, then ``j``.
    ///     Pairs at distance 0 are stored (explicit zeros), as scipy stores them.
    /// workers : int, default 1
    ///     Threads to spread the search over; -1 for every core (spatix's addition).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``p != 2``, a NaN ``max_distance`` (a negative one finds nothing), another
    ///     ``output_type`` or bad ``workers``.
    /// ImportError
    ///     For ``'dok_matrix'`` or ``'coo_matrix'`` without scipy installed.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> a = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0]]))
    /// >>> b = spatix.KdTree(np.array([[0.0, 1.0], [5.0, 5.0]]))
    /// >>> a.sparse_distance_matrix(b, 1.5, output_type="dict")
    /// {(0, 0): 1.0, (1, 0): 1.4142135623730951}
    /// >>> a.sparse_distance_matrix(b, 1.5, output_type="ndarray")["v"]
    /// array([1.        , 1.41421356])
    #[pyo3(signature = (other, max_distance, p = 2.0, output_type = "dok_matrix", workers = 1))]
    fn sparse_distance_matrix<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyKdTree>,
        max_distance: f64,
        p: f64,
        output_type: &str,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        euclidean(p, 0.0)?;
        radius("max_distance", max_distance)?;
        let sparse = match output_type {
            "dok_matrix" | "coo_matrix" => Some(py.import("scipy.sparse").map_err(|e| {
                PyImportError::new_err(format!(
                    "sparse_distance_matrix(output_type={output_type:?}) needs scipy ({e}): \
                     install scipy, or ask for output_type='dict' or 'ndarray'"
                ))
            })?),
            "dict" | "ndarray" => None,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "output_type must be 'dok_matrix', 'coo_matrix', 'dict' or 'ndarray', got \
                     {output_type:?}"
                )));
            }
        };
        let workers = Workers::new(workers)?;
        let shape = (self.__len__(), other.get().__len__());
        let (offsets, found) = dispatch_fixed!(&self.tree, mine => {
            dispatch_fixed!(&other.get().tree, theirs: T => py.detach(|| {
                let points: Vec<Point<T>> = converted(&by_row(mine));
                let limit = T::from_f64(max_distance);
                batch::per_query(points.len(), workers, |i, found| {
                    let q = points[i];
                    let start = found.len();
                    let _ = theirs.within(q, limit, |item| {
                        found.push((i64::from(*item.value), q.distance(item.aabb.min).to_f64()));
                        ControlFlow::Continue(())
                    });
                    found[start..].sort_unstable_by_key(|&(j, _)| j);
                })
            }))
        })
        .map_err(batch::pool_error)?;
        let i: Vec<i64> = offsets
            .windows(2)
            .enumerate()
            .flat_map(|(i, w)| core::iter::repeat_n(i as i64, w[1] - w[0]))
            .collect();
        if output_type == "dict" {
            let dict = PyDict::new(py);
            for (&i, &(j, v)) in i.iter().zip(&found) {
                dict.set_item((i, j), v)?;
            }
            return Ok(dict.into_any());
        }
        let (j, v): (Vec<i64>, Vec<f64>) = found.into_iter().unzip();
        let (i, j, v) = (vec1(py, i), vec1(py, j), vec1(py, v));
        let Some(sparse) = sparse else {
            let numpy = py.import("numpy")?;
            let fields = [("i", "intp"), ("j", "intp"), ("v", "float64")];
            let kwargs = PyDict::new(py);
            kwargs.set_item("align", true)?;
            let dtype = numpy
                .getattr("dtype")?
                .call((fields.to_vec(),), Some(&kwargs))?;
            let records = numpy.getattr("empty")?.call1((i.len()?, dtype))?;
            for (name, values) in [("i", i), ("j", j), ("v", v)] {
                records.set_item(name, values)?;
            }
            return Ok(records);
        };
        let coo = sparse.getattr("coo_matrix")?.call1(((v, (i, j)), shape))?;
        if output_type == "coo_matrix" {
            Ok(coo)
        } else {
            coo.call_method0("todok")
        }
    }

    /// The number of pairs of a point of this tree and a point of ``other`` at most ``r``
    /// apart: ``scipy.spatial.cKDTree.count_neighbors``, with its arguments and output, found
    /// in one pass over both sets (``other``'s points in a grid of cells at least ``r`` wide),
    /// with the GIL released.
    ///
    /// Parameters
    /// ----------
    /// other : KdTree
    ///     The other tree (it may be this one: each point then counts itself). Where the two
    ///     trees' dtypes differ, this tree's points are converted to ``other``'s.
    /// r : float or 1-D array_like of float
    ///     The distance, or several (each counted; an infinite one counts every pair, a
    ///     negative one none).
    /// p : float, default 2
    ///     Only 2 (Euclidean distance).
    /// weights : None
    ///     Only None (every pair counts 1).
    /// cumulative : bool, default True
    ///     As scipy: the pairs at most ``r[k]`` apart; with False, those more than
    ///     ``r[k - 1]`` and at most ``r[k]`` apart (``r`` non-decreasing, the bins' edges).
    /// workers : int, default 1
    ///     Threads to spread the points over; -1 for every core (spatix's addition).
    ///
    /// Returns
    /// -------
    /// int or ndarray of int64
    ///     One count for a number ``r``, one per radius for an array.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``p != 2``, weights, a NaN radius, an ``r`` of more than one dimension, a
    ///     decreasing ``r`` with ``cumulative=False``, or bad ``workers``.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> a = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0]]))
    /// >>> b = spatix.KdTree(np.array([[0.0, 1.0], [5.0, 5.0]]))
    /// >>> a.count_neighbors(b, 1.5)
    /// 2
    /// >>> a.count_neighbors(b, [1.0, 1.5, 10.0])
    /// array([1, 2, 4])
    #[pyo3(signature = (other, r, p = 2.0, weights = None, cumulative = true, workers = 1))]
    #[allow(clippy::too_many_arguments)] // scipy's arguments, and workers=
    fn count_neighbors<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyKdTree>,
        r: &Bound<'py, PyAny>,
        p: f64,
        weights: Option<&Bound<'py, PyAny>>,
        cumulative: bool,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        euclidean(p, 0.0)?;
        if weights.is_some_and(|w| !w.is_none()) {
            return Err(PyValueError::new_err(
                "weights are not supported: count_neighbors counts each pair once",
            ));
        }
        let (radii, single) = radius_list(r)?;
        if !cumulative && radii.windows(2).any(|w| w[1] < w[0]) {
            return Err(PyValueError::new_err(
                "with cumulative=False, r must be non-decreasing (the bins' edges)",
            ));
        }
        let workers = Workers::new(workers)?;
        let every = (self.__len__() * other.get().__len__()) as u64;
        let counts = dispatch_fixed!(&self.tree, mine => {
            dispatch_fixed!(&other.get().tree, theirs: T => py.detach(|| {
                // In the trees' own order (counts need no positions; nearby points together).
                let a: Vec<Point<T>> = converted(&in_tree_order(mine));
                let b = in_tree_order::<T>(theirs);
                let mut edges: Vec<T> = radii
                    .iter()
                    .map(|&r| T::from_f64(r))
                    .filter(|r| r.is_finite() && *r >= T::ZERO)
                    .collect();
                edges.sort_unstable_by(|x, y| x.partial_cmp(y).expect("finite"));
                edges.dedup();
                let binned = match join::binned(&a, &b, &edges, workers)? {
                    Some(binned) => binned,
                    None => binned_by_searches(theirs, &a, &edges, workers)?,
                };
                let at_most: Vec<u64> = binned
                    .iter()
                    .scan(0, |sum, n| {
                        *sum += n;
                        Some(*sum)
                    })
                    .collect();
                Ok::<_, String>(
                    radii
                        .iter()
                        .map(|&r| {
                            let r = T::from_f64(r);
                            if r.partial_cmp(&T::ZERO).is_none_or(|o| o.is_lt()) {
                                0
                            } else if !r.is_finite() {
                                every
                            } else {
                                let k = edges.partition_point(|&e| e < r);
                                at_most[k]
                            }
                        })
                        .collect::<Vec<u64>>(),
                )
            }))
        })
        .map_err(batch::pool_error)?;
        let counts: Vec<i64> = if cumulative {
            counts.iter().map(|&c| c as i64).collect()
        } else {
            let mut before = 0;
            counts
                .iter()
                .map(|&c| {
                    let bin = c - before;
                    before = c;
                    bin as i64
                })
                .collect()
        };
        if single {
            return Ok(counts[0].into_pyobject(py)?.into_any());
        }
        Ok(vec1(py, counts))
    }

    /// For each point of this tree, the points of ``other`` at most ``r`` away:
    /// ``scipy.spatial.cKDTree.query_ball_tree``, with its arguments and output, found in
    /// one pass over both sets (as ``count_neighbors``), with the GIL released.
    ///
    /// Parameters
    /// ----------
    /// other : KdTree
    ///     The other tree (it may be this one). Where the two trees' dtypes differ, this
    ///     tree's points are converted to ``other``'s.
    /// r : float
    ///     The distance (a negative one finds nothing).
    /// p : float, default 2
    ///     Only 2 (Euclidean distance).
    /// eps : float, default 0
    ///     Only 0 (exact answers).
    /// workers : int, default 1
    ///     Threads to spread the points over; -1 for every core (spatix's addition).
    ///
    /// Returns
    /// -------
    /// list of list of int
    ///     Row ``i``: the indices (in ``other``) of the points within ``r`` of point ``i``,
    ///     ascending.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, spatix
    /// >>> a = spatix.KdTree(np.array([[0.0, 0.0], [1.0, 0.0]]))
    /// >>> b = spatix.KdTree(np.array([[0.0, 1.0], [5.0, 5.0], [1.0, 0.5]]))
    /// >>> a.query_ball_tree(b, 1.2)
    /// [[0, 2], [2]]
    #[pyo3(signature = (other, r, p = 2.0, eps = 0.0, workers = 1))]
    fn query_ball_tree<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyKdTree>,
        r: f64,
        p: f64,
        eps: f64,
        workers: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        euclidean(p, eps)?;
        radius("r", r)?;
        let workers = Workers::new(workers)?;
        let (offsets, found) = dispatch_fixed!(&self.tree, mine => {
            dispatch_fixed!(&other.get().tree, theirs: T => py.detach(|| {
                let (a, b) = (converted::<_, T>(&by_row(mine)), by_row::<T>(theirs));
                let r = T::from_f64(r);
                match join::neighbours(&a, &b, r, workers)? {
                    Some(found) => Ok(found),
                    None => batch::per_query(a.len(), workers, |i, found| {
                        let start = found.len();
                        let _ = theirs.within(a[i], r, |item| {
                            found.push(i64::from(*item.value));
                            ControlFlow::Continue(())
                        });
                        found[start..].sort_unstable();
                    }),
                }
            }))
        })
        .map_err(batch::pool_error)?;
        let rows = offsets
            .windows(2)
            .map(|w| PyList::new(py, &found[w[0]..w[1]]))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, rows)
    }

    fn __len__(&self) -> usize {
        dispatch_fixed!(&self.tree, tree: S => SpatialQuery::<S, u32>::len(tree))
    }

    /// The points, ``(n, 2)`` float64 in input order (scipy's ``cKDTree.data``; a copy,
    /// exact for a float32 tree).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let flat: Vec<f64> = dispatch_fixed!(&self.tree, tree: S => by_row::<S>(tree)
            .iter()
            .flat_map(|p| [p.x.to_f64(), p.y.to_f64()])
            .collect());
        let n = flat.len() / 2;
        vec2(py, flat, n, 2, false)
    }

    /// The number of points (scipy's ``cKDTree.n``).
    #[getter]
    fn n(&self) -> usize {
        self.__len__()
    }

    /// The dimension, 2 (scipy's ``cKDTree.m``).
    #[getter]
    fn m(&self) -> usize {
        2
    }

    /// The smallest coordinate on each axis, float64 ``(2,)`` (scipy's ``cKDTree.mins``;
    /// zeros for an empty tree, as scipy's).
    #[getter]
    fn mins<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        vec1(py, self.bounds().0.to_vec())
    }

    /// The largest coordinate on each axis, float64 ``(2,)`` (scipy's ``cKDTree.maxes``;
    /// zeros for an empty tree, as scipy's).
    #[getter]
    fn maxes<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        vec1(py, self.bounds().1.to_vec())
    }

    /// The most points a leaf holds (scipy's ``cKDTree.leafsize``).
    #[getter]
    fn leafsize(&self) -> u32 {
        dispatch_fixed!(&self.tree, tree => tree.config().bucket_size)
    }

    /// The tree's byte form, which ``KdTree.from_bytes`` loads without rebuilding (and
    /// ``pickle`` and ``copy.deepcopy`` use); encoded with the GIL released.
    ///
    /// Examples
    /// --------
    /// >>> import pickle, numpy as np, spatix
    /// >>> tree = spatix.KdTree(np.array([[0.0, 0.0], [3.0, 4.0]], dtype=np.float32))
    /// >>> spatix.KdTree.from_bytes(tree.to_bytes()).query([[3.0, 3.0]])
    /// (array([1.], dtype=float32), array([1]))
    /// >>> pickle.loads(pickle.dumps(tree)).dtype
    /// 'float32'
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        crate::to_bytes(py, || dispatch_fixed!(&self.tree, tree => tree.saved()))
    }

    /// The tree whose byte form (``to_bytes``) is ``data``, in the precision it was saved in:
    /// its arrays copied and the tree checked, nothing rebuilt.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For bytes that are not a spatix ``KdTree``'s (cut short, damaged, of another
    ///     version or structure); the message says what is wrong.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Fixed::from_bytes(py, "KdTree", data).map(|tree| Self { tree })
    }

    /// The tree whose byte form (``to_bytes``, or a file it was written to) is the buffer of
    /// ``data``, read in place: nothing copied, nothing built, one pass that checks the
    /// bytes. The tree keeps ``data``'s buffer for as long as it lives, and answers every
    /// query as the tree saved does.
    ///
    /// Parameters
    /// ----------
    /// data : bytes, memoryview, mmap or numpy.memmap
    ///     A read-only, contiguous buffer of bytes: ``bytes``, an ``mmap`` opened with
    ///     ``access=mmap.ACCESS_READ``, a ``numpy.memmap`` with ``mode="r"``. A buffer that
    ///     does not start at a multiple of 64 in memory (a memory map does; a ``bytes`` object
    ///     may not) is copied once to memory that does (``repr`` says ``aligned copy``).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For a writable or non-contiguous buffer, and for bytes that are not a spatix
    ///     ``KdTree``'s in the current format.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> data = spatix.KdTree([[0.0, 0.0], [3.0, 4.0]]).to_bytes()
    /// >>> spatix.KdTree.from_buffer(data).query([[3.0, 3.0]])
    /// (array([1.]), array([1]))
    #[staticmethod]
    fn from_buffer(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Fixed::from_buffer(data, "KdTree", open_kd_tree, open_kd_tree).map(|tree| Self { tree })
    }

    /// Rebuilds a pickled tree: a view over a read-only buffer, else a copy loaded.
    #[staticmethod]
    fn _unpickle(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Fixed::unpickle(data, "KdTree", open_kd_tree, open_kd_tree).map(|tree| Self { tree })
    }

    /// Pickling through the byte form, handed out of band with protocol 5
    /// (``pickle.PickleBuffer``: ``buffer_callback`` receives it, uncopied for a tree read in
    /// place).
    fn __reduce_ex__<'py>(slf: &Bound<'py, Self>, protocol: i64) -> PyResult<Bound<'py, PyTuple>> {
        let tree = &slf.get().tree;
        tree.reduce(
            slf.as_any(),
            protocol,
            || dispatch_fixed!(tree, tree => tree.saved()),
        )
    }

    /// ``"float32"`` or ``"float64"``: the precision the tree was built in.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.tree.dtype()
    }

    fn __repr__(&self) -> String {
        let place = self.tree.place();
        format!(
            "KdTree(<{} points, {}{place}>)",
            self.__len__(),
            self.dtype()
        )
    }
}

/// The points of `tree` in its own order (nearby points together).
fn in_tree_order<S: Scalar>(tree: &impl SpatialQuery<S, u32>) -> Vec<Point<S>> {
    SpatialQuery::<S, u32>::iter(tree)
        .map(|item| item.aabb.min)
        .collect()
}

/// `points` in precision `T`.
fn converted<S: Scalar, T: Scalar>(points: &[Point<S>]) -> Vec<Point<T>> {
    points
        .iter()
        .map(|p| Point::new(T::from_f64(p.x.to_f64()), T::from_f64(p.y.to_f64())))
        .collect()
}

/// The radii of `r`, a number or a 1-D array of numbers (none NaN), and whether it was a
/// number.
///
/// # Errors
/// `ValueError` for anything else.
fn radius_list(r: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, bool)> {
    let py = r.py();
    let numpy = py.import("numpy")?;
    let bad = |e: PyErr| {
        PyValueError::new_err(format!(
            "r must be a number or a 1-D array of numbers: {}",
            e.value(py)
        ))
    };
    let array = numpy
        .getattr("asarray")?
        .call1((r, "float64"))
        .map_err(bad)?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim > 1 {
        return Err(PyValueError::new_err(format!(
            "r must be a number or a 1-D array of numbers, got {ndim} dimensions"
        )));
    }
    let flat = numpy.getattr("ravel")?.call1((array,))?;
    let radii = flat.cast::<PyArray1<f64>>()?.to_vec()?;
    if let Some(at) = radii.iter().position(|r| r.is_nan()) {
        return Err(PyValueError::new_err(format!(
            "r[{at}] = NaN must be a number"
        )));
    }
    Ok((radii, ndim == 0))
}

/// [`join::binned`] by one radius search per point, where no grid can be made.
///
/// # Errors
/// The message when the threads cannot start.
fn binned_by_searches<T: PyScalar>(
    tree: &(impl SpatialQuery<T, u32> + Sync),
    a: &[Point<T>],
    edges: &[T],
    workers: Workers,
) -> Result<Vec<u64>, String> {
    let bins = edges.len();
    let Some(&largest) = edges.last() else {
        return Ok(Vec::new());
    };
    let (_, rows) = batch::per_query(a.len(), workers, |i, out: &mut Vec<u64>| {
        let start = out.len();
        out.resize(start + bins, 0);
        let _ = tree.within(a[i], largest, |item| {
            let d = item.aabb.distance_to_point(a[i]);
            out[start + edges.partition_point(|&e| e < d)] += 1;
            ControlFlow::Continue(())
        });
    })?;
    Ok(join::column_sums(&rows, bins))
}

impl PyKdTree {
    /// The smallest and the largest coordinate on each axis (zeros for an empty tree).
    fn bounds(&self) -> ([f64; 2], [f64; 2]) {
        dispatch_fixed!(&self.tree, tree: S => {
            let mut points = SpatialQuery::<S, u32>::iter(tree).map(|item| item.aabb.min);
            match points.next() {
                None => ([0.0; 2], [0.0; 2]),
                Some(first) => points.fold(
                    ([first.x.to_f64(), first.y.to_f64()], [first.x.to_f64(), first.y.to_f64()]),
                    |(lo, hi), p| {
                        let (x, y) = (p.x.to_f64(), p.y.to_f64());
                        ([lo[0].min(x), lo[1].min(y)], [hi[0].max(x), hi[1].max(y)])
                    },
                ),
            }
        })
    }
}

/// For `x` an array of more than two dimensions whose last holds points (scipy's `(..., 2)`
/// query points): the points as an `(m, 2)` array, and the leading shape; `None` for any other
/// `x` (one point, or `(m, 2)` points, which the caller reads and checks).
///
/// # Errors
/// `ValueError` for such an array whose last dimension is not 2.
fn points_of_many_dimensions<'py>(
    x: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyAny>, Vec<usize>)>> {
    let Ok(array) = x.py().import("numpy")?.call_method1("asarray", (x,)) else {
        return Ok(None);
    };
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    let Some((&last, leading)) = shape.split_last().filter(|_| shape.len() > 2) else {
        return Ok(None);
    };
    if last != 2 {
        return Err(PyValueError::new_err(format!(
            "x: points of 2 coordinates along the last dimension, got shape {shape:?}"
        )));
    }
    let flat = array.call_method1("reshape", ((-1i64, 2i64),))?;
    Ok(Some((flat, leading.to_vec())))
}

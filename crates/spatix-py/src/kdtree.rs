//! `spatix.KdTree`: the static kd-tree over points, with scipy's `cKDTree.query` shape.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use spatix::{ByteForm, KdTree, KdTreeConfig, Scalar, SpatialQuery};

use crate::array::{Coord, Rows, bad_row, first_bad_point, is_float32, points};
use crate::batch::{self, Arrays};
use crate::{Precision, Reduced, dispatch};

/// A static kd-tree over 2D points, built once and queried many times: k-nearest
/// neighbours shaped like ``scipy.spatial.cKDTree.query``, and radius queries.
///
/// Parameters
/// ----------
/// points : array_like, shape (n, 2)
///     The points. ``float32`` arrays are indexed in float32, anything else in float64
///     (never rounded); other dtypes and non-contiguous arrays are converted.
/// leafsize : int, default 16
///     Most points a leaf holds (2 to 65536), as scipy's and pykdtree's ``leafsize``:
///     larger builds faster and answers a little slower.
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
    tree: Precision<KdTree<f32, u32>, KdTree<f64, u32>>,
}

/// Builds a tree of the `(n, 2)` points of `obj` in precision `S`, the GIL released.
fn build<S: Coord>(
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
fn position<S: spatix::Scalar>(tree: &KdTree<S, u32>, handle: spatix::Handle) -> i64 {
    tree.get(handle).map_or(-1, |item| i64::from(*item.value))
}

#[pymethods]
impl PyKdTree {
    #[new]
    #[pyo3(signature = (points, leafsize = 16))]
    fn new(py: Python<'_>, points: &Bound<'_, PyAny>, leafsize: u32) -> PyResult<Self> {
        let config = KdTreeConfig {
            bucket_size: leafsize,
            ..KdTreeConfig::default()
        };
        config
            .validate()
            .map_err(|e| PyValueError::new_err(format!("leafsize: {e}")))?;
        let tree = if is_float32(points) {
            Precision::F32(build(py, points, config)?)
        } else {
            Precision::F64(build(py, points, config)?)
        };
        Ok(Self { tree })
    }

    /// The ``k`` nearest points of each row of ``x``, as ``cKDTree.query`` returns them.
    ///
    /// Parameters
    /// ----------
    /// x : array_like, shape (m, 2)
    ///     Query points.
    /// k : int, default 1
    ///     Number of neighbours.
    /// workers : int, default 1
    ///     Threads to spread the queries over; -1 for every core.
    ///
    /// Returns
    /// -------
    /// distances : ndarray, shape (m,) for k = 1, else (m, k)
    ///     Euclidean distances, ascending along each row, in the tree's dtype; ``inf``
    ///     where the tree has fewer than ``k`` points.
    /// indices : ndarray of int64, same shape
    ///     Positions in ``points``; ``len(tree)`` where there is no neighbour.
    #[pyo3(signature = (x, k = 1, workers = 1))]
    fn query<'py>(&self, x: &Bound<'py, PyAny>, k: usize, workers: i64) -> PyResult<Arrays<'py>> {
        dispatch!(&self.tree, tree: S => {
            let missing = SpatialQuery::<S, u32>::len(tree) as i64;
            batch::nearest_call::<S, _>(x, "x", k, workers, |flat, workers| {
                batch::nearest(tree, flat, k, workers, missing, |h| position(tree, h))
            })
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
        if r.is_nan() || r < 0.0 {
            return Err(PyValueError::new_err(format!(
                "r must be a non-negative number, got {r}"
            )));
        }
        dispatch!(&self.tree, tree: S => {
            batch::hits_call::<S, _>(x, 2, "x", workers, |flat, workers| {
                batch::within(tree, flat, S::from_f64(r), workers, |h| position(tree, h))
            })
        })
    }

    fn __len__(&self) -> usize {
        dispatch!(&self.tree, tree: S => SpatialQuery::<S, u32>::len(tree))
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
        crate::to_bytes(py, || dispatch!(&self.tree, tree => tree.to_bytes()))
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
        Precision::from_bytes(py, "KdTree", data).map(|tree| Self { tree })
    }

    /// Pickling through the byte form: ``KdTree.from_bytes(tree.to_bytes())``.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        crate::reduce(slf.as_any(), slf.get().to_bytes(slf.py()))
    }

    /// ``"float32"`` or ``"float64"``: the precision the tree was built in.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.tree.dtype()
    }

    fn __repr__(&self) -> String {
        format!("KdTree(<{} points, {}>)", self.__len__(), self.dtype())
    }
}

//! `spatix.PackedIndex`: the static packed Hilbert index over boxes.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use spatix::{Aabb, PackedIndex, PackedView, SpatialQuery};

use crate::array::{
    PyScalar, Rows, bad_row, boxes, first_bad_box, first_bad_point, is_float32, not_a_position,
    points, vec1, vec2,
};
use crate::batch::{self, Arrays};
use crate::fixed::{Fixed, Saved, dispatch_fixed, open_packed};
use crate::rays;
use crate::shapely::{self, Ask};

/// A static index over boxes (a packed Hilbert R-tree), built once and queried many
/// times: window queries, every intersecting pair, nearest boxes.
///
/// Parameters
/// ----------
/// boxes : array_like, shape (n, 4) or (n, 2)
///     ``min_x, min_y, max_x, max_y`` per row (the layout of ``shapely.bounds``), or points
///     (boxes of zero size). Boxes are closed: boxes that only touch intersect.
///     ``float32`` arrays are indexed in float32, anything else in float64.
///
/// Raises
/// ------
/// ValueError
///     For another shape, or a box with a NaN or infinite coordinate or min > max (the
///     message names the row).
///
/// Examples
/// --------
/// >>> import spatix
/// >>> index = spatix.PackedIndex([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]])
/// >>> index.pairs()
/// array([[0, 1]])
/// >>> index.query([[2, 2, 5, 5]])
/// array([[0, 0, 0],
///        [0, 1, 2]])
#[pyclass(name = "PackedIndex", module = "spatix", frozen)]
pub(crate) struct PyPackedIndex {
    index: Held,
}

/// The index built or loaded, or read in place, in either precision.
type Held = Fixed<
    PackedIndex<f32, ()>,
    PackedIndex<f64, ()>,
    PackedView<'static, f32, ()>,
    PackedView<'static, f64, ()>,
>;

/// Builds an index of the `(n, 4)` boxes, or `(n, 2)` points, of `obj` in precision `S`, the
/// GIL released.
fn build<S: PyScalar>(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<PackedIndex<S, ()>> {
    let rows = Rows::<S>::read_either(obj, 4, 2, "boxes")?;
    let flat = rows.flat();
    let built = py.detach(|| {
        if rows.cols == 2 {
            PackedIndex::build(points(flat).map(|p| (Aabb { min: p, max: p }, ())))
        } else {
            PackedIndex::build(boxes(flat).map(|b| (b, ())))
        }
    });
    match built {
        Ok(index) => Ok(index),
        Err(spatix::Error::InvalidAabb) => {
            let bad = if rows.cols == 2 {
                first_bad_point(flat)
            } else {
                first_bad_box(flat)
            };
            match bad {
                Some(row) => Err(bad_row("boxes", flat, rows.cols, row)),
                None => Err(PyValueError::new_err("boxes: invalid coordinates")),
            }
        }
        Err(e) => Err(PyValueError::new_err(format!("boxes: {e}"))),
    }
}

/// A box's position in the input the index was built from.
fn position(handle: spatix::Handle) -> i64 {
    i64::from(handle.slot())
}

#[pymethods]
impl PyPackedIndex {
    #[new]
    fn new(py: Python<'_>, boxes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let index = if is_float32(boxes) {
            Fixed::F32(build(py, boxes)?)
        } else {
            Fixed::F64(build(py, boxes)?)
        };
        Ok(Self { index })
    }

    /// The boxes each geometry meets under ``predicate``, as shapely's
    /// ``STRtree.query`` returns them.
    ///
    /// Parameters
    /// ----------
    /// geometry : array_like or shapely geometries
    ///     Boxes ``(m, 4)`` (``min_x, min_y, max_x, max_y``), points ``(m, 2)``, one box
    ///     ``(4,)`` or point ``(2,)``, or shapely geometries (tested by their bounds; empty
    ///     ones and ``None`` match nothing).
    /// predicate : str, optional
    ///     ``"intersects"`` (the default, also ``None``), ``"contains"``, ``"within"``,
    ///     ``"contains_properly"``, ``"covers"``, ``"covered_by"``, ``"touches"``,
    ///     ``"overlaps"`` or ``"crosses"``, read
    ///     as ``predicate(geometry, box)`` and decided on the boxes themselves (shapely's
    ///     answer for the boxes as rectangles, segments or points; no exact test of other
    ///     shapes); or ``"dwithin"``: the boxes within ``distance`` of each point.
    /// distance : float or array_like, optional
    ///     The radius of ``"dwithin"``: one for every point, or one per point (anything
    ///     numpy broadcasts to the points' number); a negative or NaN one finds nothing, as
    ///     shapely's.
    /// workers : int, default 1
    ///     Threads to spread the queries over; -1 for every core.
    ///
    /// Returns
    /// -------
    /// ndarray of int64
    ///     Shape ``(2, n)``: geometry indices, then box indices (positions in ``boxes``),
    ///     ordered by geometry, then box. For one geometry, the box indices alone.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> index = spatix.PackedIndex([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]])
    /// >>> index.query([[2, 2, 5, 5], [0, 0, 4, 4]], predicate="contains")
    /// array([[1, 1],
    ///        [0, 1]])
    /// >>> index.query([5.5, 5.5])
    /// array([2])
    #[pyo3(signature = (geometry, predicate = None, distance = None, workers = 1))]
    fn query<'py>(
        &self,
        geometry: &Bound<'py, PyAny>,
        predicate: Option<&str>,
        distance: Option<&Bound<'py, PyAny>>,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        dispatch_fixed!(&self.index, index: S => {
            shapely::query::<S, _, _>(
                geometry,
                predicate,
                distance,
                workers,
                |ask, workers| match ask {
                    Ask::Windows(flat) => batch::windows(index, flat, workers, position),
                    Ask::Within(flat, r) => batch::within(index, flat, r, workers, position),
                },
                |id| {
                    let h = index.handle(usize::try_from(id).ok()?)?;
                    SpatialQuery::<S, ()>::get(index, h).map(|item| item.aabb)
                },
            )
        })
    }

    /// The nearest box to each point, every one when several are equally near, as shapely's
    /// ``STRtree.query_nearest`` returns them.
    ///
    /// Parameters
    /// ----------
    /// geometry : array_like or shapely points
    ///     Points ``(m, 2)`` or one point ``(2,)`` (or shapely points).
    /// max_distance : float, optional
    ///     Leave out points whose nearest box is farther.
    /// return_distance : bool, default False
    ///     Also return the distances.
    /// exclusive : bool, default False
    ///     Leave out boxes equal to the point (boxes of no size there), as shapely leaves out
    ///     geometries equal to the input.
    /// all_matches : bool, default True
    ///     Every box at the least distance; with False, only the one of lowest index.
    /// workers : int, default 1
    ///     Threads to spread the points over; -1 for every core.
    ///
    /// Returns
    /// -------
    /// indices : ndarray of int64, shape (2, n)
    ///     Point indices, then box indices, ordered by point, then box; for one point, the
    ///     box indices alone, shape (n,), as shapely's.
    /// distances : ndarray of float64, shape (n,)
    ///     Only with ``return_distance``: the distance of each pair.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> index = spatix.PackedIndex([[0, 0, 1, 1], [3, 0, 4, 1]])
    /// >>> index.query_nearest([[2.0, 0.5], [0.5, 3.0]], return_distance=True)
    /// (array([[0, 0, 1],
    ///        [0, 1, 0]]), array([1., 1., 2.]))
    /// >>> index.query_nearest([2.0, 0.5])
    /// array([0, 1])
    #[pyo3(signature = (
        geometry,
        max_distance = None,
        return_distance = false,
        exclusive = false,
        all_matches = true,
        workers = 1
    ))]
    fn query_nearest<'py>(
        &self,
        geometry: &Bound<'py, PyAny>,
        max_distance: Option<f64>,
        return_distance: bool,
        exclusive: bool,
        all_matches: bool,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = shapely::NearestArgs {
            max_distance,
            return_distance,
            exclusive,
            all_matches,
            workers,
        };
        dispatch_fixed!(&self.index, index: S => {
            shapely::query_nearest::<S>(geometry, args, |p, exclusive, ws, out| {
                shapely::nearest_ties(index, p, exclusive, ws, position, out)
            })
        })
    }

    /// Every intersecting pair of boxes.
    ///
    /// Parameters
    /// ----------
    /// sort : bool, default False
    ///     Sort the rows (by ``i``, then ``j``).
    ///
    /// Returns
    /// -------
    /// ndarray of int64, shape (p, 2)
    ///     Rows ``(i, j)`` with ``i < j`` (positions in ``boxes``), each pair once, in no
    ///     particular order unless ``sort``.
    #[pyo3(signature = (sort = false))]
    fn pairs<'py>(&self, py: Python<'py>, sort: bool) -> PyResult<Bound<'py, PyAny>> {
        let flat = dispatch_fixed!(&self.index, index: S => {
            py.detach(|| {
                let flat = batch::pairs::<S, (), _>(index, position);
                if sort { batch::sort_pairs(flat) } else { flat }
            })
        });
        let m = flat.len() / 2;
        vec2(py, flat, m, 2, false)
    }

    /// The ``k`` boxes nearest to each point (distance to the nearest point of the box,
    /// 0 inside), shaped like ``KdTree.query``: ``(distances, box_index)``, padded with
    /// ``inf`` and ``len(index)``. One point given as a ``(2,)`` array gives scipy's shapes
    /// for one point: scalars for ``k = 1``, ``(k,)`` arrays otherwise.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For ``k < 1``, or a point with a NaN or infinite coordinate (naming its row).
    #[pyo3(signature = (points, k = 1, workers = 1))]
    fn nearest<'py>(
        &self,
        points: &Bound<'py, PyAny>,
        k: i64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        let k = batch::neighbours(k)?;
        dispatch_fixed!(&self.index, index: S => {
            let missing = SpatialQuery::<S, ()>::len(index) as i64;
            batch::nearest_call::<S, _>(points, "points", k, workers, |flat, workers| {
                batch::nearest(index, flat, k, workers, missing, position)
            })
        })
    }

    /// The first box each ray hits: ``origins + t * directions`` for ``0 <= t <= max_t``.
    ///
    /// Parameters
    /// ----------
    /// origins, directions : array_like, shape (m, 2) or (2,)
    ///     Each ray's start and direction (finite, not zero); ``t`` counts lengths of the
    ///     direction.
    /// max_t : float, default inf
    ///     How far along each ray to look.
    /// workers : int, default 1
    ///     Threads to spread the rays over; -1 for every core.
    ///
    /// Returns
    /// -------
    /// t, box_index : ndarray
    ///     Where each ray enters the box's box (0 for a ray that starts inside it), and
    ///     which box; ``inf`` and ``len(index)`` for a ray that hits nothing. Scalars for one ray.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> index = spatix.PackedIndex([[2, -1, 3, 1], [5, -1, 6, 1]])
    /// >>> index.raycast([0.0, 0.0], [1.0, 0.0])
    /// (np.float64(2.0), np.int64(0))
    #[pyo3(signature = (origins, directions, max_t = f64::INFINITY, workers = 1))]
    fn raycast<'py>(
        &self,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        max_t: f64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        dispatch_fixed!(&self.index, index: S => {
            let missing = SpatialQuery::<S, ()>::len(index) as i64;
            rays::first_call::<S, _>(origins, directions, max_t, workers, |rays, workers| {
                rays::first(index, rays, workers, missing, position)
            })
        })
    }

    /// Every box each ray hits, in order along it.
    ///
    /// Returns
    /// -------
    /// indices : ndarray of int64, shape (2, n)
    ///     Ray indices, then box indices, ordered by ray, then ``t``, then box indices.
    /// t : ndarray
    ///     Where the ray enters each box's box.
    #[pyo3(signature = (origins, directions, max_t = f64::INFINITY))]
    fn raycast_all<'py>(
        &self,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        max_t: f64,
    ) -> PyResult<Arrays<'py>> {
        dispatch_fixed!(&self.index, index: S => {
            rays::all_call::<S, _>(origins, directions, max_t, |rays| rays::all(index, rays, position))
        })
    }

    /// The index's byte form, which ``PackedIndex.from_bytes`` loads without rebuilding
    /// (and ``pickle`` and ``copy.deepcopy`` use); encoded with the GIL released.
    ///
    /// Examples
    /// --------
    /// >>> import pickle, spatix
    /// >>> index = spatix.PackedIndex([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]])
    /// >>> spatix.PackedIndex.from_bytes(index.to_bytes()).pairs()
    /// array([[0, 1]])
    /// >>> pickle.loads(pickle.dumps(index)).query([[2, 2, 5, 5]])
    /// array([[0, 0, 0],
    ///        [0, 1, 2]])
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        crate::to_bytes(py, || dispatch_fixed!(&self.index, index => index.saved()))
    }

    /// The index whose byte form (``to_bytes``) is ``data``, in the precision it was saved
    /// in: its arrays copied and the index checked, nothing rebuilt. Box positions are
    /// those of the saved index.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For bytes that are not a spatix ``PackedIndex``'s (cut short, damaged, of another
    ///     version or structure); the message says what is wrong.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        Fixed::from_bytes(py, "PackedIndex", data).map(|index| Self { index })
    }

    /// The index whose byte form (``to_bytes``, or a file it was written to) is the buffer
    /// of ``data``, read in place: nothing copied, nothing built, one pass that checks the
    /// bytes. The index keeps ``data``'s buffer for as long as it lives, and answers every
    /// query as the index saved does.
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
    ///     ``PackedIndex``'s in the current format.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> data = spatix.PackedIndex([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6]]).to_bytes()
    /// >>> spatix.PackedIndex.from_buffer(data).pairs()
    /// array([[0, 1]])
    #[staticmethod]
    fn from_buffer(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Fixed::from_buffer(data, "PackedIndex", open_packed, open_packed)
            .map(|index| Self { index })
    }

    /// Rebuilds a pickled index: a view over a read-only buffer, else a copy loaded.
    #[staticmethod]
    fn _unpickle(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Fixed::unpickle(data, "PackedIndex", open_packed, open_packed).map(|index| Self { index })
    }

    /// Pickling through the byte form, handed out of band with protocol 5
    /// (``pickle.PickleBuffer``: ``buffer_callback`` receives it, uncopied for an index read
    /// in place).
    fn __reduce_ex__<'py>(slf: &Bound<'py, Self>, protocol: i64) -> PyResult<Bound<'py, PyTuple>> {
        let index = &slf.get().index;
        index.reduce(
            slf.as_any(),
            protocol,
            || dispatch_fixed!(index, index => index.saved()),
        )
    }

    /// The positions of every box, ``0 .. len(index)`` (an index's ids are the positions of
    /// its boxes in the input it was built from).
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        vec1(py, (0..self.__len__() as i64).collect())
    }

    /// The boxes at ``positions`` (an ``(n, 4)`` array in the index's precision), or every box
    /// in input order when not given.
    ///
    /// Raises
    /// ------
    /// KeyError
    ///     For a position outside ``0 .. len(index)``.
    #[pyo3(signature = (positions = None))]
    fn boxes<'py>(
        &self,
        py: Python<'py>,
        positions: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        dispatch_fixed!(&self.index, index: S => {
            let n = SpatialQuery::<S, ()>::len(index);
            let positions = match positions {
                Some(obj) => crate::array::ids(obj)?,
                None => (0..n as i64).collect(),
            };
            let mut flat = Vec::with_capacity(4 * positions.len());
            for (at, &p) in positions.iter().enumerate() {
                let item = usize::try_from(p)
                    .ok()
                    .and_then(|p| index.handle(p))
                    .and_then(|h| SpatialQuery::<S, ()>::get(index, h))
                    .ok_or_else(|| not_a_position(p, at, n))?;
                let b = item.aabb;
                flat.extend([b.min.x, b.min.y, b.max.x, b.max.y]);
            }
            let m = flat.len() / 4;
            vec2(py, flat, m, 4, false)
        })
    }

    fn __len__(&self) -> usize {
        dispatch_fixed!(&self.index, index: S => SpatialQuery::<S, ()>::len(index))
    }

    /// ``"float32"`` or ``"float64"``: the precision the index was built in.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.index.dtype()
    }

    fn __repr__(&self) -> String {
        let place = self.index.place();
        format!(
            "PackedIndex(<{} boxes, {}{place}>)",
            self.__len__(),
            self.dtype()
        )
    }
}

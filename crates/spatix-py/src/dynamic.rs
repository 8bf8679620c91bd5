//! The dynamic structures: one Python base class, `DynamicIndex`, holding any of them behind
//! [`Engine`], and one subclass per structure that only constructs it or loads it from its
//! byte form ([`Structure`] turns either into the engine).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use spatix::{
    Aabb, ByteForm, Handle, HierarchicalGrid, Layered, LooseGrid, LooseQuadtree, MxCifQuadtree,
    ParallelPairs, Point, PointGrid, Quadtree, Ray, SpatialIndex, SweepGrid, UniformGrid,
    Workspace,
};

use crate::array::{
    PyScalar, Rows, aabb, boxes, check_boxes, ids, narrow, row_of, stale, vec1, vec2,
};
use crate::batch::{self, Arrays, Hits, Workers};
use crate::names::{Names, Pairs};
use crate::rays;
use crate::shapely::{self, Ask};
use crate::{Precision, Reduced, dispatch};

/// What Python can ask of a dynamic structure, whatever its type (object safe, so one
/// Python class can hold any of them). Batches arrive checked: valid boxes the structure
/// accepts, live ids.
trait Engine<S: PyScalar>: Send + Sync {
    /// Why the structure cannot hold a (valid) box (a point grid refuses larger ones), or
    /// `None` if it can.
    fn refuses(&self, aabb: &Aabb<S>) -> Option<String>;
    /// Whether `id` names a live element.
    fn contains(&self, id: i64) -> bool;
    /// How the elements are named (see [`Names`]).
    fn names(&self) -> &Names;
    /// Inserts every box of the flat `(n, 4)` slice, named `ids` (checked: new, distinct,
    /// and the index names its elements by the caller's ids or is empty) or by made-up ids;
    /// their ids.
    ///
    /// # Errors
    /// The structure's error (it is full); nothing is inserted then.
    fn insert(&mut self, boxes: &[S], ids: Option<&[i64]>) -> Result<Vec<i64>, spatix::Error>;
    /// Moves element `ids[i]` to box `i` of the flat `(n, 4)` slice.
    fn update(&mut self, ids: &[i64], boxes: &[S]);
    /// Removes the elements; their ids go stale (never reused).
    fn remove(&mut self, ids: &[i64]);
    /// See [`batch::windows`] and [`batch::within`].
    fn query(&self, ask: Ask<'_, S>, workers: Workers) -> Result<Hits, String>;
    /// The box of element `id`, if it is live.
    fn box_of(&self, id: i64) -> Option<Aabb<S>>;
    /// Every live element's id and box (flat `(n, 4)`), in slot order.
    fn items(&self) -> (Vec<i64>, Vec<S>);
    /// See [`shapely::nearest_ties`].
    fn nearest_ties(
        &self,
        p: Point<S>,
        exclusive: bool,
        workspace: &mut Workspace<S>,
        out: &mut Vec<i64>,
    ) -> Option<S>;
    /// See [`rays::first`] (missing hits are -1).
    fn raycast(&self, rays: &[Ray<S>], workers: Workers) -> Result<(Vec<S>, Vec<i64>), String>;
    /// See [`rays::all`].
    fn raycast_all(&self, rays: &[Ray<S>]) -> (Vec<i64>, Vec<i64>, Vec<S>);
    /// See [`batch::nearest`] (missing neighbours are -1).
    fn nearest(
        &self,
        points: &[S],
        k: usize,
        workers: Workers,
    ) -> Result<(Vec<S>, Vec<i64>), String>;
    /// See [`batch::pairs`] and [`batch::par_pairs`].
    fn pairs(&self, workers: Workers) -> Result<Vec<i64>, String>;
    /// Number of elements.
    fn len(&self) -> usize;
    /// [`SpatialIndex::maintain`].
    /// Deferred tidying (collapse empty branches, shrink loose boxes, rebuild a layered
    /// index's static part); results are correct whether or not it is called.
    fn maintain(&mut self);
    /// [`SpatialIndex::clear`].
    /// Removes every element; every id given so far goes stale.
    fn clear(&mut self);
    /// [`ByteForm::to_bytes`].
    fn to_bytes(&self) -> Vec<u8>;
}

/// A structure with the test of which boxes it refuses and why, how it finds its pairs, the
/// order it inserts a batch's rows in (`None`: as given) and how it moves a batch of elements.
struct Dyn<I, S> {
    index: I,
    names: Names,
    refuses: fn(&I, &Aabb<S>) -> Option<String>,
    pairs: fn(&I, Workers, &Names) -> Result<Vec<i64>, String>,
    order: fn(&I, &[S]) -> Option<Vec<u32>>,
    update: fn(&mut I, &[Handle], &[S]),
}

impl<S: PyScalar, I: SpatialIndex<S, ()>> Dyn<I, S> {
    /// A structure that holds any valid box and finds its pairs on the calling thread.
    fn any(index: I, names: Names) -> Self {
        Self {
            index,
            names,
            refuses: |_, _| None,
            pairs: |index, _, names| Ok(batch::pairs(index, |h| names.id(h))),
            order: |_, _| None,
            update: |index, handles, flat| {
                for (i, &h) in handles.iter().enumerate() {
                    // Checked beforehand: a live element and a box the structure accepts.
                    let _ = index.update(h, aabb(flat, i));
                }
            },
        }
    }
}

impl<S: PyScalar, I: ParallelPairs<S, ()>> Dyn<I, S> {
    /// The structure finding its pairs on `workers` threads.
    fn parallel(self) -> Self {
        Self {
            pairs: |index, workers, names| batch::par_pairs(index, workers, |h| names.id(h)),
            ..self
        }
    }
}

impl<S, I> Engine<S> for Dyn<I, S>
where
    S: PyScalar,
    I: SpatialIndex<S, ()> + ByteForm + Send + Sync,
{
    fn refuses(&self, aabb: &Aabb<S>) -> Option<String> {
        (self.refuses)(&self.index, aabb)
    }

    fn contains(&self, id: i64) -> bool {
        self.names
            .handle(id)
            .is_some_and(|h| self.index.get(h).is_some())
    }

    fn names(&self) -> &Names {
        &self.names
    }

    fn insert(&mut self, flat: &[S], ids: Option<&[i64]>) -> Result<Vec<i64>, spatix::Error> {
        let order = (self.order)(&self.index, flat);
        let row = |k: usize| order.as_ref().map_or(k, |order| order[k] as usize);
        let mut handles = vec![Handle::from_bits(0); flat.len() / 4];
        for k in 0..handles.len() {
            match self.index.insert(aabb(flat, row(k)), ()) {
                Ok(h) => handles[row(k)] = h,
                Err(e) => {
                    for j in 0..k {
                        self.index.remove(handles[row(j)]);
                    }
                    return Err(e);
                }
            }
        }
        if self.index.len() == handles.len() {
            // The first insert into an empty index decides how its elements are named.
            self.names = if ids.is_some() {
                Names::given()
            } else {
                Names::MadeUp
            };
        }
        Ok(self.names.inserted(&handles, ids))
    }

    /// Moves element ``ids[i]`` to box ``boxes[i]``.
    fn update(&mut self, ids: &[i64], flat: &[S]) {
        let handles = self.handles(ids);
        (self.update)(&mut self.index, &handles, flat);
    }

    /// Removes the elements; their ids go stale (never reused).
    fn remove(&mut self, ids: &[i64]) {
        for h in self.handles(ids) {
            self.index.remove(h);
        }
        self.names.removed(ids);
    }

    fn query(&self, ask: Ask<'_, S>, workers: Workers) -> Result<Hits, String> {
        let id = |h| self.names.id(h);
        match ask {
            Ask::Windows(flat) => batch::windows(&self.index, flat, workers, id),
            Ask::Within(flat, r) => batch::within(&self.index, flat, r, workers, id),
        }
    }

    fn box_of(&self, id: i64) -> Option<Aabb<S>> {
        let h = self.names.handle(id)?;
        self.index.get(h).map(|item| item.aabb)
    }

    fn items(&self) -> (Vec<i64>, Vec<S>) {
        let mut ids = Vec::with_capacity(self.index.len());
        let mut flat = Vec::with_capacity(4 * self.index.len());
        for item in self.index.iter() {
            ids.push(self.names.id(item.handle));
            let b = item.aabb;
            flat.extend([b.min.x, b.min.y, b.max.x, b.max.y]);
        }
        (ids, flat)
    }

    fn raycast(&self, rays: &[Ray<S>], workers: Workers) -> Result<(Vec<S>, Vec<i64>), String> {
        rays::first(&self.index, rays, workers, -1, |h| self.names.id(h))
    }

    fn raycast_all(&self, rays: &[Ray<S>]) -> (Vec<i64>, Vec<i64>, Vec<S>) {
        rays::all(&self.index, rays, |h| self.names.id(h))
    }

    fn nearest_ties(
        &self,
        p: Point<S>,
        exclusive: bool,
        workspace: &mut Workspace<S>,
        out: &mut Vec<i64>,
    ) -> Option<S> {
        shapely::nearest_ties(
            &self.index,
            p,
            exclusive,
            workspace,
            |h| self.names.id(h),
            out,
        )
    }

    fn nearest(
        &self,
        points: &[S],
        k: usize,
        workers: Workers,
    ) -> Result<(Vec<S>, Vec<i64>), String> {
        batch::nearest(&self.index, points, k, workers, -1, |h| self.names.id(h))
    }

    fn pairs(&self, workers: Workers) -> Result<Vec<i64>, String> {
        (self.pairs)(&self.index, workers, &self.names)
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    /// Deferred tidying (collapse empty branches, shrink loose boxes, rebuild a layered
    /// index's static part); results are correct whether or not it is called.
    fn maintain(&mut self) {
        self.index.maintain();
    }

    /// Removes every element; every id given so far goes stale.
    fn clear(&mut self) {
        self.index.clear();
        self.names = Names::MadeUp;
    }

    fn to_bytes(&self) -> Vec<u8> {
        self.names.to_bytes(self.index.to_bytes())
    }
}

impl<S: PyScalar, I: SpatialIndex<S, ()>> Dyn<I, S> {
    /// The handles of live ids (checked by the caller).
    fn handles(&self, ids: &[i64]) -> Vec<Handle> {
        ids.iter()
            .map(|&id| {
                self.names
                    .handle(id)
                    .expect("the caller checked that the ids are live")
            })
            .collect()
    }
}

/// A dynamic structure Python can hold: how it becomes an [`Engine`] (the boxes it refuses,
/// how it finds its pairs), whether constructed or loaded from bytes.
trait Structure<S: PyScalar>: SpatialIndex<S, ()> + ByteForm + Send {
    /// The structure as an engine, its elements named by `names`.
    fn engine(self, names: Names) -> Box<dyn Engine<S>>;
}

/// [`Structure`] for structures that hold any valid box and have a parallel pair pass.
macro_rules! parallel_structure {
    ($($structure:ident),*) => {$(
        impl<S: PyScalar> Structure<S> for $structure<S, ()> {
            fn engine(self, names: Names) -> Box<dyn Engine<S>> {
                Box::new(Dyn::any(self, names).parallel())
            }
        }
    )*};
}

parallel_structure!(
    UniformGrid,
    LooseGrid,
    HierarchicalGrid,
    Quadtree,
    LooseQuadtree,
    MxCifQuadtree
);

impl<S: PyScalar> Structure<S> for PointGrid<S, ()> {
    fn engine(self, names: Names) -> Box<dyn Engine<S>> {
        let grid = Dyn {
            refuses: |grid: &PointGrid<S, ()>, b: &Aabb<S>| {
                let half = b.size().x.max_s(b.size().y).to_f64() * 0.5;
                (!grid.fits(b)).then(|| {
                    format!(
                        "a half extent of {half} is larger than this PointGrid's max_half_extent {}",
                        grid.max_half_extent().to_f64()
                    )
                })
            },
            ..Dyn::any(self, names)
        };
        Box::new(grid.parallel())
    }
}

impl<S: PyScalar> Structure<S> for SweepGrid<S, ()> {
    fn engine(self, names: Names) -> Box<dyn Engine<S>> {
        let grid = Dyn {
            order: crate::sweep::insert_order,
            update: crate::sweep::update,
            ..Dyn::any(self, names)
        };
        Box::new(grid.parallel())
    }
}

impl<S: PyScalar> Structure<S> for Layered<S, ()> {
    fn engine(self, names: Names) -> Box<dyn Engine<S>> {
        Box::new(Dyn::any(self, names))
    }
}

/// A dynamic structure in either precision.
type AnyEngine = Precision<Box<dyn Engine<f32>>, Box<dyn Engine<f64>>>;

/// The base class of spatix's dynamic indexes: boxes that come, move and go, named by
/// ``int64`` ids: the caller's own (``insert(boxes, ids=...)``) or ids the index makes up.
/// Construct one of its subclasses (``UniformGrid``, ``LooseGrid``,
/// ``PointGrid``, ``HierarchicalGrid``, ``Quadtree``, ``LooseQuadtree``,
/// ``MxCifQuadtree``, ``Layered``, ``SweepGrid``); they share every method here.
///
/// Boxes are ``(n, 4)`` arrays of ``min_x, min_y, max_x, max_y`` converted to the index's
/// ``dtype``; they are closed (touching boxes intersect). Elements outside the declared
/// world are still stored and found. A batch with a bad box raises ``ValueError`` naming
/// its row, and a stale or repeated id raises ``KeyError``, before anything changes.
///
/// Examples
/// --------
/// >>> import spatix
/// >>> grid = spatix.UniformGrid((0, 0, 100, 100), 4.0)
/// >>> ids = grid.insert([[1, 1, 3, 3], [2, 2, 4, 4], [50, 50, 51, 51]])
/// >>> len(grid.pairs())
/// 1
/// >>> grid.update(ids[:1], [[60, 60, 62, 62]])
/// >>> grid.remove(ids[2:])
/// >>> len(grid)
/// 2
#[pyclass(name = "DynamicIndex", module = "spatix", subclass)]
pub(crate) struct DynamicIndex {
    engine: AnyEngine,
}

/// Reads boxes for `engine` and checks them.
///
/// # Errors
/// `ValueError` naming the first box that is invalid or that the structure refuses.
fn checked_boxes<'py, S: PyScalar>(
    engine: &dyn Engine<S>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Rows<'py, S>> {
    let rows = Rows::<S>::read(obj, 4, "boxes")?;
    let flat = rows.flat();
    check_boxes("boxes", flat)?;
    if let Some((row, why)) = boxes(flat)
        .enumerate()
        .find_map(|(row, b)| engine.refuses(&b).map(|why| (row, why)))
    {
        return Err(PyValueError::new_err(format!(
            "{}: {why}",
            row_of("boxes", flat, 4, row)
        )));
    }
    Ok(rows)
}

/// Reads ids and checks each names a live element, each once.
///
/// # Errors
/// `KeyError` for the first stale or repeated id.
fn checked_ids<S: PyScalar>(engine: &dyn Engine<S>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let ids = ids(obj)?;
    if let Some(i) = ids.iter().position(|&id| !engine.contains(id)) {
        return Err(stale(ids[i], i));
    }
    let mut sorted: Vec<(i64, usize)> = ids.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
        let (first, again) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
        return Err(pyo3::exceptions::PyKeyError::new_err(format!(
            "ids[{again}] = {} repeats ids[{first}]: each id may appear once",
            w[0].0
        )));
    }
    Ok(ids)
}

/// Reads the ids `insert` is given for `rows` boxes and checks them: as many as boxes, each
/// new and once, and the index empty or named by the caller's ids.
///
/// # Errors
/// `ValueError` naming the first id that repeats another or is already in the index, for a
/// count that is not the boxes', and for ids given to an index that names its elements by
/// made-up ids (or none given to one named by the caller's).
fn checked_new_ids<S: PyScalar>(
    engine: &dyn Engine<S>,
    obj: Option<&Bound<'_, PyAny>>,
    rows: usize,
) -> PyResult<Option<Vec<i64>>> {
    let given = engine.names().is_given() && engine.len() > 0;
    let made_up = !engine.names().is_given() && engine.len() > 0;
    let Some(obj) = obj else {
        if given {
            return Err(PyValueError::new_err(
                "this index names its elements by the caller's ids (its first insert had ids=): \
                 pass ids= to insert",
            ));
        }
        return Ok(None);
    };
    if made_up {
        return Err(PyValueError::new_err(
            "this index names its elements by the ids it made up (its first insert had no \
             ids=): insert without ids=, or into an empty index",
        ));
    }
    let ids = ids(obj)?;
    if ids.len() != rows {
        return Err(PyValueError::new_err(format!(
            "{} ids but {rows} boxes",
            ids.len()
        )));
    }
    if let Some(i) = ids.iter().position(|&id| engine.contains(id)) {
        return Err(PyValueError::new_err(format!(
            "ids[{i}] = {} is already in the index: each element's id must be new",
            ids[i]
        )));
    }
    let mut sorted: Vec<(i64, usize)> = ids.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(PyValueError::new_err(format!(
            "ids[{}] = {} repeats ids[{}]: each id may appear once",
            w[1].1, w[0].0, w[0].1
        )));
    }
    Ok(Some(ids))
}

/// `insert` in precision `S`.
fn insert<'py, S: PyScalar>(
    py: Python<'py>,
    engine: &mut Box<dyn Engine<S>>,
    obj: &Bound<'py, PyAny>,
    ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let rows = checked_boxes(engine.as_ref(), obj)?;
    let given = checked_new_ids(engine.as_ref(), ids, rows.len)?;
    let flat = rows.flat();
    let ids = py
        .detach(|| engine.insert(flat, given.as_deref()))
        .map_err(|e| PyValueError::new_err(format!("boxes: {e}")))?;
    Ok(vec1(py, ids))
}

/// `update` in precision `S`.
fn update<S: PyScalar>(
    py: Python<'_>,
    engine: &mut Box<dyn Engine<S>>,
    ids: &Bound<'_, PyAny>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let ids = checked_ids(engine.as_ref(), ids)?;
    let rows = checked_boxes(engine.as_ref(), obj)?;
    if rows.len != ids.len() {
        return Err(PyValueError::new_err(format!(
            "{} ids but {} boxes",
            ids.len(),
            rows.len
        )));
    }
    let flat = rows.flat();
    py.detach(|| engine.update(&ids, flat));
    Ok(())
}

#[pymethods]
impl DynamicIndex {
    /// Adds boxes; returns their ids (``int64``, one per row, in order): ``ids`` when given
    /// (integers of any dtype, one per row, each new), else ids the index makes up.
    ///
    /// An index is named by the caller's ids or by made-up ones, as its first insert into
    /// it while empty decides; the other kind raises ``ValueError`` until it is empty
    /// again (``clear()`` or removing every element). A repeated id, or one already in
    /// the index, raises ``ValueError`` naming its row before anything changes.
    ///
    /// Examples
    /// --------
    /// >>> import spatix
    /// >>> grid = spatix.UniformGrid((0, 0, 100, 100), 4.0)
    /// >>> grid.insert([[1, 1, 3, 3], [2, 2, 4, 4], [50, 50, 51, 51]], ids=[10, 20, 30])
    /// array([10, 20, 30])
    /// >>> grid.query([0, 0, 5, 5])
    /// array([10, 20])
    /// >>> grid.remove([20])
    /// >>> grid.pairs().tolist(), sorted(grid.ids().tolist())
    /// ([], [10, 30])
    #[pyo3(signature = (boxes, ids = None))]
    fn insert<'py>(
        &mut self,
        py: Python<'py>,
        boxes: &Bound<'py, PyAny>,
        ids: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        dispatch!(&mut self.engine, engine: S => insert::<S>(py, engine, boxes, ids))
    }

    /// Moves element ``ids[i]`` to box ``boxes[i]``.
    fn update(
        &mut self,
        py: Python<'_>,
        ids: &Bound<'_, PyAny>,
        boxes: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        dispatch!(&mut self.engine, engine: S => update::<S>(py, engine, ids, boxes))
    }

    /// Removes the elements; their ids go stale (never reused).
    fn remove(&mut self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        dispatch!(&mut self.engine, engine: S => {
            let ids = checked_ids::<S>(engine.as_ref(), ids)?;
            py.detach(|| engine.remove(&ids));
            Ok(())
        })
    }

    /// Every intersecting pair: an ``(p, 2)`` int64 array of ids, smaller id first, each
    /// pair once, in no particular order. ``workers`` threads (-1: every core) where the
    /// structure has a parallel pair pass (every one but ``Layered``), each thread listing
    /// the pairs it finds. ``sort=True`` sorts the rows (by the first id, then the second).
    #[pyo3(signature = (workers = 1, sort = false))]
    fn pairs<'py>(&self, py: Python<'py>, workers: i64, sort: bool) -> PyResult<Bound<'py, PyAny>> {
        let workers = Workers::new(workers)?;
        let flat = dispatch!(&self.engine, engine => py.detach(|| {
            let flat = engine.pairs(workers)?;
            Ok::<_, String>(if sort { batch::sort_pairs(flat) } else { flat })
        }))
        .map_err(batch::pool_error)?;
        let m = flat.len() / 2;
        vec2(py, flat, m, 2, false)
    }

    /// The elements each geometry meets under ``predicate``, as shapely's
    /// ``STRtree.query`` returns them (``PackedIndex.query`` describes the arguments): the
    /// ``(2, n)`` int64 array of geometry indices and ids, ordered by geometry, then id (for
    /// one geometry, the ids alone). ``workers`` threads (-1: every core).
    #[pyo3(signature = (geometry, predicate = None, distance = None, workers = 1))]
    fn query<'py>(
        &self,
        geometry: &Bound<'py, PyAny>,
        predicate: Option<&str>,
        distance: Option<&Bound<'py, PyAny>>,
        workers: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        dispatch!(&self.engine, engine: S => {
            shapely::query::<S, _, _>(
                geometry,
                predicate,
                distance,
                workers,
                |ask, workers| engine.query(ask, workers),
                |id| engine.box_of(id),
            )
        })
    }

    /// The nearest element to each point, every one when several are equally near, as
    /// shapely's ``STRtree.query_nearest`` returns them (``PackedIndex.query_nearest``
    /// describes the arguments): the ``(2, n)`` array of point indices and ids (the ids
    /// alone for one point), and the distances with ``return_distance``.
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
        dispatch!(&self.engine, engine: S => {
            shapely::query_nearest::<S>(geometry, args, |p, exclusive, ws, out| {
                engine.nearest_ties(p, exclusive, ws, out)
            })
        })
    }

    /// The ``k`` elements nearest to each point of ``points`` (``(m, 2)``), like
    /// ``KdTree.query``: ``(distances, ids)``, shape ``(m,)`` for ``k = 1`` else ``(m, k)``,
    /// ascending, padded with ``inf`` and -1; for one point as a ``(2,)`` array, scalars for
    /// ``k = 1`` and ``(k,)`` arrays otherwise. ``ValueError`` for ``k < 1``.
    #[pyo3(signature = (points, k = 1, workers = 1))]
    fn nearest<'py>(
        &self,
        points: &Bound<'py, PyAny>,
        k: i64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        let k = batch::neighbours(k)?;
        dispatch!(&self.engine, engine: S => {
            batch::nearest_call::<S, _>(points, "points", k, workers, |flat, workers| {
                engine.nearest(flat, k, workers)
            })
        })
    }

    /// The first element each ray hits: ``origins + t * directions`` for ``0 <= t <= max_t``.
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
    /// t, ids : ndarray
    ///     Where each ray enters the element's box (0 for a ray that starts inside it), and
    ///     which element; ``inf`` and -1 for a ray that hits nothing. Scalars for one ray.
    #[pyo3(signature = (origins, directions, max_t = f64::INFINITY, workers = 1))]
    fn raycast<'py>(
        &self,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        max_t: f64,
        workers: i64,
    ) -> PyResult<Arrays<'py>> {
        dispatch!(&self.engine, engine: S => {
            rays::first_call::<S, _>(origins, directions, max_t, workers, |rays, workers| {
                engine.raycast(rays, workers)
            })
        })
    }

    /// Every element each ray hits, in order along it.
    ///
    /// Returns
    /// -------
    /// indices : ndarray of int64, shape (2, n)
    ///     Ray indices, then ids, ordered by ray, then ``t``, then ids.
    /// t : ndarray
    ///     Where the ray enters each element's box.
    #[pyo3(signature = (origins, directions, max_t = f64::INFINITY))]
    fn raycast_all<'py>(
        &self,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        max_t: f64,
    ) -> PyResult<Arrays<'py>> {
        dispatch!(&self.engine, engine: S => {
            rays::all_call::<S, _>(origins, directions, max_t, |rays| engine.raycast_all(rays))
        })
    }

    /// Deferred tidying (collapse empty branches, shrink loose boxes, rebuild a layered
    /// index's static part); results are correct whether or not it is called.
    fn maintain(&mut self, py: Python<'_>) {
        dispatch!(&mut self.engine, engine: S => py.detach(|| Engine::<S>::maintain(engine.as_mut())))
    }

    /// Removes every element; every id given so far goes stale.
    fn clear(&mut self) {
        dispatch!(&mut self.engine, engine: S => Engine::<S>::clear(engine.as_mut()))
    }

    fn __len__(&self) -> usize {
        dispatch!(&self.engine, engine: S => Engine::<S>::len(engine.as_ref()))
    }

    /// The ids of every element, in the index's own (slot) order, which ``boxes()`` and
    /// iteration follow.
    fn ids<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        let ids = dispatch!(&self.engine, engine => py.detach(|| engine.items().0));
        vec1(py, ids)
    }

    /// The boxes of the elements ``ids`` names (an ``(n, 4)`` array in the index's precision),
    /// or of every element in ``ids()`` order when ``ids`` is not given.
    ///
    /// Raises
    /// ------
    /// KeyError
    ///     For an id that names no element (removed, or from another index).
    #[pyo3(signature = (ids = None))]
    fn boxes<'py>(
        &self,
        py: Python<'py>,
        ids: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        dispatch!(&self.engine, engine: S => {
            let flat: Vec<S> = match ids {
                None => py.detach(|| engine.items().1),
                Some(obj) => {
                    let ids = crate::array::ids(obj)?;
                    let mut flat = Vec::with_capacity(4 * ids.len());
                    for (position, &id) in ids.iter().enumerate() {
                        let b = engine.box_of(id).ok_or_else(|| stale(id, position))?;
                        flat.extend([b.min.x, b.min.y, b.max.x, b.max.y]);
                    }
                    flat
                }
            };
            let n = flat.len() / 4;
            vec2(py, flat, n, 4, false)
        })
    }

    /// Iterates over the ids, in ``ids()`` order.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.ids(py).try_iter().map(Bound::into_any)
    }

    /// Whether ``id`` names a live element.
    fn __contains__(&self, id: i64) -> bool {
        dispatch!(&self.engine, engine => engine.contains(id))
    }

    /// The index's byte form, which the class's ``from_bytes`` loads (and ``pickle`` and
    /// ``copy.deepcopy`` use); encoded with the GIL released. Ids given out before keep
    /// naming the same elements in the loaded index, and removed ones stay stale.
    ///
    /// Examples
    /// --------
    /// >>> import pickle, spatix
    /// >>> tree = spatix.Quadtree((0, 0, 100, 100), 4.0, dtype="float32")
    /// >>> ids = tree.insert([[1, 1, 3, 3], [2, 2, 4, 4], [50, 50, 51, 51]])
    /// >>> tree.remove(ids[:1])
    /// >>> copy = pickle.loads(pickle.dumps(tree))
    /// >>> type(copy).__name__, copy.dtype, len(copy)
    /// ('Quadtree', 'float32', 2)
    /// >>> copy.query([[0, 0, 10, 10]])[1].tolist() == ids[1:2].tolist()
    /// True
    /// >>> spatix.Quadtree.from_bytes(tree.to_bytes()).pairs().shape
    /// (0, 2)
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        crate::to_bytes(py, || dispatch!(&self.engine, engine => engine.to_bytes()))
    }

    /// Pickling through the byte form: ``type(index).from_bytes(index.to_bytes())``.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let bytes = slf.borrow().to_bytes(slf.py());
        crate::reduce(slf.as_any(), bytes)
    }

    /// ``"float32"`` or ``"float64"``: the precision chosen at construction.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.engine.dtype()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let name = slf.get_type().name()?;
        let this = slf.borrow();
        Ok(format!(
            "{name}(<{} boxes, {}>)",
            this.__len__(),
            this.dtype()
        ))
    }
}

/// The construction arguments every subclass takes: the world, its size parameter, a
/// sample of boxes and the precision.
struct Args<S: PyScalar> {
    world: Aabb<S>,
    size: Option<S>,
    sample: Vec<Aabb<S>>,
}

impl<S: PyScalar> Args<S> {
    /// Reads the arguments in precision `S`.
    fn read(
        world: [f64; 4],
        size: Option<f64>,
        sample: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let [x0, y0, x1, y1] = world.map(narrow::<S>);
        let world = Aabb::new(Point::new(x0, y0), Point::new(x1, y1)).map_err(|_| {
            PyValueError::new_err(format!(
                "world must be (min_x, min_y, max_x, max_y), finite with min <= max, got {world:?}"
            ))
        })?;
        if let Some(s) = size
            && !(s.is_finite() && s >= 0.0)
        {
            return Err(PyValueError::new_err(format!(
                "the size argument must be finite and non-negative, got {s}"
            )));
        }
        let sample = match sample {
            None => Vec::new(),
            Some(obj) => {
                let rows = Rows::<S>::read(obj, 4, "sample")?;
                check_boxes("sample", rows.flat())?;
                boxes(rows.flat()).collect()
            }
        };
        Ok(Self {
            world,
            size: size.map(narrow::<S>),
            sample,
        })
    }

    /// The world a quadtree or a layered index is built over: with a sample, the declared
    /// world cut to where the bulk of the sample lies (`Aabb::bulk_of`), as the grids' `auto`
    /// cut theirs, so that a stray box that widened the declared world does not leave the
    /// data in one node at the deepest depth allowed (or in one cell of the layered index's
    /// point grid); the structures keep the elements outside it in their border nodes or
    /// cells. The declared world without a sample, or if the bulk has no area in it.
    fn bulk_world(&self) -> Aabb<S> {
        Aabb::bulk_of(&self.sample)
            .map(|bulk| bulk.clamped_to(&self.world))
            .filter(|w| w.size().x > S::ZERO && w.size().y > S::ZERO)
            .unwrap_or(self.world)
    }

    /// The sample's mean box side (`None` without a sample).
    fn mean_side(&self) -> Option<S> {
        (!self.sample.is_empty()).then(|| {
            let total: f64 = self
                .sample
                .iter()
                .map(|b| b.size().x.to_f64() + b.size().y.to_f64())
                .sum();
            S::from_f64(total / (2 * self.sample.len()) as f64)
        })
    }

    /// The size argument, else `from_sample`, else `ValueError` naming `what`.
    fn size_or(&self, what: &str, from_sample: Option<S>) -> PyResult<S> {
        self.size.or(from_sample).ok_or_else(|| {
            PyValueError::new_err(format!("give {what} or a sample of boxes to size it from"))
        })
    }
}

/// A loaded structure as an engine, its elements named by the caller's ids `pairs` when
/// the byte form carried them.
///
/// # Errors
/// `ValueError` naming `class` for ids that do not fit the structure (see
/// [`Names::from_pairs`]).
fn named<S: PyScalar, I: Structure<S>>(
    index: I,
    pairs: Option<Pairs>,
    class: &str,
) -> PyResult<Box<dyn Engine<S>>> {
    let names = match pairs {
        None => Names::MadeUp,
        Some(pairs) => Names::from_pairs(pairs, index.len(), |h| index.get(h).is_some())
            .map_err(|e| PyValueError::new_err(format!("{class}.from_bytes: {e}")))?,
    };
    Ok(index.engine(names))
}

/// Whether `dtype` asks for `float32` (else `float64`; `None` is `float64`).
///
/// # Errors
/// `ValueError` for another dtype.
fn wants_f32(py: Python<'_>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    let Some(dtype) = dtype else {
        return Ok(false);
    };
    let name = py
        .import("numpy")?
        .getattr("dtype")?
        .call1((dtype,))?
        .str()?
        .to_string();
    match name.as_str() {
        "float32" => Ok(true),
        "float64" => Ok(false),
        other => Err(PyValueError::new_err(format!(
            "dtype must be float32 or float64, got {other}"
        ))),
    }
}

/// A structure's error at construction as a `ValueError`.
fn invalid(e: spatix::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Defines a subclass of `DynamicIndex` whose constructor is
/// `Name(world, size_argument=None, *, sample=None, dtype=None)`, building the structure
/// with `$make`, a function of the read [`Args`] in precision `S`.
macro_rules! structure {
    ($rust:ident, $structure:ident, $name:literal, $size:ident, $make:ident, $doc:literal) => {
        #[doc = concat!(
            $doc,
            "\n\n``world`` is ``(min_x, min_y, max_x, max_y)``; elements outside it are still ",
            "stored and found. ``sample``: an ``(n, 4)`` array of typical boxes to size the ",
            "structure from when ``", stringify!($size), "`` is not given. ``dtype``: ",
            "``float64`` (the default) or ``float32``, the precision boxes are stored in. ",
            "Every method is ``DynamicIndex``'s."
        )]
        #[pyclass(extends = DynamicIndex, name = $name, module = "spatix")]
        pub(crate) struct $rust;

        #[pymethods]
        impl $rust {
            #[new]
            #[pyo3(signature = (world, $size = None, *, sample = None, dtype = None))]
            fn new(
                py: Python<'_>,
                world: [f64; 4],
                $size: Option<f64>,
                sample: Option<&Bound<'_, PyAny>>,
                dtype: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<PyClassInitializer<Self>> {
                let engine = if wants_f32(py, dtype)? {
                    Precision::F32($make(Args::<f32>::read(world, $size, sample)?)?.engine(Names::MadeUp))
                } else {
                    Precision::F64($make(Args::<f64>::read(world, $size, sample)?)?.engine(Names::MadeUp))
                };
                Ok(PyClassInitializer::from(DynamicIndex { engine }).add_subclass(Self))
            }

            #[doc = concat!(
                "The ``", $name, "`` whose byte form (``to_bytes``) is ``data``, in the ",
                "precision it was saved in, its elements under the ids they had.\n\n",
                "Raises\n------\nValueError\n    For bytes that are not a spatix ``", $name,
                "``'s (cut short, damaged, of another version or structure); the message ",
                "says what is wrong."
            )]
            #[staticmethod]
            fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Py<Self>> {
                let (data, pairs) = Names::split(data)
                    .map_err(|e| PyValueError::new_err(format!("{}.from_bytes: {e}", $name)))?;
                let engine =
                    match Precision::<$structure<f32, ()>, $structure<f64, ()>>::from_bytes(
                        py, $name, data,
                    )? {
                        Precision::F32(index) => Precision::F32(named(index, pairs, $name)?),
                        Precision::F64(index) => Precision::F64(named(index, pairs, $name)?),
                    };
                Py::new(
                    py,
                    PyClassInitializer::from(DynamicIndex { engine }).add_subclass(Self),
                )
            }
        }
    };
}

fn uniform_grid<S: PyScalar>(a: Args<S>) -> PyResult<UniformGrid<S, ()>> {
    match a.size {
        Some(cell) => UniformGrid::new(a.world, cell),
        None => UniformGrid::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn loose_grid<S: PyScalar>(a: Args<S>) -> PyResult<LooseGrid<S, ()>> {
    match a.size {
        Some(cell) => LooseGrid::new(a.world, cell),
        None => LooseGrid::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn point_grid<S: PyScalar>(a: Args<S>) -> PyResult<PointGrid<S, ()>> {
    match a.size {
        Some(half) => PointGrid::new(a.world, half),
        None => PointGrid::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn hierarchical_grid<S: PyScalar>(a: Args<S>) -> PyResult<HierarchicalGrid<S, ()>> {
    match a.size {
        Some(cell) => HierarchicalGrid::new(a.world, cell),
        None => HierarchicalGrid::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn quadtree<S: PyScalar>(a: Args<S>) -> PyResult<Quadtree<S, ()>> {
    match a.size {
        Some(size) => Quadtree::for_element_size(a.bulk_world(), size),
        None => Quadtree::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn loose_quadtree<S: PyScalar>(a: Args<S>) -> PyResult<LooseQuadtree<S, ()>> {
    match a.size {
        Some(size) => LooseQuadtree::for_element_size(a.bulk_world(), size),
        None => LooseQuadtree::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn mxcif_quadtree<S: PyScalar>(a: Args<S>) -> PyResult<MxCifQuadtree<S, ()>> {
    match a.size {
        Some(size) => MxCifQuadtree::for_element_size(a.bulk_world(), size),
        None => MxCifQuadtree::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn sweep_grid<S: PyScalar>(a: Args<S>) -> PyResult<SweepGrid<S, ()>> {
    match a.size {
        Some(height) => SweepGrid::new(a.world, height),
        None => SweepGrid::auto(a.world, &a.sample),
    }
    .map_err(invalid)
}

fn layered<S: PyScalar>(a: Args<S>) -> PyResult<Layered<S, ()>> {
    let threshold = a.size_or("threshold", a.mean_side().map(|side| side * S::HALF))?;
    Layered::new(a.bulk_world(), threshold).map_err(invalid)
}

structure!(
    PyUniformGrid,
    UniformGrid,
    "UniformGrid",
    cell_size,
    uniform_grid,
    "A uniform grid: each box listed in every cell it overlaps. For even density and \
     similar sizes, the simplest and often the fastest. ``cell_size``: the cells' side \
     (from the sample's mean extent when not given)."
);
structure!(
    PyLooseGrid,
    LooseGrid,
    "LooseGrid",
    cell_size,
    loose_grid,
    "A loose/tight double grid: each box in one loose cell, by its centre. For many moving \
     agents of moderately mixed sizes. ``cell_size``: the loose cells' side."
);
structure!(
    PyPointGrid,
    PointGrid,
    "PointGrid",
    max_half_extent,
    point_grid,
    "A grid of points for same-size agents: each box stored as its centre in one cell. \
     ``max_half_extent``: the largest half-width or half-height it accepts (larger boxes \
     raise ``ValueError``)."
);
structure!(
    PyHierarchicalGrid,
    HierarchicalGrid,
    "HierarchicalGrid",
    finest_cell,
    hierarchical_grid,
    "A hierarchy of grids, each box in the level that fits its size: for sizes that differ \
     by orders of magnitude. ``finest_cell``: the finest level's cell side."
);
structure!(
    PyQuadtree,
    Quadtree,
    "Quadtree",
    element_size,
    quadtree,
    "A tight quadtree, each box in every leaf it overlaps: for uneven density. \
     ``element_size``: a typical box side, which sets the depth limit."
);
structure!(
    PyLooseQuadtree,
    LooseQuadtree,
    "LooseQuadtree",
    element_size,
    loose_quadtree,
    "A loose quadtree, each box in one leaf by its centre, nodes carrying grown boxes: one \
     structure for a whole world of very mixed sizes. ``element_size``: a typical box side."
);
structure!(
    PyMxCifQuadtree,
    MxCifQuadtree,
    "MxCifQuadtree",
    element_size,
    mxcif_quadtree,
    "An MX-CIF quadtree, each box in the smallest node that contains it: mixed sizes, \
     every colliding pair. ``element_size``: a typical box side."
);
structure!(
    PyLayered,
    Layered,
    "Layered",
    threshold,
    layered,
    "Common agents in a point grid, larger boxes in a loose grid: one index for a world of \
     many agents and a few giants. ``threshold``: the largest half-size of an agent (from \
     the sample: half its mean side)."
);

structure!(
    PySweepGrid,
    SweepGrid,
    "SweepGrid",
    band_height,
    sweep_grid,
    "A sweep grid: boxes in horizontal bands by their bottom, stored band by band sorted by \
     their left side, so that a frame (move every agent, find every pair) streams through \
     memory in one order. The fastest structure for hundreds of thousands to millions of \
     moving agents of similar size. ``band_height``: the bands' height (from the sample: \
     three times its mean extent, at least about 8 sampled boxes per band; 64 bands \
     without a sample). ``insert`` and ``update`` of a large batch (an eighth of the \
     elements or more) follow the grid's storage order: the inserted rows are stored band \
     by band and an update is one walk of the grid; give them whole frames."
);

/// Adds `DynamicIndex` and its nine subclasses to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DynamicIndex>()?;
    m.add_class::<PyUniformGrid>()?;
    m.add_class::<PyLooseGrid>()?;
    m.add_class::<PyPointGrid>()?;
    m.add_class::<PyHierarchicalGrid>()?;
    m.add_class::<PyQuadtree>()?;
    m.add_class::<PyLooseQuadtree>()?;
    m.add_class::<PyMxCifQuadtree>()?;
    m.add_class::<PyLayered>()?;
    m.add_class::<PySweepGrid>()?;
    Ok(())
}

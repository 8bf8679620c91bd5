//! shapely's `STRtree` conventions on the box indexes: `query(geometry, predicate=...)`
//! returning the `(2, n)` array of input and tree indices, and `query_nearest`. Geometries are
//! `(n, 4)` boxes, `(n, 2)` points, one box or point as a 1-D array, or shapely geometries
//! (their bounds). Predicates are tested on the boxes themselves, never on exact geometry.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spatix::{Aabb, Handle, Point, Scalar, SpatialQuery, Workspace};

use crate::array::{
    PyScalar, Rows, aabb, bad_row, first_bad_box, first_bad_point, point, vec1, vec2,
};
use crate::batch::{self, Hits, Radii, Workers, pool_error};

/// A spatial predicate of shapely's `STRtree.query`, `predicate(geometry, tree_box)`, on
/// closed boxes taken as the geometries they are (a rectangle, an axis-aligned segment or a
/// point), with GEOS's definitions: a geometry's interior is its relative interior (the open
/// box; the open segment; the point itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Predicate {
    /// The boxes share a point.
    Intersects,
    /// The tree box lies in the geometry's box and meets its interior.
    Contains,
    /// The geometry's box lies in the tree box and meets its interior.
    Within,
    /// The tree box lies in the geometry's interior.
    ContainsProperly,
    /// The tree box lies in the geometry's box.
    Covers,
    /// The geometry's box lies in the tree box.
    CoveredBy,
    /// The boxes share a point but no interior point.
    Touches,
    /// The boxes are of the same dimension, their interiors share a part of that dimension,
    /// and neither lies in the other.
    Overlaps,
    /// The interiors share a point, the intersection is of a lower dimension than the larger
    /// of the two, and the interior of the one of lower dimension leaves the other (two
    /// segments: perpendicular, crossing at a point of both interiors).
    Crosses,
    /// The tree box lies within `distance` of the geometry, a point.
    DWithin,
}

impl Predicate {
    /// shapely's name, `None` meaning `"intersects"`.
    ///
    /// # Errors
    /// `ValueError` naming the predicates there are.
    pub(crate) fn parse(name: Option<&str>) -> PyResult<Self> {
        Ok(match name.unwrap_or("intersects") {
            "intersects" => Self::Intersects,
            "contains" => Self::Contains,
            "within" => Self::Within,
            "contains_properly" => Self::ContainsProperly,
            "covers" => Self::Covers,
            "covered_by" => Self::CoveredBy,
            "touches" => Self::Touches,
            "overlaps" => Self::Overlaps,
            "crosses" => Self::Crosses,
            "dwithin" => Self::DWithin,
            other => {
                return Err(PyValueError::new_err(format!(
                    "predicate must be one of intersects, contains, within, \
                     contains_properly, covers, covered_by, touches, overlaps, crosses, \
                     dwithin (or None), got {other:?}"
                )));
            }
        })
    }

    /// Whether the predicate holds for the geometry's box `g` and the tree box `t`, which
    /// intersect.
    pub(crate) fn holds<S: Scalar>(self, g: &Aabb<S>, t: &Aabb<S>) -> bool {
        match self {
            Self::Intersects | Self::DWithin => true,
            Self::Contains => inside(t, g) && interiors_meet(t, g),
            Self::Within => inside(g, t) && interiors_meet(g, t),
            Self::ContainsProperly => {
                in_interior(t.min.x, t.max.x, g.min.x, g.max.x)
                    && in_interior(t.min.y, t.max.y, g.min.y, g.max.y)
            }
            Self::Covers => inside(t, g),
            Self::CoveredBy => inside(g, t),
            Self::Touches => !interiors_meet(g, t),
            Self::Overlaps => {
                let d = dimension(g);
                d > 0
                    && d == dimension(t)
                    && (d == 2 || same_orientation(g, t))
                    && interiors_meet(g, t)
                    && !inside(g, t)
                    && !inside(t, g)
            }
            Self::Crosses => match (dimension(g), dimension(t)) {
                (1, 1) => !same_orientation(g, t) && interiors_meet(g, t),
                (1, 2) => interiors_meet(g, t) && !inside(g, t),
                (2, 1) => interiors_meet(g, t) && !inside(t, g),
                _ => false,
            },
        }
    }
}

/// The dimension of the geometry a box is: 0 a point, 1 a segment, 2 a rectangle.
fn dimension<S: Scalar>(b: &Aabb<S>) -> u8 {
    u8::from(b.min.x < b.max.x) + u8::from(b.min.y < b.max.y)
}

/// Whether two segments run along the same axis.
fn same_orientation<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    (a.min.x < a.max.x) == (b.min.x < b.max.x)
}

/// Whether `a` lies in `b`.
fn inside<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    b.min.x <= a.min.x && a.max.x <= b.max.x && b.min.y <= a.min.y && a.max.y <= b.max.y
}

/// Whether the interiors of `a` and `b` share a point.
fn interiors_meet<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    meet(a.min.x, a.max.x, b.min.x, b.max.x) && meet(a.min.y, a.max.y, b.min.y, b.max.y)
}

/// Whether the interiors of `[a0, a1]` and `[b0, b1]` share a point: an interval's interior is
/// the open interval, or the point itself when it is one.
fn meet<S: Scalar>(a0: S, a1: S, b0: S, b1: S) -> bool {
    match (a0 < a1, b0 < b1) {
        (true, true) => a0 < b1 && b0 < a1,
        (true, false) => a0 < b0 && b0 < a1,
        (false, true) => b0 < a0 && a0 < b1,
        (false, false) => a0 == b0,
    }
}

/// Whether `[a0, a1]` lies in the interior of `[b0, b1]` (as [`meet`] reads it).
fn in_interior<S: Scalar>(a0: S, a1: S, b0: S, b1: S) -> bool {
    if b0 < b1 {
        b0 < a0 && a1 < b1
    } else {
        a0 == b0 && a1 == b0
    }
}

/// The `geometry` argument as rows of numbers read in place (the caller's array when it is
/// already C-contiguous in the index's precision), with which rows to leave out (shapely's
/// empty geometries and `None`, whose bounds are NaN) and whether it was one geometry (a 1-D
/// array, or a shapely geometry rather than an array of them).
pub(crate) struct Geometries<'py, S: PyScalar> {
    /// Boxes (4 columns) or points (2 columns), row after row.
    rows: Rows<'py, S>,
    /// Per row, where any row is: whether it matches nothing (an empty shapely geometry);
    /// empty when every row asks.
    pub(crate) empty: Vec<bool>,
    /// One geometry rather than an array of them.
    pub(crate) single: bool,
}

impl<'py, S: PyScalar> Geometries<'py, S> {
    /// Reads `obj`: numbers (`(n, 4)`, `(n, 2)`, `(4,)`, `(2,)`) or shapely geometries.
    ///
    /// # Errors
    /// `ValueError` naming the row for a NaN, infinite or inverted box given as numbers, and
    /// for another shape.
    pub(crate) fn read(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        // Arrow input is numbers (numpy would see a struct array as objects).
        let kind: String = if crate::arrow::is_arrow(obj)? {
            String::new()
        } else {
            py.import("numpy")?
                .call_method1("asarray", (obj,))
                .and_then(|a| a.getattr("dtype")?.getattr("kind")?.extract())
                .unwrap_or_default()
        };
        if kind == "O" {
            return Self::from_shapely(obj);
        }
        let rows = Rows::<S>::read_one_or_either(obj, 4, 2, "geometry")?;
        let flat = rows.flat();
        let bad = if rows.cols == 2 {
            first_bad_point(flat)
        } else {
            first_bad_box(flat)
        };
        if let Some(row) = bad {
            return Err(bad_row("geometry", flat, rows.cols, row));
        }
        Ok(Self {
            single: rows.single,
            rows,
            empty: Vec::new(),
        })
    }

    /// shapely geometries by their bounds (`shapely.bounds`).
    fn from_shapely(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let shapely = py.import("shapely").map_err(|_| {
            PyValueError::new_err(
                "geometry must be an array of numbers, or shapely geometries with shapely \
                 installed",
            )
        })?;
        let bounds = shapely.call_method1("bounds", (obj,)).map_err(|e| {
            PyValueError::new_err(format!("geometry: not shapely geometries: {}", e.value(py)))
        })?;
        let ndim: usize = bounds.getattr("ndim")?.extract()?;
        let rows = Rows::<S>::read_one_or_either(&bounds, 4, 4, "geometry")?;
        let empty: Vec<bool> = rows
            .flat()
            .chunks_exact(4)
            .map(|b| b.iter().any(|v| v.to_f64().is_nan()))
            .collect();
        Ok(Self {
            rows,
            empty: if empty.contains(&true) {
                empty
            } else {
                Vec::new()
            },
            single: ndim == 1,
        })
    }

    /// Number of geometries.
    pub(crate) fn len(&self) -> usize {
        self.rows.len
    }

    /// The numbers, row after row: [`Geometries::cols`] per row.
    pub(crate) fn flat(&self) -> &[S] {
        self.rows.flat()
    }

    /// Numbers per row: 4 (boxes) or 2 (points).
    pub(crate) fn cols(&self) -> usize {
        self.rows.cols
    }

    /// Refuses a geometry that is not a point, for `what`, which measures from points.
    ///
    /// # Errors
    /// `ValueError` naming the first such row.
    pub(crate) fn points_only(&self, what: &str) -> PyResult<()> {
        if self.cols() == 2 {
            return Ok(());
        }
        let flat = self.flat();
        let is_point = |b: &[S]| b[0] == b[2] && b[1] == b[3];
        let asks = |q: usize| self.empty.get(q) != Some(&true);
        match (0..self.len()).find(|&q| asks(q) && !is_point(&flat[4 * q..4 * q + 4])) {
            Some(q) => Err(PyValueError::new_err(format!(
                "geometry row {q} is not a point: {what} measures distances from points"
            ))),
            None => Ok(()),
        }
    }
}

/// Row `q` of `flat` (`cols` = 4: a box, 2: a point, a box of no size) as a box.
#[inline]
fn geometry_box<S: Scalar>(flat: &[S], cols: usize, q: usize) -> Aabb<S> {
    if cols == 2 {
        let p = point(flat, q);
        Aabb { min: p, max: p }
    } else {
        aabb(flat, q)
    }
}

/// The distances of `"dwithin"`, as given: one for every geometry, or one each.
enum Distances<S> {
    /// One for every geometry.
    One(S),
    /// Geometry `q`'s at `q`.
    Each(Vec<S>),
}

/// `distance` read as shapely reads it: a number, or anything numpy broadcasts to the `m`
/// geometries; a negative or NaN distance finds nothing, as shapely's.
///
/// # Errors
/// `ValueError` for values that are not numbers, or a shape that does not broadcast.
fn distances<S: PyScalar>(distance: &Bound<'_, PyAny>, m: usize) -> PyResult<Distances<S>> {
    let numpy = distance.py().import("numpy")?;
    let array = numpy
        .getattr("asarray")?
        .call1((distance, "float64"))
        .map_err(|e| {
            PyValueError::new_err(format!(
                "distance must be a number or numbers: {}",
                e.value(distance.py())
            ))
        })?;
    if array.getattr("ndim")?.extract::<usize>()? == 0 {
        return Ok(Distances::One(S::from_f64(array.extract::<f64>()?)));
    }
    let each = numpy
        .getattr("broadcast_to")?
        .call1((array, (m,)))
        .and_then(|a| numpy.getattr("ascontiguousarray")?.call1((a,)))
        .map_err(|_| {
            PyValueError::new_err(format!(
                "Could not broadcast distance to match geometry ({m})"
            ))
        })?;
    let each = each.cast::<PyArray1<f64>>()?.to_vec()?;
    Ok(Distances::Each(each.into_iter().map(S::from_f64).collect()))
}

/// What [`query`] asks the index, geometry by geometry.
pub(crate) enum Ask<'a, S> {
    /// The elements intersecting each box (flat `(m, 4)`): `batch::windows`.
    Windows(&'a [S]),
    /// The elements within the distance of each point (flat `(m, 2)`): `batch::within`.
    Within(&'a [S], Radii<'a, S>),
}

/// shapely's `query`: the tree elements each geometry's box meets under `predicate`, as the
/// `(2, n)` array of geometry and tree indices (a 1-D array of tree indices for one
/// geometry), geometry by geometry in input order, tree indices ascending within each.
/// `ask(what, workers)` finds the elements each geometry's box meets, or each point's radius
/// holds (see `batch::windows` and `batch::within`), which `predicate` then filters by the
/// element's box (`box_of`). The geometry is read in place when every row asks and boxes are
/// asked of boxes (or radii of points): only empty geometries, or points asked as windows,
/// make a copy of the rows that ask.
pub(crate) fn query<'py, S, W, B>(
    geometry: &Bound<'py, PyAny>,
    predicate: Option<&str>,
    distance: Option<&Bound<'py, PyAny>>,
    workers: i64,
    ask: W,
    box_of: B,
) -> PyResult<Bound<'py, PyAny>>
where
    S: PyScalar,
    W: FnOnce(Ask<'_, S>, Workers) -> Result<Hits, String> + Send,
    B: Fn(i64) -> Option<Aabb<S>> + Sync,
{
    let predicate = Predicate::parse(predicate)?;
    let workers = Workers::new(workers)?;
    let py = geometry.py();
    let geoms = Geometries::<S>::read(geometry)?;
    let radii = match (predicate, distance) {
        (Predicate::DWithin, Some(d)) => {
            geoms.points_only("predicate=\"dwithin\"")?;
            Some(distances::<S>(d, geoms.len())?)
        }
        (Predicate::DWithin, None) => {
            return Err(PyValueError::new_err(
                "predicate=\"dwithin\" needs a distance",
            ));
        }
        (_, Some(_)) => {
            return Err(PyValueError::new_err(
                "distance is read only with predicate=\"dwithin\"",
            ));
        }
        (_, None) => None,
    };
    let (flat, cols, empty, m) = (geoms.flat(), geoms.cols(), &geoms.empty[..], geoms.len());
    let single = geoms.single;
    let both = py
        .detach(|| {
            // Empty geometries ask nothing: the others are asked, numbered from 0, and
            // numbered back afterwards. Without any, the rows are asked where they lie.
            let asked: Option<Vec<usize>> =
                (!empty.is_empty()).then(|| (0..m).filter(|&q| !empty[q]).collect());
            let row = |k: usize| asked.as_ref().map_or(k, |asked| asked[k]);
            let n = asked.as_ref().map_or(m, Vec::len);
            let Hits {
                mut offsets,
                mut found,
            } = match &radii {
                Some(Distances::One(r)) if cols == 2 && asked.is_none() => {
                    ask(Ask::Within(flat, Radii::One(*r)), workers)?
                }
                Some(Distances::Each(each)) if cols == 2 && asked.is_none() => {
                    ask(Ask::Within(flat, Radii::Each(each)), workers)?
                }
                Some(distances) => {
                    let points: Vec<S> = (0..n)
                        .flat_map(|k| [flat[cols * row(k)], flat[cols * row(k) + 1]])
                        .collect();
                    match distances {
                        Distances::One(r) => ask(Ask::Within(&points, Radii::One(*r)), workers)?,
                        Distances::Each(each) => {
                            let each: Vec<S> = (0..n).map(|k| each[row(k)]).collect();
                            ask(Ask::Within(&points, Radii::Each(&each)), workers)?
                        }
                    }
                }
                None if cols == 4 && asked.is_none() => ask(Ask::Windows(flat), workers)?,
                None => {
                    let windows: Vec<S> = (0..n)
                        .flat_map(|k| {
                            let b = geometry_box(flat, cols, row(k));
                            [b.min.x, b.min.y, b.max.x, b.max.y]
                        })
                        .collect();
                    ask(Ask::Windows(&windows), workers)?
                }
            };
            if !matches!(predicate, Predicate::Intersects | Predicate::DWithin) {
                // Kept ids move down in place; each geometry's run then ends where its
                // kept ones do.
                let (mut kept, mut start) = (0, 0);
                for k in 0..n {
                    let (g, end) = (geometry_box(flat, cols, row(k)), offsets[k + 1]);
                    for i in start..end {
                        let id = found[i];
                        if box_of(id).is_some_and(|t| predicate.holds(&g, &t)) {
                            found[kept] = id;
                            kept += 1;
                        }
                    }
                    (offsets[k + 1], start) = (kept, end);
                }
                found.truncate(kept);
            }
            // Each geometry's ids ascending, sorted where they lie.
            for w in offsets.windows(2) {
                found[w[0]..w[1]].sort_unstable();
            }
            if single {
                return Ok::<_, String>(found);
            }
            // The (2, n) result: geometry indices, then ids.
            let mut both = Vec::with_capacity(2 * found.len());
            for (k, w) in offsets.windows(2).enumerate() {
                both.extend(core::iter::repeat_n(row(k) as i64, w[1] - w[0]));
            }
            both.extend_from_slice(&found);
            Ok(both)
        })
        .map_err(pool_error)?;
    if geoms.single {
        return Ok(vec1(py, both));
    }
    let n = both.len() / 2;
    vec2(py, both, 2, n, false)
}

/// The elements nearest to `p` (every one at the least distance), their ids into `out`
/// (cleared first), and that distance; `None` for an empty index (or one holding nothing
/// but what `exclusive` leaves out). With `exclusive`, elements whose box is the point `p`
/// itself (shapely's geometries equal to the input) are left out.
pub(crate) fn nearest_ties<S, I>(
    index: &I,
    p: Point<S>,
    exclusive: bool,
    workspace: &mut Workspace<S>,
    id: impl Fn(Handle) -> i64,
    out: &mut Vec<i64>,
) -> Option<S>
where
    S: Scalar,
    I: SpatialQuery<S, ()>,
{
    out.clear();
    let equal = |h: Handle| {
        exclusive
            && index
                .get(h)
                .is_some_and(|item| item.aabb.min == p && item.aabb.max == p)
    };
    // Ask for more neighbours until one is farther than the first kept: then every tie is in.
    let mut k = 1;
    loop {
        let near = index.nearest(p, k, workspace);
        let mut kept = near.iter().filter(|n| !equal(n.handle));
        let Some(first) = kept.next() else {
            if near.len() < k {
                return None;
            }
            k *= 2;
            continue;
        };
        let least = first.distance;
        if near.len() < k || near[k - 1].distance > least {
            out.extend(
                near.iter()
                    .filter(|n| n.distance == least && !equal(n.handle))
                    .map(|n| id(n.handle)),
            );
            return Some(least);
        }
        k *= 2;
    }
}

/// How shapely's `query_nearest` is asked, beyond the geometry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NearestArgs {
    /// Leave out points whose nearest element is farther.
    pub(crate) max_distance: Option<f64>,
    /// Also return the distances.
    pub(crate) return_distance: bool,
    /// Leave out elements equal to the point (see [`nearest_ties`]).
    pub(crate) exclusive: bool,
    /// Every element at the least distance (else the one of lowest index).
    pub(crate) all_matches: bool,
    /// Threads to spread the points over.
    pub(crate) workers: i64,
}

/// shapely's `query_nearest`: for each point, every tree element at the least distance (all
/// of them when several tie, by `ties(p, exclusive, ..)`: see [`nearest_ties`]; the one of
/// lowest tree index unless `all_matches`), within `max_distance` when given; the `(2, n)`
/// array of point and tree indices, points in input order and tree indices ascending (the
/// tree indices alone for one point), and the distances too when `return_distance`.
pub(crate) fn query_nearest<'py, S>(
    geometry: &Bound<'py, PyAny>,
    args: NearestArgs,
    ties: impl Fn(Point<S>, bool, &mut Workspace<S>, &mut Vec<i64>) -> Option<S> + Sync,
) -> PyResult<Bound<'py, PyAny>>
where
    S: PyScalar,
{
    let py = geometry.py();
    let NearestArgs {
        max_distance,
        return_distance,
        exclusive,
        all_matches,
        workers,
    } = args;
    if let Some(d) = max_distance.filter(|d| d.is_nan() || *d < 0.0) {
        return Err(PyValueError::new_err(format!(
            "max_distance must be a number of at least 0, got {d}"
        )));
    }
    let workers = Workers::new(workers)?;
    let geoms = Geometries::<S>::read(geometry)?;
    geoms.points_only("query_nearest")?;
    let (flat, cols, empty, m) = (geoms.flat(), geoms.cols(), &geoms.empty[..], geoms.len());
    let (offsets, found) = py
        .detach(|| {
            batch::per_query_with(
                m,
                workers,
                || (Workspace::new(), Vec::new()),
                |q, (workspace, tied), found: &mut Vec<(i64, f64)>| {
                    if empty.get(q) == Some(&true) {
                        return;
                    }
                    let p = Point::new(flat[cols * q], flat[cols * q + 1]);
                    let Some(least) = ties(p, exclusive, workspace, tied) else {
                        return;
                    };
                    if max_distance.is_some_and(|m| least.to_f64() > m) {
                        return;
                    }
                    tied.sort_unstable();
                    let kept = if all_matches { &tied[..] } else { &tied[..1] };
                    found.extend(kept.iter().map(|&t| (t, least.to_f64())));
                },
            )
        })
        .map_err(pool_error)?;
    let n = found.len();
    let trees = found.iter().map(|&(t, _)| t);
    let indices = if geoms.single {
        vec1(py, trees.collect())
    } else {
        let mut both = Vec::with_capacity(2 * n);
        for (q, w) in offsets.windows(2).enumerate() {
            both.extend(std::iter::repeat_n(q as i64, w[1] - w[0]));
        }
        both.extend(trees);
        vec2(py, both, 2, n, false)?
    };
    if return_distance {
        let distances = found.into_iter().map(|(_, d)| d).collect();
        Ok((indices, vec1(py, distances)).into_pyobject(py)?.into_any())
    } else {
        Ok(indices)
    }
}

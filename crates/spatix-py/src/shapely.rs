//! shapely's `STRtree` conventions on the box indexes: `query(geometry, predicate=...)`
//! returning the `(2, n)` array of input and tree indices, and `query_nearest`. Geometries are
//! `(n, 4)` boxes, `(n, 2)` points, one box or point as a 1-D array, or shapely geometries
//! (their bounds). Predicates are tested on the boxes themselves, never on exact geometry.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spatix::{Aabb, Handle, Point, Scalar, SpatialQuery, Workspace};

use crate::array::{Coord, Rows, bad_row, boxes, first_bad_box, vec1, vec2};
use crate::batch::{self, Workers, pool_error};

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
            "dwithin" => Self::DWithin,
            other => {
                return Err(PyValueError::new_err(format!(
                    "predicate must be one of intersects, contains, within, \
                     contains_properly, covers, covered_by, touches, dwithin (or None), got \
                     {other:?}"
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
        }
    }
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

/// The `geometry` argument as boxes, flat, with which rows to leave out (shapely's empty
/// geometries and `None`, whose bounds are NaN) and whether it was one geometry (a 1-D
/// array, or a shapely geometry rather than an array of them).
pub(crate) struct Geometries<S> {
    /// Boxes, row after row; a point is a box of zero size.
    pub(crate) flat: Vec<S>,
    /// Per row: whether it matches nothing (an empty shapely geometry).
    pub(crate) empty: Vec<bool>,
    /// One geometry rather than an array of them.
    pub(crate) single: bool,
}

impl<S: Coord> Geometries<S> {
    /// Reads `obj`: numbers (`(n, 4)`, `(n, 2)`, `(4,)`, `(2,)`) or shapely geometries.
    ///
    /// # Errors
    /// `ValueError` naming the row for a NaN, infinite or inverted box given as numbers, and
    /// for another shape.
    pub(crate) fn read(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let kind: String = py
            .import("numpy")?
            .call_method1("asarray", (obj,))
            .and_then(|a| a.getattr("dtype")?.getattr("kind")?.extract())
            .unwrap_or_default();
        if kind == "O" {
            return Self::from_shapely(obj);
        }
        let rows = Rows::<S>::read_one_or_either(obj, 4, 2, "geometry")?;
        let flat: Vec<S> = if rows.cols == 2 {
            rows.flat()
                .chunks_exact(2)
                .flat_map(|p| [p[0], p[1], p[0], p[1]])
                .collect()
        } else {
            rows.flat().to_vec()
        };
        if let Some(row) = first_bad_box(&flat) {
            return Err(bad_row("geometry", rows.flat(), rows.cols, row));
        }
        Ok(Self {
            empty: vec![false; rows.len],
            flat,
            single: rows.single,
        })
    }

    /// shapely geometries by their bounds (`shapely.bounds`).
    fn from_shapely(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
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
        let flat = rows.flat().to_vec();
        let empty = flat
            .chunks_exact(4)
            .map(|b| b.iter().any(|v| v.to_f64().is_nan()))
            .collect();
        Ok(Self {
            flat,
            empty,
            single: ndim == 1,
        })
    }

    /// Number of geometries.
    pub(crate) fn len(&self) -> usize {
        self.empty.len()
    }

    /// Refuses a geometry that is not a point, for `what`, which measures from points.
    ///
    /// # Errors
    /// `ValueError` naming the first such row.
    pub(crate) fn points_only(&self, what: &str) -> PyResult<()> {
        let is_point = |b: &[S]| b[0] == b[2] && b[1] == b[3];
        match (0..self.len()).find(|&q| !self.empty[q] && !is_point(&self.flat[4 * q..4 * q + 4])) {
            Some(q) => Err(PyValueError::new_err(format!(
                "geometry row {q} is not a point: {what} measures distances from points"
            ))),
            None => Ok(()),
        }
    }
}

/// What [`query`] asks the index, geometry by geometry.
pub(crate) enum Ask<'a, S> {
    /// The elements intersecting each box (flat `(m, 4)`): `batch::windows`.
    Windows(&'a [S]),
    /// The elements within the distance of each point (flat `(m, 2)`): `batch::within`.
    Within(&'a [S], S),
}

/// shapely's `query`: the tree elements each geometry's box meets under `predicate`, as the
/// `(2, n)` array of geometry and tree indices (a 1-D array of tree indices for one
/// geometry), geometry by geometry in input order, tree indices ascending within each.
/// `windows(flat, workers)` answers the intersecting ones (see `batch::windows`), which
/// `predicate` then filters by the element's box (`box_of`).
pub(crate) fn query<'py, S, W, B>(
    geometry: &Bound<'py, PyAny>,
    predicate: Option<&str>,
    distance: Option<f64>,
    workers: i64,
    ask: W,
    box_of: B,
) -> PyResult<Bound<'py, PyAny>>
where
    S: Coord,
    W: FnOnce(Ask<'_, S>, Workers) -> Result<(Vec<i64>, Vec<i64>), String> + Send,
    B: Fn(i64) -> Option<Aabb<S>> + Sync,
{
    let predicate = Predicate::parse(predicate)?;
    let workers = Workers::new(workers)?;
    let radius = match (predicate, distance) {
        (Predicate::DWithin, Some(d)) if d >= 0.0 => Some(S::from_f64(d)),
        (Predicate::DWithin, _) => {
            return Err(PyValueError::new_err(
                "predicate=\"dwithin\" needs a distance of at least 0",
            ));
        }
        (_, Some(_)) => {
            return Err(PyValueError::new_err(
                "distance is read only with predicate=\"dwithin\"",
            ));
        }
        (_, None) => None,
    };
    let py = geometry.py();
    let geoms = Geometries::<S>::read(geometry)?;
    if radius.is_some() {
        geoms.points_only("predicate=\"dwithin\"")?;
    }
    let (queries, found) = py
        .detach(|| {
            // Empty geometries ask nothing: they are left out and the rest renumbered back.
            let asked: Vec<usize> = (0..geoms.len()).filter(|&q| !geoms.empty[q]).collect();
            let flat: Vec<S> = asked
                .iter()
                .flat_map(|&q| geoms.flat[4 * q..4 * q + 4].iter().copied())
                .collect();
            let (queries, found) = match radius {
                Some(r) => {
                    let points: Vec<S> = flat.chunks_exact(4).flat_map(|b| [b[0], b[1]]).collect();
                    ask(Ask::Within(&points, r), workers)?
                }
                None => ask(Ask::Windows(&flat), workers)?,
            };
            let boxes: Vec<Aabb<S>> = boxes(&flat).collect();
            let mut pairs: Vec<(i64, i64)> = queries
                .into_iter()
                .zip(found)
                .filter(|&(q, id)| {
                    matches!(predicate, Predicate::Intersects | Predicate::DWithin)
                        || box_of(id).is_some_and(|t| predicate.holds(&boxes[q as usize], &t))
                })
                .map(|(q, id)| (asked[q as usize] as i64, id))
                .collect();
            pairs.sort_unstable();
            Ok::<_, String>(pairs.into_iter().unzip::<_, _, Vec<i64>, Vec<i64>>())
        })
        .map_err(pool_error)?;
    if geoms.single {
        return Ok(vec1(py, found));
    }
    let n = found.len();
    let mut both = queries;
    both.extend(found);
    vec2(py, both, 2, n, false)
}

/// The elements nearest to `p` (every one at the least distance), their ids into `out`
/// (cleared first), and that distance; `None` for an empty index.
pub(crate) fn nearest_ties<S, I>(
    index: &I,
    p: Point<S>,
    workspace: &mut Workspace<S>,
    id: impl Fn(Handle) -> i64,
    out: &mut Vec<i64>,
) -> Option<S>
where
    S: Scalar,
    I: SpatialQuery<S, ()>,
{
    out.clear();
    // Ask for more neighbours until one is farther than the first: then every tie is in.
    let mut k = 1;
    loop {
        let near = index.nearest(p, k, workspace);
        let least = near.first()?.distance;
        if near.len() < k || near[k - 1].distance > least {
            out.extend(
                near.iter()
                    .take_while(|n| n.distance == least)
                    .map(|n| id(n.handle)),
            );
            return Some(least);
        }
        k *= 2;
    }
}

/// shapely's `query_nearest`: for each point, every tree element at the least distance (all
/// of them when several tie, by `ties`: see [`nearest_ties`]), within `max_distance` when
/// given; the `(2, n)` array of point and tree indices, points in input order and tree
/// indices ascending (the tree indices alone for one point), and the distances too when
/// `return_distance`.
pub(crate) fn query_nearest<'py, S>(
    geometry: &Bound<'py, PyAny>,
    max_distance: Option<f64>,
    return_distance: bool,
    workers: i64,
    ties: impl Fn(Point<S>, &mut Workspace<S>, &mut Vec<i64>) -> Option<S> + Sync,
) -> PyResult<Bound<'py, PyAny>>
where
    S: Coord,
{
    let py = geometry.py();
    if let Some(d) = max_distance.filter(|d| d.is_nan() || *d < 0.0) {
        return Err(PyValueError::new_err(format!(
            "max_distance must be a number of at least 0, got {d}"
        )));
    }
    let workers = Workers::new(workers)?;
    let geoms = Geometries::<S>::read(geometry)?;
    geoms.points_only("query_nearest")?;
    let (offsets, found) = py
        .detach(|| {
            batch::per_query_with(
                geoms.len(),
                workers,
                || (Workspace::new(), Vec::new()),
                |q, (workspace, tied), found: &mut Vec<(i64, f64)>| {
                    if geoms.empty[q] {
                        return;
                    }
                    let p = Point::new(geoms.flat[4 * q], geoms.flat[4 * q + 1]);
                    let Some(least) = ties(p, workspace, tied) else {
                        return;
                    };
                    if max_distance.is_some_and(|m| least.to_f64() > m) {
                        return;
                    }
                    tied.sort_unstable();
                    found.extend(tied.iter().map(|&t| (t, least.to_f64())));
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

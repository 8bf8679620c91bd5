//! The paths for boxes that move every frame: `SweepGrid.update` in bulk (one walk of the
//! grid in its storage order, `SpatialIndex::update_all`) and `spatix.pairs`, every
//! intersecting pair of a set of boxes in one call (a `PackedIndex` built for them, then its
//! pair pass).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spatix::{Aabb, Handle, Point, SpatialIndex, SpatialQuery, SweepGrid};

use crate::array::{PyScalar, Rows, aabb, check_boxes, is_float32, vec2};
use crate::batch::{self, Workers};

/// Below one moved element in this many, `update` moves them one by one (each finds its
/// place by a binary search); from there on, one walk of the whole grid costs less.
const WALK_FRACTION: usize = 8;

/// The order to insert a large batch of boxes (an eighth of the elements or more) in: band
/// by band, left to right, as the grid stores them, so that their slots (given in turn on
/// an empty grid) follow the storage order and a frame's walk reads the slot table, and the
/// table of new boxes [`update`] fills, nearly in order. `None` (as given) for a small batch.
pub(crate) fn insert_order<S: PyScalar>(grid: &SweepGrid<S, ()>, flat: &[S]) -> Option<Vec<u32>> {
    let n = flat.len() / 4;
    if n < 2 || n * WALK_FRACTION < grid.len() {
        return None;
    }
    let (bottom, height) = (grid.world().min.y.to_f64(), grid.band_height().to_f64());
    let last = (grid.band_count() - 1) as f64;
    let band =
        |row: usize| ((flat[4 * row + 1].to_f64() - bottom) / height).clamp(0.0, last) as u32;
    let mut keys: Vec<(u32, u32)> = (0..n as u32).map(|row| (band(row as usize), row)).collect();
    keys.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| {
            let (x, y) = (flat[4 * a.1 as usize], flat[4 * b.1 as usize]);
            x.partial_cmp(&y).unwrap_or(core::cmp::Ordering::Equal)
        })
    });
    Some(keys.into_iter().map(|(_, row)| row).collect())
}

/// Moves element `handles[i]` of `grid` to box `i` of the flat `(n, 4)` slice. The handles
/// are live and distinct and the boxes valid (the caller checked them). A large batch is one
/// [`SpatialIndex::update_all`] walk in the grid's storage order: the boxes are first
/// scattered into a table by slot (one pass in the input's order), which the walk reads by
/// the slot of each element it meets (an invalid box in the table: the element stays).
pub(crate) fn update<S: PyScalar>(grid: &mut SweepGrid<S, ()>, handles: &[Handle], flat: &[S]) {
    if handles.len() * WALK_FRACTION < grid.len() {
        for (i, &h) in handles.iter().enumerate() {
            // Checked beforehand: a live element and a valid box.
            let _ = grid.update(h, aabb(flat, i));
        }
        return;
    }
    let slots = handles
        .iter()
        .map(|h| h.slot() as usize + 1)
        .max()
        .unwrap_or(0);
    let stays = Aabb {
        min: Point::new(S::INFINITY, S::INFINITY),
        max: Point::new(-S::INFINITY, -S::INFINITY),
    };
    let mut table = vec![stays; slots];
    for (row, h) in handles.iter().enumerate() {
        table[h.slot() as usize] = aabb(flat, row);
    }
    // Every box in the table is valid or `stays`: the walk refuses none.
    let _ = grid.update_all(|handle, (), old| match table.get(handle.slot() as usize) {
        Some(new) if new.is_valid() => *new,
        _ => *old,
    });
}

/// Every intersecting pair of `boxes` (an `(n, 4)` array, ``xmin, ymin, xmax, ymax``) as an
/// `(m, 2)` `int64` array of row indices `i < j`, sorted (by `i`, then `j`). Boxes are closed
/// (touching boxes intersect). ``float32`` input is computed in ``float32``, any other in
/// ``float64``. ``workers`` threads (-1: every core) find and sort the pairs; the result is
/// the same on any number.
///
/// The boxes are put in a packed Hilbert index built for them (``PackedIndex``), whose pair
/// pass finds the pairs: of the library's build-then-pair paths, the fastest for a set of
/// boxes that changes every frame (faster than building a ``SweepGrid`` or a grid). No index
/// is kept between calls.
///
/// Raises ``ValueError`` for an array of another shape, values that are not numbers, or a
/// box with a NaN or infinite coordinate or min above max (naming its row).
///
/// Examples
/// --------
/// >>> import numpy as np, spatix
/// >>> spatix.pairs(np.array([[0, 0, 2, 2], [1, 1, 3, 3], [5, 5, 6, 6], [2, 0, 4, 1]]))
/// array([[0, 1],
///        [0, 3],
///        [1, 3]])
#[pyfunction]
#[pyo3(signature = (boxes, workers = 1))]
pub(crate) fn pairs<'py>(
    py: Python<'py>,
    boxes: &Bound<'py, PyAny>,
    workers: i64,
) -> PyResult<Bound<'py, PyAny>> {
    let workers = Workers::new(workers)?;
    if is_float32(boxes) {
        pairs_in::<f32>(py, boxes, workers)
    } else {
        pairs_in::<f64>(py, boxes, workers)
    }
}

/// [`pairs`] in precision `S`.
fn pairs_in<'py, S: PyScalar>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    workers: Workers,
) -> PyResult<Bound<'py, PyAny>> {
    let rows = Rows::<S>::read(obj, 4, "boxes")?;
    let flat = rows.flat();
    check_boxes("boxes", flat)?;
    if u32::try_from(rows.len).map_or(true, |n| n == u32::MAX) {
        return Err(PyValueError::new_err(format!(
            "boxes: {} rows, more than spatix.pairs takes (2^32 - 2)",
            rows.len
        )));
    }
    let keys = py
        .detach(|| batch::sorted_pairs(flat, workers))
        .map_err(batch::pool_error)?;
    let m = keys.len();
    let mut out = Vec::with_capacity(2 * m);
    for key in keys {
        out.extend_from_slice(&[(key >> 32) as i64, (key & u64::from(u32::MAX)) as i64]);
    }
    vec2(py, out, m, 2, false)
}

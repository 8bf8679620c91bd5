//! Arrays in: any array-like of the right shape, read as a flat slice of `f32` or `f64`
//! coordinates (converted once where the dtype or the memory layout differ), with the first
//! invalid row named in a `ValueError`. Arrays out: `int64` and float arrays that take
//! ownership of the Rust vectors (no copy).

use numpy::ndarray::{Array2, IxDyn};
use numpy::{
    AllowTypeChange, Element, IntoPyArray, PyArrayDyn, PyArrayLike, PyArrayMethods,
    PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use spatix::{Aabb, Handle, Point, Scalar};

/// A coordinate type both spatix and numpy know, with the square root distances need.
pub(crate) trait Coord: Scalar + Element {
    /// The square root (distances are reported, not their squares).
    fn sqrt(self) -> Self;
}

impl Coord for f32 {
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
}

impl Coord for f64 {
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
}

/// Whether `obj` is a numpy array of `float32` (the one input indexed in `f32`; every other
/// dtype is read as `float64`).
pub(crate) fn is_float32(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyArrayDyn<f32>>().is_ok()
}

/// A `(rows, cols)` array of coordinates as one row-major slice: the caller's array itself
/// when it already has dtype `S` and is C-contiguous and aligned, else a copy numpy made.
pub(crate) struct Rows<'py, S: Element> {
    array: PyReadonlyArrayDyn<'py, S>,
    /// Number of rows.
    pub(crate) len: usize,
    /// Coordinates per row.
    pub(crate) cols: usize,
}

impl<'py, S: Coord> Rows<'py, S> {
    /// Reads `obj` as an array of shape `(n, cols)` (an empty array of any shape is zero
    /// rows). `what` names the argument in errors.
    ///
    /// # Errors
    /// `ValueError` for another shape or for values numpy cannot convert to `S`.
    pub(crate) fn read(obj: &Bound<'py, PyAny>, cols: usize, what: &str) -> PyResult<Self> {
        Self::read_either(obj, cols, cols, what)
    }

    /// [`Rows::read`] for an array of shape `(n, cols)` or `(n, other)` (`cols` when empty).
    ///
    /// # Errors
    /// As [`Rows::read`].
    pub(crate) fn read_either(
        obj: &Bound<'py, PyAny>,
        cols: usize,
        other: usize,
        what: &str,
    ) -> PyResult<Self> {
        let py = obj.py();
        // C-contiguous and aligned ("CA"): a slice of `S` can be taken only then (numpy
        // hands out arrays at odd addresses, e.g. from `frombuffer` or unpickled bytes).
        let converted = py
            .import("numpy")?
            .getattr("require")?
            .call1((obj, numpy::dtype::<S>(py), "CA"))
            .map_err(|e| {
                PyValueError::new_err(format!(
                    "{what} must be an array of shape (n, {cols}) of numbers: {e}"
                ))
            })?;
        let array = converted
            .cast::<PyArrayDyn<S>>()
            .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?
            .readonly();
        let shape = array.shape();
        let (len, cols) = match *shape {
            [n, c] if c == cols || c == other => (n, c),
            _ if array.len() == 0 => (0, cols),
            _ => {
                let expected = if other == cols {
                    format!("(n, {cols})")
                } else {
                    format!("(n, {cols}) or (n, {other})")
                };
                return Err(PyValueError::new_err(format!(
                    "{what} must be an array of shape {expected}, got shape {shape:?}"
                )));
            }
        };
        if array.as_slice().is_err() {
            return Err(PyValueError::new_err(format!(
                "{what}: numpy did not give a contiguous, aligned array"
            )));
        }
        Ok(Self { array, len, cols })
    }

    /// The coordinates, row after row.
    pub(crate) fn flat(&self) -> &[S] {
        self.array
            .as_slice()
            .expect("`read` checked that the array is contiguous and aligned")
    }
}

/// Row `i` of a flat `(n, 2)` slice as a point.
#[inline]
pub(crate) fn point<S: Scalar>(flat: &[S], i: usize) -> Point<S> {
    Point::new(flat[2 * i], flat[2 * i + 1])
}

/// Row `i` of a flat `(n, 4)` slice (`min_x, min_y, max_x, max_y`) as a box, unchecked.
#[inline]
pub(crate) fn aabb<S: Scalar>(flat: &[S], i: usize) -> Aabb<S> {
    let r = &flat[4 * i..4 * i + 4];
    Aabb {
        min: Point::new(r[0], r[1]),
        max: Point::new(r[2], r[3]),
    }
}

/// The points of a flat `(n, 2)` slice.
pub(crate) fn points<S: Scalar>(flat: &[S]) -> impl ExactSizeIterator<Item = Point<S>> + '_ {
    flat.chunks_exact(2).map(|r| Point::new(r[0], r[1]))
}

/// The boxes of a flat `(n, 4)` slice, unchecked.
pub(crate) fn boxes<S: Scalar>(flat: &[S]) -> impl ExactSizeIterator<Item = Aabb<S>> + '_ {
    flat.chunks_exact(4).map(|r| Aabb {
        min: Point::new(r[0], r[1]),
        max: Point::new(r[2], r[3]),
    })
}

/// The first row of a flat `(n, 2)` slice with a NaN or infinite coordinate.
pub(crate) fn first_bad_point<S: Scalar>(flat: &[S]) -> Option<usize> {
    points(flat).position(|p| !p.is_finite())
}

/// The first row of a flat `(n, 4)` slice that is not a valid box (NaN, infinite, min > max).
pub(crate) fn first_bad_box<S: Scalar>(flat: &[S]) -> Option<usize> {
    boxes(flat).position(|b| !b.is_valid())
}

/// `ValueError` naming row `row` of `what` (`cols` coordinates per row) and what is wrong.
pub(crate) fn bad_row<S: Scalar>(what: &str, flat: &[S], cols: usize, row: usize) -> PyErr {
    let values: Vec<String> = flat[cols * row..cols * row + cols]
        .iter()
        .map(|v| format!("{}", v.to_f64()))
        .collect();
    let why = if cols == 4 {
        "a coordinate is NaN or infinite, or min > max"
    } else {
        "a coordinate is NaN or infinite"
    };
    PyValueError::new_err(format!(
        "{what} row {row} is invalid: [{}]: {why}",
        values.join(", ")
    ))
}

/// Checks every row of a flat `(n, 2)` slice of points.
///
/// # Errors
/// `ValueError` naming the first row with a NaN or infinite coordinate.
pub(crate) fn check_points<S: Scalar>(what: &str, flat: &[S]) -> PyResult<()> {
    match first_bad_point(flat) {
        Some(row) => Err(bad_row(what, flat, 2, row)),
        None => Ok(()),
    }
}

/// Checks every row of a flat `(n, 4)` slice of boxes.
///
/// # Errors
/// `ValueError` naming the first invalid box.
pub(crate) fn check_boxes<S: Scalar>(what: &str, flat: &[S]) -> PyResult<()> {
    match first_bad_box(flat) {
        Some(row) => Err(bad_row(what, flat, 4, row)),
        None => Ok(()),
    }
}

/// An element's id as Python sees it: the handle's 64 bits.
#[inline]
pub(crate) fn id_of(handle: Handle) -> i64 {
    handle.to_bits() as i64
}

/// The handle an id names (it may be stale: the index says so).
#[inline]
pub(crate) fn handle_of(id: i64) -> Handle {
    Handle::from_bits(id as u64)
}

/// `KeyError` for an id that names no element of the index.
pub(crate) fn stale(id: i64, position: usize) -> PyErr {
    PyKeyError::new_err(format!(
        "ids[{position}] = {id} names no element of this index (removed, or from another index)"
    ))
}

/// A 1-D array owning `v`.
pub(crate) fn vec1<T: Element>(py: Python<'_>, v: Vec<T>) -> Bound<'_, PyAny> {
    v.into_pyarray(py).into_any()
}

/// `v` (`rows × cols` values, row-major) as a 2-D array; 1-D of length `rows` when
/// `squeeze` and `cols == 1` (scipy's shape for `k = 1`).
pub(crate) fn vec2<T: Element>(
    py: Python<'_>,
    v: Vec<T>,
    rows: usize,
    cols: usize,
    squeeze: bool,
) -> PyResult<Bound<'_, PyAny>> {
    if squeeze && cols == 1 {
        return Ok(vec1(py, v));
    }
    let array = Array2::from_shape_vec((rows, cols), v)
        .map_err(|e| PyValueError::new_err(format!("result of the wrong size: {e}")))?;
    Ok(array.into_pyarray(py).into_any())
}

/// Reads a 1-D array of ids.
///
/// # Errors
/// `ValueError` unless `obj` converts to a 1-D `int64` array.
pub(crate) fn ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let array = obj
        .extract::<PyArrayLike<'_, i64, IxDyn, AllowTypeChange>>()
        .map_err(|e| PyValueError::new_err(format!("ids must be a 1-D array of int64: {e}")))?;
    if array.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "ids must be a 1-D array of int64, got shape {:?}",
            array.shape()
        )));
    }
    Ok(array.as_array().iter().copied().collect())
}

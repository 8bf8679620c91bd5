//! Arrays in: any array-like of the right shape, read as a flat slice of `f32` or `f64`
//! coordinates (converted once where the dtype or the memory layout differ), with the first
//! invalid row named in a `ValueError`. Arrays out: `int64` and float arrays that take
//! ownership of the Rust vectors (no copy).

use numpy::ndarray::{Array2, IxDyn};
use numpy::{
    AllowTypeChange, Element, IntoPyArray, PyArrayDyn, PyArrayLike, PyArrayMethods,
    PyReadonlyArrayDyn, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use spatix::{Aabb, Handle, Point, Scalar};

pub(crate) use crate::scalar::{PyScalar, narrow};

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
    /// Whether the input was one row given as a 1-D array of `cols` values
    /// ([`Rows::read_one_or_many`]).
    pub(crate) single: bool,
}

impl<'py, S: PyScalar> Rows<'py, S> {
    /// Reads `obj` as an array of shape `(n, cols)` (an empty array of any shape is zero
    /// rows). `what` names the argument in errors.
    ///
    /// # Errors
    /// `ValueError` for another shape or for values numpy cannot convert to `S`.
    pub(crate) fn read(obj: &Bound<'py, PyAny>, cols: usize, what: &str) -> PyResult<Self> {
        Self::read_either(obj, cols, cols, what)
    }

    /// [`Rows::read`] that also takes one row as a 1-D array of `cols` values (scipy's
    /// single query point), read as one row with [`Rows::single`] set.
    ///
    /// # Errors
    /// As [`Rows::read`].
    pub(crate) fn read_one_or_many(
        obj: &Bound<'py, PyAny>,
        cols: usize,
        what: &str,
    ) -> PyResult<Self> {
        Self::read_shaped(obj, cols, cols, true, what)
    }

    /// [`Rows::read_either`] that also takes one row as a 1-D array of `cols` or `other`
    /// values, read as one row with [`Rows::single`] set.
    ///
    /// # Errors
    /// As [`Rows::read`].
    pub(crate) fn read_one_or_either(
        obj: &Bound<'py, PyAny>,
        cols: usize,
        other: usize,
        what: &str,
    ) -> PyResult<Self> {
        Self::read_shaped(obj, cols, other, true, what)
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
        Self::read_shaped(obj, cols, other, false, what)
    }

    /// [`Rows::read_either`], taking a 1-D array of `cols` values as one row where `one`.
    fn read_shaped(
        obj: &Bound<'py, PyAny>,
        cols: usize,
        other: usize,
        one: bool,
        what: &str,
    ) -> PyResult<Self> {
        let py = obj.py();
        if crate::arrow::is_arrow(obj)? {
            // Arrow columns, copied once into rows (see `crate::arrow`).
            let (flat, cols) = crate::arrow::read::<S>(obj, cols, other, what)?;
            let len = flat.len() / cols;
            let array = numpy::ndarray::ArrayD::from_shape_vec(IxDyn(&[len, cols]), flat)
                .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?
                .into_pyarray(py)
                .readonly();
            return Ok(Self {
                array,
                len,
                cols,
                single: false,
            });
        }
        let numpy = py.import("numpy")?;
        let clamped;
        let obj = if S::CLAMPS && obj.cast::<PyArrayDyn<S>>().is_err() {
            clamped = clamp_finite::<S>(&numpy, obj).map_err(|e| {
                PyValueError::new_err(format!(
                    "{what} must be an array of shape (n, {cols}) of numbers: {}",
                    e.value(py)
                ))
            })?;
            &clamped
        } else {
            obj
        };
        // C-contiguous and aligned ("CA"): a slice of `S` can be taken only then (numpy
        // hands out arrays at odd addresses, e.g. from `frombuffer` or unpickled bytes).
        let converted = numpy
            .getattr("require")?
            .call1((obj, numpy::dtype::<S>(py), "CA"))
            .map_err(|e| {
                PyValueError::new_err(format!(
                    "{what} must be an array of shape (n, {cols}) of numbers: {}",
                    e.value(py)
                ))
            })?;
        let array = converted
            .cast::<PyArrayDyn<S>>()
            .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))?
            .readonly();
        let shape = array.shape();
        let (len, cols, single) = match *shape {
            [n, c] if c == cols || c == other => (n, c, false),
            [c] if one && (c == cols || c == other) => (1, c, true),
            _ if array.len() == 0 => (0, cols, false),
            _ => {
                let expected = if one && other != cols {
                    format!("({cols},), ({other},), (n, {cols}) or (n, {other})")
                } else if one {
                    format!("({cols},) or (n, {cols})")
                } else if other == cols {
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
        Ok(Self {
            array,
            len,
            cols,
            single,
        })
    }

    /// The coordinates, row after row.
    pub(crate) fn flat(&self) -> &[S] {
        self.array
            .as_slice()
            .expect("`read` checked that the array is contiguous and aligned")
    }
}

/// `obj` as a float64 array whose finite values beyond `S`'s range are `S`'s largest finite
/// value, with their sign (NaN and infinities kept, for the checks to name their rows); the
/// values are scanned in place, and copied only where one is beyond.
fn clamp_finite<'py, S: PyScalar>(
    numpy: &Bound<'py, PyModule>,
    obj: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let array = numpy.getattr("require")?.call1((obj, "float64", "CA"))?;
    let max = S::MAX.to_f64();
    let beyond = |v: &f64| v.is_finite() && v.abs() > max;
    let any = {
        let values = array.cast::<PyArrayDyn<f64>>()?.readonly();
        values.as_slice().map_or(true, |v| v.iter().any(beyond))
    };
    if !any {
        return Ok(array);
    }
    let finite = numpy.getattr("isfinite")?.call1((&array,))?;
    let large = numpy
        .getattr("greater")?
        .call1((numpy.getattr("abs")?.call1((&array,))?, max))?;
    let over = numpy.getattr("logical_and")?.call1((finite, large))?;
    let limit = numpy.getattr("copysign")?.call1((max, &array))?;
    numpy.getattr("where")?.call1((over, limit, array))
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

/// Row `row` of `what` (`cols` coordinates per row) and its values, for a message.
pub(crate) fn row_of<S: Scalar>(what: &str, flat: &[S], cols: usize, row: usize) -> String {
    let values: Vec<String> = flat[cols * row..cols * row + cols]
        .iter()
        .map(|v| format!("{}", v.to_f64()))
        .collect();
    format!("{what} row {row} [{}]", values.join(", "))
}

/// `ValueError` naming row `row` of `what` (`cols` coordinates per row: a point or a box) and
/// the first thing wrong with it: a coordinate that is NaN or infinite, or a box's min above
/// its max.
pub(crate) fn bad_row<S: Scalar>(what: &str, flat: &[S], cols: usize, row: usize) -> PyErr {
    let r = &flat[cols * row..cols * row + cols];
    let names: &[&str] = if cols == 4 {
        &["min_x", "min_y", "max_x", "max_y"]
    } else {
        &["x", "y"]
    };
    let why = names
        .iter()
        .zip(r)
        .find_map(|(name, v)| {
            if v.to_f64().is_nan() {
                Some(format!("{name} is NaN"))
            } else if !v.is_finite() {
                Some(format!("{name} is infinite"))
            } else {
                None
            }
        })
        .or_else(|| (cols == 4 && r[0] > r[2]).then(|| "min_x > max_x".to_string()))
        .or_else(|| (cols == 4 && r[1] > r[3]).then(|| "min_y > max_y".to_string()))
        .unwrap_or_else(|| "invalid".to_string());
    PyValueError::new_err(format!(
        "{} is invalid: {why}",
        row_of(what, flat, cols, row)
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

/// The error for `positions[at] = position`, not a position of an index of `n` boxes.
pub(crate) fn not_a_position(position: i64, at: usize, n: usize) -> PyErr {
    let range = match n {
        0 => "the index is empty".to_owned(),
        n => format!("positions are 0 to {}", n - 1),
    };
    PyKeyError::new_err(format!(
        "positions[{at}] = {position} is no position of this index ({range})"
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

/// Reads ids: a 1-D array-like (or one id) of integers of any integer dtype, Python `int`s, or
/// floats that hold an integer exactly. Ids are 64-bit: a float (a pandas column that once
/// held a NaN) may have rounded one to another live id, so a float is taken only where its
/// dtype holds every integer up to it exactly (below 2^53 for `float64`, 2^24 for `float32`).
///
/// # Errors
/// `TypeError` for values that are not numbers (booleans, strings, objects other than `int`);
/// `ValueError` naming the first id that is not an integer, does not fit `int64` or may have
/// been rounded, or for an array of more than one dimension.
pub(crate) fn ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let asarray = numpy.getattr("asarray")?;
    let array = asarray
        .call1((obj,))
        .map_err(|e| PyTypeError::new_err(format!("ids must be integers: {e}")))?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim > 1 {
        let shape = array.getattr("shape")?.str()?.to_string();
        return Err(PyValueError::new_err(format!(
            "ids must be 1-D (or one id), got shape {shape}"
        )));
    }
    let array = array.call_method0("ravel")?;
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
    let name = dtype.str()?.to_string();
    let listed = !obj.is_instance(&numpy.getattr("ndarray")?)?;
    match kind.as_str() {
        "i" => typed::<i64>(&array),
        "u" => typed::<u64>(&array)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| i64::try_from(v).map_err(|_| too_wide(i, &v)))
            .collect(),
        // A list mixing ints and floats becomes floats: read it value by value instead.
        "f" | "O" if listed => {
            let items = asarray.call1((obj, "object"))?.call_method0("ravel")?;
            items
                .try_iter()?
                .enumerate()
                .map(|(i, item)| one_id(i, &item?, true))
                .collect()
        }
        "f" if itemsize <= 8 => typed::<f64>(&array)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| float_id(i, v, &name, itemsize))
            .collect(),
        "O" => array
            .try_iter()?
            .enumerate()
            .map(|(i, item)| one_id(i, &item?, false))
            .collect(),
        _ => Err(PyTypeError::new_err(format!(
            "ids must be integers, got an array of {name}"
        ))),
    }
}

/// `ValueError` for an integer id outside `int64`.
fn too_wide(i: usize, v: &dyn std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!(
        "ids[{i}] = {v} is not an integer that int64 holds: ids are int64"
    ))
}

/// Id `i` given as `v`, a float of a dtype named `name` of `itemsize` bytes: taken if it is an
/// integer below 2^digits of the dtype, where every integer converts to and from it exactly.
fn float_id(i: usize, v: f64, name: &str, itemsize: usize) -> PyResult<i64> {
    let digits = match itemsize {
        2 => 11,
        4 => 24,
        _ => 53,
    };
    if !v.is_finite() || v.fract() != 0.0 {
        Err(PyValueError::new_err(format!(
            "ids[{i}] = {v} is not an integer"
        )))
    } else if v.abs() >= 2f64.powi(digits) {
        Err(PyValueError::new_err(format!(
            "ids[{i}] = {v:e} is not an integer that {name} holds exactly (it may have been \
             rounded from another id): pass ids as int64"
        )))
    } else {
        Ok(v as i64)
    }
}

/// Id `i` given as a Python object: an `int`, a numpy integer, or where `floats` a float that
/// holds an integer exactly.
fn one_id(i: usize, item: &Bound<'_, PyAny>, floats: bool) -> PyResult<i64> {
    if item.is_instance_of::<PyInt>() && !item.is_instance_of::<PyBool>() {
        return item.extract::<i64>().map_err(|_| too_wide(i, item));
    }
    if floats {
        if let Ok(v) = item.cast::<PyFloat>() {
            return float_id(i, v.value(), "float64", 8);
        }
    }
    let kind = item.get_type().name()?;
    Err(PyTypeError::new_err(format!(
        "ids must be integers, ids[{i}] is a {kind}"
    )))
}

/// The values of a 1-D numpy array, converted to `T` by numpy (a safe cast: integers to a
/// wider integer type, floats to `float64`).
fn typed<'py, T>(array: &Bound<'py, PyAny>) -> PyResult<Vec<T>>
where
    T: Element + Copy + 'py + for<'a> FromPyObject<'a, 'py>,
{
    let array = array.extract::<PyArrayLike<'_, T, IxDyn, AllowTypeChange>>()?;
    Ok(array.as_array().iter().copied().collect())
}

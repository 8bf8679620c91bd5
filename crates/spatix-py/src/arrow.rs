//! Arrow in: boxes and points from any object with the Arrow PyCapsule interface
//! (`__arrow_c_array__` or `__arrow_c_stream__`: pyarrow and polars arrays, record batches,
//! tables and series), read through the Arrow C data interface without a round trip through
//! Python objects.
//!
//! The input is two or four float columns (`float32` "f" or `float64` "g"): the columns of a
//! table or record batch, or the fields of a struct column (`xmin, ymin, xmax, ymax` or
//! `x, y`, taken by name when the fields are so named, else in order). A table arrives as a
//! stream of record batches, concatenated. The columns are copied once into one row-major
//! vector (the layout the rest of the crate reads); nothing else is copied.
//!
//! Nulls, a wrong column count and a column of another type are refused with an error that
//! names the column, before the caller changes anything. pandas objects keep the numpy path
//! (their Arrow export goes through pyarrow, and numpy converts their columns as before).
//!
//! The C structs are declared here (`#[repr(C)]`, as in the Arrow specification); each one
//! taken from a capsule is moved out of it (the capsule's copy is marked released, so its
//! destructor does nothing) into a guard that calls its `release` callback exactly once.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_void};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::scalar::{PyScalar, narrow};

/// `struct ArrowSchema` of the Arrow C data interface.
#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut ArrowSchema,
    dictionary: *mut ArrowSchema,
    release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the Arrow C data interface.
#[repr(C)]
struct ArrowArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut ArrowArray,
    dictionary: *mut ArrowArray,
    release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    private_data: *mut c_void,
}

/// `struct ArrowArrayStream` of the Arrow C stream interface.
#[repr(C)]
struct ArrowArrayStream {
    get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    private_data: *mut c_void,
}

/// A C struct with a `release` callback, owned by this crate: dropping the guard releases it.
trait Releasable: Sized {
    /// The struct with every field zero/null: released.
    fn released() -> Self;
    /// Whether the struct is live (its `release` is set).
    fn live(&self) -> bool;
    /// Calls `release` if set, then clears it.
    fn release(&mut self);
}

macro_rules! releasable {
    ($t:ty) => {
        impl Releasable for $t {
            fn released() -> Self {
                // SAFETY: every field is an integer, a raw pointer or an `Option` of a function
                // pointer, for which all zero bits are valid (0, null, `None`).
                unsafe { std::mem::zeroed() }
            }

            fn live(&self) -> bool {
                self.release.is_some()
            }

            fn release(&mut self) {
                if let Some(release) = self.release.take() {
                    // SAFETY: the producer set `release` for this struct, and `take` clears it
                    // first so it runs exactly once; the specification lets a consumer move
                    // the struct, so its address need not be the one the producer filled.
                    // `take` also leaves `release` null, the specification's "released" mark,
                    // which the producer's callback sets again anyway.
                    unsafe { release(self) }
                }
            }
        }
    };
}

releasable!(ArrowSchema);
releasable!(ArrowArray);
releasable!(ArrowArrayStream);

/// Owns one C struct and releases it on drop, exactly once.
struct Owned<T: Releasable>(T);

impl<T: Releasable> Drop for Owned<T> {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Moves the struct out of `capsule` (which must be a PyCapsule named `name`) into a guard.
///
/// # Errors
/// `TypeError` if `capsule` is not a capsule of that name; `ValueError` if its struct was
/// already released (consumed by someone else).
fn take<T: Releasable>(capsule: &Bound<'_, PyAny>, name: &CStr, what: &str) -> PyResult<Owned<T>> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!("{what}: the Arrow export did not give a PyCapsule"))
    })?;
    let ptr = capsule.pointer_checked(Some(name))?.cast::<T>().as_ptr();
    // SAFETY: a capsule named `name` ("arrow_schema", "arrow_array", "arrow_array_stream")
    // holds a pointer to a live struct of that type (the Arrow PyCapsule interface), and the
    // GIL is held, so no Python code runs between reading it and marking it released. The
    // struct is moved out by a bitwise copy (allowed by the specification) and the capsule's
    // copy is overwritten with a released one, so the capsule's destructor (which releases a
    // struct whose `release` is set) does nothing and our guard is the only owner.
    let taken = unsafe {
        let taken = std::ptr::read(ptr);
        std::ptr::write(ptr, T::released());
        taken
    };
    if !taken.live() {
        return Err(PyValueError::new_err(format!(
            "{what}: the Arrow export was already consumed (released)"
        )));
    }
    Ok(Owned(taken))
}

/// Whether `obj` should be read through the Arrow PyCapsule interface: it has
/// `__arrow_c_array__` or `__arrow_c_stream__` and is not a pandas object (those keep the
/// numpy path).
pub(crate) fn is_arrow(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if !(obj.hasattr("__arrow_c_array__")? || obj.hasattr("__arrow_c_stream__")?) {
        return Ok(false);
    }
    let module = obj.get_type().module()?.to_string();
    Ok(!(module == "pandas" || module.starts_with("pandas.")))
}

/// The string `p` points to (lossy UTF-8), or `default` when null.
///
/// # Safety
/// `p` is null or a valid NUL-terminated string.
unsafe fn text(p: *const c_char, default: &str) -> String {
    if p.is_null() {
        default.to_owned()
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The `i`th child of a schema. The caller checked `i < n_children`.
fn schema_child(schema: &ArrowSchema, i: usize) -> PyResult<&ArrowSchema> {
    // SAFETY: a live schema's `children` points to `n_children` non-null pointers to live
    // child schemas, owned by the parent for its lifetime (the borrow of `schema`).
    unsafe {
        let child = *schema.children.add(i);
        child
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("malformed Arrow schema: a null child"))
    }
}

/// The `i`th child of an array, checked against `n_children`.
fn array_child(array: &ArrowArray, i: usize) -> PyResult<&ArrowArray> {
    if i >= usize::try_from(array.n_children).unwrap_or(0) || array.children.is_null() {
        return Err(PyValueError::new_err(
            "malformed Arrow array: fewer children than its schema",
        ));
    }
    // SAFETY: a live array's `children` points to `n_children` pointers to live child
    // arrays, owned by the parent for its lifetime (the borrow of `array`); `i` is in range.
    unsafe {
        let child = *array.children.add(i);
        child
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("malformed Arrow array: a null child"))
    }
}

/// What the schema says: which children hold the coordinates and in what precision.
struct Plan {
    /// The top-level child that is the struct column holding the coordinates, if any.
    nested: Option<usize>,
    /// For each coordinate in order, the child (of the top level, or of `nested`) holding it.
    order: Vec<usize>,
    /// For each coordinate, its column's name.
    names: Vec<String>,
    /// For each coordinate, whether its column is `float32` (else `float64`).
    single: Vec<bool>,
    /// The struct column's name, when there is one.
    nested_name: String,
}

/// Reads the schema: the columns (a table's or record batch's, or a struct column's fields)
/// must be `cols` or `other` float columns.
fn plan(schema: &ArrowSchema, cols: usize, other: usize, what: &str) -> PyResult<Plan> {
    // SAFETY: a live schema's `format` is a valid NUL-terminated string, its `name` null or one.
    let format = unsafe { text(schema.format, "") };
    if format != "+s" {
        return Err(PyValueError::new_err(format!(
            "{what} must be {cols} float columns (a table, record batch or struct column), got \
             one column of Arrow type {}",
            describe(&format)
        )));
    }
    let n = usize::try_from(schema.n_children).unwrap_or(0);
    let mut level = schema;
    let mut nested = None;
    let mut nested_name = String::new();
    if n == 1 {
        let child = schema_child(schema, 0)?;
        // SAFETY: as above, for the child.
        if unsafe { text(child.format, "") } == "+s" {
            level = child;
            nested = Some(0);
            // SAFETY: as above.
            nested_name = unsafe { text(child.name, "0") };
        }
    }
    let n = usize::try_from(level.n_children).unwrap_or(0);
    let names = (0..n)
        .map(|i| {
            let child = schema_child(level, i)?;
            // SAFETY: as above.
            Ok(unsafe { text(child.name, &i.to_string()) })
        })
        .collect::<PyResult<Vec<String>>>()?;
    if n != cols && n != other {
        let wanted = if other == cols {
            format!("{cols}")
        } else {
            format!("{cols} or {other}")
        };
        return Err(PyValueError::new_err(format!(
            "{what} must have {wanted} float columns, got {n}: [{}]",
            names.join(", ")
        )));
    }
    let expected: &[&str] = if n == 4 {
        &["xmin", "ymin", "xmax", "ymax"]
    } else {
        &["x", "y"]
    };
    let by_name: Option<Vec<usize>> = expected
        .iter()
        .map(|e| names.iter().position(|name| name == e))
        .collect();
    let order = by_name.unwrap_or_else(|| (0..n).collect());
    let mut single = Vec::with_capacity(n);
    for &i in &order {
        let child = schema_child(level, i)?;
        // SAFETY: as above.
        let format = unsafe { text(child.format, "") };
        match format.as_str() {
            "f" => single.push(true),
            "g" => single.push(false),
            _ => {
                return Err(PyTypeError::new_err(format!(
                    "{what} column '{}' is of Arrow type {}, expected float32 or float64",
                    names[i],
                    describe(&format)
                )));
            }
        }
    }
    Ok(Plan {
        nested,
        names: order.iter().map(|&i| names[i].clone()).collect(),
        order,
        single,
        nested_name,
    })
}

/// A readable name for an Arrow format string.
fn describe(format: &str) -> String {
    let name = match format {
        "n" => "null",
        "b" => "bool",
        "c" => "int8",
        "C" => "uint8",
        "s" => "int16",
        "S" => "uint16",
        "i" => "int32",
        "I" => "uint32",
        "l" => "int64",
        "L" => "uint64",
        "e" => "float16",
        "f" => "float32",
        "g" => "float64",
        "u" | "U" | "vu" => "string",
        "z" | "Z" | "vz" => "binary",
        "+s" => "struct",
        "+l" | "+L" | "+vl" | "+vL" => "list",
        _ => return format!("'{format}'"),
    };
    format!("{name} ('{format}')")
}

/// `usize` of a non-negative `i64` field, else a malformed-array error.
fn size(v: i64, field: &str) -> PyResult<usize> {
    usize::try_from(v)
        .map_err(|_| PyValueError::new_err(format!("malformed Arrow array: {field} = {v}")))
}

/// The first of rows `start..start + len` of `array` that is null, if any.
fn first_null(array: &ArrowArray, start: usize, len: usize) -> PyResult<Option<usize>> {
    if array.null_count == 0 || len == 0 {
        return Ok(None);
    }
    let bitmap = if array.n_buffers >= 1 && !array.buffers.is_null() {
        // SAFETY: a live array's `buffers` points to `n_buffers` pointers; the first is the
        // validity bitmap (null when there are no nulls).
        unsafe { *array.buffers }.cast::<u8>()
    } else {
        std::ptr::null()
    };
    if bitmap.is_null() {
        // A null count without a bitmap (the specification forbids it): every row is suspect.
        return Ok(Some(0));
    }
    let offset = size(array.offset, "offset")?;
    for row in 0..len {
        let bit = offset + start + row;
        // SAFETY: the bitmap holds a bit for each of the array's `offset + length` slots and
        // the caller checked `start + len <= length`.
        let byte = unsafe { *bitmap.add(bit / 8) };
        if byte & (1 << (bit % 8)) == 0 {
            return Ok(Some(row));
        }
    }
    Ok(None)
}

/// One column's values, borrowed from the Arrow buffer when aligned (the usual case), else
/// copied out of it.
enum Column<'a> {
    /// `float32` values.
    F32(std::borrow::Cow<'a, [f32]>),
    /// `float64` values.
    F64(std::borrow::Cow<'a, [f64]>),
}

/// A float type a column holds.
trait Value: Copy + 'static {
    /// The column holding `values`.
    fn column(values: std::borrow::Cow<'_, [Self]>) -> Column<'_>;
}

impl Value for f32 {
    fn column(values: std::borrow::Cow<'_, [Self]>) -> Column<'_> {
        Column::F32(values)
    }
}

impl Value for f64 {
    fn column(values: std::borrow::Cow<'_, [Self]>) -> Column<'_> {
        Column::F64(values)
    }
}

impl<'a> Column<'a> {
    /// The `len` values at `data`.
    ///
    /// # Safety
    /// `data` points to `len` readable values of `T` (aligned or not) that outlive `'a`.
    unsafe fn new<T: Value>(data: *const T, len: usize) -> Self {
        if data.align_offset(std::mem::align_of::<T>()) == 0 {
            // SAFETY: the caller's contract, and `data` is aligned.
            T::column(std::borrow::Cow::Borrowed(unsafe {
                std::slice::from_raw_parts(data, len)
            }))
        } else {
            // SAFETY: the caller's contract; `read_unaligned` for an unaligned buffer (the C
            // interface does not promise alignment).
            T::column(std::borrow::Cow::Owned(
                (0..len)
                    .map(|r| unsafe { data.add(r).read_unaligned() })
                    .collect(),
            ))
        }
    }

    /// Value `r`, in `S`.
    #[inline]
    fn get<S: PyScalar>(&self, r: usize) -> S {
        match self {
            Self::F32(v) => S::from_f64(f64::from(v[r])),
            Self::F64(v) => narrow(v[r]),
        }
    }
}

/// Appends the rows of one record batch (or array) `array`, read as `plan` says, to `out`
/// (row-major, `plan.order.len()` values a row). `rows` counts the rows before this batch, for
/// messages.
fn gather<S: PyScalar>(
    array: &ArrowArray,
    plan: &Plan,
    out: &mut Vec<S>,
    rows: usize,
    what: &str,
) -> PyResult<()> {
    let len = size(array.length, "length")?;
    let mut start = size(array.offset, "offset")?;
    if let Some(row) = first_null(array, 0, len)? {
        return Err(PyValueError::new_err(format!(
            "{what} row {} is null",
            rows + row
        )));
    }
    let mut level = array;
    if let Some(i) = plan.nested {
        level = array_child(array, i)?;
        if size(level.length, "length")? < start + len {
            return Err(PyValueError::new_err(
                "malformed Arrow array: a column shorter than its batch",
            ));
        }
        if let Some(row) = first_null(level, start, len)? {
            return Err(PyValueError::new_err(format!(
                "{what} column '{}' has a null at row {}",
                plan.nested_name,
                rows + row
            )));
        }
        start += size(level.offset, "offset")?;
    }
    let mut columns = Vec::with_capacity(plan.order.len());
    for (c, &i) in plan.order.iter().enumerate() {
        let column = array_child(level, i)?;
        if size(column.length, "length")? < start + len {
            return Err(PyValueError::new_err(
                "malformed Arrow array: a column shorter than its batch",
            ));
        }
        if let Some(row) = first_null(column, start, len)? {
            return Err(PyValueError::new_err(format!(
                "{what} column '{}' has a null at row {}",
                plan.names[c],
                rows + row
            )));
        }
        if len == 0 {
            continue;
        }
        if column.n_buffers != 2 || column.buffers.is_null() {
            return Err(PyValueError::new_err(format!(
                "malformed Arrow array: column '{}' has {} buffers, a float column has 2",
                plan.names[c], column.n_buffers
            )));
        }
        // SAFETY: a float column's second buffer is its values (checked above: 2 buffers).
        let data = unsafe { *column.buffers.add(1) };
        if data.is_null() {
            return Err(PyValueError::new_err(format!(
                "malformed Arrow array: column '{}' has no values",
                plan.names[c]
            )));
        }
        let first = start + size(column.offset, "offset")?;
        columns.push(if plan.single[c] {
            // SAFETY: the values buffer holds the column's `offset + length` values, and
            // `first + len <= offset + length` (checked above).
            unsafe { Column::new(data.cast::<f32>().add(first), len) }
        } else {
            // SAFETY: as above, for a `float64` column.
            unsafe { Column::new(data.cast::<f64>().add(first), len) }
        });
    }
    if len == 0 {
        return Ok(());
    }
    let cols = plan.order.len();
    let base = out.len();
    out.reserve(len * cols);
    let spare = &mut out.spare_capacity_mut()[..len * cols];
    // Column-major to row-major, row by row (one pass over the output, not zeroed first).
    if let Some(f64s) = columns
        .iter()
        .map(|c| match c {
            Column::F64(v) => Some(&**v),
            Column::F32(_) => None,
        })
        .collect::<Option<Vec<&[f64]>>>()
    {
        for (r, row) in spare.chunks_exact_mut(cols).enumerate() {
            for (slot, column) in row.iter_mut().zip(&f64s) {
                slot.write(narrow(column[r]));
            }
        }
    } else {
        for (r, row) in spare.chunks_exact_mut(cols).enumerate() {
            for (slot, column) in row.iter_mut().zip(&columns) {
                slot.write(column.get::<S>(r));
            }
        }
    }
    // SAFETY: the loop above wrote every one of the `len * cols` values after `base`.
    unsafe { out.set_len(base + len * cols) };
    Ok(())
}

/// Reads `obj` (see [`is_arrow`]) as rows of `cols` or `other` float columns: the
/// coordinates row after row (one copy from Arrow's columns), and the number of columns.
///
/// # Errors
/// `TypeError` for a column that is not `float32`/`float64` (named); `ValueError` for a wrong
/// number of columns (named), a null (its column and row named), or a malformed export.
pub(crate) fn read<S: PyScalar>(
    obj: &Bound<'_, PyAny>,
    cols: usize,
    other: usize,
    what: &str,
) -> PyResult<(Vec<S>, usize)> {
    let mut out = Vec::new();
    if obj.hasattr("__arrow_c_array__")? {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let (schema, array): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
        let schema: Owned<ArrowSchema> = take(&schema, c"arrow_schema", what)?;
        let array: Owned<ArrowArray> = take(&array, c"arrow_array", what)?;
        let plan = plan(&schema.0, cols, other, what)?;
        gather(&array.0, &plan, &mut out, 0, what)?;
        return Ok((out, plan.order.len()));
    }
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let mut stream: Owned<ArrowArrayStream> = take(&capsule, c"arrow_array_stream", what)?;
    let stream_error = |stream: &mut ArrowArrayStream, code: c_int| {
        let message = match stream.get_last_error {
            // SAFETY: a live stream's `get_last_error` returns null or a string valid until
            // the next call on the stream; it is copied at once.
            Some(f) => unsafe { text(f(stream), "no message") },
            None => "no message".to_owned(),
        };
        PyValueError::new_err(format!(
            "{what}: the Arrow stream failed (error {code}): {message}"
        ))
    };
    let get_schema = stream
        .0
        .get_schema
        .ok_or_else(|| PyValueError::new_err("malformed Arrow stream: no get_schema"))?;
    let get_next = stream
        .0
        .get_next
        .ok_or_else(|| PyValueError::new_err("malformed Arrow stream: no get_next"))?;
    let mut schema = Owned(ArrowSchema::released());
    // SAFETY: the stream is live; `get_schema` fills the out-struct (ours to release) or
    // returns an error code.
    let code = unsafe { get_schema(&mut stream.0, &mut schema.0) };
    if code != 0 {
        return Err(stream_error(&mut stream.0, code));
    }
    let plan = plan(&schema.0, cols, other, what)?;
    let mut rows = 0;
    loop {
        let mut batch = Owned(ArrowArray::released());
        // SAFETY: as for `get_schema`: the out-struct is ours to release; a released one
        // (no `release`) marks the end of the stream.
        let code = unsafe { get_next(&mut stream.0, &mut batch.0) };
        if code != 0 {
            return Err(stream_error(&mut stream.0, code));
        }
        if !batch.0.live() {
            break;
        }
        gather(&batch.0, &plan, &mut out, rows, what)?;
        rows = out.len() / plan.order.len();
    }
    Ok((out, plan.order.len()))
}

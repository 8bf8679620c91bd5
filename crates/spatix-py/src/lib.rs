//! # spatix for Python
//!
//! The `spatix` Python package: spatix's indexes with numpy arrays in and out, built by
//! maturin into the extension module `spatix._spatix` (the package's `__init__.py`
//! re-exports it; `spatix/__init__.pyi` holds the type stubs and the Python-side docs).
//!
//! * `KdTree(points)`: k-nearest neighbours (scipy's `cKDTree.query` shape) and radius
//!   queries over static points.
//! * `PackedIndex(boxes)`: window queries, all intersecting pairs and nearest boxes over
//!   static boxes (`shapely.bounds` layout).
//! * The eight dynamic structures (`UniformGrid`, `LooseGrid`, `PointGrid`,
//!   `HierarchicalGrid`, `Quadtree`, `LooseQuadtree`, `MxCifQuadtree`, `Layered`), each a
//!   subclass of `DynamicIndex`: `insert` returns `int64` ids (a spatix `Handle`'s bits),
//!   `update`, `remove`, `pairs`, `query`, `nearest`, `len()`; and `SweepGrid`, the same
//!   class over spatix's `SweepGrid`, whose `update` of a large batch is one walk of the grid.
//! * `pairs(boxes)`: every intersecting pair of a set of boxes in one call (a `SweepGrid`
//!   built for them).
//!
//! `float32` input is indexed in `f32`, anything else in `f64` (never rounded). Boxes and
//! points may also be Arrow data (pyarrow, polars: the PyCapsule interface, `arrow.rs`),
//! indexed in `f64`. Bad input
//! raises `ValueError` naming the first bad row before anything changes; a stale id raises
//! `KeyError`. Every class pickles through the library's byte form (`ByteForm`):
//! `to_bytes()`, `Class.from_bytes(data)` (in the precision the bytes were saved in) and
//! `__reduce__`; ids and positions keep their meaning across the round trip. Every call that does real work releases the GIL (`Python::detach`), and the
//! batch queries take scipy's `workers=` (the library's `ParallelQuery` batches on a rayon
//! pool per thread count, started on first use and kept; one worker runs on the caller).
//!
//! The crate is tested from Python: `scripts/test-python.sh` builds it into a virtual
//! environment and runs `crates/spatix-py/tests` with pytest.

mod array;
mod arrow;
mod batch;
mod dynamic;
mod fixed;
mod join;
mod kdtree;
mod names;
mod packed;
mod rays;
mod scalar;
mod shapely;
mod sweep;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use spatix::{ByteForm, ByteHeader};

/// A value in one of the two precisions: `f32` for `float32` input, `f64` otherwise.
enum Precision<A, B> {
    /// Built from `float32` input.
    F32(A),
    /// Built from `float64` (or converted) input.
    F64(B),
}

impl<A, B> Precision<A, B> {
    /// The numpy name of the precision.
    fn dtype(&self) -> &'static str {
        match self {
            Self::F32(_) => "float32",
            Self::F64(_) => "float64",
        }
    }
}

impl<A: ByteForm + Send, B: ByteForm + Send> Precision<A, B> {
    /// The structure whose byte form is `data`, in the precision its header names (4-byte
    /// scalars `F32`, any other `F64`, whose loader refuses a size it does not read), decoded
    /// with the GIL released (the header peeked at: the loader checks the checksum, in the
    /// one pass over the bytes).
    ///
    /// # Errors
    /// `ValueError` naming `class` and the library's reason for bytes that are not this
    /// structure's (damaged, cut short, of another structure or version).
    fn from_bytes(py: Python<'_>, class: &str, data: &[u8]) -> PyResult<Self> {
        py.detach(|| match ByteHeader::peek(data)?.scalar_bytes {
            4 => A::from_bytes(data).map(Self::F32),
            _ => B::from_bytes(data).map(Self::F64),
        })
        .map_err(|e| PyValueError::new_err(format!("{class}.from_bytes: {e}")))
    }
}

/// The bytes `encode` returns, run with the GIL released, as a Python `bytes`.
fn to_bytes<'py>(py: Python<'py>, encode: impl FnOnce() -> Vec<u8> + Send) -> Bound<'py, PyBytes> {
    let bytes = py.detach(encode);
    PyBytes::new(py, &bytes)
}

/// What `__reduce__` returns for `obj` whose byte form is `bytes`: pickle rebuilds it as
/// `type(obj).from_bytes(bytes)`.
type Reduced<'py> = (Bound<'py, PyAny>, (Bound<'py, PyBytes>,));

/// [`Reduced`] for `obj`.
fn reduce<'py>(obj: &Bound<'py, PyAny>, bytes: Bound<'py, PyBytes>) -> PyResult<Reduced<'py>> {
    Ok((obj.get_type().getattr("from_bytes")?, (bytes,)))
}

/// Runs `$body` on the value inside a [`Precision`], with `$s` naming its coordinate type.
macro_rules! dispatch {
    ($precision:expr, $value:ident => $body:expr) => {
        match $precision {
            $crate::Precision::F32($value) => $body,
            $crate::Precision::F64($value) => $body,
        }
    };
    ($precision:expr, $value:ident: $s:ident => $body:expr) => {
        match $precision {
            $crate::Precision::F32($value) => {
                type $s = f32;
                $body
            }
            $crate::Precision::F64($value) => {
                type $s = f64;
                $body
            }
        }
    };
}
pub(crate) use dispatch;

/// The extension module `spatix._spatix`.
#[pymodule]
fn _spatix(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<kdtree::PyKdTree>()?;
    m.add_class::<packed::PyPackedIndex>()?;
    dynamic::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The list's type names, for the test that every one is a class of the package.
    let names: Vec<&str> = spatix::LISTED.iter().map(|&(name, _)| name).collect();
    m.add("_structures", names)?;
    m.add_function(wrap_pyfunction!(sweep::pairs, m)?)?;
    Ok(())
}

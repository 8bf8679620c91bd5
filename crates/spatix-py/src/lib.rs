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
//!   `update`, `remove`, `pairs`, `query`, `nearest`, `len()`.
//!
//! `float32` input is indexed in `f32`, anything else in `f64` (never rounded). Bad input
//! raises `ValueError` naming the first bad row before anything changes; a stale id raises
//! `KeyError`. Every call that does real work releases the GIL (`Python::detach`), and the
//! batch queries take scipy's `workers=` (the library's `ParallelQuery` batches on a rayon
//! pool per thread count, started on first use and kept; one worker runs on the caller).
//!
//! The crate is tested from Python: `scripts/test-python.sh` builds it into a virtual
//! environment and runs `crates/spatix-py/tests` with pytest.

mod array;
mod batch;
mod dynamic;
mod kdtree;
mod packed;

use pyo3::prelude::*;

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
    Ok(())
}

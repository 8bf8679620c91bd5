//! How Python holds a static structure (`PackedIndex`, `KdTree`): built or loaded in memory,
//! or read in place from a Python buffer (`from_buffer`: `bytes`, a read-only `memoryview`,
//! `mmap` opened for reading, `numpy.memmap(mode="r")`) by the library's views, the buffer
//! kept for as long as the view lives. Pickling with protocol 5 hands the byte form out of
//! band (`pickle.PickleBuffer`), and unpickling opens a view over a read-only buffer it is
//! given instead of copying it.
// The one `unsafe`: a view borrows the buffer's memory for as long as the object holding both
// lives (see `Fixed::from_buffer`).
#![allow(unsafe_code)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use spatix::{
    AlignedBytes, ByteForm, ByteHeader, Error, KdTreeView, PackedView, Scalar, ViewValue,
};

/// Where a view's bytes must start in memory: a multiple of this.
const ALIGN: usize = 64;

/// A static structure in either precision: built or loaded (`F32`, `F64`), or read in place
/// (`View32`, `View64`). [`dispatch_fixed!`] runs code on whichever it is.
pub(crate) enum Fixed<A, B, VA, VB> {
    /// Built or loaded from `float32` data.
    F32(A),
    /// Built or loaded from `float64` data.
    F64(B),
    /// Read in place from `float32` bytes.
    View32(InPlace<VA>),
    /// Read in place from `float64` bytes.
    View64(InPlace<VB>),
}

/// A view and the memory it reads.
pub(crate) struct InPlace<V> {
    /// The view (declared first: dropped before the memory it borrows).
    view: V,
    /// The memory.
    memory: Memory,
}

/// What a view reads.
enum Memory {
    /// A Python buffer, read in place: holding it keeps the exporter's memory alive, unmoved
    /// and, being read-only, unchanged; with the object that exported it, handed to pickle as
    /// it is (out of band, no copy).
    Buffer(PyBuffer<u8>, Py<PyAny>),
    /// A copy, made where the buffer does not start at a multiple of 64 in memory (as a
    /// `bytes` object may not) or is writable (a buffer unpickling is handed).
    Copy(AlignedBytes),
}

impl<V> InPlace<V> {
    /// The view.
    pub(crate) fn view(&self) -> &V {
        &self.view
    }
}

/// The byte form of a static structure or of a view (the bytes it reads).
pub(crate) trait Saved {
    /// The byte form.
    fn saved(&self) -> Vec<u8>;
}

impl<S: Scalar, T: spatix::ByteValue> Saved for spatix::PackedIndex<S, T> {
    fn saved(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl<S: Scalar, T: spatix::ByteValue> Saved for spatix::KdTree<S, T> {
    fn saved(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl<S: Scalar, T> Saved for PackedView<'_, S, T> {
    fn saved(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }
}

impl<S: Scalar, T> Saved for KdTreeView<'_, S, T> {
    fn saved(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }
}

/// Runs `$body` on the structure inside a [`Fixed`] (`&` of the built one or of the view),
/// with `$s` naming its coordinate type.
macro_rules! dispatch_fixed {
    ($fixed:expr, $value:ident => $body:expr) => {
        match $fixed {
            $crate::fixed::Fixed::F32($value) => $body,
            $crate::fixed::Fixed::F64($value) => $body,
            $crate::fixed::Fixed::View32(in_place) => {
                let $value = in_place.view();
                $body
            }
            $crate::fixed::Fixed::View64(in_place) => {
                let $value = in_place.view();
                $body
            }
        }
    };
    ($fixed:expr, $value:ident: $s:ident => $body:expr) => {
        match $fixed {
            $crate::fixed::Fixed::F32($value) => {
                type $s = f32;
                $body
            }
            $crate::fixed::Fixed::F64($value) => {
                type $s = f64;
                $body
            }
            $crate::fixed::Fixed::View32(in_place) => {
                type $s = f32;
                let $value = in_place.view();
                $body
            }
            $crate::fixed::Fixed::View64(in_place) => {
                type $s = f64;
                let $value = in_place.view();
                $body
            }
        }
    };
}
pub(crate) use dispatch_fixed;

/// Opens a view of one precision over bytes that outlive it.
type Open<V> = fn(&'static [u8]) -> Result<V, Error>;

impl<A, B, VA, VB> Fixed<A, B, VA, VB>
where
    A: ByteForm + Send,
    B: ByteForm + Send,
    VA: Send,
    VB: Send,
{
    /// The numpy name of the precision.
    pub(crate) fn dtype(&self) -> &'static str {
        match self {
            Self::F32(_) | Self::View32(_) => "float32",
            Self::F64(_) | Self::View64(_) => "float64",
        }
    }

    /// How it holds its data, for `repr`: `""` built or loaded, `", in place"` read from a
    /// Python buffer, `", aligned copy"` read from a copy of one.
    pub(crate) fn place(&self) -> &'static str {
        match self {
            Self::View32(InPlace { memory, .. }) | Self::View64(InPlace { memory, .. }) => {
                match memory {
                    Memory::Buffer(..) => ", in place",
                    Memory::Copy(_) => ", aligned copy",
                }
            }
            _ => "",
        }
    }

    /// The structure whose byte form is `data`, loaded (copied and checked) in the precision
    /// its header names, with the GIL released.
    ///
    /// # Errors
    /// `ValueError` naming `class` and the library's reason for bytes that are not this
    /// structure's.
    pub(crate) fn from_bytes(py: Python<'_>, class: &str, data: &[u8]) -> PyResult<Self> {
        match crate::Precision::<A, B>::from_bytes(py, class, data)? {
            crate::Precision::F32(a) => Ok(Self::F32(a)),
            crate::Precision::F64(b) => Ok(Self::F64(b)),
        }
    }

    /// The structure whose byte form `obj`'s buffer holds, read in place (nothing copied,
    /// nothing built: one pass that checks the bytes, with the GIL released), in the
    /// precision its header names; the buffer is held until the structure is dropped. A
    /// buffer that does not start at a multiple of 64 in memory (as views need; a `bytes`
    /// object may not, a memory map does) is copied to memory that does first.
    ///
    /// # Errors
    /// `ValueError` naming `class` for an object without a read-only, contiguous buffer of
    /// bytes, and for bytes that are not this structure's (damaged, cut short, of another
    /// version or structure).
    pub(crate) fn from_buffer(
        obj: &Bound<'_, PyAny>,
        class: &str,
        open32: Open<VA>,
        open64: Open<VB>,
    ) -> PyResult<Self> {
        let refuse = |why: String| PyValueError::new_err(format!("{class}.from_buffer: {why}"));
        let buffer = PyBuffer::<u8>::get(obj).map_err(|e| {
            refuse(format!(
                "{} has no buffer of bytes ({e}): pass bytes, a memoryview, an mmap or a \
                 numpy.memmap of uint8",
                type_name(obj)
            ))
        })?;
        if !buffer.readonly() {
            return Err(refuse(format!(
                "the buffer of {} is writable, and a view needs bytes nothing changes while it \
                 lives: pass bytes, a read-only memoryview, an mmap opened with \
                 access=mmap.ACCESS_READ or a numpy.memmap with mode='r' (or from_bytes, \
                 which copies)",
                type_name(obj)
            )));
        }
        if !buffer.is_c_contiguous() {
            return Err(refuse("the buffer is not contiguous".to_owned()));
        }
        let memory = if buffer.buf_ptr() as usize % ALIGN == 0 {
            Memory::Buffer(buffer, obj.clone().unbind())
        } else {
            Memory::Copy(AlignedBytes::copy_of(bytes_of(&buffer)))
        };
        Self::open(obj.py(), memory, open32, open64).map_err(|e| refuse(e.to_string()))
    }

    /// The view of `memory`'s bytes, in the precision their header names.
    fn open(
        py: Python<'_>,
        memory: Memory,
        open32: Open<VA>,
        open64: Open<VB>,
    ) -> Result<Self, Error> {
        let bytes: &[u8] = match &memory {
            Memory::Buffer(buffer, _) => bytes_of(buffer),
            Memory::Copy(copy) => copy,
        };
        // SAFETY: the bytes are the held buffer's (read-only: its exporter promises the memory
        // is neither freed, moved nor written while the buffer is held; an mmap refuses to
        // close while a buffer is exported) or the copy's (heap memory, which does not move
        // when the `AlignedBytes` does). Either is held by the `InPlace` the view is stored
        // in, and the view is dropped first (field order), so no reference to the bytes
        // outlives them; `'static` stands for that.
        let bytes: &'static [u8] = unsafe { &*core::ptr::from_ref::<[u8]>(bytes) };
        let opened = py.detach(|| match ByteHeader::peek(bytes)?.scalar_bytes {
            4 => open32(bytes).map(Ok),
            _ => open64(bytes).map(Err),
        })?;
        Ok(match opened {
            Ok(view) => Self::View32(InPlace { view, memory }),
            Err(view) => Self::View64(InPlace { view, memory }),
        })
    }

    /// What `__reduce_ex__(protocol)` returns for `obj` whose class's `_unpickle` rebuilds it:
    /// with protocol 5 or later the byte form as a `pickle.PickleBuffer` (out of band where
    /// the pickler has a `buffer_callback`; a view hands over the buffer it reads, uncopied),
    /// otherwise as `bytes`.
    pub(crate) fn reduce<'py>(
        &self,
        obj: &Bound<'py, PyAny>,
        protocol: i64,
        save: impl FnOnce() -> Vec<u8> + Send,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let py = obj.py();
        let unpickle = obj.get_type().getattr("_unpickle")?;
        let data: Bound<'py, PyAny> = match self {
            Self::View32(InPlace {
                memory: Memory::Buffer(_, source),
                ..
            })
            | Self::View64(InPlace {
                memory: Memory::Buffer(_, source),
                ..
            }) if protocol >= 5 => pickle_buffer(source.bind(py))?,
            _ => {
                let bytes = crate::to_bytes(py, save).into_any();
                if protocol >= 5 {
                    pickle_buffer(&bytes)?
                } else {
                    bytes
                }
            }
        };
        (unpickle, (data,)).into_pyobject(py)
    }

    /// What unpickling calls with the pickled byte form: a view over it where it is a
    /// read-only buffer (protocol 5's, handed back out of band, or the `bytes` the pickle
    /// held), over an aligned copy otherwise (a writable buffer, as a network layer may hand
    /// back).
    pub(crate) fn unpickle(
        data: &Bound<'_, PyAny>,
        class: &str,
        open32: Open<VA>,
        open64: Open<VB>,
    ) -> PyResult<Self> {
        let buffer = PyBuffer::<u8>::get(data)?;
        if buffer.readonly() || !buffer.is_c_contiguous() {
            // A view, or `from_buffer`'s refusal of a buffer of another layout.
            return Self::from_buffer(data, class, open32, open64);
        }
        let copy = AlignedBytes::copy_of(bytes_of(&buffer));
        Self::open(data.py(), Memory::Copy(copy), open32, open64)
            .map_err(|e| PyValueError::new_err(format!("{class}: unpickling: {e}")))
    }
}

/// The bytes of a contiguous buffer (the caller checks `is_c_contiguous`), borrowed as long
/// as the buffer is.
fn bytes_of(buffer: &PyBuffer<u8>) -> &[u8] {
    if buffer.len_bytes() == 0 {
        return &[];
    }
    // SAFETY: PEP 3118: `buf_ptr` points to `len_bytes` bytes the exporter keeps valid while
    // the buffer is held, which the borrow of `buffer` covers; they are read with the GIL
    // held or, under `detach`, only where the buffer is read-only.
    unsafe { core::slice::from_raw_parts(buffer.buf_ptr().cast::<u8>(), buffer.len_bytes()) }
}

/// `pickle.PickleBuffer(obj)`.
fn pickle_buffer<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    obj.py()
        .import("pickle")?
        .getattr("PickleBuffer")?
        .call1((obj,))
}

/// The Python type name of `obj`, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "the object".to_owned(), |n| n.to_string())
}

/// Opens a packed index's view of values `T`.
pub(crate) fn open_packed<S: Scalar + ViewValue, T: ViewValue>(
    bytes: &'static [u8],
) -> Result<PackedView<'static, S, T>, Error> {
    PackedView::open(bytes)
}

/// Opens a kd-tree's view of values `T`.
pub(crate) fn open_kd_tree<S: Scalar + ViewValue, T: ViewValue>(
    bytes: &'static [u8],
) -> Result<KdTreeView<'static, S, T>, Error> {
    KdTreeView::open(bytes)
}

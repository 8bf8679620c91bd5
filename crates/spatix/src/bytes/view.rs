//! What the views of the static structures ([`PackedView`](crate::PackedView),
//! [`KdTreeView`](crate::KdTreeView)) read their arrays with (feature `views`): the casts
//! from the bytes to typed slices, which zerocopy checks (size and alignment; every type cast
//! to is one that any bytes are a valid value of), so the library holds no `unsafe` of its own
//! for them, and [`AlignedBytes`], a buffer that starts where a view needs its bytes to.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::{ALIGN, ByteValue, Reader, corrupt};
use crate::Error;

mod sealed {
    /// Types whose byte form is their memory on a little-endian machine, and of which any
    /// bytes are a valid value: what a view may hand out without decoding.
    pub trait Plain: zerocopy::FromBytes + zerocopy::Immutable + zerocopy::KnownLayout {}
}

/// A value type that a view reads in place from the byte form: the integers, `f32`, `f64`,
/// `()` and `[u8; N]`, whose [`ByteValue`] form is their little-endian memory and of which
/// any bytes are a valid value. (`bool` is not one: a byte other than 0 or 1 is not a
/// `bool`, so it would need decoding; view a `u8` instead.)
///
/// # Example
/// ```
/// fn viewable<T: spatix::ViewValue>() {}
/// viewable::<u32>();
/// viewable::<[u8; 16]>();
/// ```
pub trait ViewValue: ByteValue + sealed::Plain {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl sealed::Plain for $t {}
        impl ViewValue for $t {}
    )*};
}

plain!(
    u8,
    u16,
    u32,
    u64,
    u128,
    i8,
    i16,
    i32,
    i64,
    i128,
    f32,
    f64,
    ()
);
impl<const N: usize> sealed::Plain for [u8; N] {}
impl<const N: usize> ViewValue for [u8; N] {}

/// The `n` items of `X` that `bytes` (exactly their length) hold, in place.
///
/// # Errors
/// [`Error::Corrupt`] on a big-endian machine (the byte form is little-endian) or if
/// `bytes` do not start at a multiple of `X`'s alignment in memory.
pub(crate) fn cast<'a, X: FromBytes + Immutable>(
    bytes: &'a [u8],
    n: usize,
    what: &str,
) -> Result<&'a [X], Error> {
    if cfg!(target_endian = "big") {
        return Err(corrupt(
            "a view reads the little-endian byte form in place, and this machine is \
             big-endian: load it with from_bytes",
        ));
    }
    <[X]>::ref_from_bytes_with_elems(bytes, n).map_err(|_| {
        corrupt(format!(
            "{what}: {} bytes at an address that is not a multiple of {} (a view needs its \
             bytes to start at a multiple of {ALIGN}: a memory-mapped file, or AlignedBytes)",
            bytes.len(),
            align_of::<X>()
        ))
    })
}

/// One line of an [`AlignedBytes`].
#[derive(Clone, Copy, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(64))]
struct Line([u8; ALIGN]);

/// Bytes that start at a multiple of 64 in memory, as a view needs them to: a copy of bytes
/// read into memory some other way (a memory-mapped file is already aligned).
///
/// # Example
/// ```
/// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeView, Point, SpatialQuery};
/// let tree = KdTree::build((0..100).map(|i| (Point::new(i as f32, 0.0), i as u32)))?;
/// let bytes = AlignedBytes::copy_of(&tree.to_bytes());
/// assert_eq!(bytes.as_ptr() as usize % 64, 0);
/// let view = KdTreeView::<f32, u32>::open(&bytes)?;
/// assert_eq!(view.len(), 100);
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone)]
pub struct AlignedBytes {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedBytes {
    /// A copy of `bytes`, starting at a multiple of 64 in memory.
    ///
    /// ```
    /// let bytes = spatix::AlignedBytes::copy_of(&[1, 2, 3]);
    /// assert_eq!(&*bytes, &[1, 2, 3]);
    /// ```
    pub fn copy_of(bytes: &[u8]) -> Self {
        let mut lines = vec![Line([0; ALIGN]); bytes.len().div_ceil(ALIGN)];
        lines.as_mut_bytes()[..bytes.len()].copy_from_slice(bytes);
        Self {
            lines,
            len: bytes.len(),
        }
    }
}

impl core::ops::Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.lines.as_bytes()[..self.len]
    }
}

impl core::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AlignedBytes")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Refuses bytes of a format version whose arrays are not aligned (before 3): a view reads
/// its arrays in place, so those load only by copying.
pub(crate) fn aligned_version(r: &Reader<'_>) -> Result<(), Error> {
    if r.version() < 3 {
        return Err(corrupt(format!(
            "format version {}, whose arrays are not aligned: load it with from_bytes \
             (and save it again to view it)",
            r.version()
        )));
    }
    Ok(())
}

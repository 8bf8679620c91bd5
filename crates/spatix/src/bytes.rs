//! The byte form of a structure: a header that names the format's version, the structure,
//! the scalar and the value type, then the structure's own sections, all little-endian; the
//! writer, the bounds-checked reader, and [`ByteValue`], how a value becomes bytes.
//!
//! A reader never trusts a length: a count of items is refused unless that many items fit in
//! the bytes left, so decoding allocates at most in proportion to the input's length, and
//! every read past the end is an [`Error::Corrupt`], never a panic.

use crate::{Aabb, Error, Point, Scalar};

/// The first bytes of every structure's byte form.
const MAGIC: [u8; 6] = *b"SPATIX";

/// The version of the format this build writes and reads.
pub(crate) const VERSION: u16 = 1;

/// A value that a structure's byte form can hold: a fixed number of bytes, little-endian.
///
/// Implemented for the unsigned and signed integers, `f32`, `f64`, `bool`, `()` and byte
/// arrays `[u8; N]`. [`KIND`](ByteValue::KIND) is written into the header, so that bytes
/// saved with one value type are refused, not misread, by a reader of another.
///
/// # Example
/// ```
/// use spatix::ByteValue;
/// let mut out = Vec::new();
/// 0x0102_0304u32.write(&mut out);
/// assert_eq!(out, [4, 3, 2, 1]);
/// assert_eq!(u32::read(&out), Some(0x0102_0304));
/// assert_eq!(bool::read(&[2]), None); // only 0 and 1 are booleans
/// ```
pub trait ByteValue: Sized {
    /// The name of the encoding (the type's name, zero-padded; `[u8; N]` also its length).
    const KIND: [u8; 8];
    /// Bytes per value.
    const SIZE: usize;

    /// Appends the value's [`SIZE`](ByteValue::SIZE) bytes.
    fn write(&self, out: &mut Vec<u8>);

    /// The value of exactly [`SIZE`](ByteValue::SIZE) bytes, or `None` when they are not one
    /// (a boolean other than 0 or 1).
    fn read(bytes: &[u8]) -> Option<Self>;
}

/// The 8-byte kind of a name.
const fn kind(name: &[u8]) -> [u8; 8] {
    let mut k = [0u8; 8];
    let mut i = 0;
    while i < name.len() && i < 8 {
        k[i] = name[i];
        i += 1;
    }
    k
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl ByteValue for $t {
            const KIND: [u8; 8] = kind(stringify!($t).as_bytes());
            const SIZE: usize = size_of::<$t>();

            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn read(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}

numbers!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64);

impl ByteValue for bool {
    const KIND: [u8; 8] = kind(b"bool");
    const SIZE: usize = 1;

    fn write(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl ByteValue for () {
    const KIND: [u8; 8] = kind(b"()");
    const SIZE: usize = 0;

    fn write(&self, _: &mut Vec<u8>) {}

    fn read(bytes: &[u8]) -> Option<Self> {
        bytes.is_empty().then_some(())
    }
}

impl<const N: usize> ByteValue for [u8; N] {
    const KIND: [u8; 8] = {
        let mut k = kind(b"[u8;");
        // The length, little-endian, in the last four bytes (lengths past 2^32 share a kind,
        // and their SIZE still differs).
        let n = (N as u32).to_le_bytes();
        k[4] = n[0];
        k[5] = n[1];
        k[6] = n[2];
        k[7] = n[3];
        k
    };
    const SIZE: usize = N;

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }

    fn read(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok()
    }
}

/// The scalar's tag in the header: its size in bytes.
fn scalar_tag<S: Scalar>() -> u8 {
    size_of::<S>() as u8
}

/// Builds a structure's byte form.
pub(crate) struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// The header for a structure named `structure` of scalar `S` and values `T`, with room
    /// for `capacity` bytes in all.
    pub(crate) fn new<S: Scalar, T: ByteValue>(structure: [u8; 8], capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&structure);
        out.push(scalar_tag::<S>());
        out.extend_from_slice(&T::KIND);
        out.extend_from_slice(&(T::SIZE as u64).to_le_bytes());
        Self { out }
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn scalar<S: Scalar>(&mut self, v: S) {
        if size_of::<S>() == 4 {
            self.out
                .extend_from_slice(&(v.to_f64() as f32).to_le_bytes());
        } else {
            self.out.extend_from_slice(&v.to_f64().to_le_bytes());
        }
    }

    pub(crate) fn aabb<S: Scalar>(&mut self, b: &Aabb<S>) {
        for v in [b.min.x, b.min.y, b.max.x, b.max.y] {
            self.scalar(v);
        }
    }

    /// Every coordinate of `points`, `x` then `y`, after their count.
    pub(crate) fn points<S: Scalar>(&mut self, points: &[[S; 2]]) {
        self.u64(points.len() as u64);
        for p in points {
            self.scalar(p[0]);
            self.scalar(p[1]);
        }
    }

    /// Every value, after their count.
    pub(crate) fn values<T: ByteValue>(&mut self, values: &[T]) {
        self.u64(values.len() as u64);
        for v in values {
            v.write(&mut self.out);
        }
    }

    pub(crate) fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Reads a structure's byte form; every read is checked against the bytes left.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

/// A corrupt-input error naming what was being read.
pub(crate) fn corrupt(what: impl Into<String>) -> Error {
    Error::Corrupt(what.into())
}

impl<'a> Reader<'a> {
    /// Reads and checks the header: the magic, the version, the structure's name, the scalar
    /// and the value type.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes of another format, version, structure, scalar or value
    /// type.
    pub(crate) fn new<S: Scalar, T: ByteValue>(
        bytes: &'a [u8],
        structure: [u8; 8],
    ) -> Result<Self, Error> {
        let mut r = Self { bytes };
        if r.take(MAGIC.len(), "the header")? != MAGIC {
            return Err(corrupt("not spatix bytes (no SPATIX header)"));
        }
        let version = u16::from_le_bytes([r.u8("the version")?, r.u8("the version")?]);
        if version != VERSION {
            return Err(corrupt(format!(
                "format version {version}; this build reads version {VERSION}"
            )));
        }
        let name = r.take(8, "the structure's name")?;
        if name != structure {
            return Err(corrupt(format!(
                "the bytes hold a {}, not a {}",
                String::from_utf8_lossy(name).trim_end_matches('\0'),
                String::from_utf8_lossy(&structure).trim_end_matches('\0')
            )));
        }
        let scalar = r.u8("the scalar")?;
        if scalar != scalar_tag::<S>() {
            return Err(corrupt(format!(
                "coordinates of {} bytes, read as {} bytes",
                scalar,
                scalar_tag::<S>()
            )));
        }
        let kind = r.take(8, "the value type")?;
        let size = r.u64("the value size")?;
        if kind != T::KIND || size != T::SIZE as u64 {
            return Err(corrupt("values of another type than the one asked for"));
        }
        Ok(r)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if n > self.bytes.len() {
            return Err(corrupt(format!("cut short in {what}")));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes(b.try_into().expect("four bytes")))
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("eight bytes")))
    }

    /// A count of items of `each` bytes that follow; refused unless they fit in the bytes
    /// left (so that nothing is allocated for a lying count).
    pub(crate) fn count(&mut self, each: usize, what: &str) -> Result<usize, Error> {
        let n = self.u64(what)?;
        let fits = usize::try_from(n)
            .ok()
            .filter(|&n| n.checked_mul(each).is_some_and(|b| b <= self.bytes.len()));
        fits.ok_or_else(|| corrupt(format!("{what}: {n} items do not fit in the bytes left")))
    }

    pub(crate) fn scalar<S: Scalar>(&mut self, what: &str) -> Result<S, Error> {
        Ok(if size_of::<S>() == 4 {
            let b = self.take(4, what)?;
            S::from_f64(f64::from(f32::from_le_bytes(b.try_into().expect("4"))))
        } else {
            let b = self.take(8, what)?;
            S::from_f64(f64::from_le_bytes(b.try_into().expect("8")))
        })
    }

    pub(crate) fn aabb<S: Scalar>(&mut self, what: &str) -> Result<Aabb<S>, Error> {
        let mut v = [S::ZERO; 4];
        for c in &mut v {
            *c = self.scalar(what)?;
        }
        Ok(Aabb {
            min: Point::new(v[0], v[1]),
            max: Point::new(v[2], v[3]),
        })
    }

    /// A count of points, then their coordinates.
    pub(crate) fn points<S: Scalar>(&mut self, what: &str) -> Result<Vec<[S; 2]>, Error> {
        let n = self.count(2 * size_of::<S>(), what)?;
        let bytes = self.take(n * 2 * size_of::<S>(), what)?;
        Ok(if size_of::<S>() == 4 {
            bytes
                .chunks_exact(8)
                .map(|c| {
                    let f = |i: usize| {
                        let v = f32::from_le_bytes(c[i..i + 4].try_into().expect("4"));
                        S::from_f64(f64::from(v))
                    };
                    [f(0), f(4)]
                })
                .collect()
        } else {
            bytes
                .chunks_exact(16)
                .map(|c| {
                    let f = |i: usize| {
                        S::from_f64(f64::from_le_bytes(c[i..i + 8].try_into().expect("8")))
                    };
                    [f(0), f(8)]
                })
                .collect()
        })
    }

    /// A count of values, which must be `expected`, then the values.
    pub(crate) fn values<T: ByteValue>(
        &mut self,
        expected: usize,
        what: &str,
    ) -> Result<Vec<T>, Error> {
        let n = self.count(T::SIZE, what)?;
        if n != expected {
            return Err(corrupt(format!("{what}: {n}, for {expected} elements")));
        }
        let bytes = self.take(n * T::SIZE, what)?;
        let read = |c: &[u8]| T::read(c).ok_or_else(|| corrupt(format!("{what}: not a value")));
        if T::SIZE == 0 {
            return (0..n).map(|_| read(&[])).collect();
        }
        bytes.chunks_exact(T::SIZE).map(read).collect()
    }

    /// Checks that nothing is left over.
    pub(crate) fn finish(self) -> Result<(), Error> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(corrupt(format!(
                "{} bytes after the end of the structure",
                self.bytes.len()
            )))
        }
    }
}

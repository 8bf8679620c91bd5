//! The byte form of a structure: a header that names the format's version, the structure,
//! the scalar and the value type, then the structure's own sections, all little-endian, then
//! a checksum of everything before it; the writer, the bounds-checked reader, and
//! [`ByteValue`], how a value becomes bytes.
//!
//! A reader checks the checksum before it reads past the version, so a damaged byte form is
//! refused as damaged. It never trusts a length either: a count of items is refused unless
//! that many items fit in the bytes left, so decoding allocates at most in proportion to the
//! input's length, and every read past the end is an [`Error::Corrupt`], never a panic.

use crate::{Aabb, Error, Point, Scalar};

mod checksum;
mod refile;
#[cfg(feature = "serde")]
pub(crate) mod serde_form;
#[cfg(test)]
mod tests;
#[cfg(feature = "views")]
pub(crate) mod view;

use checksum::Stripes;
pub use checksum::checksum;
pub(crate) use refile::Refile;

/// The first bytes of every structure's byte form.
const MAGIC: [u8; 6] = *b"SPATIX";

/// The version of the format this build writes: 3 since arrays start on [`ALIGN`]-byte
/// boundaries (so that a view reads them in place), 2 since byte forms end with a checksum.
/// Version 2 is still read (loading copies); version 1 had no checksum, and is refused with a
/// word to save the index again.
pub(crate) const VERSION: u16 = 3;

/// The oldest version this build reads: 2 (the same sections, arrays not aligned).
const OLDEST: u16 = 2;

/// Every array's items start at an offset from the start of the bytes that is a multiple of
/// this (version 3): zero bytes pad the gap after the array's count. 64 bytes: the kd-tree's
/// split blocks are a cache line each, and every other item's alignment divides it.
pub(crate) const ALIGN: usize = 64;

/// The length of the checksum every byte form ends with ([`checksum`], little-endian).
const CHECKSUM_LEN: usize = 8;

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

/// How many items (cells, bands, ...) a configuration read from bytes may allocate whatever
/// the input's length ([`Reader::allow`]).
pub(crate) const ALLOWANCE: usize = 1 << 24;

/// How many items per byte of input a byte form may imply ([`Reader::allow`]).
pub(crate) const PER_BYTE: usize = 16;

/// The header's length: magic, version, structure name, scalar tag, value kind and size.
const HEADER_LEN: usize = 6 + 2 + 8 + 1 + 8 + 8;

/// The value type a byte form names in its header: a [`ByteValue`]'s kind and size, or the
/// serde form's (whose values are not in the bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ValueKind {
    kind: [u8; 8],
    size: u64,
}

impl ValueKind {
    /// The kind of a [`ByteValue`].
    pub(crate) fn of<T: ByteValue>() -> Self {
        Self {
            kind: T::KIND,
            size: T::SIZE as u64,
        }
    }

    /// The kind the serde form writes: its values are serialised beside the bytes.
    #[cfg(feature = "serde")]
    pub(crate) const SERDE: Self = Self {
        kind: kind(b"serde"),
        size: 0,
    };

    /// The kind as text, beside `other`: with its size where only the sizes differ.
    fn describe(&self, other: &Self) -> String {
        let name = kind_name(&self.kind);
        if self.kind == other.kind && self.size != other.size {
            format!("{name} ({} bytes each)", self.size)
        } else {
            name
        }
    }
}

/// A value kind as text: its name up to the first zero byte (a byte array's kind shows its
/// length).
fn kind_name(kind: &[u8; 8]) -> String {
    if kind[..4] == *b"[u8;" {
        let n = u32::from_le_bytes([kind[4], kind[5], kind[6], kind[7]]);
        return format!("[u8; {n}]");
    }
    let end = kind.iter().position(|&b| b == 0).unwrap_or(8);
    kind[..end].escape_ascii().to_string()
}

/// What the header of a structure's byte form says: which structure, scalar and value type
/// the bytes hold. A tool that loads files of several kinds reads it first to pick the type
/// to load them as; [`ByteHeader::read`] checks the byte form's checksum first, so a
/// damaged header is refused as damaged, not read as another structure.
///
/// # Example
/// ```
/// use spatix::{ByteForm, ByteHeader, KdTree, Point};
/// let tree = KdTree::build([(Point::new(1.0f32, 2.0), 7u64)])?;
/// let header = ByteHeader::read(&tree.to_bytes())?;
/// assert_eq!(header.structure, "kd-tree");
/// assert_eq!(header.scalar_bytes, 4);
/// assert_eq!(header.value_kind_name(), "u64");
/// assert!(ByteHeader::read(b"not an index").is_err());
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteHeader {
    /// The format version: 3 (arrays aligned) or 2 (the version before; loading reads both).
    pub version: u16,
    /// The structure's name, as [`ByteForm::NAME`] gives it (`"kd-tree"`, `"packed"`, ...).
    pub structure: String,
    /// The size of one coordinate: 4 for `f32`, 8 for `f64`.
    pub scalar_bytes: u8,
    /// The value type's [`ByteValue::KIND`] (`"serde"` for the serde form's bytes).
    pub value_kind: [u8; 8],
    /// The value type's [`ByteValue::SIZE`].
    pub value_size: u64,
}

impl ByteHeader {
    /// Reads the header at the start of `bytes`, once the whole byte form's checksum is
    /// checked (one pass over the bytes).
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the bytes are shorter than a header, do not start with the
    /// format's magic, are of another format version, or do not end with the checksum of
    /// the bytes before it (damaged, cut short or added to since they were saved).
    pub fn read(bytes: &[u8]) -> Result<Self, Error> {
        let (body, stored, _) = framed(bytes)?;
        let computed = checksum(body);
        if computed != stored {
            return Err(mismatch(stored, computed));
        }
        Self::peek(bytes)
    }

    /// Reads the header at the start of `bytes` without the checksum pass: for a tool that
    /// picks the type to load or open the bytes as, and then does (which checks the checksum,
    /// so that the bytes are read once, not twice). A damaged header may name another
    /// structure than the one saved; the load or view it leads to then refuses the bytes as
    /// damaged, and a tool that refuses them for what the header says should first
    /// [`read`](Self::read) it, to refuse damaged bytes as damaged.
    ///
    /// ```
    /// use spatix::{ByteForm, ByteHeader, KdTree, Point};
    /// let tree = KdTree::build([(Point::new(1.0f32, 2.0), 7u64)])?;
    /// let mut bytes = tree.to_bytes();
    /// assert_eq!(ByteHeader::peek(&bytes)?.structure, "kd-tree");
    /// let last = bytes.len() - 1;
    /// bytes[last] ^= 1; // the checksum, damaged
    /// assert_eq!(ByteHeader::peek(&bytes)?.structure, "kd-tree");
    /// assert!(ByteHeader::read(&bytes).is_err());
    /// assert!(KdTree::<f32, u64>::from_bytes(&bytes).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the bytes are shorter than a header and a checksum, do not start
    /// with the format's magic, or are of another format version.
    pub fn peek(bytes: &[u8]) -> Result<Self, Error> {
        let (body, _, version) = framed(bytes)?;
        let mut r = Reader {
            bytes: &body[MAGIC.len() + 2..],
            total: bytes.len(),
            version,
            sum: None,
        };
        Self::fields(&mut r)
    }

    /// The header's fields after the version.
    fn fields(r: &mut Reader<'_>) -> Result<Self, Error> {
        let name = r.take(8, "the structure's name")?;
        let end = name.iter().position(|&b| b == 0).unwrap_or(8);
        if name[end..].iter().any(|&b| b != 0) {
            return Err(corrupt("the structure's name is not padded with zeros"));
        }
        let structure = String::from_utf8_lossy(&name[..end]).into_owned();
        let scalar_bytes = r.u8("the scalar")?;
        let value_kind = r
            .take(8, "the value type")?
            .try_into()
            .expect("eight bytes");
        let value_size = r.u64("the value size")?;
        Ok(Self {
            version: r.version,
            structure,
            scalar_bytes,
            value_kind,
            value_size,
        })
    }

    /// The value type's name, as Rust spells it (`"u32"`, `"f64"`, `"[u8; 16]"`, `"()"`).
    pub fn value_kind_name(&self) -> String {
        kind_name(&self.value_kind)
    }
}

/// `bytes` without their checksum, and the checksum they end with, once the magic and the
/// version are checked and the bytes are long enough for a header and a checksum.
fn framed(bytes: &[u8]) -> Result<(&[u8], u64, u16), Error> {
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(corrupt("not spatix bytes (no SPATIX header)"));
    }
    let Some(&[low, high]) = bytes.get(MAGIC.len()..MAGIC.len() + 2) else {
        return Err(corrupt("cut short in the version"));
    };
    let version = u16::from_le_bytes([low, high]);
    match version {
        OLDEST..=VERSION => {}
        1 => {
            return Err(corrupt(format!(
                "format version 1, saved by an older spatix without a checksum; this build \
                 reads versions {OLDEST} to {VERSION}: build the index again and save it",
            )));
        }
        _ => {
            return Err(corrupt(format!(
                "format version {version}; this build reads versions {OLDEST} to {VERSION}"
            )));
        }
    }
    if bytes.len() < HEADER_LEN + CHECKSUM_LEN {
        return Err(corrupt(format!(
            "cut short: {} bytes, less than a header and a checksum",
            bytes.len()
        )));
    }
    let (body, end) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let stored = u64::from_le_bytes(end.try_into().expect("eight bytes"));
    Ok((body, stored, version))
}

/// The error of bytes whose checksum is not the one they end with.
fn mismatch(stored: u64, computed: u64) -> Error {
    corrupt(format!(
        "checksum mismatch: the bytes end with {stored:#018x}, their checksum is \
         {computed:#018x} (damaged, cut short or added to since they were saved)"
    ))
}

/// How [`load`] and the serde form hand a structure its values: given the reader (positioned
/// where the byte form keeps the values) and how many values the structure holds.
pub(crate) type TakeValues<'v, T> = dyn FnMut(&mut Reader<'_>, usize) -> Result<Vec<T>, Error> + 'v;

/// What a structure provides for its byte form: its name, its sections but the values, its
/// values in the order it reads them back, and how it reads itself back. [`ByteForm`] (values
/// as [`ByteValue`]s, in the bytes) and the serde form (values serialised beside the bytes)
/// are written once over it.
pub(crate) trait Layout: Sized {
    /// The coordinate type.
    type S: Scalar;
    /// The value type.
    type T;
    /// The structure's name in the header.
    const NAME: [u8; 8];

    /// About how many bytes the form takes, values excluded (a capacity hint).
    fn size_hint(&self) -> usize;

    /// Writes every section. `values` writes the values where the structure wants them (the
    /// byte form writes them there; the serde form writes nothing).
    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self));

    /// The values, in the order [`Layout::read_layout`] takes them back.
    fn values(&self) -> impl Iterator<Item = &Self::T>;

    /// How many values [`Layout::values`] gives.
    fn value_count(&self) -> usize;

    /// Reads every section written by [`Layout::write_layout`], calling `take` where the values
    /// are, and checks the result ([`check_invariants`](crate::SpatialQuery::check_invariants)
    /// or more) before returning it.
    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, Self::T>) -> Result<Self, Error>;
}

/// A structure that can be saved as bytes and loaded back: every structure of the crate
/// whose values are [`ByteValue`]s.
///
/// The bytes are a versioned little-endian format (docs/ARCHITECTURE.md, "Byte form"): a
/// header naming the structure, the scalar and the value type ([`ByteHeader`]), then the
/// structure's configuration, its elements with their handles' generations, and its values.
/// A handle given out before saving names the same element after loading, and a handle
/// that was stale stays stale. Static structures ([`KdTree`](crate::KdTree),
/// [`PackedIndex`](crate::PackedIndex)) load by copying and checking their arrays, without
/// sorting; dynamic ones file their elements again (their answers are the same sets).
///
/// # Example
/// ```
/// use spatix::{Aabb, ByteForm, Point, SpatialIndex, SpatialQuery, UniformGrid};
/// let world = Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0))?;
/// let mut grid = UniformGrid::<f32, u32>::new(world, 10.0)?;
/// let a = grid.insert(Aabb::new(Point::new(1.0, 1.0), Point::new(2.0, 2.0))?, 7)?;
/// let loaded = UniformGrid::<f32, u32>::from_bytes(&grid.to_bytes())?;
/// assert_eq!(*loaded.get(a).unwrap().value, 7);
/// assert!(UniformGrid::<f64, u32>::from_bytes(&grid.to_bytes()).is_err()); // f32 bytes
/// # Ok::<(), spatix::Error>(())
/// ```
pub trait ByteForm: Sized {
    /// The structure's name in the header (`"kd-tree"`, `"uniform"`, ...).
    const NAME: &'static str;

    /// The structure's byte form, for [`ByteForm::from_bytes`].
    fn to_bytes(&self) -> Vec<u8>;

    /// The structure whose byte form is `bytes`, checked
    /// ([`check_invariants`](crate::SpatialQuery::check_invariants)) before it is handed out.
    /// Decoding allocates at most in proportion to the length of `bytes`.
    ///
    /// # Errors
    /// [`Error::Corrupt`], saying what is wrong, for bytes of another format version,
    /// structure, scalar or value type, cut short or followed by more, or whose content is
    /// inconsistent.
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error>;
}

/// The name in the header as text (up to its first zero byte).
pub(crate) const fn name_str(name: &'static [u8; 8]) -> &'static str {
    let mut end = 0;
    while end < 8 && name[end] != 0 {
        end += 1;
    }
    match core::str::from_utf8(name.split_at(end).0) {
        Ok(s) => s,
        Err(_) => panic!("structure names are ASCII"),
    }
}

/// [`ByteForm::to_bytes`] over a [`Layout`]: the values written as [`ByteValue`]s where
/// the structure puts them.
pub(crate) fn save<X: Layout>(x: &X) -> Vec<u8>
where
    X::T: ByteValue,
{
    let hint = x.size_hint() + x.value_count() * X::T::SIZE + HEADER_LEN + 8 + CHECKSUM_LEN;
    let mut w = Writer::new::<X::S>(X::NAME, ValueKind::of::<X::T>(), hint);
    write_part(&mut w, x);
    w.finish()
}

/// Writes `x`'s sections, values included, without a header: the whole byte form after the
/// header, or a part of a structure made of parts ([`Layered`](crate::Layered)).
pub(crate) fn write_part<X: Layout>(w: &mut Writer, x: &X)
where
    X::T: ByteValue,
{
    x.write_layout(w, &mut |w, x| {
        w.count(x.value_count());
        for v in x.values() {
            v.write(&mut w.out);
        }
    });
}

/// Reads what [`write_part`] wrote.
pub(crate) fn read_part<X: Layout>(r: &mut Reader<'_>) -> Result<X, Error>
where
    X::T: ByteValue,
{
    X::read_layout(r, &mut |r, n| r.values(n, "the values"))
}

/// [`ByteForm::from_bytes`] over a [`Layout`].
pub(crate) fn load<X: Layout>(bytes: &[u8]) -> Result<X, Error>
where
    X::T: ByteValue,
{
    let mut r = Reader::new::<X::S>(bytes, X::NAME, ValueKind::of::<X::T>())?;
    let x = read_part(&mut r);
    r.finish(x)
}

/// Implements [`ByteForm`] (and, with the `serde` feature, `Serialize` and `Deserialize`)
/// for a structure with a [`Layout`], as one-line forwards to [`save`] and [`load`] (and
/// the serde form's `serialize` and `deserialize`).
macro_rules! byte_form {
    (impl[$($generic:tt)*] $structure:ty) => {
        impl<$($generic)*> $crate::ByteForm for $structure
        where
            $structure: $crate::bytes::Layout,
            <$structure as $crate::bytes::Layout>::T: $crate::ByteValue,
        {
            const NAME: &'static str = $crate::bytes::name_str(
                &<$structure as $crate::bytes::Layout>::NAME,
            );

            fn to_bytes(&self) -> Vec<u8> {
                $crate::bytes::save(self)
            }

            fn from_bytes(bytes: &[u8]) -> Result<Self, $crate::Error> {
                $crate::bytes::load(bytes)
            }
        }

        #[cfg(feature = "serde")]
        impl<$($generic)*> serde::Serialize for $structure
        where
            $structure: $crate::bytes::Layout,
            <$structure as $crate::bytes::Layout>::T: serde::Serialize,
        {
            fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
                $crate::bytes::serde_form::serialize(self, s)
            }
        }

        #[cfg(feature = "serde")]
        impl<'de, $($generic)*> serde::Deserialize<'de> for $structure
        where
            $structure: $crate::bytes::Layout,
            <$structure as $crate::bytes::Layout>::T: serde::Deserialize<'de>,
        {
            fn deserialize<De: serde::Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
                $crate::bytes::serde_form::deserialize(d)
            }
        }
    };
    ($structure:ident) => {
        $crate::bytes::byte_form!(impl[S: $crate::Scalar, T] $structure<S, T>);
    };
}
pub(crate) use byte_form;

/// The scalar's tag in the header: its size in bytes.
fn scalar_tag<S: Scalar>() -> u8 {
    size_of::<S>() as u8
}

/// The coordinates a scalar tag names, as text.
fn scalar_name(tag: u8) -> String {
    match tag {
        4 => "f32 coordinates".to_owned(),
        8 => "f64 coordinates".to_owned(),
        _ => format!("coordinates of {tag} bytes"),
    }
}

/// Builds a structure's byte form.
pub(crate) struct Writer {
    pub(crate) out: Vec<u8>,
}

impl Writer {
    /// The header for a structure named `structure` of scalar `S` and values `T`, with room
    /// for `capacity` bytes in all.
    pub(crate) fn new<S: Scalar>(structure: [u8; 8], values: ValueKind, capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&structure);
        out.push(scalar_tag::<S>());
        out.extend_from_slice(&values.kind);
        out.extend_from_slice(&values.size.to_le_bytes());
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

    /// An array's count, then zero bytes up to the next multiple of [`ALIGN`] from the start
    /// of the bytes, where its items start ([`Reader::array`] reads it back).
    pub(crate) fn count(&mut self, n: usize) {
        self.u64(n as u64);
        let end = self.out.len().next_multiple_of(ALIGN);
        self.out.resize(end, 0);
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
        self.count(points.len());
        for p in points {
            self.scalar(p[0]);
            self.scalar(p[1]);
        }
    }

    /// The byte form: the bytes written, then their [`checksum`].
    pub(crate) fn finish(mut self) -> Vec<u8> {
        let sum = checksum(&self.out);
        self.out.extend_from_slice(&sum.to_le_bytes());
        self.out
    }

    /// Every box of `boxes` (`min.x`, `min.y`, `max.x`, `max.y`), after their count.
    pub(crate) fn boxes<S: Scalar>(&mut self, boxes: &[Aabb<S>]) {
        self.count(boxes.len());
        self.out.reserve(boxes.len() * 4 * size_of::<S>());
        for b in boxes {
            self.aabb(b);
        }
    }

    /// Every number of `items`, after their count.
    pub(crate) fn u32s(&mut self, items: &[u32]) {
        self.count(items.len());
        self.out.reserve(items.len() * 4);
        for &v in items {
            self.u32(v);
        }
    }
}

/// How many bytes of a long array [`Reader::blocks`] takes at a time: each block is hashed
/// for the checksum, then decoded while it is in the first-level cache.
const BLOCK: usize = 16 << 10;

/// Reads a structure's byte form; every read is checked against the bytes left.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    /// The whole input's length: what [`Reader::allow`] measures allocations against.
    total: usize,
    /// The format version of the input (2 or 3): whether arrays are padded to [`ALIGN`].
    version: u16,
    /// The checksum, computed as the bytes are taken (none for the header alone, whose
    /// input [`ByteHeader::read`] checks first).
    sum: Option<Sum<'a>>,
}

/// The checksum of a byte form being read: the bytes it covers, the lanes so far, and the
/// checksum the bytes end with.
struct Sum<'a> {
    body: &'a [u8],
    stripes: Stripes,
    stored: u64,
}

/// A corrupt-input error naming what was being read.
pub(crate) fn corrupt(what: impl Into<String>) -> Error {
    Error::Corrupt(what.into())
}

impl<'a> Reader<'a> {
    /// A reader of the sections between the header and the checksum, once the header is the
    /// one expected: a structure named `structure`, of scalar `S` and values of kind
    /// `values`. The checksum is computed as the sections are read and checked by
    /// [`Reader::finish`], before any other error is reported: a damaged byte form is
    /// refused as damaged, whatever else its damage breaks.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes of another format, version, structure, scalar or value
    /// type, saying what was expected and what was found, or whose checksum is not theirs.
    pub(crate) fn new<S: Scalar>(
        bytes: &'a [u8],
        structure: [u8; 8],
        values: ValueKind,
    ) -> Result<Self, Error> {
        let (body, stored, version) = framed(bytes)?;
        let mut r = Self {
            bytes: &body[MAGIC.len() + 2..],
            total: bytes.len(),
            version,
            sum: Some(Sum {
                body,
                stripes: Stripes::new(0),
                stored,
            }),
        };
        match ByteHeader::fields(&mut r).and_then(|header| expect::<S>(&header, structure, values))
        {
            Ok(()) => Ok(r),
            Err(e) => Err(r.damaged().unwrap_or(e)),
        }
    }

    /// The format version of the input.
    pub(crate) fn version(&self) -> u16 {
        self.version
    }

    /// The checksum's error when the bytes do not end with their checksum.
    fn damaged(&self) -> Option<Error> {
        let sum = self.sum.as_ref()?;
        let computed = sum.stripes.clone().finish(sum.body);
        (computed != sum.stored).then(|| mismatch(sum.stored, computed))
    }

    /// Refuses to allocate `items` items (cells, bands, cell entries ...) that the bytes
    /// imply but do not hold, unless there are at most [`ALLOWANCE`] of them or at most
    /// [`PER_BYTE`] per byte of input: loading allocates in proportion to the input's
    /// length, plus a fixed allowance, whatever the bytes claim.
    pub(crate) fn allow(&self, items: f64, what: &str) -> Result<(), Error> {
        if items <= ALLOWANCE as f64 || items <= (PER_BYTE * self.total) as f64 {
            Ok(())
        } else {
            Err(corrupt(format!(
                "{what}: {items} from {} bytes, more than loading allows",
                self.total
            )))
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        if n > self.bytes.len() {
            return Err(corrupt(format!("cut short in {what}")));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        if let Some(sum) = &mut self.sum {
            sum.stripes.advance(sum.body, sum.body.len() - rest.len());
        }
        Ok(head)
    }

    /// `n` items of `each` bytes, taken a [`BLOCK`] at a time and handed to `decode` (which
    /// appends each block's items to the vector), so that every block is decoded right after
    /// the checksum has read it.
    pub(crate) fn blocks<U>(
        &mut self,
        n: usize,
        each: usize,
        what: &str,
        mut decode: impl FnMut(&'a [u8], &mut Vec<U>) -> Result<(), Error>,
    ) -> Result<Vec<U>, Error> {
        let mut out = Vec::with_capacity(n);
        let per_block = (BLOCK / each.max(1)).max(1);
        let mut left = n;
        while left > 0 {
            let items = left.min(per_block);
            decode(self.take(items * each, what)?, &mut out)?;
            left -= items;
        }
        Ok(out)
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
        self.fits(n, each, what)
    }

    /// `n` as a count of items of `each` bytes, if that many fit in the bytes left.
    fn fits(&self, n: u64, each: usize, what: &str) -> Result<usize, Error> {
        let fits = usize::try_from(n)
            .ok()
            .filter(|&n| n.checked_mul(each).is_some_and(|b| b <= self.bytes.len()));
        fits.ok_or_else(|| corrupt(format!("{what}: {n} items do not fit in the bytes left")))
    }

    /// An array's count ([`Writer::count`]) as [`Reader::count`] reads it, with (version 3)
    /// the zero bytes up to its items, which start at a multiple of [`ALIGN`] from the start
    /// of the bytes.
    pub(crate) fn array(&mut self, each: usize, what: &str) -> Result<usize, Error> {
        let n = self.u64(what)?;
        if self.version >= 3 {
            let at = self.total - CHECKSUM_LEN - self.bytes.len();
            let padding = self.take(at.next_multiple_of(ALIGN) - at, what)?;
            if padding.iter().any(|&b| b != 0) {
                return Err(corrupt(format!("{what}: the padding is not zeros")));
            }
        }
        self.fits(n, each, what)
    }

    /// The bytes of `n` items of `each` bytes, in place, taken a [`BLOCK`] at a time (each
    /// block hashed, then handed to `check` while it is in cache): what a view reads.
    #[cfg(feature = "views")]
    pub(crate) fn in_place(
        &mut self,
        n: usize,
        each: usize,
        what: &str,
        mut check: impl FnMut(&'a [u8]) -> Result<(), Error>,
    ) -> Result<&'a [u8], Error> {
        let all = self.bytes;
        let len = n
            .checked_mul(each)
            .filter(|&len| len <= all.len())
            .ok_or_else(|| corrupt(format!("cut short in {what}")))?;
        let mut left = len;
        while left > 0 {
            let step = left.min(BLOCK);
            check(self.take(step, what)?)?;
            left -= step;
        }
        Ok(&all[..len])
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
        let size = size_of::<S>();
        let n = self.array(2 * size, what)?;
        self.blocks(n, 2 * size, what, |bytes, out| {
            out.extend(
                bytes
                    .chunks_exact(2 * size)
                    .map(|c| [scalar::<S>(&c[..size]), scalar::<S>(&c[size..])]),
            );
            Ok(())
        })
    }

    /// A count of values, which must be `expected`, then the values.
    pub(crate) fn values<T: ByteValue>(
        &mut self,
        expected: usize,
        what: &str,
    ) -> Result<Vec<T>, Error> {
        let n = self.array(T::SIZE, what)?;
        if n != expected {
            return Err(corrupt(format!("{what}: {n}, for {expected} elements")));
        }
        let read = |c: &[u8]| T::read(c).ok_or_else(|| corrupt(format!("{what}: not a value")));
        if T::SIZE == 0 {
            return (0..n).map(|_| read(&[])).collect();
        }
        self.blocks(n, T::SIZE, what, |bytes, out| {
            for c in bytes.chunks_exact(T::SIZE) {
                out.push(read(c)?);
            }
            Ok(())
        })
    }

    /// `result`, the outcome of reading the sections, unless the bytes do not end with
    /// their checksum (then the checksum's error, whatever the damage broke) or go on after
    /// the structure.
    pub(crate) fn finish<X>(self, result: Result<X, Error>) -> Result<X, Error> {
        if let Some(damaged) = self.damaged() {
            return Err(damaged);
        }
        let x = result?;
        if self.bytes.is_empty() {
            Ok(x)
        } else {
            Err(corrupt(format!(
                "{} bytes after the end of the structure",
                self.bytes.len()
            )))
        }
    }

    /// A count of boxes, then their coordinates ([`Writer::boxes`]), read in one pass; their
    /// validity is the caller's to check.
    pub(crate) fn boxes<S: Scalar>(&mut self, what: &str) -> Result<Vec<Aabb<S>>, Error> {
        let size = size_of::<S>();
        let n = self.array(4 * size, what)?;
        self.blocks(n, 4 * size, what, |bytes, out| {
            out.extend(bytes.chunks_exact(4 * size).map(|c| Aabb {
                min: Point::new(scalar(&c[..size]), scalar(&c[size..2 * size])),
                max: Point::new(scalar(&c[2 * size..3 * size]), scalar(&c[3 * size..])),
            }));
            Ok(())
        })
    }

    /// A count of `u32`s, then the numbers ([`Writer::u32s`]).
    pub(crate) fn u32s(&mut self, what: &str) -> Result<Vec<u32>, Error> {
        let n = self.array(4, what)?;
        self.blocks(n, 4, what, |bytes, out| {
            out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().expect("four bytes"))),
            );
            Ok(())
        })
    }
}

/// The coordinate of `S`'s size at the start of `bytes`.
pub(crate) fn scalar<S: Scalar>(bytes: &[u8]) -> S {
    if size_of::<S>() == 4 {
        S::from_f64(f64::from(f32::from_le_bytes(
            bytes[..4].try_into().expect("4"),
        )))
    } else {
        S::from_f64(f64::from_le_bytes(bytes[..8].try_into().expect("8")))
    }
}

/// Refuses a header of another structure, scalar or value type than the reader's, saying what
/// was expected and what was found.
fn expect<S: Scalar>(
    header: &ByteHeader,
    structure: [u8; 8],
    values: ValueKind,
) -> Result<(), Error> {
    let expected = kind_name(&structure);
    if header.structure != expected {
        return Err(corrupt(format!(
            "expected a {expected}, found a {}",
            header.structure.escape_debug()
        )));
    }
    if header.scalar_bytes != scalar_tag::<S>() {
        return Err(corrupt(format!(
            "expected {}, found {}",
            scalar_name(scalar_tag::<S>()),
            scalar_name(header.scalar_bytes)
        )));
    }
    let found = ValueKind {
        kind: header.value_kind,
        size: header.value_size,
    };
    if found != values {
        return Err(corrupt(format!(
            "expected {} values, found {} values",
            values.describe(&found),
            found.describe(&values)
        )));
    }
    Ok(())
}

/// `bytes` with their last 8 bytes made the checksum of the bytes before them: a byte form
/// changed on purpose, so that a test reaches the checks behind the checksum.
#[cfg(test)]
pub(crate) fn resealed(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(body) = out.len().checked_sub(CHECKSUM_LEN) {
        let sum = checksum(&out[..body]);
        out[body..].copy_from_slice(&sum.to_le_bytes());
    }
    out
}

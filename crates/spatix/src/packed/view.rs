//! A packed index read in place from its byte form (feature `views`): the arrays are borrowed
//! from the bytes, and the queries are the index's own, over the same [`Tree`].

use super::build::Curve;
use super::pairs::pair_parts;
use super::{MAX_LEVELS, PackedConfig, PackedIndex, Tree};
use crate::base::handle::NIL;
use crate::base::slots::StaticTable;
use crate::bytes::view::{aligned_version, cast};
use crate::bytes::{Layout, Reader, ValueKind, corrupt};
use crate::contract::{Holds, Through};
use crate::{Aabb, Error, Handle, Scalar, ViewValue};

/// A [`PackedIndex`] read in place from its byte form ([`ByteForm::to_bytes`]): opening it
/// copies nothing and builds nothing, and it answers every query of
/// [`SpatialQuery`](crate::SpatialQuery) exactly as the index saved does (the same code runs
/// over the bytes' arrays), the batches and the pair pass included.
///
/// Opening reads the bytes once, in order: it computes their checksum and checks what reading
/// them in place needs (the header, every array's length and alignment, the level sizes, and
/// every slot's position in range), so that no query indexes past an array; bytes that do not
/// pass are refused with [`Error::Corrupt`], as [`ByteForm::from_bytes`] refuses them. It does
/// not check what only answers depend on (that node boxes are their children's unions, that
/// boxes are valid, that slots are a permutation): bytes saved by spatix and not damaged since
/// (the checksum) pass those; [`check_invariants`](crate::SpatialQuery::check_invariants) checks
/// them all. The bytes must be the current format (version 3, whose arrays are aligned; load
/// older ones with [`ByteForm::from_bytes`]) and start at a multiple of 8 in memory (of 16 for
/// 16-byte values): a memory-mapped file does, and so does an [`AlignedBytes`](crate::AlignedBytes).
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, AlignedBytes, ByteForm, PackedIndex, PackedView, Point, SpatialQuery};
/// let index = PackedIndex::build((0..1000).map(|i| {
///     (Aabb::point(Point::new(i as f64, 0.5)).unwrap(), i as u32)
/// }))?;
/// let bytes = AlignedBytes::copy_of(&index.to_bytes());
/// let view = PackedView::<f64, u32>::open(&bytes)?;
/// let area = Aabb::new(Point::new(10.0, 0.0), Point::new(12.0, 1.0))?;
/// let mut found = Vec::new();
/// let _ = view.query(&area, |item| { found.push(*item.value); ControlFlow::Continue(()) });
/// found.sort();
/// assert_eq!(found, [10, 11, 12]);
/// assert_eq!(*view.get(index.handle(7).unwrap()).unwrap().value, 7);
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// [`ByteForm::to_bytes`]: crate::ByteForm::to_bytes
/// [`ByteForm::from_bytes`]: crate::ByteForm::from_bytes
#[derive(Debug)]
pub struct PackedView<'a, S, T> {
    /// The byte form it reads.
    bytes: &'a [u8],
    config: PackedConfig,
    elements: StaticTable<'a, S, T>,
    nodes: &'a [Aabb<S>],
    levels: &'a [u32],
    curve: Curve,
}

impl<S, T> Clone for PackedView<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, T> Copy for PackedView<'_, S, T> {}

impl<S, T> core::fmt::Debug for StaticTable<'_, S, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StaticTable")
            .field("len", &self.boxes.len())
            .finish_non_exhaustive()
    }
}

impl<'a, S: Scalar + ViewValue, T: ViewValue> PackedView<'a, S, T> {
    /// The index whose byte form `bytes` are, read in place.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes that are not a packed index of scalar `S` and values `T`
    /// in the current format, whose checksum is not theirs, that could not be read in place
    /// safely, or that do not start at a multiple of their arrays' alignment in memory.
    ///
    /// ```
    /// use spatix::{Aabb, AlignedBytes, ByteForm, PackedIndex, PackedView, Point};
    /// let index = PackedIndex::build([(Aabb::point(Point::new(1.0f32, 2.0))?, 7u64)])?;
    /// let mut bytes = index.to_bytes();
    /// assert!(PackedView::<f32, u64>::open(&AlignedBytes::copy_of(&bytes)).is_ok());
    /// bytes[40] ^= 1;
    /// assert!(PackedView::<f32, u64>::open(&AlignedBytes::copy_of(&bytes)).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn open(bytes: &'a [u8]) -> Result<Self, Error> {
        let name = <PackedIndex<S, T> as Layout>::NAME;
        let mut r = Reader::new::<S>(bytes, name, ValueKind::of::<T>())?;
        let view = Self::read(&mut r, bytes);
        r.finish(view)
    }

    /// The sections of [`PackedIndex`]'s layout, in place.
    fn read(r: &mut Reader<'a>, bytes: &'a [u8]) -> Result<Self, Error> {
        aligned_version(r)?;
        let config = PackedConfig {
            node_size: r.u32("the node size")?,
        };
        config
            .validate()
            .map_err(|e| corrupt(format!("the configuration: {e}")))?;
        let generation = r.u32("the generation")?;
        let mut parts = [0.0; 4];
        for p in &mut parts {
            *p = r.scalar("the curve")?;
        }
        let curve = Curve::from_parts(parts)
            .ok_or_else(|| corrupt(format!("the curve {parts:?} is not one")))?;
        let boxes = in_place_boxes::<S>(r, "the boxes")?;
        let n = boxes.len();
        // Below `u32::MAX` by more than a node, so that no child index a traversal computes
        // overflows.
        if n >= (NIL - 2 * PackedConfig::MAX_NODE_SIZE) as usize {
            return Err(corrupt(format!("{n} boxes, more than a view holds")));
        }
        let slots = u32s(r, n, "the slots", |_| true)?;
        let positions = u32s(r, n, "the positions", |p| (p as usize) < n)?;
        let count = r.array(4, "the levels")?;
        if count > MAX_LEVELS + 1 {
            return Err(corrupt(format!(
                "{count} level offsets, more than a tree has"
            )));
        }
        let levels = cast(
            r.in_place(count, 4, "the levels", |_| Ok(()))?,
            count,
            "the levels",
        )?;
        let nodes = in_place_boxes::<S>(r, "the nodes")?;
        let values = r.array(T::SIZE, "the values")?;
        if values != n {
            return Err(corrupt(format!("the values: {values}, for {n} elements")));
        }
        let size = size_of::<T>();
        let values = cast(
            r.in_place(n, size, "the values", |_| Ok(()))?,
            n,
            "the values",
        )?;
        let view = Self {
            bytes,
            config,
            elements: StaticTable {
                boxes,
                values,
                slots,
                positions,
                generation,
            },
            nodes,
            levels,
            curve,
        };
        view.tree().check_tree(false).map_err(corrupt)?;
        Ok(view)
    }
}

/// An array of boxes, in place.
fn in_place_boxes<'a, S: Scalar + ViewValue>(
    r: &mut Reader<'a>,
    what: &str,
) -> Result<&'a [Aabb<S>], Error> {
    let size = size_of::<Aabb<S>>();
    let n = r.array(size, what)?;
    cast(r.in_place(n, size, what, |_| Ok(()))?, n, what)
}

/// An array of `n` `u32`s in place, each of which must pass `ok`, checked a block at a time as
/// the block is hashed.
fn u32s<'a>(
    r: &mut Reader<'a>,
    n: usize,
    what: &str,
    ok: impl Fn(u32) -> bool,
) -> Result<&'a [u32], Error> {
    let count = r.array(4, what)?;
    if count != n {
        return Err(corrupt(format!("{what}: {count}, for {n} elements")));
    }
    let bytes = r.in_place(n, 4, what, |block| {
        let numbers = block.chunks_exact(4);
        let all = numbers.fold(true, |all, c| {
            all & ok(u32::from_le_bytes(c.try_into().expect("four bytes")))
        });
        if all {
            Ok(())
        } else {
            Err(corrupt(format!("{what}: a number out of range")))
        }
    })?;
    cast(bytes, n, what)
}

impl<'a, S: Scalar, T> PackedView<'a, S, T> {
    /// The handle of the element that was `index`-th in the input the index was built from,
    /// or `None` past the end (as [`PackedIndex::handle`]).
    ///
    /// ```
    /// use spatix::{Aabb, AlignedBytes, ByteForm, PackedIndex, PackedView, Point, SpatialQuery};
    /// let index = PackedIndex::build([(Aabb::point(Point::new(1.0f32, 2.0))?, 'a' as u32)])?;
    /// let bytes = AlignedBytes::copy_of(&index.to_bytes());
    /// let view = PackedView::<f32, u32>::open(&bytes)?;
    /// assert_eq!(view.handle(0), index.handle(0));
    /// assert_eq!(*view.get(view.handle(0).unwrap()).unwrap().value, 'a' as u32);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn handle(&self, index: usize) -> Option<Handle> {
        self.elements.handle_of_slot(index)
    }

    /// The byte form it reads (what [`ByteForm::to_bytes`](crate::ByteForm::to_bytes) of the
    /// index saved).
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, PackedIndex, PackedView};
    /// let index = PackedIndex::<f64, ()>::build([])?;
    /// let bytes = AlignedBytes::copy_of(&index.to_bytes());
    /// assert_eq!(PackedView::<f64, ()>::open(&bytes)?.bytes(), index.to_bytes());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The parameters the index was built with.
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, PackedConfig, PackedIndex, PackedView};
    /// let index = PackedIndex::<f64, ()>::build([])?;
    /// let bytes = AlignedBytes::copy_of(&index.to_bytes());
    /// assert_eq!(PackedView::<f64, ()>::open(&bytes)?.config(), PackedConfig::default());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn config(&self) -> PackedConfig {
        self.config
    }

    /// The index's arrays, as the queries read them.
    #[inline]
    pub(crate) fn tree(&self) -> Tree<'a, S, T> {
        Tree {
            node_size: self.config.node_size,
            curve: self.curve,
            elements: self.elements,
            nodes: self.nodes,
            levels: self.levels,
        }
    }
}

impl<'a, S: Scalar, T> Holds<S, T> for PackedView<'a, S, T> {
    type Table = StaticTable<'a, S, T>;

    #[inline]
    fn table(&self) -> &StaticTable<'a, S, T> {
        &self.elements
    }

    /// The arrays it reads in place: borrowed from the bytes, not held.
    fn do_memory_bytes(&self) -> usize {
        let e = &self.elements;
        (e.boxes.len() + self.nodes.len()) * size_of::<Aabb<S>>()
            + size_of_val(e.values)
            + (e.slots.len() + e.positions.len() + self.levels.len()) * size_of::<u32>()
    }
}

/// The view searches the arrays it borrows ([`Tree`]), as the index does.
impl<'a, S: Scalar, T> Through for PackedView<'a, S, T> {
    type S = S;
    type T = T;
    type Engine<'b>
        = Tree<'a, S, T>
    where
        Self: 'b;

    #[inline]
    fn engine(&self) -> Tree<'a, S, T> {
        self.tree()
    }
}

crate::contract::spatial_query!(impl<'a>[] PackedView<'a, S, T>);

pair_parts!(impl<'a> PackedView<'a, S, T>);

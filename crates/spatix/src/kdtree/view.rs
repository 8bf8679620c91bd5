//! A kd-tree read in place from its byte form (feature `views`): the arrays are borrowed
//! from the bytes, and the queries are the tree's own, over the same [`Kd`].

use super::bytes::{read_head, shape};
use super::metric::Magnitudes;
use super::splits::{Block, SplitsRef};
use super::{Kd, KdTree, KdTreeConfig};
use crate::bytes::view::{aligned_version, cast};
use crate::bytes::{Layout, Reader, ValueKind, corrupt};
use crate::contract::{Holds, Through};
use crate::{Error, Scalar, ViewValue};

/// A [`KdTree`] read in place from its byte form ([`ByteForm::to_bytes`]): opening it copies
/// nothing and builds nothing, and it answers every query of
/// [`SpatialQuery`](crate::SpatialQuery) exactly as the tree saved does (the same code runs
/// over the bytes' arrays), the batches and the pair pass included.
///
/// Opening reads the bytes once, in order: it computes their checksum and checks what reading
/// them in place needs (the header, the configuration, that the split blocks, points and
/// values are as many as the tree's shape has, and their alignment), so that no query indexes
/// past an array; bytes that do not pass are refused with [`Error::Corrupt`], as
/// [`ByteForm::from_bytes`] refuses them. It does not check what only answers depend on (the
/// kd property, the bounds, finite points): bytes saved by spatix and not damaged since (the
/// checksum) pass those; [`check_invariants`](crate::SpatialQuery::check_invariants) checks
/// them all. The bytes must be the current format (version 3, whose arrays are aligned; load
/// older ones with [`ByteForm::from_bytes`]) and start at a multiple of 64 in memory (the
/// split blocks are cache lines): a memory-mapped file does, and so does an
/// [`AlignedBytes`](crate::AlignedBytes).
///
/// # Example
/// ```
/// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeView, Point, SpatialQuery, Workspace};
/// let tree = KdTree::build((0..1000).map(|i| (Point::new(i as f64, 0.0), i as u32)))?;
/// let bytes = AlignedBytes::copy_of(&tree.to_bytes());
/// let view = KdTreeView::<f64, u32>::open(&bytes)?;
/// let mut ws = Workspace::new();
/// let near = view.nearest(Point::new(10.2, 0.0), 1, &mut ws);
/// assert_eq!(*view.get(near[0].handle).unwrap().value, 10);
/// assert!(KdTreeView::<f64, u32>::open(&bytes[..bytes.len() - 1]).is_err());
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// [`ByteForm::to_bytes`]: crate::ByteForm::to_bytes
/// [`ByteForm::from_bytes`]: crate::ByteForm::from_bytes
#[derive(Debug)]
pub struct KdTreeView<'a, S, T> {
    /// The byte form it reads.
    bytes: &'a [u8],
    tree: Kd<'a, S, T>,
}

impl<S: Copy, T> Clone for KdTreeView<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: Copy, T> Copy for KdTreeView<'_, S, T> {}

impl<'a, S: Scalar + ViewValue, T: ViewValue> KdTreeView<'a, S, T> {
    /// The tree whose byte form `bytes` are, read in place.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for bytes that are not a kd-tree of scalar `S` and values `T` in the
    /// current format, whose checksum is not theirs, that could not be read in place safely,
    /// or that do not start at a multiple of 64 in memory.
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeView, Point};
    /// let tree = KdTree::build([(Point::new(1.0f32, 2.0), 7u64)])?;
    /// let mut bytes = tree.to_bytes();
    /// assert!(KdTreeView::<f32, u64>::open(&AlignedBytes::copy_of(&bytes)).is_ok());
    /// assert!(KdTreeView::<f32, u32>::open(&AlignedBytes::copy_of(&bytes)).is_err());
    /// bytes[40] ^= 1;
    /// assert!(KdTreeView::<f32, u64>::open(&AlignedBytes::copy_of(&bytes)).is_err());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn open(bytes: &'a [u8]) -> Result<Self, Error> {
        let name = <KdTree<S, T> as Layout>::NAME;
        let mut r = Reader::new::<S>(bytes, name, ValueKind::of::<T>())?;
        let view = Self::read(&mut r, bytes);
        r.finish(view)
    }

    /// The sections of [`KdTree`]'s layout, in place.
    fn read(r: &mut Reader<'a>, bytes: &'a [u8]) -> Result<Self, Error> {
        aligned_version(r)?;
        let (config, generation, bounds) = read_head::<S>(r)?;
        let bucket_size = config.bucket_size;
        let ordinary = match r.u8("the magnitudes")? {
            0 => false,
            1 => true,
            other => return Err(corrupt(format!("magnitudes byte {other}"))),
        };
        let blocks = in_place::<Block<S>>(r, "the splits")?;
        let points = in_place::<[S; 2]>(r, "the points")?;
        let n = points.len();
        let shape = shape(n, bucket_size)?;
        let splits = SplitsRef::from_blocks(blocks, shape.height).ok_or_else(|| {
            corrupt(format!(
                "{} split blocks for {n} points in buckets of {bucket_size}",
                blocks.len()
            ))
        })?;
        let values = in_place::<T>(r, "the values")?;
        if values.len() != n {
            return Err(corrupt(format!(
                "the values: {}, for {n} elements",
                values.len()
            )));
        }
        Ok(Self {
            bytes,
            tree: Kd {
                config,
                shape,
                splits,
                points,
                values,
                bounds,
                magnitudes: Magnitudes::saved(ordinary),
                generation,
            },
        })
    }
}

/// An array of `X`, in place.
fn in_place<'a, X: zerocopy::FromBytes + zerocopy::Immutable>(
    r: &mut Reader<'a>,
    what: &str,
) -> Result<&'a [X], Error> {
    let size = size_of::<X>();
    let n = r.array(size, what)?;
    cast(r.in_place(n, size, what, |_| Ok(()))?, n, what)
}

impl<'a, S: Scalar, T> KdTreeView<'a, S, T> {
    /// The byte form it reads (what [`ByteForm::to_bytes`](crate::ByteForm::to_bytes) of the
    /// tree saved).
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeView, Point};
    /// let tree = KdTree::build([(Point::new(0.0f32, 0.0), ())])?;
    /// let bytes = AlignedBytes::copy_of(&tree.to_bytes());
    /// assert_eq!(KdTreeView::<f32, ()>::open(&bytes)?.bytes(), tree.to_bytes());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The configuration the tree was built with.
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeConfig, KdTreeView, Point};
    /// let tree = KdTree::build([(Point::new(0.0f32, 0.0), ())])?;
    /// let bytes = AlignedBytes::copy_of(&tree.to_bytes());
    /// assert_eq!(KdTreeView::<f32, ()>::open(&bytes)?.config(), KdTreeConfig::default());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn config(&self) -> KdTreeConfig {
        self.tree.config
    }

    /// Levels of internal nodes (as [`KdTree::height`]).
    ///
    /// ```
    /// use spatix::{AlignedBytes, ByteForm, KdTree, KdTreeView, Point};
    /// let tree = KdTree::build((0..1000).map(|i| (Point::new(1.0f64, 1.0), i as u32)))?;
    /// let bytes = AlignedBytes::copy_of(&tree.to_bytes());
    /// assert_eq!(KdTreeView::<f64, u32>::open(&bytes)?.height(), tree.height());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.tree.shape.height
    }
}

impl<'a, S: Scalar, T> Holds<S, T> for KdTreeView<'a, S, T> {
    type Table = Kd<'a, S, T>;

    #[inline]
    fn table(&self) -> &Kd<'a, S, T> {
        &self.tree
    }

    /// The arrays it reads in place: borrowed from the bytes, not held.
    fn do_memory_bytes(&self) -> usize {
        self.tree.splits.memory_bytes()
            + size_of_val(self.tree.points)
            + size_of_val(self.tree.values)
    }
}

/// The view searches the arrays it borrows ([`Kd`]), as the tree does.
impl<'a, S: Scalar, T> Through for KdTreeView<'a, S, T> {
    type S = S;
    type T = T;
    type Engine<'b>
        = Kd<'a, S, T>
    where
        Self: 'b;

    #[inline]
    fn engine(&self) -> Kd<'a, S, T> {
        self.tree
    }
}

crate::contract::spatial_query!(impl<'a>[] KdTreeView<'a, S, T>);

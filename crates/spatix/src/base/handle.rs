//! Generational handles: the names structures give their elements.

use core::sync::atomic::{AtomicU32, Ordering};

/// "No index": the end of an index-linked list, an empty cell, no slot.
pub(crate) const NIL: u32 = u32::MAX;

/// A small, copyable name for an element of one structure.
///
/// A handle carries a generation: once its element is removed (or the structure cleared) the
/// handle is stale forever, even when the slot is reused by a later element. Each structure
/// starts its generations at a different value, so a handle from another structure is (all but
/// certainly) rejected too. Stale handles make `get`/`remove` return `None` and `update`
/// return [`Error::StaleHandle`](crate::Error::StaleHandle).
///
/// # Example
/// ```
/// use spatix::{Aabb, BruteForce, Point, SpatialIndex, SpatialQuery};
/// let mut index = BruteForce::<f32, &str>::new();
/// let h = index.insert(Aabb::point(Point::new(1.0, 1.0))?, "a")?;
/// assert_eq!(index.remove(h), Some("a"));
/// let h2 = index.insert(Aabb::point(Point::new(2.0, 2.0))?, "b")?;
/// assert_eq!(h.slot(), h2.slot()); // the slot is reused ...
/// assert!(index.get(h).is_none()); // ... but the old handle stays stale
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Handle {
    slot: u32,
    generation: u32,
}

const _: () = assert!(core::mem::size_of::<Handle>() == 8);

impl Handle {
    /// The slot index: dense, small, and reused after removal. Useful to index side tables.
    ///
    /// ```
    /// # use spatix::{Aabb, BruteForce, Point, SpatialIndex, SpatialQuery};
    /// let mut index = BruteForce::<f64, ()>::new();
    /// let h = index.insert(Aabb::point(Point::new(0.0, 0.0))?, ())?;
    /// assert_eq!(h.slot(), 0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn slot(self) -> u32 {
        self.slot
    }

    /// The generation the handle was given out at (crate-internal: slot tables compare it).
    #[inline]
    pub(crate) fn generation(self) -> u32 {
        self.generation
    }

    /// The handle as one `u64` (slot in the low half, generation in the high half).
    ///
    /// ```
    /// # use spatix::{Aabb, BruteForce, Handle, Point, SpatialIndex, SpatialQuery};
    /// # let mut index = BruteForce::<f64, ()>::new();
    /// let h = index.insert(Aabb::point(Point::new(0.0, 0.0))?, ())?;
    /// assert_eq!(Handle::from_bits(h.to_bits()), h);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.slot)
    }

    /// The handle of `slot` at `generation` (for structures that know an element's
    /// generation without looking it up, such as static ones whose slots are never reused).
    #[inline]
    pub(crate) const fn new(slot: u32, generation: u32) -> Self {
        Self { slot, generation }
    }

    /// The inverse of [`Handle::to_bits`]. Any `u64` is accepted; one that names no live
    /// element is simply stale.
    ///
    /// ```
    /// # use spatix::Handle;
    /// assert_eq!(Handle::from_bits(7).slot(), 7);
    /// ```
    #[inline]
    pub fn from_bits(bits: u64) -> Self {
        Self {
            slot: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

/// Each slot table starts its generations at a distinct, well-spread value so that handles
/// from another table almost never match.
pub(crate) fn next_salt() -> u32 {
    static COUNTER: AtomicU32 = AtomicU32::new(1);
    COUNTER
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_mul(0x9E37_79B9)
}

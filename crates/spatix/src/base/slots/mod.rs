//! The element tables every structure keeps its elements in ([`Slots`] for dynamic
//! structures, [`StaticSlots`] for static ones), how visitors see an element ([`Item`]), and
//! the iterator over a structure's elements ([`Iter`]).

use core::ops::ControlFlow;

mod bytes;
mod iter;
#[cfg(feature = "rayon")]
mod par;
mod statics;

pub(crate) use bytes::write_section;
pub use iter::Iter;
pub(crate) use statics::{StaticSlots, StaticTable};

use crate::base::handle::{NIL, next_salt};
use crate::{Aabb, Error, Handle, Scalar};

/// One element as a visitor sees it: its handle, its box and its value.
///
/// # Example
/// ```
/// use spatix::{Aabb, BruteForce, Point, SpatialIndex, SpatialQuery};
/// let mut index = BruteForce::<f32, u32>::new();
/// let h = index.insert(Aabb::point(Point::new(1.0, 2.0))?, 7)?;
/// let item = index.get(h).unwrap();
/// assert_eq!((item.handle, *item.value), (h, 7));
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Debug)]
pub struct Item<'a, S, T> {
    /// The element's handle.
    pub handle: Handle,
    /// The element's box, as last inserted or updated (a copy: a structure of points, such
    /// as [`KdTree`](crate::KdTree), stores no box).
    pub aabb: Aabb<S>,
    /// The element's value.
    pub value: &'a T,
}

impl<S: Copy, T> Clone for Item<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: Copy, T> Copy for Item<'_, S, T> {}

/// The element store shared by every structure: each element's box and value live here once,
/// in slot order; structures refer to elements by `u32` slot.
///
/// Boxes, values and generations are kept in separate arrays so that the hot loops, which read
/// only boxes, stream through 16 (f32) or 32 (f64) bytes per element.
#[derive(Clone, Debug)]
pub(crate) struct Slots<S, T> {
    boxes: Vec<Aabb<S>>,
    values: Vec<Option<T>>,
    generations: Vec<u32>,
    free: Vec<u32>,
    len: usize,
    salt: u32,
    /// [`Slots::par_update`]'s lists of elements to move, one per chunk of slots, kept for
    /// the next call.
    #[cfg(feature = "rayon")]
    moved: Vec<Vec<(u32, Aabb<S>)>>,
}

impl<S: Scalar, T> Default for Slots<S, T> {
    fn default() -> Self {
        Self {
            boxes: Vec::new(),
            values: Vec::new(),
            generations: Vec::new(),
            free: Vec::new(),
            len: 0,
            salt: next_salt(),
            #[cfg(feature = "rayon")]
            moved: Vec::new(),
        }
    }
}

impl<S: Scalar, T> Slots<S, T> {
    /// Stores a new element and returns its slot. The box must already be validated.
    pub(crate) fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<u32, Error> {
        let slot = if let Some(slot) = self.free.pop() {
            let i = slot as usize;
            self.boxes[i] = aabb;
            self.values[i] = Some(value);
            slot
        } else {
            let slot = u32::try_from(self.boxes.len())
                .ok()
                .filter(|&s| s < NIL)
                .ok_or(Error::CapacityExceeded)?;
            self.boxes.push(aabb);
            self.values.push(Some(value));
            self.generations.push(self.salt);
            slot
        };
        self.len += 1;
        Ok(slot)
    }

    /// A table holding `boxes[i]` and `values[i]` in slot `i` (boxes already validated,
    /// every value `Some`): what `insert` into an empty table would build, in one go.
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] past 2^32 - 2 elements.
    pub(crate) fn from_elements(
        boxes: Vec<Aabb<S>>,
        values: Vec<Option<T>>,
    ) -> Result<Self, Error> {
        debug_assert_eq!(boxes.len(), values.len());
        if boxes.len() >= NIL as usize {
            return Err(Error::CapacityExceeded);
        }
        let salt = next_salt();
        Ok(Self {
            len: boxes.len(),
            generations: vec![salt; boxes.len()],
            values,
            boxes,
            free: Vec::new(),
            salt,
            #[cfg(feature = "rayon")]
            moved: Vec::new(),
        })
    }

    /// Reserves room for `additional` more elements.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.boxes.reserve(additional);
        self.values.reserve(additional);
        self.generations.reserve(additional);
    }

    /// The live slot a handle names, if any.
    #[inline]
    pub(crate) fn slot_of(&self, handle: Handle) -> Option<u32> {
        let i = handle.slot() as usize;
        (i < self.generations.len()
            && self.generations[i] == handle.generation()
            && self.values[i].is_some())
        .then_some(handle.slot())
    }

    /// The element a handle names, if it is live.
    #[inline]
    pub(crate) fn get(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.slot_of(handle).map(|slot| self.item(slot))
    }

    /// The handle of a live slot.
    #[inline]
    pub(crate) fn handle(&self, slot: u32) -> Handle {
        Handle::new(slot, self.generations[slot as usize])
    }

    /// Removes a live slot's element; its handle becomes stale forever.
    pub(crate) fn remove(&mut self, slot: u32) -> T {
        let i = slot as usize;
        let value = self.values[i].take();
        self.retire(slot);
        self.len -= 1;
        value.expect("remove is only called on live slots")
    }

    /// Advances a vacated slot's generation and frees it, unless its generations are used up
    /// (then the slot is never reused, so no old handle can come back to life).
    fn retire(&mut self, slot: u32) {
        let i = slot as usize;
        let next = self.generations[i].wrapping_add(1);
        self.generations[i] = next;
        if next != self.salt {
            self.free.push(slot);
        }
    }

    /// Removes every element; every handle given out so far becomes stale.
    pub(crate) fn clear(&mut self) {
        for slot in 0..self.values.len() {
            if self.values[slot].take().is_some() {
                self.retire(slot as u32);
            }
        }
        self.len = 0;
    }

    /// The value of the element a handle names, mutably, if it is live.
    #[inline]
    pub(crate) fn value_mut(&mut self, handle: Handle) -> Option<&mut T> {
        let slot = self.slot_of(handle)?;
        self.values[slot as usize].as_mut()
    }

    #[inline]
    pub(crate) fn aabb(&self, slot: u32) -> &Aabb<S> {
        &self.boxes[slot as usize]
    }

    #[inline]
    pub(crate) fn set_aabb(&mut self, slot: u32, aabb: Aabb<S>) {
        self.boxes[slot as usize] = aabb;
    }

    /// The element in a live slot, as a visitor sees it.
    #[inline]
    pub(crate) fn item(&self, slot: u32) -> Item<'_, S, T> {
        let i = slot as usize;
        Item {
            handle: Handle::new(slot, self.generations[i]),
            aabb: self.boxes[i],
            value: self.values[i]
                .as_ref()
                .expect("structures only hold live slots"),
        }
    }

    /// Reports pairs of live slots to `visit`, in order, stopping if it breaks. The items of
    /// a few dozen pairs are looked up in one tight loop before any is reported, so that the
    /// cache misses of those lookups (pair passes find their pairs in space order, far from
    /// slot order) overlap instead of stalling one by one.
    pub(crate) fn visit_pairs<F>(&self, pairs: &[(u32, u32)], visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        const CHUNK: usize = 32;
        for chunk in pairs.chunks(CHUNK) {
            let mut items = [None; CHUNK];
            for (item, &(a, b)) in items.iter_mut().zip(chunk) {
                *item = Some((self.item(a), self.item(b)));
            }
            for &(a, b) in items.iter().flatten() {
                visit(a, b)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Whether the slot holds a live element.
    #[inline]
    pub(crate) fn is_live(&self, slot: u32) -> bool {
        self.values
            .get(slot as usize)
            .is_some_and(|value| value.is_some())
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn iter(&self) -> Iter<'_, S, T> {
        Iter::slots(self)
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * size_of::<Aabb<S>>()
            + self.values.capacity() * size_of::<Option<T>>()
            + self.generations.capacity() * size_of::<u32>()
            + self.free.capacity() * size_of::<u32>()
            + self.moved_bytes()
    }

    #[cfg(feature = "rayon")]
    fn moved_bytes(&self) -> usize {
        self.moved.capacity() * size_of::<Vec<(u32, Aabb<S>)>>()
            + self
                .moved
                .iter()
                .map(|list| list.capacity() * size_of::<(u32, Aabb<S>)>())
                .sum::<usize>()
    }

    #[cfg(not(feature = "rayon"))]
    #[expect(clippy::unused_self, reason = "the parallel build keeps lists here")]
    fn moved_bytes(&self) -> usize {
        0
    }

    /// The live slots, in slot order.
    pub(crate) fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.values.len() as u32).filter(|&s| self.values[s as usize].is_some())
    }

    /// How many slots the table has, live or free (one past the largest slot).
    pub(crate) fn capacity(&self) -> usize {
        self.values.len()
    }

    /// Checks that the free list and the live count agree with the slots.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let live = self.values.iter().filter(|v| v.is_some()).count();
        if live != self.len {
            return Err(Error::InvariantViolated(format!(
                "slot table counts {} live elements but holds {live}",
                self.len
            )));
        }
        let mut seen = vec![false; self.values.len()];
        for &slot in &self.free {
            let i = slot as usize;
            if i >= self.values.len() || self.values[i].is_some() || seen[i] {
                return Err(Error::InvariantViolated(format!(
                    "free list entry {slot} is out of range, live, or listed twice"
                )));
            }
            seen[i] = true;
        }
        if let Some(i) =
            (0..self.values.len()).find(|&i| self.values[i].is_some() && !self.boxes[i].is_valid())
        {
            return Err(Error::InvariantViolated(format!(
                "slot {i} holds an invalid box"
            )));
        }
        Ok(())
    }
}

/// Where an element lives, by the index a structure uses for it internally (a slot of
/// [`Slots`], a position of [`StaticSlots`]): what the shared traversals (ray casts) need to
/// hand elements to visitors.
pub(crate) trait Elements<S, T> {
    /// The element at internal index `at`, as a visitor sees it.
    fn item(&self, at: u32) -> Item<'_, S, T>;
}

impl<S: Scalar, T> Elements<S, T> for Slots<S, T> {
    #[inline]
    fn item(&self, slot: u32) -> Item<'_, S, T> {
        Slots::item(self, slot)
    }
}

//! The element tables every structure keeps its elements in ([`Slots`] for dynamic
//! structures, [`StaticSlots`] for static ones), how visitors see an element ([`Item`]), and
//! the iterator over a structure's elements ([`Iter`]).

use core::ops::ControlFlow;

use crate::base::handle::{NIL, next_salt};
use crate::bytes::{Reader, TakeValues, Writer, corrupt};
use crate::{Aabb, Error, Handle, Point, Scalar};

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

/// [`Slots::par_update`]: chunks of slots are at least this long, so that a small table is
/// not cut finer than a rayon task is worth.
#[cfg(feature = "rayon")]
const MIN_UPDATE_CHUNK: usize = 1024;

/// [`Slots::par_update`]: chunks per thread, so that rayon can balance chunks whose
/// elements cost `f` unequal work.
#[cfg(feature = "rayon")]
const UPDATE_CHUNKS_PER_THREAD: usize = 8;

/// A slot table taken apart ([`Slots::into_parts`]).
pub(crate) struct TableParts<S, T> {
    pub(crate) salt: u32,
    pub(crate) generations: Vec<u32>,
    pub(crate) free: Vec<u32>,
    /// By slot: the box and value of a live slot.
    pub(crate) elements: Vec<Option<(Aabb<S>, T)>>,
}

/// Writes a slot table's section of a byte form: its salt, every slot's generation and
/// whether it is live (`live` gives a live slot's box), the live slots' boxes, the free list
/// in order (so that a loaded table reuses slots as this one would), then the live values in
/// slot order through `values`. [`Slots::read_section`] reads it.
pub(crate) fn write_section<'a, S: Scalar + 'a>(
    w: &mut Writer,
    salt: u32,
    generations: &[u32],
    live: impl Fn(u32) -> Option<&'a Aabb<S>>,
    free: &[u32],
    values: impl FnOnce(&mut Writer),
) {
    w.u64(generations.len() as u64);
    w.u32(salt);
    for (slot, g) in (0u32..).zip(generations) {
        w.u32(*g);
        w.u8(u8::from(live(slot).is_some()));
    }
    for slot in 0..generations.len() as u32 {
        if let Some(b) = live(slot) {
            w.aabb(b);
        }
    }
    w.u64(free.len() as u64);
    for &slot in free {
        w.u32(slot);
    }
    values(w);
}

/// The elements [`Slots::par_update`] left for the structure to move with its serial update,
/// in slot order, and the first refusal.
#[cfg(feature = "rayon")]
pub(crate) struct Moved<S> {
    lists: Vec<Vec<(u32, Aabb<S>)>>,
    used: usize,
    /// Slots per chunk: chunk `k`'s list holds slots of `k * chunk..(k + 1) * chunk`.
    chunk: usize,
    refused: Option<Error>,
}

#[cfg(feature = "rayon")]
impl<S: Copy> Moved<S> {
    /// The elements to move and their new boxes, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, Aabb<S>)> + '_ {
        self.lists[..self.used].iter().flatten().copied()
    }

    /// The elements to move, one list per chunk of slots, in slot order.
    pub(crate) fn chunks(&self) -> &[Vec<(u32, Aabb<S>)>] {
        &self.lists[..self.used]
    }
}

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
        Iter {
            source: Source::Slots(self),
            next: 0,
            left: self.len,
        }
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

    /// The first pass of a structure's parallel `update_all`
    /// ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)): calls `f`
    /// on every live element, in chunks of slots on rayon's pool, and sorts each new box
    /// that differs from the old one:
    /// - an invalid box is refused ([`Error::InvalidAabb`]): the element keeps its box;
    /// - otherwise `keep(slot, old, new, acc)` decides, reading only what the structure's
    ///   serial update would decide by for this element: `Ok(true)` if the serial update
    ///   would change nothing but the box (and what `acc`, the chunk's copy of a running
    ///   maximum such as an overhang, records), and the box is written at once; `Ok(false)`
    ///   if it would re-file the element: the element keeps its old box and is returned in
    ///   [`Moved`], for the caller to apply with its serial update, in slot order;
    ///   `Err(e)` if the serial update would refuse it.
    ///
    /// The chunks' accumulators, each started from `init`, are combined by `reduce` (which
    /// must treat `init` as an identity). Applying the returned moves in order then leaves
    /// the state the serial `update_all` leaves, which calls `f` in slot order too, provided
    /// no move changes what `keep` reads for another element. Hand the [`Moved`] back with
    /// [`Slots::moved_applied`] so that its memory serves the next call: once warm, the pass
    /// allocates nothing.
    #[cfg(feature = "rayon")]
    pub(crate) fn par_update<F, K, A, R>(
        &mut self,
        f: &F,
        keep: K,
        init: A,
        reduce: R,
    ) -> (Moved<S>, A)
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        K: Fn(u32, &Aabb<S>, &Aabb<S>, &mut A) -> Result<bool, Error> + Sync,
        A: Copy + Send + Sync,
        R: Fn(A, A) -> A + Sync,
        T: Send,
    {
        use rayon::prelude::*;
        let n = self.boxes.len();
        let chunk = n
            .div_ceil(rayon::current_num_threads() * UPDATE_CHUNKS_PER_THREAD)
            .max(MIN_UPDATE_CHUNK);
        let chunks = n.div_ceil(chunk);
        let mut lists = core::mem::take(&mut self.moved);
        if lists.len() < chunks {
            lists.resize_with(chunks, Vec::new);
        }
        let generations = &self.generations[..];
        let (acc, refused) = self
            .boxes
            .par_chunks_mut(chunk)
            .zip(self.values.par_chunks_mut(chunk))
            .zip(&mut lists[..chunks])
            .enumerate()
            .map(|(k, ((boxes, values), list))| {
                list.clear();
                let mut acc = init;
                let mut refused = None;
                let first = k * chunk;
                for (i, (b, value)) in boxes.iter_mut().zip(values).enumerate() {
                    let Some(value) = value else { continue };
                    let slot = (first + i) as u32;
                    let old = *b;
                    let new = f(Handle::new(slot, generations[first + i]), value, &old);
                    if new == old {
                        continue;
                    }
                    let decided = if new.is_valid() {
                        keep(slot, &old, &new, &mut acc)
                    } else {
                        Err(Error::InvalidAabb)
                    };
                    match decided {
                        Ok(true) => *b = new,
                        Ok(false) => list.push((slot, new)),
                        Err(e) => {
                            refused.get_or_insert(e);
                        }
                    }
                }
                (acc, refused)
            })
            .reduce(
                || (init, None),
                |(a, ra), (b, rb)| (reduce(a, b), ra.or(rb)),
            );
        (
            Moved {
                lists,
                used: chunks,
                chunk,
                refused,
            },
            acc,
        )
    }

    /// Writes the new box of every element of `moved`, in parallel by chunk of slots (for a
    /// structure that re-filed them without writing their boxes).
    #[cfg(feature = "rayon")]
    pub(crate) fn par_set_moved(&mut self, moved: &Moved<S>)
    where
        S: Send + Sync,
    {
        use rayon::prelude::*;
        self.boxes
            .par_chunks_mut(moved.chunk)
            .zip(moved.chunks())
            .enumerate()
            .for_each(|(k, (boxes, list))| {
                for &(slot, aabb) in list {
                    boxes[slot as usize - k * moved.chunk] = aabb;
                }
            });
    }

    /// Takes back the memory of a [`Moved`] once its moves are applied.
    #[cfg(feature = "rayon")]
    pub(crate) fn moved_applied(&mut self, moved: Moved<S>) -> Result<(), Error> {
        self.moved = moved.lists;
        moved.refused.map_or(Ok(()), Err)
    }

    /// Every slot's box, in slot order (freed slots hold stale boxes).
    #[cfg(feature = "rayon")]
    pub(crate) fn boxes(&self) -> &[Aabb<S>] {
        &self.boxes
    }

    /// Writes the table's section of a byte form ([`write_section`]).
    pub(crate) fn write_section(&self, w: &mut Writer, values: impl FnOnce(&mut Writer)) {
        let live = |slot: u32| {
            let i = slot as usize;
            self.values[i].is_some().then(|| &self.boxes[i])
        };
        write_section(w, self.salt, &self.generations, live, &self.free, values);
    }

    /// The table's salt, generations and free list, and its boxes and values by slot (`None`
    /// for free slots): what a structure that keeps its own table takes from a table read
    /// with [`Slots::read_section`].
    pub(crate) fn into_parts(self) -> TableParts<S, T> {
        TableParts {
            salt: self.salt,
            generations: self.generations,
            free: self.free,
            elements: self
                .boxes
                .into_iter()
                .zip(self.values)
                .map(|(b, v)| v.map(|v| (b, v)))
                .collect(),
        }
    }

    /// The live values in slot order: what [`Slots::write_section`] writes and
    /// [`Slots::read_section`] takes back.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.values.iter().flatten()
    }

    /// The table whose section [`Slots::write_section`] wrote, checked ([`Slots::check`]).
    pub(crate) fn read_section(
        r: &mut Reader<'_>,
        take: &mut TakeValues<'_, T>,
    ) -> Result<Self, Error> {
        let n = r.count(5, "the slots")?;
        if n >= NIL as usize {
            return Err(corrupt(format!("{n} slots, more than a table holds")));
        }
        let salt = r.u32("the salt")?;
        let mut generations = Vec::with_capacity(n);
        let mut live = Vec::with_capacity(n);
        for _ in 0..n {
            generations.push(r.u32("a generation")?);
            live.push(match r.u8("a slot's state")? {
                0 => false,
                1 => true,
                other => return Err(corrupt(format!("slot state {other}"))),
            });
        }
        let len = live.iter().filter(|&&l| l).count();
        let mut boxes = Vec::with_capacity(n);
        for &l in &live {
            boxes.push(if l {
                r.aabb("a box")?
                    .validated()
                    .map_err(|_| corrupt("an invalid box"))?
            } else {
                Aabb::point(Point::new(S::ZERO, S::ZERO)).expect("the origin is a valid box")
            });
        }
        let free_len = r.count(4, "the free list")?;
        let mut free = Vec::with_capacity(free_len);
        for _ in 0..free_len {
            free.push(r.u32("a free slot")?);
        }
        let mut taken = take(r, len)?.into_iter();
        let values = live
            .iter()
            .map(|&l| if l { taken.next() } else { None })
            .collect();
        let slots = Self {
            boxes,
            values,
            generations,
            free,
            len,
            salt,
            #[cfg(feature = "rayon")]
            moved: Vec::new(),
        };
        slots.check().map_err(|e| corrupt(e.to_string()))?;
        Ok(slots)
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

/// The element store of a structure built once: no insertion or removal, so no free list,
/// no per-slot generation and no empty slots. Boxes and values are kept in the structure's
/// own order (positions), which is what its queries stream through; a handle's slot is the
/// element's index in the input it was built from, so `slots` and `positions` map between
/// the two. Every handle carries the store's one generation (a salt, as in [`Slots`], so
/// handles from other structures are rejected).
#[derive(Clone, Debug)]
pub(crate) struct StaticSlots<S, T> {
    /// By position.
    pub(crate) boxes: Vec<Aabb<S>>,
    /// By position.
    pub(crate) values: Vec<T>,
    /// By position: the element's slot (its index in the input).
    pub(crate) slots: Vec<u32>,
    /// By slot: the element's position.
    pub(crate) positions: Vec<u32>,
    generation: u32,
}

impl<S: Scalar, T> StaticSlots<S, T> {
    /// A store of elements already in the structure's order: `slots[p]` is the input index
    /// of the element at position `p` (a permutation of `0..boxes.len()`).
    pub(crate) fn new(boxes: Vec<Aabb<S>>, values: Vec<T>, slots: Vec<u32>) -> Self {
        let mut positions = vec![0; slots.len()];
        for (position, &slot) in slots.iter().enumerate() {
            positions[slot as usize] = position as u32;
        }
        Self {
            boxes,
            values,
            slots,
            positions,
            generation: next_salt(),
        }
    }

    /// [`StaticSlots::new`] on rayon's threads: the slot → position table is written
    /// through relaxed atomic stores (plain stores, each slot written once), which safe
    /// code can share between threads, then unwrapped.
    #[cfg(feature = "rayon")]
    pub(crate) fn par_new(boxes: Vec<Aabb<S>>, values: Vec<T>, slots: Vec<u32>) -> Self {
        use core::sync::atomic::{AtomicU32, Ordering};
        use rayon::prelude::*;
        let positions: Vec<AtomicU32> = (0..slots.len())
            .into_par_iter()
            .map(|_| AtomicU32::new(0))
            .collect();
        slots.par_iter().enumerate().for_each(|(position, &slot)| {
            positions[slot as usize].store(position as u32, Ordering::Relaxed);
        });
        Self {
            boxes,
            values,
            slots,
            positions: positions
                .into_par_iter()
                .map(AtomicU32::into_inner)
                .collect(),
            generation: next_salt(),
        }
    }

    /// The store a byte form describes: elements by position (`boxes`, `values`), each
    /// position's slot (`slots`, a permutation of `0..boxes.len()`), each slot's position
    /// (`positions`, its inverse), and the generation of the handles given out before it was
    /// saved. Checked as [`StaticSlots::check`] checks, without a branch per element.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the arrays differ in length, `positions` is not the inverse of
    /// `slots` (or either is not a permutation), or a box is invalid.
    pub(crate) fn from_parts(
        boxes: Vec<Aabb<S>>,
        values: Vec<T>,
        slots: Vec<u32>,
        positions: Vec<u32>,
        generation: u32,
    ) -> Result<Self, Error> {
        let n = boxes.len();
        if n >= NIL as usize || [values.len(), slots.len(), positions.len()] != [n; 3] {
            return Err(corrupt(format!(
                "{n} boxes but {} values, {} slots, {} positions",
                values.len(),
                slots.len(),
                positions.len()
            )));
        }
        // `positions[slots[p]] == p` for every position `p`: then no two positions hold one
        // slot, so `slots` is a permutation and `positions` its inverse.
        let inverse = |p: usize, slot: u32| positions.get(slot as usize) == Some(&(p as u32));
        let all = (slots.iter().enumerate()).fold(true, |ok, (p, &slot)| ok & inverse(p, slot));
        if !all {
            let p = (0..n).find(|&p| !inverse(p, slots[p])).unwrap_or_default();
            return Err(corrupt(format!(
                "position {p} holds slot {}, whose position is not {p}",
                slots[p]
            )));
        }
        // Runs of boxes at a time, without a branch per box; the first invalid one is looked
        // for only in a run that has one.
        for (run, boxes) in boxes.chunks(1024).enumerate() {
            if !boxes.iter().fold(true, |ok, b| ok & valid(b)) {
                let p = run * 1024 + boxes.iter().position(|b| !valid(b)).unwrap_or_default();
                return Err(corrupt(format!("position {p} holds an invalid box")));
            }
        }
        Ok(Self {
            boxes,
            values,
            slots,
            positions,
            generation,
        })
    }

    /// The generation every handle of the store carries (what its byte form saves).
    pub(crate) fn generation(&self) -> u32 {
        self.generation
    }

    /// The store's arrays, borrowed: what every query reads.
    #[inline]
    pub(crate) fn table(&self) -> StaticTable<'_, S, T> {
        StaticTable {
            boxes: &self.boxes,
            values: &self.values,
            slots: &self.slots,
            positions: &self.positions,
            generation: self.generation,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.boxes.len()
    }

    /// The handle of the element that was `slot`-th in the input.
    #[inline]
    pub(crate) fn handle_of_slot(&self, slot: usize) -> Option<Handle> {
        self.table().handle_of_slot(slot)
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * size_of::<Aabb<S>>()
            + self.values.capacity() * size_of::<T>()
            + (self.slots.capacity() + self.positions.capacity()) * size_of::<u32>()
    }
}

/// A [`StaticSlots`]' arrays, borrowed from it or from the bytes a view reads: boxes and
/// values by position, each position's slot and each slot's position, and the generation.
/// A view's table holds every position below the element count (checked when it is opened),
/// so nothing it answers reads past the arrays; slots are only handed out in handles.
pub(crate) struct StaticTable<'a, S, T> {
    pub(crate) boxes: &'a [Aabb<S>],
    pub(crate) values: &'a [T],
    pub(crate) slots: &'a [u32],
    pub(crate) positions: &'a [u32],
    pub(crate) generation: u32,
}

impl<S, T> Clone for StaticTable<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S, T> Copy for StaticTable<'_, S, T> {}

impl<'a, S: Scalar, T> StaticTable<'a, S, T> {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.boxes.len()
    }

    /// The handle of the element at `position`.
    #[inline]
    pub(crate) fn handle(&self, position: u32) -> Handle {
        Handle::new(self.slots[position as usize], self.generation)
    }

    /// The handle of the element that was `slot`-th in the input.
    #[inline]
    pub(crate) fn handle_of_slot(&self, slot: usize) -> Option<Handle> {
        (slot < self.len()).then_some(Handle::new(slot as u32, self.generation))
    }

    /// The element at `position`, borrowed for as long as the arrays are.
    #[inline]
    pub(crate) fn at(&self, position: u32) -> Item<'a, S, T> {
        let p = position as usize;
        Item {
            handle: self.handle(position),
            aabb: self.boxes[p],
            value: &self.values[p],
        }
    }

    /// The element a handle names, if it names one of this store's.
    #[inline]
    pub(crate) fn get(&self, handle: Handle) -> Option<Item<'a, S, T>> {
        let position = *self.positions.get(handle.slot() as usize)?;
        (handle.generation() == self.generation).then(|| self.at(position))
    }

    pub(crate) fn iter(&self) -> Iter<'a, S, T> {
        Iter {
            source: Source::Static(*self),
            next: 0,
            left: self.len(),
        }
    }

    /// Checks that the arrays agree in length, that `slots` and `positions` are inverse
    /// permutations, and that every box is valid.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let n = self.boxes.len();
        if [self.values.len(), self.slots.len(), self.positions.len()] != [n; 3] {
            return Err(Error::InvariantViolated(format!(
                "{n} boxes but {} values, {} slots, {} positions",
                self.values.len(),
                self.slots.len(),
                self.positions.len()
            )));
        }
        for (position, &slot) in self.slots.iter().enumerate() {
            if self.positions.get(slot as usize) != Some(&(position as u32)) {
                return Err(Error::InvariantViolated(format!(
                    "position {position} holds slot {slot}, whose position is not {position}"
                )));
            }
        }
        if let Some(p) = self.boxes.iter().position(|b| !b.is_valid()) {
            return Err(Error::InvariantViolated(format!(
                "position {p} holds an invalid box"
            )));
        }
        Ok(())
    }
}

impl<S: Scalar, T> Elements<S, T> for StaticTable<'_, S, T> {
    #[inline]
    fn item(&self, position: u32) -> Item<'_, S, T> {
        self.at(position)
    }
}

impl<S: Scalar, T> Elements<S, T> for StaticSlots<S, T> {
    #[inline]
    fn item(&self, position: u32) -> Item<'_, S, T> {
        self.table().at(position)
    }
}

/// [`Aabb::is_valid`] without a branch: finite corners, `min` below `max` on both axes.
#[inline]
fn valid<S: Scalar>(b: &Aabb<S>) -> bool {
    let finite = |v: S| v.abs_s() <= S::MAX;
    finite(b.min.x)
        & finite(b.min.y)
        & finite(b.max.x)
        & finite(b.max.y)
        & (b.min.x <= b.max.x)
        & (b.min.y <= b.max.y)
}

/// The element store an [`Iter`] walks.
#[derive(Clone)]
enum Source<'a, S, T> {
    Slots(&'a Slots<S, T>),
    Static(StaticTable<'a, S, T>),
    /// Points and values side by side, each element's slot its index, one generation for all
    /// (the kd-tree's store).
    Points(&'a [[S; 2]], &'a [T], u32),
    /// A store whose elements move between positions: `positions[slot]` is the position of
    /// the slot's element ([`NIL`] for a free slot), and the store hands out the element at a
    /// position.
    Placed(&'a [u32], &'a dyn Elements<S, T>),
}

/// Iterator over every element of a structure, in slot order: see
/// [`SpatialQuery::iter`](crate::SpatialQuery::iter).
#[derive(Clone)]
pub struct Iter<'a, S, T> {
    source: Source<'a, S, T>,
    next: usize,
    left: usize,
}

impl<S, T> core::fmt::Debug for Iter<'_, S, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Iter")
            .field("next", &self.next)
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl<'a, S, T> Iter<'a, S, T> {
    /// Every element of a store whose elements move between positions, in slot order:
    /// `positions[slot]` is the position of the slot's element ([`NIL`] for a free slot), and
    /// `len` is the number of live slots.
    pub(crate) fn placed(
        positions: &'a [u32],
        elements: &'a dyn Elements<S, T>,
        len: usize,
    ) -> Self {
        Self {
            source: Source::Placed(positions, elements),
            next: 0,
            left: len,
        }
    }
}

impl<S: Scalar, T> Iter<'_, S, T> {
    /// The handle and box of the first element at or after position `*cursor` of the
    /// underlying store, moving the cursor past it: a walk in storage order that lets the
    /// caller change the structure between steps ([`SpatialIndex::update_all`]'s default).
    ///
    /// Always inlined into that walk, its one caller, which calls it once per element.
    ///
    /// [`SpatialIndex::update_all`]: crate::SpatialIndex::update_all
    #[inline(always)]
    pub(crate) fn element_from(&self, cursor: &mut usize) -> Option<(Handle, Aabb<S>)> {
        let position = *cursor;
        *cursor += 1;
        match self.source {
            Source::Slots(slots) => {
                let live = (position..slots.values.len()).find(|&s| slots.values[s].is_some());
                *cursor = live.map_or(slots.values.len(), |s| s + 1);
                live.map(|s| (slots.handle(s as u32), slots.boxes[s]))
            }
            Source::Static(store) => {
                let item = store.at(*store.positions.get(position)?);
                Some((item.handle, item.aabb))
            }
            Source::Points(points, _, generation) => {
                let [x, y] = *points.get(position)?;
                let p = crate::Point::new(x, y);
                Some((
                    Handle::new(position as u32, generation),
                    Aabb { min: p, max: p },
                ))
            }
            Source::Placed(positions, elements) => {
                let live = (position..positions.len()).find(|&s| positions[s] != NIL);
                *cursor = live.map_or(positions.len(), |s| s + 1);
                live.map(|s| {
                    let item = elements.item(positions[s]);
                    (item.handle, item.aabb)
                })
            }
        }
    }
}

impl<'a, S, T> Iter<'a, S, T> {
    /// The elements of a store of points and values side by side (`values[i]` is the value of
    /// `points[i]`), whose handles are `(index, generation)`.
    pub(crate) fn points(points: &'a [[S; 2]], values: &'a [T], generation: u32) -> Self {
        debug_assert_eq!(points.len(), values.len());
        Self {
            source: Source::Points(points, values, generation),
            next: 0,
            left: points.len(),
        }
    }
}

impl<'a, S: Scalar, T> Iterator for Iter<'a, S, T> {
    type Item = Item<'a, S, T>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.left > 0 {
            let i = self.next;
            self.next += 1;
            match self.source {
                Source::Slots(slots) => {
                    if slots.values[i].is_some() {
                        self.left -= 1;
                        return Some(slots.item(i as u32));
                    }
                }
                Source::Static(store) => {
                    self.left -= 1;
                    return Some(store.at(store.positions[i]));
                }
                Source::Points(points, values, generation) => {
                    self.left -= 1;
                    let [x, y] = points[i];
                    let p = crate::Point::new(x, y);
                    return Some(Item {
                        handle: Handle::new(i as u32, generation),
                        aabb: Aabb { min: p, max: p },
                        value: &values[i],
                    });
                }
                Source::Placed(positions, elements) => {
                    if positions[i] != NIL {
                        self.left -= 1;
                        return Some(elements.item(positions[i]));
                    }
                }
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<S: Scalar, T> ExactSizeIterator for Iter<'_, S, T> {}

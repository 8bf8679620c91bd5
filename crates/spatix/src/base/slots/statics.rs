//! The element store of a structure built once ([`StaticSlots`]), and its borrowed form
//! ([`StaticTable`]).

use super::{Elements, Item};
use crate::base::handle::{NIL, next_salt};
use crate::bytes::corrupt;
use crate::{Aabb, Error, Handle, Scalar};

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

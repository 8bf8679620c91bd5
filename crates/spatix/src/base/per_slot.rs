//! A `u32` per slot that the threads of a parallel pass may write at distinct slots, in safe
//! code: [`PerSlot`].

use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

/// A table of one `u32` per slot (a structure's node or cell of each element) that the
/// bands of a parallel pass write at the slots of the elements each band holds, through a
/// shared reference ([`PerSlot::store`]): each value is an atomic read and written with
/// relaxed ordering, which on the targets we build for compiles to the plain loads and
/// stores of a `Vec<u32>`. The pass's join orders the bands' writes before what follows.
#[derive(Default)]
pub(crate) struct PerSlot(Vec<AtomicU32>);

impl PerSlot {
    /// `len` slots, each holding `value`.
    pub(crate) fn filled(len: usize, value: u32) -> Self {
        Self((0..len).map(|_| AtomicU32::new(value)).collect())
    }

    /// Slot `slot`'s value.
    #[inline]
    pub(crate) fn get(&self, slot: u32) -> u32 {
        self.0[slot as usize].load(Ordering::Relaxed)
    }

    /// Sets slot `slot`'s value.
    #[inline]
    pub(crate) fn set(&mut self, slot: u32, value: u32) {
        *self.0[slot as usize].get_mut() = value;
    }

    /// Sets slot `slot`'s value from one of the threads of a parallel pass, each of which
    /// writes other slots.
    #[inline]
    pub(crate) fn store(&self, slot: u32, value: u32) {
        self.0[slot as usize].store(value, Ordering::Relaxed);
    }

    /// How many slots the table covers.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Covers at least `len` slots, new ones holding `value`.
    #[inline(always)]
    pub(crate) fn grow_to(&mut self, len: usize, value: u32) {
        if self.0.len() < len {
            self.grow(len, value);
        }
    }

    /// [`PerSlot::grow_to`]'s growth, out of line.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, len: usize, value: u32) {
        self.0.resize_with(len, || AtomicU32::new(value));
    }

    /// Reserves room for `additional` more slots.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.0.reserve(additional);
    }

    /// Drops every slot; keeps the memory.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.0.capacity() * size_of::<u32>()
    }
}

impl Clone for PerSlot {
    fn clone(&self) -> Self {
        Self(
            self.0
                .iter()
                .map(|v| AtomicU32::new(v.load(Ordering::Relaxed)))
                .collect(),
        )
    }
}

impl fmt::Debug for PerSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|v| v.load(Ordering::Relaxed)))
            .finish()
    }
}

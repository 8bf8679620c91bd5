//! The element arrays the nodes' runs live in: runs of power-of-two capacity, freed runs kept
//! on one free list per capacity and reused, so a running simulation stops allocating once
//! the demand of each size has peaked.

use crate::Aabb;
use crate::handle::NIL;

/// Size classes: run capacities 2^0 .. 2^31.
const CLASSES: usize = 32;

/// The elements of every node: `boxes[i]` and `items[i]` (the slot) form entry `i`. A free
/// run's first `items` entry links to the next free run of its class.
#[derive(Clone, Debug)]
pub(super) struct Runs<S> {
    pub(super) boxes: Vec<Aabb<S>>,
    pub(super) items: Vec<u32>,
    free: [u32; CLASSES],
}

impl<S: Copy + Default> Default for Runs<S> {
    fn default() -> Self {
        Self {
            boxes: Vec::new(),
            items: Vec::new(),
            free: [NIL; CLASSES],
        }
    }
}

impl<S: Copy + Default> Runs<S> {
    /// A run of `cap` entries (a power of two): a freed one of that size if any, else new
    /// entries at the end.
    pub(super) fn alloc(&mut self, cap: u32) -> u32 {
        let class = cap.trailing_zeros() as usize;
        let head = self.free[class];
        if head != NIL {
            self.free[class] = self.items[head as usize];
            return head;
        }
        let start = self.boxes.len();
        let end = start + cap as usize;
        self.boxes.resize(end, Aabb::default());
        self.items.resize(end, NIL);
        start as u32
    }

    /// Returns the run `start .. start + cap` to its free list.
    pub(super) fn release(&mut self, start: u32, cap: u32) {
        let class = cap.trailing_zeros() as usize;
        self.items[start as usize] = self.free[class];
        self.free[class] = start;
    }

    /// Copies entry `from` to entry `to`.
    #[inline]
    pub(super) fn copy(&mut self, from: u32, to: u32) {
        self.boxes[to as usize] = self.boxes[from as usize];
        self.items[to as usize] = self.items[from as usize];
    }

    /// Writes entry `at`.
    #[inline]
    pub(super) fn set(&mut self, at: u32, aabb: Aabb<S>, slot: u32) {
        self.boxes[at as usize] = aabb;
        self.items[at as usize] = slot;
    }

    /// Reserves room for `additional` more entries.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.boxes.reserve(additional);
        self.items.reserve(additional);
    }

    /// Drops every run; keeps the memory.
    pub(super) fn clear(&mut self) {
        self.boxes.clear();
        self.items.clear();
        self.free = [NIL; CLASSES];
    }

    /// Entries allocated (in runs, used or free).
    pub(super) fn allocated(&self) -> usize {
        self.boxes.len()
    }

    /// Every free run as `(start, cap)`; `None` if a free list is broken (out of range or
    /// cyclic).
    pub(super) fn free_runs(&self) -> Option<Vec<(u32, u32)>> {
        let mut runs = Vec::new();
        for (class, &head) in self.free.iter().enumerate() {
            let cap = 1u32 << class;
            let mut at = head;
            while at != NIL {
                if at as usize + cap as usize > self.boxes.len() || runs.len() > self.boxes.len() {
                    return None;
                }
                runs.push((at, cap));
                at = self.items[at as usize];
            }
        }
        Some(runs)
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * size_of::<Aabb<S>>() + self.items.capacity() * size_of::<u32>()
    }
}

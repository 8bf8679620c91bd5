//! The element arrays the nodes' runs live in: runs in size classes four to an octave, freed
//! runs kept on one free list per class and reused, so a running simulation stops allocating
//! once the demand of each size has peaked.

use crate::Aabb;
use crate::base::handle::NIL;

/// Size classes: class `k` holds `(4 + k % 4) << (k / 4)` entries: 4, 5, 6, 7, 8, 10, 12,
/// 14, 16, 20, ..., each at most 1.25 times the one before, up to `7 << 29`.
const CLASSES: usize = 4 * 30;

/// The capacity of class `k`.
#[inline]
fn class_cap(k: usize) -> u32 {
    (4 + (k as u32 & 3)) << (k / 4)
}

/// The smallest class that holds `len` entries (the largest class for more than it holds).
#[inline]
fn class_of(len: u32) -> usize {
    if len <= 4 {
        return 0;
    }
    // len - 1 in [2^o, 2^(o+1)): the classes of that octave are (4 + m) << (o - 2).
    let shift = 29 - (len - 1).leading_zeros();
    let m = (len - 1) >> shift; // 4..=7
    ((4 * shift + m - 3) as usize).min(CLASSES - 1)
}

/// The capacity of the smallest class that holds `len` entries.
#[inline]
pub(super) fn cap_for(len: u32) -> u32 {
    class_cap(class_of(len))
}

/// A request for a run may be served from a free run up to this many classes larger (at most
/// 1.25^2 times the size asked for), so that surplus runs of one size serve demand for a
/// slightly smaller one instead of the arrays growing.
const BORROW: usize = 2;

/// The elements of every node: `boxes[i]` and `items[i]` (the slot) form entry `i`. A free
/// run's first `items` entry links to the next free run of its class, and its second holds
/// its capacity (every run has at least four entries).
#[derive(Clone, Debug)]
pub(super) struct Runs<S> {
    pub(super) boxes: Vec<Aabb<S>>,
    pub(super) items: Vec<u32>,
    free: [u32; CLASSES],
    /// Entries in free runs.
    free_entries: usize,
}

impl<S: Copy + Default> Default for Runs<S> {
    fn default() -> Self {
        Self {
            boxes: Vec::new(),
            items: Vec::new(),
            free: [NIL; CLASSES],
            free_entries: 0,
        }
    }
}

impl<S: Copy + Default> Runs<S> {
    /// A run of at least `cap` entries (a class capacity): a freed one of that class or up to
    /// [`BORROW`] classes larger if any, else new entries at the end. Returns its start and
    /// its capacity.
    #[inline]
    pub(super) fn alloc(&mut self, cap: u32) -> (u32, u32) {
        let class = class_of(cap);
        for k in class..(class + BORROW + 1).min(CLASSES) {
            let head = self.free[k];
            if head != NIL {
                self.free[k] = self.items[head as usize];
                self.free_entries -= class_cap(k) as usize;
                return (head, class_cap(k));
            }
        }
        let start = self.boxes.len();
        let end = start + cap as usize;
        self.boxes.resize(end, Aabb::default());
        self.items.resize(end, NIL);
        (start as u32, cap)
    }

    /// Returns the run `start .. start + cap` to its free list.
    pub(super) fn release(&mut self, start: u32, cap: u32) {
        let class = class_of(cap);
        let at = start as usize;
        self.items[at] = self.free[class];
        self.items[at + 1] = cap;
        self.free[class] = start;
        self.free_entries += cap as usize;
    }

    /// The capacity of the free run starting at `start`.
    #[inline]
    pub(super) fn free_cap(&self, start: u32) -> u32 {
        self.items[start as usize + 1]
    }

    /// Entries in free runs.
    pub(super) fn free_entries(&self) -> usize {
        self.free_entries
    }

    /// Moves the `len` entries at `from` down to `to` (`to <= from`; the ranges may overlap).
    pub(super) fn slide(&mut self, from: u32, to: u32, len: u32) {
        let range = from as usize..(from + len) as usize;
        self.boxes.copy_within(range.clone(), to as usize);
        self.items.copy_within(range, to as usize);
    }

    /// Ends the arrays at `end` (every run now lies below it) and forgets the free runs.
    pub(super) fn truncate(&mut self, end: u32) {
        self.boxes.truncate(end as usize);
        self.items.truncate(end as usize);
        self.free = [NIL; CLASSES];
        self.free_entries = 0;
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
        self.free_entries = 0;
    }

    /// Entries allocated (in runs, used or free).
    pub(super) fn allocated(&self) -> usize {
        self.boxes.len()
    }

    /// Every free run as `(start, cap)`; `None` if a free list is broken (out of range,
    /// cyclic, a run not marked with its class's capacity, or the free count wrong).
    pub(super) fn free_runs(&self) -> Option<Vec<(u32, u32)>> {
        let mut runs = Vec::new();
        for (class, &head) in self.free.iter().enumerate() {
            let cap = class_cap(class);
            let mut at = head;
            while at != NIL {
                if at as usize + cap as usize > self.boxes.len()
                    || runs.len() > self.boxes.len()
                    || self.free_cap(at) != cap
                {
                    return None;
                }
                runs.push((at, cap));
                at = self.items[at as usize];
            }
        }
        let free: usize = runs.iter().map(|&(_, cap)| cap as usize).sum();
        (free == self.free_entries).then_some(runs)
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.boxes.capacity() * size_of::<Aabb<S>>() + self.items.capacity() * size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::{CLASSES, cap_for, class_cap, class_of};

    #[test]
    fn classes_grow_by_at_most_a_quarter_and_fit_their_lengths() {
        assert_eq!(
            (0..12).map(class_cap).collect::<Vec<_>>(),
            [4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28]
        );
        for k in 1..CLASSES {
            assert!(class_cap(k) > class_cap(k - 1));
            assert!(u64::from(class_cap(k)) * 4 <= u64::from(class_cap(k - 1)) * 5);
            assert_eq!(
                class_of(class_cap(k)),
                k,
                "a class capacity is its own class"
            );
            assert_eq!(
                class_of(class_cap(k - 1) + 1),
                k,
                "one more needs the next class"
            );
        }
        for len in 1..5000 {
            let cap = cap_for(len);
            assert!(cap >= len && (cap <= 4 || u64::from(cap) * 4 < u64::from(len) * 5 + 4));
        }
    }
}

//! The structural self-check.

use super::UniformGrid;
use crate::handle::NIL;
use crate::{Error, Scalar};

impl<S: Scalar, T> UniformGrid<S, T> {
    /// Every live element is filed exactly once in every cell of its clamped range and nowhere
    /// else, every list entry names a live element, and the pool's counts add up.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.slots.check()?;
        let fail = |why: String| Err(Error::InvariantViolated(why));
        self.lattice.check(self.cells.len())?;
        let slot_count = self
            .slots
            .iter()
            .map(|item| item.handle.slot() as usize + 1)
            .max();
        // Entries per slot, and the last cell each slot was seen in (to catch duplicates).
        let mut entries = vec![0usize; slot_count.unwrap_or(0)];
        let mut last_cell = vec![usize::MAX; entries.len()];
        let mut total = 0usize;
        for cy in 0..self.lattice.rows {
            for cx in 0..self.lattice.cols {
                let cell = self.lattice.index(cx, cy);
                let mut at = self.cells[cell];
                let mut length = 0usize;
                while at != NIL {
                    if at as usize >= self.pool.allocated() {
                        return fail(format!("cell ({cx}, {cy}) links to node {at} out of range"));
                    }
                    length += 1;
                    if length > self.pool.allocated() {
                        return fail(format!("the list of cell ({cx}, {cy}) has a cycle"));
                    }
                    let link = self.pool.link(at);
                    at = link.next;
                    let slot = link.item;
                    if !self.slots.is_live(slot) {
                        return fail(format!("cell ({cx}, {cy}) lists dead slot {slot}"));
                    }
                    let i = slot as usize;
                    if last_cell[i] == cell {
                        return fail(format!("cell ({cx}, {cy}) lists slot {slot} twice"));
                    }
                    if !self.lattice.range(self.slots.aabb(slot)).contains(cx, cy) {
                        return fail(format!(
                            "cell ({cx}, {cy}) lists slot {slot} outside its range"
                        ));
                    }
                    last_cell[i] = cell;
                    entries[i] += 1;
                }
                total += length;
            }
        }
        for item in self.slots.iter() {
            let slot = item.handle.slot();
            let want = self.lattice.range(item.aabb).area();
            if entries[slot as usize] != want {
                return fail(format!(
                    "slot {slot} is filed in {} cells instead of {want}",
                    entries[slot as usize]
                ));
            }
        }
        if self.pool.in_use() != total {
            return fail(format!(
                "the pool counts {} nodes in use but the cells list {total}",
                self.pool.in_use()
            ));
        }
        let free = self.pool.free_len()?;
        if free + self.pool.in_use() != self.pool.allocated() {
            return fail(format!(
                "{free} free and {} used nodes, but {} allocated",
                self.pool.in_use(),
                self.pool.allocated()
            ));
        }
        Ok(())
    }
}

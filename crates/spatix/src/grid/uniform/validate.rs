//! The structural self-check.

use super::UniformGrid;
use crate::contract::Validates;
use crate::{Error, Scalar};

impl<S: Scalar, T> Validates for UniformGrid<S, T> {
    /// Every live element is filed exactly once in every cell of its clamped range and nowhere
    /// else, every list entry names a live element, and the pool's counts add up.
    fn do_check_invariants(&self) -> Result<(), Error> {
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
        // Nodes listed, per band.
        let mut totals = vec![0usize; self.pools.pools().len()];
        for cy in 0..self.lattice.rows {
            for cx in 0..self.lattice.cols {
                let cell = self.lattice.index(cx, cy);
                let list = || format!("cell ({cx}, {cy})");
                let pool = self.pools.of_row(cy);
                let length = pool.check_list(self.cells[cell], list, |_, link| {
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
                    Ok(())
                })?;
                totals[self.pools.band(cy)] += length;
            }
        }
        for item in self.slots.iter() {
            let slot = item.handle.slot();
            let want = self.lattice.range(&item.aabb).area();
            if entries[slot as usize] != want {
                return fail(format!(
                    "slot {slot} is filed in {} cells instead of {want}",
                    entries[slot as usize]
                ));
            }
        }
        for (pool, &total) in self.pools.pools().iter().zip(&totals) {
            pool.check_counts(total)?;
        }
        Ok(())
    }
}

//! The byte form of the grids filed by corner ([`HierarchicalGrid`](crate::HierarchicalGrid)
//! and [`PointGrid`](crate::PointGrid)): the world and every level's cell size and size
//! bound, then (after what the structure adds) the slot table; loading files every live
//! element in the cell of its corner on the level of its size again.

use super::{Level, Leveled, MAX_LEVELS};
use crate::base::per_slot::PerSlot;
use crate::base::slots::Slots;
use crate::bytes::{Reader, Writer, corrupt};
use crate::grid::lattice::{Lattice, within_quarter};
use crate::{Error, Scalar};

impl<S: Scalar, T> Leveled<S, T> {
    /// Writes the world and the levels.
    pub(crate) fn write_levels(&self, w: &mut Writer) {
        w.aabb(&self.world);
        w.u32(self.levels.len() as u32);
        for level in &self.levels {
            w.scalar(level.lattice.cell_size);
            w.scalar(level.fit);
        }
    }

    /// The empty grid of the world and levels [`Leveled::write_levels`] wrote.
    pub(crate) fn read_levels(r: &mut Reader<'_>) -> Result<Self, Error> {
        let world = r.aabb("the world")?;
        let count = r.u32("the level count")? as usize;
        if !(1..=MAX_LEVELS).contains(&count) {
            return Err(corrupt(format!("{count} levels")));
        }
        let refused = |e: Error| corrupt(format!("a level: {e}"));
        let mut levels = Vec::with_capacity(count);
        let mut rows = 0.0;
        for _ in 0..count {
            let cell = r.scalar("a level's cell size")?;
            let fit = r.scalar("a level's size bound")?;
            let lattice = Lattice::new(within_quarter(&world), cell).map_err(refused)?;
            rows += f64::from(lattice.rows);
            r.allow(rows, "the levels' rows")?;
            levels.push(Level::new(world, cell, fit).map_err(refused)?);
        }
        Ok(Self::new(world, levels))
    }

    /// Takes `slots` as the empty grid's table and files every live element. Each row of
    /// cells an element lands in is allocated whole: their sum is allowed first.
    pub(crate) fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        let mut places = Vec::with_capacity(slots.len());
        for slot in slots.live_slots() {
            places.push((
                slot,
                self.place(slots.aabb(slot)).ok_or(Error::BoxTooLarge)?,
            ));
        }
        let mut rows: Vec<(usize, u32)> = places.iter().map(|(_, p)| (p.level, p.cy)).collect();
        rows.sort_unstable();
        rows.dedup();
        let heads: f64 = rows
            .iter()
            .map(|&(level, _)| f64::from(self.levels[level].lattice.cols))
            .sum();
        r.allow(heads, "the rows of cells")?;
        self.node_of = PerSlot::filled(slots.capacity(), crate::base::handle::NIL);
        self.home = PerSlot::filled(slots.capacity(), crate::base::handle::NIL);
        self.slots = slots;
        for (slot, place) in places {
            let corner = self.slots.aabb(slot).min;
            self.link(place, slot, corner);
        }
        Ok(())
    }
}

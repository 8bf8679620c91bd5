//! The grid's byte form: its world and cell size, then the slot table; loading links every
//! live element into the cells its box covers again.

use super::UniformGrid;
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, Writer, byte_form, corrupt};
use crate::contract::Validates;
use crate::grid::lattice::Lattice;
use crate::{Error, Scalar};

byte_form!(UniformGrid);

impl<S: Scalar, T> Refile for UniformGrid<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"uniform\0";

    fn write_config(&self, w: &mut Writer) {
        w.aabb(&self.lattice.world);
        w.scalar(self.lattice.cell_size);
    }

    fn read_config(r: &mut Reader<'_>) -> Result<Self, Error> {
        let world = r.aabb("the world")?;
        let cell_size = r.scalar("the cell size")?;
        let lattice = Lattice::new(world, cell_size).map_err(|e| corrupt(e.to_string()))?;
        r.allow(lattice.len() as f64, "the cells")?;
        Self::new(world, cell_size).map_err(|e| corrupt(e.to_string()))
    }

    fn slots(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        let ranges: Vec<_> = slots
            .live_slots()
            .map(|slot| (slot, self.lattice.range(slots.aabb(slot))))
            .collect();
        let entries: f64 = ranges.iter().map(|(_, range)| range.area() as f64).sum();
        r.allow(entries, "the cell entries")?;
        self.slots = slots;
        for (slot, range) in ranges {
            self.link_block(range, slot);
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.do_check_invariants()
    }
}

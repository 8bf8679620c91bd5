//! The sweep grid's byte form: its world and band height, then its slot table (the section
//! of [`Slots`]: generations, live boxes, free list, values); loading places every live
//! element in its band again, in slot order, and lays the bands out.

use super::SweepGrid;
use crate::base::handle::NIL;
use crate::base::slots::{Slots, write_section};
use crate::bytes::{Layout, Reader, TakeValues, Writer, byte_form, corrupt};
use crate::contract::Validates;
use crate::{Error, Scalar};

byte_form!(SweepGrid);

impl<S: Scalar, T> Layout for SweepGrid<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"sweep\0\0\0";

    fn size_hint(&self) -> usize {
        64 + self.generations.len() * 9 + self.len * 4 * size_of::<S>()
    }

    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
        w.aabb(&self.world);
        w.scalar(self.height);
        let live = |slot: u32| match self.positions[slot as usize] {
            NIL => None,
            p => Some(&self.boxes[p as usize]),
        };
        write_section(w, self.salt, &self.generations, live, &self.free, |w| {
            values(w, self);
        });
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.positions
            .iter()
            .filter(|&&p| p != NIL)
            .filter_map(|&p| self.values[p as usize].as_ref())
    }

    fn value_count(&self) -> usize {
        self.len
    }

    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, T>) -> Result<Self, Error> {
        let world: crate::Aabb<S> = r.aabb("the world")?;
        let height: S = r.scalar("the band height")?;
        // A band takes the room of several cell heads.
        let bands = (world.max.y.to_f64() - world.min.y.to_f64()) / height.to_f64();
        r.allow(bands * 8.0, "the bands")?;
        let mut grid = Self::new(world, height).map_err(|e| corrupt(e.to_string()))?;
        let table = Slots::read_section(r, take)?.into_parts();
        grid.salt = table.salt;
        grid.positions = vec![NIL; table.generations.len()];
        grid.generations = table.generations;
        grid.free = table.free;
        for (slot, element) in (0u32..).zip(table.elements) {
            if let Some((aabb, value)) = element {
                let band = grid.band_of(aabb.min.y);
                grid.place(band, aabb, value, slot);
                grid.len += 1;
            }
        }
        grid.do_check_invariants()
            .map_err(|e| corrupt(e.to_string()))?;
        Ok(grid)
    }
}

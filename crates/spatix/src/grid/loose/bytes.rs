//! The loose grid's byte form: its world and [`LooseGridConfig`], then the slot table;
//! loading files every live element in the loose cell of its centre again (as `maintain`
//! leaves it), growing the cells' boxes and listing them in the tight grid.

use super::{LooseGrid, LooseGridConfig};
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, Writer, byte_form, corrupt};
use crate::contract::Validates;
use crate::grid::lattice::Lattice;
use crate::{Error, Scalar};

byte_form!(LooseGrid);

impl<S: Scalar, T> Refile for LooseGrid<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"loose\0\0\0";

    fn write_config(&self, w: &mut Writer) {
        w.aabb(&self.loose.world);
        w.scalar(self.loose.cell_size);
        w.scalar(self.tight.lattice.cell_size);
        w.scalar(self.reach);
    }

    fn read_config(r: &mut Reader<'_>) -> Result<Self, Error> {
        let world = r.aabb("the world")?;
        let config = LooseGridConfig {
            cell_size: r.scalar("the cell size")?,
            tight_cell_size: r.scalar("the tight cell size")?,
            reach: r.scalar("the reach")?,
        };
        let refused = |e: Error| corrupt(format!("the configuration: {e}"));
        let loose = Lattice::new(world, config.cell_size).map_err(refused)?;
        let tight = Lattice::new(world, config.tight_cell_size).map_err(refused)?;
        r.allow((loose.len() + tight.len()) as f64, "the cells")?;
        Self::with_config(world, config).map_err(refused)
    }

    fn slots(&self) -> &Slots<S, T> {
        &self.slots
    }

    /// A cell's listing in the tight grid covers at most the tight cells its elements' boxes
    /// and its square cover: their sum bounds what filing allocates.
    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        let listed: f64 = slots
            .live_slots()
            .map(|slot| {
                let b = slots.aabb(slot);
                let square = self.square(self.cell_of(b));
                let range = |b| self.tight.lattice.range(b).area() as f64;
                range(b) + range(&square)
            })
            .sum();
        r.allow(listed, "the tight grid's listings")?;
        self.slots = slots;
        let live: Vec<u32> = self.slots.live_slots().collect();
        for slot in live {
            self.file(slot, *self.slots.aabb(slot));
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.do_check_invariants()
    }
}

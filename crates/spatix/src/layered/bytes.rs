//! The layered index's byte form: its threshold, its three parts (each its own byte form,
//! without a header, their values the layered slots), its slot table and every slot's route
//! (part, static or not, handle in the part), and the counts of waiting and gone static
//! elements. Loading reads the parts back as their own byte forms do, so that every route
//! names its element as before; the whole index is checked before it is handed out.

use super::{Layered, Part, Route};
use crate::base::slots::Slots;
use crate::bytes::{Layout, Reader, TakeValues, Writer, byte_form, corrupt, read_part, write_part};
use crate::contract::Validates;
use crate::{Error, Handle, Scalar, SpatialIndex, StaticIndex};

byte_form!(impl[S: Scalar, T, A, L, St] Layered<S, T, A, L, St>);

impl<S, T, A, L, St> Layout for Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32> + Layout<S = S, T = u32>,
    L: SpatialIndex<S, u32> + Layout<S = S, T = u32>,
    St: StaticIndex<S, u32> + Layout<S = S, T = u32>,
{
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"layered\0";

    fn size_hint(&self) -> usize {
        64 + self.agents.size_hint()
            + self.large.size_hint()
            + self.statics.size_hint()
            + 4 * (self.agents.len() + self.large.len() + self.statics.len())
            + self.routes.len() * 19
    }

    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
        w.scalar(self.threshold);
        write_part(w, &self.agents);
        write_part(w, &self.large);
        write_part(w, &self.statics);
        w.u64(self.pending as u64);
        w.u64(self.dead as u64);
        w.u64(self.routes.len() as u64);
        for route in &self.routes {
            w.u8(match route.part {
                Part::Agents => 0,
                Part::Large => 1,
                Part::Static => 2,
            });
            w.u8(u8::from(route.is_static));
            w.u64(route.inner.to_bits());
        }
        self.slots.write_section(w, |w| values(w, self));
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.values()
    }

    fn value_count(&self) -> usize {
        self.slots.len()
    }

    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, T>) -> Result<Self, Error> {
        let threshold = r.scalar("the threshold")?;
        let agents = read_part(r)?;
        let large = read_part(r)?;
        let statics = read_part(r)?;
        let pending = r.u64("the waiting static elements")? as usize;
        let dead = r.u64("the gone static elements")? as usize;
        let count = r.count(10, "the routes")?;
        let mut routes = Vec::with_capacity(count);
        for _ in 0..count {
            let part = match r.u8("a route's part")? {
                0 => Part::Agents,
                1 => Part::Large,
                2 => Part::Static,
                other => return Err(corrupt(format!("part {other}"))),
            };
            let is_static = match r.u8("a route's kind")? {
                0 => false,
                1 => true,
                other => return Err(corrupt(format!("route kind {other}"))),
            };
            let inner = Handle::from_bits(r.u64("a route's handle")?);
            routes.push(Route {
                part,
                is_static,
                inner,
            });
        }
        let slots = Slots::read_section(r, take)?;
        if routes.len() != slots.capacity() {
            return Err(corrupt(format!(
                "{} routes for {} slots",
                routes.len(),
                slots.capacity()
            )));
        }
        let index = Self {
            agents,
            large,
            statics,
            threshold,
            slots,
            routes,
            pending,
            dead,
        };
        super::check_threshold(threshold).map_err(|e| corrupt(e.to_string()))?;
        index
            .do_check_invariants()
            .map_err(|e| corrupt(e.to_string()))?;
        Ok(index)
    }
}

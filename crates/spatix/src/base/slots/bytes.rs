//! A slot table's section of a byte form.

use super::Slots;
use crate::base::handle::NIL;
use crate::bytes::{Reader, TakeValues, Writer, corrupt};
use crate::{Aabb, Error, Point, Scalar};

/// A slot table taken apart ([`Slots::into_parts`]).
pub(crate) struct TableParts<S, T> {
    pub(crate) salt: u32,
    pub(crate) generations: Vec<u32>,
    pub(crate) free: Vec<u32>,
    /// By slot: the box and value of a live slot.
    pub(crate) elements: Vec<Option<(Aabb<S>, T)>>,
}

/// Writes a slot table's section of a byte form: its salt, every slot's generation and
/// whether it is live (`live` gives a live slot's box), the live slots' boxes, the free list
/// in order (so that a loaded table reuses slots as this one would), then the live values in
/// slot order through `values`. [`Slots::read_section`] reads it.
pub(crate) fn write_section<'a, S: Scalar + 'a>(
    w: &mut Writer,
    salt: u32,
    generations: &[u32],
    live: impl Fn(u32) -> Option<&'a Aabb<S>>,
    free: &[u32],
    values: impl FnOnce(&mut Writer),
) {
    w.u64(generations.len() as u64);
    w.u32(salt);
    for (slot, g) in (0u32..).zip(generations) {
        w.u32(*g);
        w.u8(u8::from(live(slot).is_some()));
    }
    for slot in 0..generations.len() as u32 {
        if let Some(b) = live(slot) {
            w.aabb(b);
        }
    }
    w.u64(free.len() as u64);
    for &slot in free {
        w.u32(slot);
    }
    values(w);
}

impl<S: Scalar, T> Slots<S, T> {
    /// Writes the table's section of a byte form ([`write_section`]).
    pub(crate) fn write_section(&self, w: &mut Writer, values: impl FnOnce(&mut Writer)) {
        let live = |slot: u32| {
            let i = slot as usize;
            self.values[i].is_some().then(|| &self.boxes[i])
        };
        write_section(w, self.salt, &self.generations, live, &self.free, values);
    }

    /// The table's salt, generations and free list, and its boxes and values by slot (`None`
    /// for free slots): what a structure that keeps its own table takes from a table read
    /// with [`Slots::read_section`].
    pub(crate) fn into_parts(self) -> TableParts<S, T> {
        TableParts {
            salt: self.salt,
            generations: self.generations,
            free: self.free,
            elements: self
                .boxes
                .into_iter()
                .zip(self.values)
                .map(|(b, v)| v.map(|v| (b, v)))
                .collect(),
        }
    }

    /// The live values in slot order: what [`Slots::write_section`] writes and
    /// [`Slots::read_section`] takes back.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.values.iter().flatten()
    }

    /// The table whose section [`Slots::write_section`] wrote, checked ([`Slots::check`]).
    pub(crate) fn read_section(
        r: &mut Reader<'_>,
        take: &mut TakeValues<'_, T>,
    ) -> Result<Self, Error> {
        let n = r.count(5, "the slots")?;
        if n >= NIL as usize {
            return Err(corrupt(format!("{n} slots, more than a table holds")));
        }
        let salt = r.u32("the salt")?;
        let mut generations = Vec::with_capacity(n);
        let mut live = Vec::with_capacity(n);
        for _ in 0..n {
            generations.push(r.u32("a generation")?);
            live.push(match r.u8("a slot's state")? {
                0 => false,
                1 => true,
                other => return Err(corrupt(format!("slot state {other}"))),
            });
        }
        let len = live.iter().filter(|&&l| l).count();
        let mut boxes = Vec::with_capacity(n);
        for &l in &live {
            boxes.push(if l {
                r.aabb("a box")?
                    .validated()
                    .map_err(|_| corrupt("an invalid box"))?
            } else {
                Aabb::point(Point::new(S::ZERO, S::ZERO)).expect("the origin is a valid box")
            });
        }
        let free_len = r.count(4, "the free list")?;
        let mut free = Vec::with_capacity(free_len);
        for _ in 0..free_len {
            free.push(r.u32("a free slot")?);
        }
        let mut taken = take(r, len)?.into_iter();
        let values = live
            .iter()
            .map(|&l| if l { taken.next() } else { None })
            .collect();
        let slots = Self {
            boxes,
            values,
            generations,
            free,
            len,
            salt,
            #[cfg(feature = "rayon")]
            moved: Vec::new(),
        };
        slots.check().map_err(|e| corrupt(e.to_string()))?;
        Ok(slots)
    }
}

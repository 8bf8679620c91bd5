//! The byte form of the dynamic structures: their configuration, then their slot table
//! ([`Slots::write_section`]: every slot's generation, the live boxes, the free list and the
//! values). Loading reads the table back exactly, so handles keep their meaning, and files
//! every live element again, in slot order, into the structure the configuration builds.

use super::{Layout, Reader, TakeValues, Writer, corrupt};
use crate::base::slots::Slots;
use crate::{Error, Scalar};

/// What a dynamic structure over a [`Slots`] table provides for its byte form; [`Layout`]
/// is written once over it.
pub(crate) trait Refile: Sized {
    /// The coordinate type.
    type S: Scalar;
    /// The value type.
    type T;
    /// The structure's name in the header.
    const NAME: [u8; 8];

    /// Writes the parameters [`Refile::read_config`] builds the empty structure from.
    fn write_config(&self, w: &mut Writer);

    /// The empty structure of the configuration [`Refile::write_config`] wrote.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for parameters the structure refuses, or that would allocate
    /// far more than the bytes' length allows ([`Reader::allow`]).
    fn read_config(r: &mut Reader<'_>) -> Result<Self, Error>;

    /// The structure's slot table.
    fn slots(&self) -> &Slots<Self::S, Self::T>;

    /// Takes `slots` as the (empty) structure's table and files every live element of it.
    /// `r` is the reader the table came from, for [`Reader::allow`].
    ///
    /// # Errors
    /// What filing refuses (a box too large for the structure, ...).
    fn file_all(&mut self, slots: Slots<Self::S, Self::T>, r: &Reader<'_>) -> Result<(), Error>;

    /// The structure's own check
    /// ([`check_invariants`](crate::SpatialQuery::check_invariants)).
    fn check(&self) -> Result<(), Error>;
}

impl<X: Refile> Layout for X {
    type S = X::S;
    type T = X::T;
    const NAME: [u8; 8] = X::NAME;

    fn size_hint(&self) -> usize {
        let slots = self.slots();
        64 + slots.capacity() * 9 + slots.len() * 4 * size_of::<X::S>()
    }

    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
        self.write_config(w);
        self.slots().write_section(w, |w| values(w, self));
    }

    fn values(&self) -> impl Iterator<Item = &X::T> {
        self.slots().values()
    }

    fn value_count(&self) -> usize {
        self.slots().len()
    }

    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, X::T>) -> Result<Self, Error> {
        let mut x = X::read_config(r)?;
        let slots = Slots::read_section(r, take)?;
        x.file_all(slots, r)
            .map_err(|e| corrupt(format!("an element the structure refuses: {e}")))?;
        x.check().map_err(|e| corrupt(e.to_string()))?;
        Ok(x)
    }
}

//! Insert (routed by size, or static), remove, update (moving between parts as the size
//! crosses the threshold).

use super::{Layered, Part, Route, on_part};
use crate::{Aabb, Error, Handle, Scalar, SpatialIndex};

impl<S, T, A, L, St> Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: SpatialIndex<S, u32>,
{
    /// Stores `value` with box `aabb` as static scenery: in the static part, whatever its
    /// size; updates keep it there.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] for an invalid box, or what the static part returns; nothing
    /// changes on error.
    ///
    /// ```
    /// use spatix::{Aabb, Layered, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::new(world, 1.0)?;
    /// let rock = index.insert_static(Aabb::new(Point::new(5.0, 5.0), Point::new(6.0, 6.0))?, "rock")?;
    /// assert_eq!(index.part_lens(), (0, 0, 1));
    /// assert_eq!(index.remove(rock), Some("rock"));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn insert_static(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let aabb = aabb.validated()?;
        self.insert_in(Part::Static, aabb, value)
    }

    /// The part a moving element with box `b` belongs in.
    #[inline]
    pub(super) fn part_for(&self, b: &Aabb<S>) -> Part {
        let size = b.size();
        if size.x * S::HALF <= self.threshold && size.y * S::HALF <= self.threshold {
            Part::Agents
        } else {
            Part::Large
        }
    }

    /// Inserts the element in `part` (falling back from the agents part to the large one if
    /// it refuses the box).
    pub(super) fn insert_in(
        &mut self,
        part: Part,
        aabb: Aabb<S>,
        value: T,
    ) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        match self.file(part, aabb, slot) {
            Ok(route) => {
                if slot as usize == self.routes.len() {
                    self.routes.push(route);
                } else {
                    self.routes[slot as usize] = route;
                }
                Ok(self.slots.handle(slot))
            }
            Err(e) => {
                self.slots.remove(slot);
                Err(e)
            }
        }
    }

    /// Inserts layered slot `slot` in `part` (or in the large part if the agents part
    /// refuses it) and returns where it went.
    fn file(&mut self, part: Part, aabb: Aabb<S>, slot: u32) -> Result<Route, Error> {
        let inserted = on_part!(mut self, part, |p| p.insert(aabb, slot));
        match (inserted, part) {
            (Ok(inner), _) => Ok(Route { part, inner }),
            (Err(_), Part::Agents) => Ok(Route {
                part: Part::Large,
                inner: self.large.insert(aabb, slot)?,
            }),
            (Err(e), _) => Err(e),
        }
    }

    pub(super) fn remove_element(&mut self, handle: Handle) -> Option<T> {
        let slot = self.slots.slot_of(handle)?;
        let route = self.routes[slot as usize];
        let removed = on_part!(mut self, route.part, |p| p.remove(route.inner));
        debug_assert_eq!(
            removed,
            Some(slot),
            "a live element is in the part it is routed to"
        );
        Some(self.slots.remove(slot))
    }

    /// Updates the element in its part, or moves it to the part its new size belongs in
    /// (inserted there first, so that nothing changes if that fails). An agents part that
    /// refuses the new box sends the element to the large part.
    pub(super) fn update_element(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        let aabb = aabb.validated()?;
        let slot = self.slots.slot_of(handle).ok_or(Error::StaleHandle)?;
        let route = self.routes[slot as usize];
        let target = match route.part {
            Part::Static => Part::Static,
            _ => self.part_for(&aabb),
        };
        let moved = if target == route.part {
            match on_part!(mut self, route.part, |p| p.update(route.inner, aabb)) {
                Ok(()) => None,
                Err(_) if route.part == Part::Agents => Some(Route {
                    part: Part::Large,
                    inner: self.large.insert(aabb, slot)?,
                }),
                Err(e) => return Err(e),
            }
        } else {
            match on_part!(mut self, target, |p| p.insert(aabb, slot)) {
                Ok(inner) => Some(Route {
                    part: target,
                    inner,
                }),
                Err(_) if target == Part::Agents => {
                    self.large.update(route.inner, aabb)?;
                    None
                }
                Err(e) => return Err(e),
            }
        };
        if let Some(new) = moved {
            let removed = on_part!(mut self, route.part, |p| p.remove(route.inner));
            debug_assert_eq!(
                removed,
                Some(slot),
                "a live element is in the part it is routed to"
            );
            self.routes[slot as usize] = new;
        }
        self.slots.set_aabb(slot, aabb);
        Ok(())
    }
}

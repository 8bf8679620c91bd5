//! Insert (routed by size, or static), remove, update (moving between parts as the size
//! crosses the threshold), and the rebuild of the static part.

use super::{Layered, Moving, Part, Route, on_part};
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::{Aabb, Error, Handle, Scalar, SpatialIndex, StaticIndex};

/// The moving part an element with box `b` belongs in, under `threshold`: the agents part if
/// its half-width and half-height are both within it.
#[inline]
fn moving_part<S: Scalar>(threshold: S, b: &Aabb<S>) -> Moving {
    let size = b.size();
    if size.x * S::HALF <= threshold && size.y * S::HALF <= threshold {
        Moving::Agents
    } else {
        Moving::Large
    }
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    /// Stores `value` with box `aabb` as static scenery, whatever its size: it waits in the
    /// agents or large part (by size) until the next [`maintain`](SpatialIndex::maintain)
    /// builds it into the static part, and stays static through updates (each of which
    /// takes it out of the static part until the next `maintain`).
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] for an invalid box, or what the part it waits in returns;
    /// nothing changes on error.
    ///
    /// ```
    /// use spatix::{Aabb, Layered, Point, SpatialIndex, SpatialQuery};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// let mut index = Layered::new(world, 1.0)?;
    /// let rock = index.insert_static(Aabb::new(Point::new(5.0, 5.0), Point::new(6.0, 6.0))?, "rock")?;
    /// index.maintain();
    /// assert_eq!(index.part_lens(), (0, 0, 1));
    /// assert_eq!(index.remove(rock), Some("rock"));
    /// assert_eq!(index.part_lens(), (0, 0, 0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn insert_static(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let handle = self.insert_in(aabb.validated()?, value, true)?;
        self.pending += 1;
        Ok(handle)
    }

    /// The moving part an element with box `b` belongs in.
    #[inline]
    pub(super) fn part_for(&self, b: &Aabb<S>) -> Moving {
        moving_part(self.threshold, b)
    }

    /// Inserts the element (its box valid) in the moving part its size names (falling back
    /// from the agents part to the large one if it refuses the box).
    fn insert_in(&mut self, aabb: Aabb<S>, value: T, is_static: bool) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb, value)?;
        match self.file(aabb, slot, is_static) {
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

    /// Inserts layered slot `slot` in the moving part its size names (or in the large part
    /// if the agents part refuses it) and returns where it went.
    fn file(&mut self, aabb: Aabb<S>, slot: u32, is_static: bool) -> Result<Route, Error> {
        let part = self.part_for(&aabb);
        let inserted = on_part!(mut self, part, |p| p.insert(aabb, slot));
        let (part, inner) = match (inserted, part) {
            (Ok(inner), _) => (part.into(), inner),
            (Err(_), Moving::Agents) => (Part::Large, self.large.insert(aabb, slot)?),
            (Err(e), Moving::Large) => return Err(e),
        };
        Ok(Route {
            part,
            is_static,
            inner,
        })
    }

    /// Removes layered slot `slot`'s entry `inner` from the moving part `part`.
    fn remove_from(&mut self, part: Moving, inner: Handle, slot: u32) {
        let removed = on_part!(mut self, part, |p| p.remove(inner));
        debug_assert_eq!(
            removed,
            Some(slot),
            "a live element is in the part it is routed to"
        );
    }

    /// Builds the static part from every live static element (those built and those
    /// waiting), then takes the waiting ones out of their moving parts and routes every
    /// static element to its new entry. If the build fails, nothing changes (the waiting
    /// elements keep waiting; every result stays exact).
    pub(super) fn rebuild_static(&mut self) {
        let (slots, routes) = (&self.slots, &self.routes);
        let statics = (0..routes.len() as u32)
            .filter(|&slot| routes[slot as usize].is_static && slots.is_live(slot))
            .map(|slot| (*slots.aabb(slot), slot));
        if self.statics.rebuild(statics).is_err() {
            return;
        }
        for e in self.statics.iter() {
            let slot = *e.value;
            let route = self.routes[slot as usize];
            if let Some(part) = route.moving() {
                let removed = on_part!(mut self, part, |p| p.remove(route.inner));
                debug_assert_eq!(removed, Some(slot), "a waiting element is in its part");
            }
            self.routes[slot as usize] = Route {
                part: Part::Static,
                is_static: true,
                inner: e.handle,
            };
        }
        self.pending = 0;
        self.dead = 0;
    }
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Mutates<S, T> for Layered<S, T, A, L, St>
{
    /// `insert`: the element goes in the moving part its size names.
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        self.insert_in(aabb, value, false)
    }

    /// Removes the element from its moving part, or marks it gone in the static part.
    fn do_remove(&mut self, slot: u32) -> T {
        let route = self.routes[slot as usize];
        match route.moving() {
            Some(part) => {
                self.remove_from(part, route.inner, slot);
                self.pending -= usize::from(route.is_static);
            }
            None => self.dead += 1,
        }
        self.slots.remove(slot)
    }

    /// Updates the element in its moving part, or moves it to the part its new size belongs
    /// in (inserted there first, so that nothing changes if that fails). An agents part that
    /// refuses the new box sends the element to the large part. A static element in the
    /// static part that changes its box is marked gone there and waits in a moving part.
    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let route = self.routes[slot as usize];
        let Some(current) = route.moving() else {
            if *self.slots.aabb(slot) != aabb {
                self.routes[slot as usize] = self.file(aabb, slot, true)?;
                self.slots.set_aabb(slot, aabb);
                self.dead += 1;
                self.pending += 1;
            }
            return Ok(());
        };
        let target = self.part_for(&aabb);
        let moved = if target == current {
            match on_part!(mut self, current, |p| p.update(route.inner, aabb)) {
                Ok(()) => None,
                Err(_) if current == Moving::Agents => {
                    Some((Part::Large, self.large.insert(aabb, slot)?))
                }
                Err(e) => return Err(e),
            }
        } else {
            match on_part!(mut self, target, |p| p.insert(aabb, slot)) {
                Ok(inner) => Some((target.into(), inner)),
                Err(_) if target == Moving::Agents => {
                    self.large.update(route.inner, aabb)?;
                    None
                }
                Err(e) => return Err(e),
            }
        };
        if let Some((part, inner)) = moved {
            self.remove_from(current, route.inner, slot);
            self.routes[slot as usize] = Route {
                part,
                inner,
                ..route
            };
        }
        self.slots.set_aabb(slot, aabb);
        Ok(())
    }

    /// `clear`: clears the moving parts; the static part's elements are marked gone until the next
    /// `maintain` rebuilds it empty.
    fn do_clear(&mut self) {
        self.agents.clear();
        self.large.clear();
        self.slots.clear();
        self.pending = 0;
        self.dead = self.statics.len();
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Slots<S, T> {
        &mut self.slots
    }

    #[inline]
    fn do_maintain(&mut self) {
        if self.pending > 0 || self.dead > 0 {
            self.rebuild_static();
        }
        self.agents.maintain();
        self.large.maintain();
    }
}

/// The frame update in parallel parts ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)).
#[cfg(feature = "rayon")]
impl<S, T, A, L, St> crate::par::UpdateParts<S, T> for Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32> + crate::par::UpdateParts<S, u32>,
    L: SpatialIndex<S, u32> + crate::par::UpdateParts<S, u32>,
    St: StaticIndex<S, u32>,
{
    /// In parallel chunks of slots ([`Slots::par_update`](crate::base::slots::Slots::par_update)),
    /// each element that stays in its moving part takes its new box in the layered table;
    /// then each moving part runs its own parallel frame, every element there taking its
    /// box in the layered table (unchanged ones are skipped). An element the agents part
    /// refuses (a box at the threshold that rounding puts over the grid's bound) then moves
    /// to the large part, as `update` moves it; the elements that change parts or are static
    /// go through `update` on the calling thread, in slot order.
    fn update_in_parts<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), Error>
    where
        T: Send,
    {
        let (routes, threshold) = (&self.routes, self.threshold);
        let (moved, ()) = self.slots.par_update(
            &f,
            |slot, _, new, ()| {
                let route = routes[slot as usize];
                Ok(route.moving() == Some(moving_part(threshold, new)))
            },
            (),
            |(), ()| (),
        );
        let boxes = self.slots.boxes();
        let follow = |_: Handle, slot: &mut u32, _: &Aabb<S>| boxes[*slot as usize];
        let agents = self.agents.update_in_parts(follow);
        let large = self.large.update_in_parts(follow);
        let mut outcome = large;
        if agents.is_err() {
            outcome = outcome.and(self.refused_agents_to_large());
        }
        for (slot, aabb) in moved.iter() {
            outcome = outcome.and(self.do_update(slot, aabb));
        }
        self.slots.moved_applied(moved).and(outcome)
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    /// After the agents part refused some of a parallel frame's boxes (keeping their old
    /// ones), moves each element whose box there differs from its layered box to the large
    /// part, as `update` does with a box the agents part refuses; an element the large part
    /// refuses too keeps its old box in the layered table as well.
    #[cold]
    fn refused_agents_to_large(&mut self) -> Result<(), Error> {
        let refused: Vec<(Handle, u32, Aabb<S>)> = (self.agents.iter())
            .filter(|e| e.aabb != *self.slots.aabb(*e.value))
            .map(|e| (e.handle, *e.value, e.aabb))
            .collect();
        let mut outcome = Ok(());
        for (inner, slot, old) in refused {
            let aabb = *self.slots.aabb(slot);
            match self.large.insert(aabb, slot) {
                Ok(moved) => {
                    self.remove_from(Moving::Agents, inner, slot);
                    self.routes[slot as usize] = Route {
                        part: Part::Large,
                        inner: moved,
                        ..self.routes[slot as usize]
                    };
                }
                Err(e) => {
                    self.slots.set_aabb(slot, old);
                    outcome = outcome.and(Err(e));
                }
            }
        }
        outcome
    }
}

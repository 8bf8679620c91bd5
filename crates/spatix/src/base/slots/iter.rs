//! The iterator over a structure's elements ([`Iter`]).

use super::{Elements, Item, Slots, StaticTable};
use crate::base::handle::NIL;
use crate::{Aabb, Handle, Scalar};

/// The element store an [`Iter`] walks.
#[derive(Clone)]
enum Source<'a, S, T> {
    Slots(&'a Slots<S, T>),
    Static(StaticTable<'a, S, T>),
    /// Points and values side by side, each element's slot its index, one generation for all
    /// (the kd-tree's store).
    Points(&'a [[S; 2]], &'a [T], u32),
    /// A store whose elements move between positions: `positions[slot]` is the position of
    /// the slot's element ([`NIL`] for a free slot), and the store hands out the element at a
    /// position.
    Placed(&'a [u32], &'a dyn Elements<S, T>),
}

/// Iterator over every element of a structure, in slot order: see
/// [`SpatialQuery::iter`](crate::SpatialQuery::iter).
#[derive(Clone)]
pub struct Iter<'a, S, T> {
    source: Source<'a, S, T>,
    next: usize,
    left: usize,
}

impl<S, T> core::fmt::Debug for Iter<'_, S, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Iter")
            .field("next", &self.next)
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl<'a, S, T> Iter<'a, S, T> {
    /// Every element of a store whose elements move between positions, in slot order:
    /// `positions[slot]` is the position of the slot's element ([`NIL`] for a free slot), and
    /// `len` is the number of live slots.
    pub(crate) fn placed(
        positions: &'a [u32],
        elements: &'a dyn Elements<S, T>,
        len: usize,
    ) -> Self {
        Self {
            source: Source::Placed(positions, elements),
            next: 0,
            left: len,
        }
    }
}

impl<S: Scalar, T> Iter<'_, S, T> {
    /// The handle and box of the first element at or after position `*cursor` of the
    /// underlying store, moving the cursor past it: a walk in storage order that lets the
    /// caller change the structure between steps ([`SpatialIndex::update_all`]'s default).
    ///
    /// Always inlined into that walk, its one caller, which calls it once per element.
    ///
    /// [`SpatialIndex::update_all`]: crate::SpatialIndex::update_all
    #[inline(always)]
    pub(crate) fn element_from(&self, cursor: &mut usize) -> Option<(Handle, Aabb<S>)> {
        let position = *cursor;
        *cursor += 1;
        match self.source {
            Source::Slots(slots) => {
                let live = (position..slots.values.len()).find(|&s| slots.values[s].is_some());
                *cursor = live.map_or(slots.values.len(), |s| s + 1);
                live.map(|s| (slots.handle(s as u32), slots.boxes[s]))
            }
            Source::Static(store) => {
                let item = store.at(*store.positions.get(position)?);
                Some((item.handle, item.aabb))
            }
            Source::Points(points, _, generation) => {
                let [x, y] = *points.get(position)?;
                let p = crate::Point::new(x, y);
                Some((
                    Handle::new(position as u32, generation),
                    Aabb { min: p, max: p },
                ))
            }
            Source::Placed(positions, elements) => {
                let live = (position..positions.len()).find(|&s| positions[s] != NIL);
                *cursor = live.map_or(positions.len(), |s| s + 1);
                live.map(|s| {
                    let item = elements.item(positions[s]);
                    (item.handle, item.aabb)
                })
            }
        }
    }
}

impl<'a, S, T> Iter<'a, S, T> {
    /// Every element of a slot table, in slot order.
    pub(crate) fn slots(slots: &'a Slots<S, T>) -> Self {
        Self {
            source: Source::Slots(slots),
            next: 0,
            left: slots.len,
        }
    }

    /// The elements of a store of points and values side by side (`values[i]` is the value of
    /// `points[i]`), whose handles are `(index, generation)`.
    pub(crate) fn points(points: &'a [[S; 2]], values: &'a [T], generation: u32) -> Self {
        debug_assert_eq!(points.len(), values.len());
        Self {
            source: Source::Points(points, values, generation),
            next: 0,
            left: points.len(),
        }
    }
}

impl<'a, S: Scalar, T> Iterator for Iter<'a, S, T> {
    type Item = Item<'a, S, T>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.left > 0 {
            let i = self.next;
            self.next += 1;
            match self.source {
                Source::Slots(slots) => {
                    if slots.values[i].is_some() {
                        self.left -= 1;
                        return Some(slots.item(i as u32));
                    }
                }
                Source::Static(store) => {
                    self.left -= 1;
                    return Some(store.at(store.positions[i]));
                }
                Source::Points(points, values, generation) => {
                    self.left -= 1;
                    let [x, y] = points[i];
                    let p = crate::Point::new(x, y);
                    return Some(Item {
                        handle: Handle::new(i as u32, generation),
                        aabb: Aabb { min: p, max: p },
                        value: &values[i],
                    });
                }
                Source::Placed(positions, elements) => {
                    if positions[i] != NIL {
                        self.left -= 1;
                        return Some(elements.item(positions[i]));
                    }
                }
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<S: Scalar, T> ExactSizeIterator for Iter<'_, S, T> {}

impl<'a, S: Scalar, T> StaticTable<'a, S, T> {
    pub(crate) fn iter(&self) -> Iter<'a, S, T> {
        Iter {
            source: Source::Static(*self),
            next: 0,
            left: self.len(),
        }
    }
}

//! Insert, remove and update.

use super::OnLeveled;
use super::{Level, Leveled, Place};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::{Aabb, Error, Handle, Point, Scalar};

/// What `update` does with an element of cell `home` whose box moves from `old` to `new`.
pub(crate) enum Stay<S> {
    /// Its corner is still in its cell: only its box and corner change.
    InCell,
    /// Its corner drifted this far past its cell of this level, within the level's
    /// `max_overhang`: the level's overhang must cover it.
    Drifted(usize, S),
    /// It leaves its level (given) or drifts too far: it is re-filed at this place.
    Refile(usize, Place),
}

/// [`Stay`] for an element of cell `home` moved from `old` to `new` (valid boxes), over
/// `levels`; [`Error::BoxTooLarge`] if no level holds `new`. Reads nothing that moving
/// another element changes, so the parallel `update_all` decides with it up front.
#[inline(always)]
pub(crate) fn stay<S: Scalar>(
    levels: &[Level<S>],
    old: &Aabb<S>,
    new: &Aabb<S>,
    home: u32,
) -> Result<Stay<S>, Error> {
    let place = place(levels, new).ok_or(Error::BoxTooLarge)?;
    let old_level = level_of(levels, old);
    if old_level == place.level {
        let level = &levels[place.level];
        if level.lattice.index(place.cx, place.cy) == home as usize {
            return Ok(Stay::InCell);
        }
        let (cx, cy) = level.coords(home);
        let drift = level.drift(new.min, cx, cy);
        if drift <= level.max_overhang {
            return Ok(Stay::Drifted(place.level, drift));
        }
    }
    Ok(Stay::Refile(old_level, place))
}

/// Where a (valid) box is filed among `levels`: the first level whose `fit` holds its width
/// and height, the cell of its lower-left corner there; `None` if no level holds it.
#[inline]
pub(crate) fn place<S: Scalar>(levels: &[Level<S>], b: &Aabb<S>) -> Option<Place> {
    let extent = (b.max.x - b.min.x).max_s(b.max.y - b.min.y);
    let level = levels.iter().position(|l| extent <= l.fit)?;
    let (cx, cy) = levels[level].lattice.cell_of(b.min);
    Some(Place { level, cx, cy })
}

/// The level a stored box is filed in.
#[inline]
fn level_of<S: Scalar>(levels: &[Level<S>], b: &Aabb<S>) -> usize {
    let extent = (b.max.x - b.min.x).max_s(b.max.y - b.min.y);
    levels
        .iter()
        .position(|l| extent <= l.fit)
        .expect("a stored box fits the level it was filed in")
}

impl<S: Scalar, T> Leveled<S, T> {
    /// The slow path of [`Leveled::update`]: moves `slot` (its box already updated) from cell
    /// `home` of level `old_level` to `new`.
    #[cold]
    #[inline(never)]
    fn refile_now(&mut self, slot: u32, old_level: usize, home: u32, new: Place) {
        let (cx, cy) = self.levels[old_level].coords(home);
        let old = Place {
            level: old_level,
            cx,
            cy,
        };
        self.unlink(old, slot);
        let corner = self.slots.aabb(slot).min;
        self.link(new, slot, corner);
        self.pack_if_scattered();
    }

    /// Where a live slot is filed: the level its box fits, its home cell there.
    #[inline]
    pub(crate) fn filed(&self, slot: u32) -> Place {
        let level = level_of(&self.levels, self.slots.aabb(slot));
        let (cx, cy) = self.levels[level].coords(self.home[slot as usize]);
        Place { level, cx, cy }
    }

    /// Re-files, in one pass over level `i`'s cells, every element whose corner lies outside
    /// its cell: its node moves, in place, to the front of its corner's cell's list (which,
    /// if still ahead in the pass, meets it again, now at home). The level's overhang is then
    /// zero.
    pub(crate) fn refile(&mut self, i: usize) {
        let level = &mut self.levels[i];
        if level.overhang == S::ZERO {
            return;
        }
        let cols = level.lattice.cols;
        for cy in 0..level.lattice.rows {
            if level.rows[cy as usize] == NIL {
                continue;
            }
            for cx in 0..cols {
                let mut prev = NIL;
                let mut at = level.head(cx, cy);
                while at != NIL {
                    let node = self.pool.link(at);
                    let next = node.next;
                    let (tx, ty) = level.lattice.cell_of(node.data);
                    if (tx, ty) == (cx, cy) {
                        prev = at;
                    } else {
                        if prev == NIL {
                            *level.head_mut(cx, cy) = next;
                        } else {
                            self.pool.set_next(prev, next);
                        }
                        let target = level.head_mut(tx, ty);
                        self.pool.set_next(at, *target);
                        *target = at;
                        self.pool.note_relink();
                        level.row_len[cy as usize] -= 1;
                        level.row_len[ty as usize] += 1;
                        self.home[node.item as usize] = level.lattice.index(tx, ty) as u32;
                    }
                    at = next;
                }
            }
        }
        level.overhang = S::ZERO;
    }

    #[inline]
    pub(super) fn link(&mut self, place: Place, slot: u32, corner: Point<S>) {
        let level = &mut self.levels[place.level];
        let head = level.head_mut(place.cx, place.cy);
        self.node_of[slot as usize] = self.pool.push_with(head, slot, corner);
        self.home[slot as usize] = level.lattice.index(place.cx, place.cy) as u32;
        level.row_len[place.cy as usize] += 1;
        level.len += 1;
    }

    /// Unlinks `slot` from the cell it is filed in, in O(1) without walking the list: the
    /// first node of the list takes over the contents of the slot's node, and is unlinked and
    /// freed instead.
    #[inline]
    fn unlink(&mut self, place: Place, slot: u32) {
        let node = self.node_of[slot as usize];
        let level = &mut self.levels[place.level];
        let head = level.head_mut(place.cx, place.cy);
        let first = *head;
        let moved = self.pool.link(first);
        if first != node {
            self.pool.replace(node, moved.item, moved.data);
            self.node_of[moved.item as usize] = node;
        }
        *head = moved.next;
        self.pool.release(first);
        level.row_len[place.cy as usize] -= 1;
        level.len -= 1;
    }

    /// Packs the lists once they are scattered, so that they stay close to traversal order
    /// even if `maintain` is never called.
    #[inline]
    fn pack_if_scattered(&mut self) {
        if self.pool.scattered() {
            self.pack();
        }
    }
}

impl<S: Scalar, T> Leveled<S, T> {
    pub(crate) fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let place = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let slot = self.slots.insert(aabb, value)?;
        if self.node_of.len() <= slot as usize {
            self.node_of.resize(slot as usize + 1, NIL);
            self.home.resize(slot as usize + 1, NIL);
        }
        self.link(place, slot, aabb.min);
        self.pack_if_scattered();
        Ok(self.slots.handle(slot))
    }

    pub(crate) fn remove(&mut self, slot: u32) -> T {
        let place = self.filed(slot);
        self.unlink(place, slot);
        self.node_of[slot as usize] = NIL;
        self.home[slot as usize] = NIL;
        self.pack_if_scattered();
        self.slots.remove(slot)
    }

    /// Moves an element. As long as it stays in its level and its corner within the level's
    /// `max_overhang` of its cell, only the box in the slot table and the corner in its list
    /// node change (and the level's overhang grows); `maintain` re-files it later. Otherwise
    /// it is re-filed at once. The common case, a corner still in its cell, computes nothing
    /// but the corner's cell.
    #[inline(always)]
    pub(crate) fn update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let home = self.home[slot as usize];
        let stay = stay(&self.levels, self.slots.aabb(slot), &aabb, home)?;
        self.slots.set_aabb(slot, aabb);
        match stay {
            Stay::InCell => {}
            Stay::Drifted(level, drift) => {
                let level = &mut self.levels[level];
                level.overhang = level.overhang.max_s(drift);
            }
            Stay::Refile(old_level, new) => {
                self.refile_now(slot, old_level, home, new);
                return Ok(());
            }
        }
        *self.pool.data_mut(self.node_of[slot as usize]) = aabb.min;
        Ok(())
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T> Leveled<S, T> {
    /// [`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all): in parallel
    /// chunks of slots ([`Slots::par_update`](crate::base::slots::Slots::par_update)), each element
    /// that stays in its cell (or drifts within its level's `max_overhang`) is moved in place
    /// and the chunks' largest drifts per level are combined; then, on the calling thread,
    /// the rest are re-filed in slot order; last, in parallel, every list node takes its
    /// element's new corner.
    pub(crate) fn par_update_all<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), Error>
    where
        T: Send,
    {
        use super::MAX_LEVELS;

        let mut overhangs = [S::ZERO; MAX_LEVELS];
        for (o, level) in overhangs.iter_mut().zip(&self.levels) {
            *o = level.overhang;
        }
        let (levels, home) = (&self.levels[..], &self.home[..]);
        let (moved, overhangs) = self.slots.par_update(
            &f,
            |slot, old, new, overhangs: &mut [S; MAX_LEVELS]| {
                Ok(match stay(levels, old, new, home[slot as usize])? {
                    Stay::InCell => true,
                    Stay::Drifted(level, drift) => {
                        overhangs[level] = overhangs[level].max_s(drift);
                        true
                    }
                    Stay::Refile(..) => false,
                })
            },
            overhangs,
            |mut a, b| {
                for (a, b) in a.iter_mut().zip(b) {
                    *a = a.max_s(b);
                }
                a
            },
        );
        for (level, o) in self.levels.iter_mut().zip(overhangs) {
            level.overhang = o;
        }
        for (slot, aabb) in moved.iter() {
            self.update(slot, aabb)?;
        }
        let boxes = self.slots.boxes();
        self.pool
            .par_set_data(|slot| boxes.get(slot as usize).map(|b| b.min));
        self.slots.moved_applied(moved)
    }
}

/// The contract's changes of a grid on the engine: the engine's.
impl<G: OnLeveled> Mutates<G::S, G::T> for G {
    #[inline]
    fn table_mut(&mut self) -> &mut Slots<G::S, G::T> {
        &mut self.leveled_mut().slots
    }

    fn do_insert(&mut self, aabb: Aabb<G::S>, value: G::T) -> Result<Handle, Error> {
        self.leveled_mut().insert(aabb, value)
    }

    fn do_remove(&mut self, slot: u32) -> G::T {
        self.leveled_mut().remove(slot)
    }

    #[inline]
    fn do_update(&mut self, slot: u32, aabb: Aabb<G::S>) -> Result<(), Error> {
        self.leveled_mut().update(slot, aabb)
    }

    fn do_clear(&mut self) {
        self.leveled_mut().clear();
    }

    #[inline]
    fn do_maintain(&mut self) {
        self.leveled_mut().maintain();
    }
}

//! Insert, remove and update.

use super::OnLeveled;
use super::{Band, Leaving, Level, Leveled, Place, for_each_band};
use crate::base::handle::NIL;
use crate::base::per_slot::PerSlot;
use crate::base::slots::Slots;
use crate::contract::Mutates;
use crate::grid::lattice::Lattice;
use crate::{Aabb, Error, Handle, Point, Scalar};

/// [`Level::refile`]: a band's list of leaving elements keeps room for at least this many.
const LEAVING_FLOOR: usize = 64;

/// What `update` does with an element of cell `home` whose box moves from `old` to `new`.
pub(crate) enum Stay<S> {
    /// Its corner is still in its cell, of this level and row: only its box and corner
    /// change.
    InCell(usize, u32),
    /// Its corner drifted this far past its cell of this level and row, within the level's
    /// `max_overhang`: the level's overhang must cover it.
    Drifted(usize, u32, S),
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
            return Ok(Stay::InCell(place.level, place.cy));
        }
        let (cx, cy) = level.coords(home);
        let drift = level.drift(new.min, cx, cy);
        if drift <= level.max_overhang {
            return Ok(Stay::Drifted(place.level, cy, drift));
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

impl<S: Scalar> Level<S> {
    /// Re-files, band by band, every element of this level whose corner lies
    /// outside its cell, unless no element drifted (the overhang is zero); the overhang is
    /// then zero. Each band walks its cells in order (on rayon's threads with feature
    /// `rayon`): a node whose corner lies in another cell of the band moves, in place, to the
    /// front of that cell's list (which, if still ahead in the walk, meets it again, now at
    /// home); one whose corner lies in another band leaves its band's pool and waits in
    /// `leaving`, and the waiting elements then join their cells' lists, band after band, on
    /// the calling thread. The bands depend on the level's shape alone, so the lists end the
    /// same on any number of threads.
    pub(crate) fn refile(
        &mut self,
        node_of: &PerSlot,
        home: &PerSlot,
        leaving: &mut Vec<Vec<Leaving<S>>>,
    ) {
        if self.overhang == S::ZERO {
            return;
        }
        let (lattice, shift) = (&self.lattice, self.shift);
        if leaving.len() < self.bands.len() {
            leaving.resize_with(self.bands.len(), || Vec::with_capacity(LEAVING_FLOOR));
        }
        let leaving = &mut leaving[..self.bands.len()];
        for_each_band(&mut self.bands, leaving, |b, band, out| {
            out.clear();
            band.refile(lattice, ((b as u32) << shift, shift), home, out);
            // Room for twice as many as the most that left so far (and a floor), so that
            // a band whose count of leavers wanders from frame to frame rarely needs more.
            let room = (4 * out.len()).max(LEAVING_FLOOR);
            if out.capacity() < room / 2 {
                out.reserve_exact(room - out.len());
            }
        });
        for out in leaving.iter() {
            for e in out {
                let node = self.push(e.cx, e.cy, e.slot, e.corner);
                node_of.store(e.slot, node);
                home.store(e.slot, self.lattice.index(e.cx, e.cy) as u32);
            }
        }
        self.overhang = S::ZERO;
    }
}

impl<S: Scalar> Band<S> {
    /// [`Level::refile`] for one band, whose rows start at `first` (of `2^shift` rows a
    /// band) in `lattice`: moves within the band in place, and hands the elements leaving it
    /// to `out`, in the order of the walk.
    fn refile(
        &mut self,
        lattice: &Lattice<S>,
        (first, shift): (u32, u32),
        home: &PerSlot,
        out: &mut Vec<Leaving<S>>,
    ) {
        let cols = lattice.cols;
        for row in 0..self.rows.len() {
            if self.rows[row] == NIL {
                continue;
            }
            let cy = first + row as u32;
            for cx in 0..cols {
                let mut prev = NIL;
                let mut at = self.heads[self.rows[row] as usize + cx as usize];
                while at != NIL {
                    let node = self.pool.link(at);
                    let next = node.next;
                    let (tx, ty) = lattice.cell_of(node.data);
                    if (tx, ty) == (cx, cy) {
                        prev = at;
                        at = next;
                        continue;
                    }
                    if prev == NIL {
                        self.heads[self.rows[row] as usize + cx as usize] = next;
                    } else {
                        self.pool.set_next(prev, next);
                    }
                    self.row_len[row] -= 1;
                    if ty >> shift == first >> shift {
                        let to = (ty - first) as usize;
                        let head = self.head_at(tx, to, cols);
                        self.pool.set_next(at, self.heads[head]);
                        self.heads[head] = at;
                        self.pool.note_relink();
                        self.row_len[to] += 1;
                        home.store(node.item, lattice.index(tx, ty) as u32);
                    } else {
                        self.pool.release(at);
                        out.push(Leaving {
                            slot: node.item,
                            corner: node.data,
                            cx: tx,
                            cy: ty,
                        });
                    }
                    at = next;
                }
            }
        }
    }
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
        self.pack_if_scattered(old);
        let corner = self.slots.aabb(slot).min;
        self.link(new, slot, corner);
        self.pack_if_scattered(new);
    }

    /// Where a live slot is filed: the level its box fits, its home cell there.
    #[inline]
    pub(crate) fn filed(&self, slot: u32) -> Place {
        let level = level_of(&self.levels, self.slots.aabb(slot));
        let (cx, cy) = self.levels[level].coords(self.home.get(slot));
        Place { level, cx, cy }
    }

    #[inline]
    pub(super) fn link(&mut self, place: Place, slot: u32, corner: Point<S>) {
        let level = &mut self.levels[place.level];
        let node = level.push(place.cx, place.cy, slot, corner);
        self.node_of.set(slot, node);
        self.home
            .set(slot, level.lattice.index(place.cx, place.cy) as u32);
        level.len += 1;
    }

    /// Unlinks `slot` from the cell it is filed in, in O(1) without walking the list: the
    /// first node of the list takes over the contents of the slot's node, and is unlinked and
    /// freed instead.
    #[inline]
    fn unlink(&mut self, place: Place, slot: u32) {
        let node = self.node_of.get(slot);
        let level = &mut self.levels[place.level];
        let (band, row) = level.band_of(place.cy);
        let cols = level.lattice.cols;
        let band = &mut level.bands[band];
        let head = band.head_at(place.cx, row, cols);
        if let Some(moved) = band.pool.remove_node(&mut band.heads[head], node) {
            self.node_of.set(moved, node);
        }
        band.row_len[row] -= 1;
        level.len -= 1;
    }

    /// Packs the lists of `place`'s band once they are scattered, so that they stay close to
    /// traversal order even if `maintain` is never called.
    #[inline(always)]
    fn pack_if_scattered(&mut self, place: Place) {
        let level = &mut self.levels[place.level];
        let (band, _) = level.band_of(place.cy);
        let cols = level.lattice.cols;
        level.bands[band].pack_if_scattered(cols, &self.node_of);
    }
}

impl<S: Scalar, T> Leveled<S, T> {
    pub(crate) fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let place = self.place(&aabb).ok_or(Error::BoxTooLarge)?;
        let slot = self.slots.insert(aabb, value)?;
        self.node_of.grow_to(slot as usize + 1, NIL);
        self.home.grow_to(slot as usize + 1, NIL);
        self.link(place, slot, aabb.min);
        self.pack_if_scattered(place);
        Ok(self.slots.handle(slot))
    }

    pub(crate) fn remove(&mut self, slot: u32) -> T {
        let place = self.filed(slot);
        self.unlink(place, slot);
        self.node_of.set(slot, NIL);
        self.home.set(slot, NIL);
        self.pack_if_scattered(place);
        self.slots.remove(slot)
    }

    /// Moves an element. As long as it stays in its level and its corner within the level's
    /// `max_overhang` of its cell, only the box in the slot table and the corner in its list
    /// node change (and the level's overhang grows); `maintain` re-files it later. Otherwise
    /// it is re-filed at once. The common case, a corner still in its cell, computes nothing
    /// but the corner's cell.
    #[inline(always)]
    pub(crate) fn update(&mut self, slot: u32, aabb: Aabb<S>) -> Result<(), Error> {
        let home = self.home.get(slot);
        let stay = stay(&self.levels, self.slots.aabb(slot), &aabb, home)?;
        self.slots.set_aabb(slot, aabb);
        let node = self.node_of.get(slot);
        match stay {
            Stay::InCell(level, cy) => self.levels[level].set_corner(cy, node, aabb.min),
            Stay::Drifted(level, cy, drift) => {
                let level = &mut self.levels[level];
                level.overhang = level.overhang.max_s(drift);
                level.set_corner(cy, node, aabb.min);
            }
            Stay::Refile(old_level, new) => {
                self.refile_now(slot, old_level, home, new);
            }
        }
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
        let (levels, home) = (&self.levels[..], &self.home);
        let (moved, overhangs) = self.slots.par_update(
            &f,
            |slot, old, new, overhangs: &mut [S; MAX_LEVELS]| {
                Ok(match stay(levels, old, new, home.get(slot))? {
                    Stay::InCell(..) => true,
                    Stay::Drifted(level, _, drift) => {
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
        let corner = |slot: u32| boxes.get(slot as usize).map(|b| b.min);
        for level in &mut self.levels {
            let mut nothing = vec![(); level.bands.len()];
            super::for_each_band(&mut level.bands, &mut nothing, |_, band, ()| {
                band.pool.set_data(corner);
            });
        }
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

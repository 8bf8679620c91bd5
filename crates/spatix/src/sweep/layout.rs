//! Where elements sit: placing one in its band (shifting its neighbours to the nearest gap),
//! keeping a band sorted after a box changed, laying everything out again with fresh gaps,
//! and the bands' reach and width.

use super::{Band, Rows, SweepGrid, gap_box};
use crate::base::handle::NIL;
use crate::{Aabb, Scalar};

/// A layout leaves one gap per this many elements of a band (and at least one per band).
pub(super) const GAP_EVERY: usize = 8;

/// How far from its insertion point an element looks for a gap (in positions, each way)
/// before the whole array is laid out again.
const GAP_SEARCH: usize = 512;

/// Consecutive bands' storage, borrowed apart from the rest of the grid: what placing an
/// element and keeping a band sorted touch. The grid's own operations work on the whole grid
/// as one span ([`SweepGrid::span`]); a parallel frame gives each thread a run of bands. Band
/// borders inside the span move as elements shift; the span's own two ends stay put.
pub(super) struct Span<'a, S, T, P> {
    /// The first band.
    pub(super) first: usize,
    /// The grid position of `boxes[0]` (the first band's start).
    pub(super) base: usize,
    /// By position, from `base` to the end of the last band.
    pub(super) boxes: &'a mut [Aabb<S>],
    pub(super) values: &'a mut [Option<T>],
    pub(super) owners: &'a mut [u32],
    /// The starts (grid positions) of the bands after the first.
    pub(super) inner: &'a mut [u32],
    /// The bands' bounds.
    pub(super) bands: &'a mut [Band<S>],
    /// By slot: the generation of its handle.
    pub(super) generations: &'a [u32],
    pub(super) rows: Rows<S>,
    /// Told `(slot, grid position)` whenever an element's position changes.
    pub(super) moved: P,
    /// How far from its place an element looks for a gap ([`GAP_SEARCH`], or further in a
    /// frame, which lays everything out again only at its end).
    pub(super) limit: usize,
    /// A band whose element found its gap further than [`GAP_SEARCH`] away: the grid is
    /// crowded there, and wants laying out again.
    pub(super) crowded: Option<usize>,
}

impl<S: Scalar, T, P: FnMut(u32, usize)> Span<'_, S, T, P> {
    /// The bands of the span.
    pub(super) fn band_range(&self) -> core::ops::Range<usize> {
        self.first..self.first + self.bands.len()
    }

    /// The local positions of band `b`.
    #[inline]
    pub(super) fn range(&self, b: usize) -> core::ops::Range<usize> {
        let i = b - self.first;
        let start = if i == 0 {
            0
        } else {
            self.inner[i - 1] as usize - self.base
        };
        let end = if i == self.inner.len() {
            self.boxes.len()
        } else {
            self.inner[i] as usize - self.base
        };
        start..end
    }

    /// Tells the slot table the position of whatever lives at local position `p`.
    #[inline]
    fn report(&mut self, p: usize) {
        let owner = self.owners[p];
        if owner != NIL {
            (self.moved)(owner, self.base + p);
        }
    }

    /// Moves the contents of local positions `from` one position towards `gap` (a gap just
    /// past either end of `from`), which takes the first (or last) of them; the position
    /// freed at the other end is left with a `None` value for the caller to fill.
    #[inline(never)]
    fn shift(&mut self, from: core::ops::Range<usize>, gap: usize) {
        let (to, all) = if gap == from.end {
            (from.start + 1, from.start..gap + 1)
        } else {
            (gap, gap..from.end)
        };
        self.boxes.copy_within(from.clone(), to);
        self.owners.copy_within(from.clone(), to);
        if gap == from.end {
            self.values[all.clone()].rotate_right(1);
        } else {
            self.values[all.clone()].rotate_left(1);
        }
        for q in to..to + from.len() {
            self.report(q);
        }
    }

    /// Swaps the contents of local positions `a` and `b`.
    #[inline]
    pub(super) fn swap(&mut self, a: usize, b: usize) {
        self.boxes.swap(a, b);
        self.values.swap(a, b);
        self.owners.swap(a, b);
        self.report(a);
        self.report(b);
    }

    /// Restores the order of band `b` after the key (`min.x`) at local position `p` changed,
    /// the rest of the band being sorted: moves it left or right past the keys it crossed.
    #[inline]
    pub(super) fn resort(&mut self, b: usize, p: usize) {
        let range = self.range(b);
        let key = self.boxes[p].min.x;
        let mut p = self.sift_left(range.start, p);
        while p + 1 < range.end && self.boxes[p + 1].min.x < key {
            self.swap(p, p + 1);
            p += 1;
        }
    }

    /// Moves the element at local position `p` left past the keys (`min.x`) above its own,
    /// down to `start` at most, reporting the positions that changed once it is in place;
    /// returns its new position. The test whether it moves at all is inlined into the frame's
    /// loop; the move is not (most elements keep their place).
    #[inline]
    pub(super) fn sift_left(&mut self, start: usize, p: usize) -> usize {
        if p > start && self.boxes[p - 1].min.x > self.boxes[p].min.x {
            self.sift_left_past(start, p)
        } else {
            p
        }
    }

    /// [`sift_left`](Self::sift_left) for an element that moves.
    #[inline(never)]
    fn sift_left_past(&mut self, start: usize, p: usize) -> usize {
        let key = self.boxes[p].min.x;
        let mut q = p;
        while q > start && self.boxes[q - 1].min.x > key {
            self.boxes.swap(q - 1, q);
            self.values.swap(q - 1, q);
            self.owners.swap(q - 1, q);
            q -= 1;
        }
        if q != p {
            for k in q..=p {
                self.report(k);
            }
        }
        q
    }

    /// Stores an element (its slot already allocated) in band `b`, at its place in the
    /// band's order, and raises the band's bounds to cover it; returns the band's reach.
    /// Gives the element back if no gap lies within `limit` positions of its place inside
    /// the span (the grid then lays everything out again).
    #[inline(never)]
    pub(super) fn place(
        &mut self,
        b: usize,
        aabb: Aabb<S>,
        value: T,
        slot: u32,
    ) -> Result<u32, (Aabb<S>, T)> {
        let Some(p) = self.open(b, aabb.min.x) else {
            return Err((aabb, value));
        };
        self.boxes[p] = aabb;
        self.values[p] = Some(value);
        self.owners[p] = slot;
        self.report(p);
        Ok(cover(
            &mut self.bands[b - self.first],
            self.rows,
            b as u32,
            &aabb,
        ))
    }

    /// Opens a free local position in band `b` where an element with key `key` belongs: the
    /// elements between the insertion point and the nearest gap shift by one towards the
    /// gap, and band borders between them move with them. `None` if no gap lies within
    /// `limit` positions inside the span; notes the band as crowded if none lies within
    /// [`GAP_SEARCH`].
    fn open(&mut self, b: usize, key: S) -> Option<usize> {
        let range = self.range(b);
        let p = range.start + self.boxes[range.clone()].partition_point(|e| e.min.x <= key);
        let total = self.owners.len();
        // Band `c`'s start, for `c` after the first: `inner[c - first - 1]`.
        let first = self.first;
        for d in 0..self.limit {
            if d == GAP_SEARCH {
                self.crowded = Some(b);
            }
            if p + d < total && self.owners[p + d] == NIL {
                let t = p + d;
                self.shift(p..t, t);
                // Bands above `b` that start in `p..=t` now start one later.
                let (p, t) = ((self.base + p) as u32, (self.base + t) as u32);
                for start in self.inner[b - first..].iter_mut() {
                    if *start > t {
                        break;
                    }
                    if *start >= p {
                        *start += 1;
                    }
                }
                return Some(p as usize - self.base);
            }
            if d < p && self.owners[p - d - 1] == NIL {
                let t = p - d - 1;
                self.shift(t + 1..p, t);
                // Bands up to `b` that start in `t + 1..=p` now start one earlier.
                let (g, t) = ((self.base + p) as u32, (self.base + t) as u32);
                for start in self.inner[..b - first].iter_mut().rev() {
                    if *start <= t {
                        break;
                    }
                    if *start <= g {
                        *start -= 1;
                    }
                }
                return Some(p - 1);
            }
            if d >= p && p + d >= total {
                return None;
            }
        }
        None
    }
}

/// Raises `band`'s (band `b`'s) reach and width to cover `aabb`; returns its reach.
#[inline]
pub(super) fn cover<S: Scalar>(band: &mut Band<S>, rows: Rows<S>, b: u32, aabb: &Aabb<S>) -> u32 {
    band.reach = band.reach.max(rows.band_of(aabb.max.y) - b);
    band.width = band.width.max_s(aabb.max.x - aabb.min.x);
    band.reach
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The whole grid as one [`Span`], keeping the slot table in step.
    pub(super) fn span(&mut self) -> Span<'_, S, T, impl FnMut(u32, usize) + '_> {
        let rows = self.rows();
        let count = self.bands.len();
        let positions = &mut self.positions;
        Span {
            first: 0,
            base: 0,
            boxes: &mut self.boxes,
            values: &mut self.values,
            owners: &mut self.owners,
            inner: &mut self.starts[1..count],
            bands: &mut self.bands,
            generations: &self.generations,
            rows,
            moved: move |slot: u32, p: usize| positions[slot as usize] = p as u32,
            limit: GAP_SEARCH,
            crowded: None,
        }
    }

    /// Restores the order of band `b` after the key at position `p` changed
    /// ([`Span::resort`]).
    pub(super) fn resort(&mut self, b: usize, p: usize) {
        self.span().resort(b, p);
    }

    /// Stores an element (its slot already allocated) in band `b` ([`Span::place`]), laying
    /// everything out again first if the band has no room near its place.
    pub(super) fn place(&mut self, b: u32, aabb: Aabb<S>, value: T, slot: u32) {
        let mut item = (aabb, value);
        loop {
            let placed = self.span().place(b as usize, item.0, item.1, slot);
            match placed {
                Ok(reach) => {
                    self.max_reach = self.max_reach.max(reach);
                    return;
                }
                Err(back) => {
                    item = back;
                    self.relay(Some(b as usize));
                }
            }
        }
    }

    /// Lays every element out again, band by band in their current order, with one gap per
    /// [`GAP_EVERY`] elements of each band (half as many elements per gap while the grid is
    /// growing; at least one gap; more in band `crowded`, which ran out of room). In place:
    /// the arrays grow only when the new layout needs more positions than they hold.
    /// O(positions).
    pub(super) fn relay(&mut self, crowded: Option<usize>) {
        let count = self.bands.len();
        // While the grid grows (by more than a sixteenth since the last layout), twice the
        // gaps, so that inserting one by one does not lay everything out again too often.
        let every = if self.len > self.laid_len + self.laid_len / 16 {
            GAP_EVERY / 2
        } else {
            GAP_EVERY
        };
        self.laid_len = self.len;
        // 1. Close every gap, moving elements left (stable); `starts` become the compacted
        // band starts.
        let mut write = 0;
        for b in 0..count {
            let range = self.range(b);
            self.starts[b] = write as u32;
            for p in range {
                if self.owners[p] != NIL {
                    if p != write {
                        self.boxes[write] = self.boxes[p];
                        self.owners[write] = self.owners[p];
                        self.values.swap(write, p);
                    }
                    write += 1;
                }
            }
        }
        self.starts[count] = write as u32;
        // 2. Room for the new layout.
        let total = (0..count)
            .map(|b| self.new_size(b, crowded, every))
            .sum::<usize>();
        if self.owners.len() < total {
            self.boxes.resize(total, gap_box(-S::INFINITY));
            self.values.resize_with(total, || None);
            self.owners.resize(total, NIL);
        }
        let total = self.owners.len();
        // 3. Spread each band over its new positions, from the last band down and from the
        // end of each band (every element moves right or stays, so nothing unread is
        // overwritten): the band's i-th element goes to `start + i + i · gaps / live`, the
        // positions between are gaps. The last band takes the positions left over.
        let below_last = (0..count - 1)
            .map(|b| self.new_size(b, crowded, every))
            .sum::<usize>();
        let mut end = total;
        for b in (0..count).rev() {
            let (s, e) = (self.starts[b] as usize, self.starts[b + 1] as usize);
            let live = e - s;
            let start = if b == count - 1 {
                below_last
            } else {
                end - self.new_size(b, crowded, every)
            };
            let gaps = end - start - live;
            let mut above = end;
            for i in (0..live).rev() {
                let q = start + i + i * gaps / live;
                let key = self.boxes[s + i].min.x;
                for g in q + 1..above {
                    self.boxes[g] = gap_box(key);
                    self.owners[g] = NIL;
                }
                if q != s + i {
                    self.boxes[q] = self.boxes[s + i];
                    self.owners[q] = self.owners[s + i];
                    self.values.swap(q, s + i);
                }
                above = q;
            }
            for g in start..above {
                self.boxes[g] = gap_box(-S::INFINITY);
                self.owners[g] = NIL;
            }
            self.starts[b + 1] = end as u32;
            end = start;
        }
        debug_assert_eq!(end, 0);
        self.starts[0] = 0;
        for (p, &owner) in self.owners.iter().enumerate() {
            if owner != NIL {
                self.positions[owner as usize] = p as u32;
            }
        }
    }

    /// The positions band `b` takes in the new layout of [`relay`](Self::relay) (its
    /// `starts` being the compacted ones).
    fn new_size(&self, b: usize, crowded: Option<usize>, every: usize) -> usize {
        let live = (self.starts[b + 1] - self.starts[b]) as usize;
        let extra = if crowded == Some(b) {
            live / 2 + GAP_EVERY
        } else {
            0
        };
        live + live / every + 1 + extra
    }

    /// Raises band `b`'s reach and width (and the grid's largest reach) to cover `aabb`.
    #[inline]
    pub(super) fn cover(&mut self, b: u32, aabb: &Aabb<S>) {
        let rows = self.rows();
        let reach = cover(&mut self.bands[b as usize], rows, b, aabb);
        self.max_reach = self.max_reach.max(reach);
    }

    /// Marks band `b` loose if an element with box `old` leaving it or shrinking may lower
    /// its reach or width.
    #[inline]
    pub(super) fn uncover(&mut self, b: u32, old: &Aabb<S>) {
        let reach = self.band_of(old.max.y) - b;
        let band = &mut self.bands[b as usize];
        if reach >= band.reach || old.max.x - old.min.x >= band.width {
            band.loose = true;
        }
    }

    /// The exact reach and width of band `b`'s elements.
    pub(super) fn measure(&self, b: usize) -> Band<S> {
        let mut band = Band::<S>::EMPTY;
        for p in self.range(b) {
            if self.owners[p] != NIL {
                let e = &self.boxes[p];
                cover(&mut band, self.rows(), b as u32, e);
            }
        }
        band
    }
}

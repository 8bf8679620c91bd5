//! Insert, remove, update (one element or all of them in storage order), clear, maintain, and
//! the bulk constructors.

use super::layout::{GAP_EVERY, Span, cover};
use super::{AUTO_SAMPLE, Band, Mover, SweepGrid, auto_layout, gap_box};
use crate::base::handle::NIL;
use crate::contract::Mutates;
use crate::{Aabb, Error, Handle, Scalar};

impl<S: Scalar, T> SweepGrid<S, T> {
    /// A new slot for an element (its generation already current), or
    /// [`Error::CapacityExceeded`].
    fn allocate_slot(&mut self) -> Result<u32, Error> {
        if let Some(slot) = self.free.pop() {
            return Ok(slot);
        }
        let slot = u32::try_from(self.positions.len())
            .ok()
            .filter(|&s| s < NIL)
            .ok_or(Error::CapacityExceeded)?;
        self.positions.push(NIL);
        self.generations.push(self.salt);
        Ok(slot)
    }

    /// Frees a slot: its handle becomes stale forever (a slot whose generations are used up
    /// is never reused).
    fn retire(&mut self, slot: u32) {
        let i = slot as usize;
        self.positions[i] = NIL;
        let next = self.generations[i].wrapping_add(1);
        self.generations[i] = next;
        if next != self.salt {
            self.free.push(slot);
        }
    }

    /// Leaves a gap at live position `p` (keeping its key, so the band stays sorted) and
    /// returns the value that was there.
    fn vacate(&mut self, p: usize) -> T {
        let old = self.boxes[p];
        self.uncover(self.band_of(old.min.y), &old);
        self.boxes[p] = gap_box(old.min.x);
        self.owners[p] = NIL;
        self.values[p].take().expect("live positions hold a value")
    }

    /// `maintain`: the exact reach and width of every loose band, and the largest reach.
    pub(super) fn tighten(&mut self) {
        for b in 0..self.bands.len() {
            if self.bands[b].loose {
                self.bands[b] = self.measure(b);
            }
        }
        self.max_reach = self.bands.iter().map(|b| b.reach).max().unwrap_or(0);
    }

    /// The end of a frame: lays everything out again if a band was `crowded`, places the
    /// elements `walk` left over (a run found no gap for them, or they left it), and the
    /// largest reach; the frame's error if `f` refused a box.
    fn finish_frame(
        &mut self,
        away: &mut Vec<Mover<S, T>>,
        crowded: Option<usize>,
        refused: bool,
    ) -> Result<(), Error> {
        if crowded.is_some() {
            self.relay(crowded);
        }
        for m in away.drain(..) {
            self.place(m.band, m.aabb, m.value, m.slot);
        }
        self.max_reach = self.bands.iter().map(|b| b.reach).max().unwrap_or(0);
        if refused {
            Err(Error::InvalidAabb)
        } else {
            Ok(())
        }
    }

    /// [`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all): the bands are
    /// cut into runs of about equal numbers of positions (four per thread), each run is
    /// walked as a [`Span`] of its own on rayon's pool ([`walk`], the runs split in halves
    /// by [`walk_runs`]), collecting the slot-table entries to rewrite; then, on the calling
    /// thread, the slot table is rewritten and the elements that leave their run (or found
    /// no room in it) are placed. The runs and their lists are kept for the next call: once
    /// warm, a frame allocates nothing.
    #[cfg(feature = "rayon")]
    pub(super) fn par_update_runs<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        S: Send + Sync,
        T: Send,
    {
        let mut runs = core::mem::take(&mut self.runs);
        self.band_runs(rayon::current_num_threads() * 4, &mut runs);
        // Each run's scratch: its movers and its slot-table entries to rewrite.
        let mut scratch = core::mem::take(&mut self.run_scratch);
        if scratch.len() < runs.len() {
            scratch.resize_with(runs.len(), Default::default);
        }
        let (refused, crowded) = if runs.is_empty() {
            (false, None)
        } else {
            let rows = self.rows();
            let (first, last) = (runs[0].start, runs[runs.len() - 1].end);
            let (base, end) = (self.starts[first] as usize, self.starts[last] as usize);
            let pieces = Pieces {
                base,
                end,
                boxes: &mut self.boxes[base..end],
                values: &mut self.values[base..end],
                owners: &mut self.owners[base..end],
                inner: &mut self.starts[first + 1..last],
                bands: &mut self.bands[first..last],
            };
            let walking = Walking {
                f: &f,
                generations: &self.generations,
                rows,
            };
            walk_runs(&walking, pieces, &runs, &mut scratch[..runs.len()])
        };
        let mut movers = core::mem::take(&mut self.movers);
        for (run_movers, placed) in &mut scratch[..runs.len()] {
            for &(slot, p) in placed.iter() {
                self.positions[slot as usize] = p;
            }
            placed.clear();
            movers.away.append(&mut run_movers.away);
        }
        // Every run's lists as long as the longest: the runs cover other bands next frame,
        // and a run finding more movers than it ever held must not allocate.
        let (most_moved, most_placed) = scratch.iter().fold((0, 0), |(m, p), (movers, placed)| {
            (m.max(movers.longest()), p.max(placed.capacity()))
        });
        for (movers, placed) in &mut scratch {
            movers.reserve_each(most_moved);
            placed.reserve(most_placed);
        }
        self.run_scratch = scratch;
        self.runs = runs;
        let result = self.finish_frame(&mut movers.away, crowded, refused);
        self.movers = movers;
        result
    }
}

impl<S: Scalar, T> Mutates<S, T> for SweepGrid<S, T> {
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.allocate_slot()?;
        let b = self.band_of(aabb.min.y);
        self.place(b, aabb, value, slot);
        self.len += 1;
        Ok(Handle::new(slot, self.generations[slot as usize]))
    }

    fn do_remove(&mut self, p: usize) -> T {
        let slot = self.owners[p];
        let value = self.vacate(p);
        self.retire(slot);
        self.len -= 1;
        value
    }

    fn do_update(&mut self, p: usize, aabb: Aabb<S>) -> Result<(), Error> {
        let old = self.boxes[p];
        let (from, to) = (self.band_of(old.min.y), self.band_of(aabb.min.y));
        if from == to {
            self.uncover(from, &old);
            self.boxes[p] = aabb;
            self.cover(to, &aabb);
            self.resort(to as usize, p);
        } else {
            let slot = self.owners[p];
            let value = self.vacate(p);
            self.place(to, aabb, value, slot);
        }
        Ok(())
    }

    fn do_clear(&mut self) {
        for p in 0..self.owners.len() {
            let slot = self.owners[p];
            if slot != NIL {
                self.values[p] = None;
                self.owners[p] = NIL;
                self.retire(slot);
            }
        }
        self.boxes.clear();
        self.values.clear();
        self.owners.clear();
        self.starts.fill(0);
        self.bands.fill(Band::EMPTY);
        self.max_reach = 0;
        self.len = 0;
        self.laid_len = 0;
    }

    #[inline]
    fn table_mut(&mut self) -> &mut Self {
        self
    }

    /// Calls `f(handle, &mut value, &box)` for every element, band by band in storage order,
    /// and stores the box it returns: see [`SpatialIndex::update_all`](crate::SpatialIndex::update_all).
    ///
    /// The whole grid is walked as one span ([`walk`]), an element changing band taking the
    /// nearest gap however far; if one was further than a single insert would look, the grid
    /// is laid out again once the walk is over. No allocation once the scratch lists have
    /// grown to the largest number of elements changing band in one call (and the arrays to
    /// hold the elements and their gaps).
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if `f` returned an invalid box for some element: those elements
    /// keep their previous box (the rest are updated).
    #[inline]
    fn do_update_all<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        Self: crate::SpatialIndex<S, T>,
        F: FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
    {
        let mut movers = core::mem::take(&mut self.movers);
        let (refused, crowded) = {
            let mut span = self.span();
            span.limit = usize::MAX;
            (walk(&mut span, &mut f, &mut movers), span.crowded)
        };
        let result = self.finish_frame(&mut movers.away, crowded, refused);
        self.movers = movers;
        result
    }

    #[inline]
    fn do_maintain(&mut self) {
        self.tighten();
    }
}

/// What every run of a parallel frame shares: the caller's `f`, the generations and the
/// bands' geometry.
#[cfg(feature = "rayon")]
struct Walking<'a, F, S> {
    f: &'a F,
    generations: &'a [u32],
    rows: super::Rows<S>,
}

/// The grid's arrays over a sequence of runs of bands, from the first band's start (grid
/// position `base`) to the last band's end (`end`): the positions, the starts of the bands
/// after the first (`inner`; the starts between runs stay put), and the bands.
#[cfg(feature = "rayon")]
struct Pieces<'a, S, T> {
    base: usize,
    end: usize,
    boxes: &'a mut [Aabb<S>],
    values: &'a mut [Option<T>],
    owners: &'a mut [u32],
    inner: &'a mut [u32],
    bands: &'a mut [Band<S>],
}

/// Walks each of `runs` (consecutive, covering `pieces`) as a [`Span`] of its own, halving
/// the runs and the arrays with `rayon::join` (no allocation), each run with its own
/// `scratch`. Returns whether `f` returned an invalid box and the first crowded band.
#[cfg(feature = "rayon")]
fn walk_runs<S, T, F>(
    walking: &Walking<'_, F, S>,
    pieces: Pieces<'_, S, T>,
    runs: &[core::ops::Range<usize>],
    scratch: &mut [RunScratch<S, T>],
) -> (bool, Option<usize>)
where
    S: Scalar,
    T: Send,
    F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
{
    if let [run] = runs {
        let (movers, placed) = &mut scratch[0];
        let mut span = Span {
            first: run.start,
            base: pieces.base,
            boxes: &mut pieces.boxes[..pieces.end - pieces.base],
            values: &mut pieces.values[..pieces.end - pieces.base],
            owners: &mut pieces.owners[..pieces.end - pieces.base],
            inner: pieces.inner,
            bands: pieces.bands,
            generations: walking.generations,
            rows: walking.rows,
            moved: move |slot: u32, p: usize| placed.push((slot, p as u32)),
            limit: usize::MAX,
            crowded: None,
        };
        let refused = walk(&mut span, &mut &walking.f, movers);
        return (refused, span.crowded);
    }
    let mid = runs.len() / 2;
    let (left_runs, right_runs) = runs.split_at(mid);
    let bands = right_runs[0].start - left_runs[0].start;
    let (left_inner, rest) = pieces.inner.split_at_mut(bands - 1);
    let (border, right_inner) = rest
        .split_first_mut()
        .expect("a run of the right half starts after the left");
    let border = *border as usize;
    let at = border - pieces.base;
    let (left_boxes, right_boxes) = pieces.boxes.split_at_mut(at);
    let (left_values, right_values) = pieces.values.split_at_mut(at);
    let (left_owners, right_owners) = pieces.owners.split_at_mut(at);
    let (left_bands, right_bands) = pieces.bands.split_at_mut(bands);
    let (left_scratch, right_scratch) = scratch.split_at_mut(mid);
    let left = Pieces {
        base: pieces.base,
        end: border,
        boxes: left_boxes,
        values: left_values,
        owners: left_owners,
        inner: left_inner,
        bands: left_bands,
    };
    let right = Pieces {
        base: border,
        end: pieces.end,
        boxes: right_boxes,
        values: right_values,
        owners: right_owners,
        inner: right_inner,
        bands: right_bands,
    };
    let (a, b) = rayon::join(
        || walk_runs(walking, left, left_runs, left_scratch),
        || walk_runs(walking, right, right_runs, right_scratch),
    );
    (a.0 | b.0, a.1.or(b.1))
}

/// One run's scratch in a parallel frame: its movers, and the slot-table entries
/// `(slot, position)` to write.
pub(super) type RunScratch<S, T> = (Movers<S, T>, Vec<(u32, u32)>);

/// The scratch lists of a [`walk`]: the elements changing band, by where they go.
#[derive(Clone, Debug)]
pub(super) struct Movers<S, T> {
    /// Into the band after the one being walked, or into bands already walked: placed once
    /// that next band is walked.
    next_band: Vec<Mover<S, T>>,
    /// Found while walking the previous band: placed once the band being walked is.
    this_band: Vec<Mover<S, T>>,
    /// More than one band up, inside the span.
    ahead: Vec<Mover<S, T>>,
    /// Out of the span, or finding no room in it: for the grid to place.
    away: Vec<Mover<S, T>>,
}

impl<S, T> Default for Movers<S, T> {
    fn default() -> Self {
        Self {
            next_band: Vec::new(),
            this_band: Vec::new(),
            ahead: Vec::new(),
            away: Vec::new(),
        }
    }
}

impl<S, T> Movers<S, T> {
    /// The capacity of the longest list.
    #[cfg(feature = "rayon")]
    fn longest(&self) -> usize {
        self.next_band
            .capacity()
            .max(self.this_band.capacity())
            .max(self.ahead.capacity())
            .max(self.away.capacity())
    }

    /// Gives every list (all empty) room for at least `n` elements.
    #[cfg(feature = "rayon")]
    fn reserve_each(&mut self, n: usize) {
        for list in [
            &mut self.next_band,
            &mut self.this_band,
            &mut self.ahead,
            &mut self.away,
        ] {
            list.reserve(n);
        }
    }

    /// The elements the lists have room for.
    pub(super) fn capacity(&self) -> usize {
        self.next_band.capacity()
            + self.this_band.capacity()
            + self.ahead.capacity()
            + self.away.capacity()
    }
}

/// Places `m` in `span`, or sends it `away` if the span has no room for it.
fn settle<S: Scalar, T, P: FnMut(u32, usize)>(
    span: &mut Span<'_, S, T, P>,
    m: Mover<S, T>,
    away: &mut Vec<Mover<S, T>>,
) {
    if let Err((aabb, value)) = span.place(m.band as usize, m.aabb, m.value, m.slot) {
        away.push(Mover { aabb, value, ..m });
    }
}

/// A frame over one span: calls `f(handle, &mut value, &box)` for every element, band by
/// band in storage order, and stores the box it returns. An element that stays in its band
/// is written in place and moved left past the keys it overtook (an insertion sort: O(1)
/// per element after one frame of motion); one that changes band leaves a gap (with the key
/// of its left neighbour, so the band stays sorted) and waits until its new band has been
/// walked, so that `f` sees every element once. Every band's reach and width are measured
/// exactly on the way. Elements bound outside the span, or finding no room in it, are left
/// in `movers.away`. Returns whether `f` returned an invalid box (that element keeps its box).
#[inline(never)]
fn walk<S: Scalar, T, P: FnMut(u32, usize)>(
    span: &mut Span<'_, S, T, P>,
    f: &mut impl FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
    movers: &mut Movers<S, T>,
) -> bool {
    let bands = span.band_range();
    let mut refused = false;
    for b in bands.clone() {
        let b32 = b as u32;
        let range = span.range(b);
        let mut band = Band::<S>::EMPTY;
        for p in range.clone() {
            let slot = span.owners[p];
            let left_key = if p > range.start {
                span.boxes[p - 1].min.x
            } else {
                -S::INFINITY
            };
            if slot == NIL {
                span.boxes[p].min.x = left_key;
                continue;
            }
            let handle = Handle::new(slot, span.generations[slot as usize]);
            let old = span.boxes[p];
            let value = span.values[p]
                .as_mut()
                .expect("live positions hold a value");
            let mut new = f(handle, value, &old);
            if !new.is_valid() {
                refused = true;
                new = old;
            }
            let to = span.rows.band_of(new.min.y);
            if to == b32 {
                cover(&mut band, span.rows, b32, &new);
                span.boxes[p] = new;
                span.sift_left(range.start, p);
            } else {
                span.boxes[p] = gap_box(left_key);
                span.owners[p] = NIL;
                let value = span.values[p].take().expect("live positions hold a value");
                let mover = Mover {
                    aabb: new,
                    value,
                    slot,
                    band: to,
                };
                let list = match to as usize {
                    t if !bands.contains(&t) => &mut movers.away,
                    t if t <= b + 1 => &mut movers.next_band,
                    _ => &mut movers.ahead,
                };
                list.push(mover);
            }
        }
        span.bands[b - span.first] = band;
        // Band `b` is walked: place the elements moving into it (and into bands below, found
        // while walking the band before it).
        for m in movers.this_band.drain(..) {
            settle(span, m, &mut movers.away);
        }
        core::mem::swap(&mut movers.this_band, &mut movers.next_band);
    }
    // Every band is walked: place the elements the last band sent down, and those that
    // jumped more than one band up.
    for m in movers.this_band.drain(..).chain(movers.ahead.drain(..)) {
        settle(span, m, &mut movers.away);
    }
    debug_assert!(movers.next_band.is_empty());
    refused
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// A grid over `world` with bands of height `band_height` holding `items`, built in one
    /// go (a counting sort by band, then a sort by `min.x` inside each band): much faster
    /// than inserting them one by one. Slots ([`Handle::slot`]) are numbered in storage order
    /// (band by band, left to right), not in the items' order, so that a frame reads and
    /// writes the slot table nearly in order; [`iter`](crate::SpatialQuery::iter) lists the
    /// elements by slot. Keep an identifier in the value to find an item again.
    ///
    /// # Errors
    /// As [`SweepGrid::new`]; [`Error::InvalidAabb`] if an item's box is invalid;
    /// [`Error::CapacityExceeded`] past 2^32 - 2 items.
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(100.0, 100.0))?;
    /// // A row of boxes, given right to left.
    /// let items = (0..100).map(|i| {
    ///     let p = Point::new((99 - i) as f32, 50.0);
    ///     (Aabb::from_center_half_extents(p, Point::new(0.5, 0.5)).unwrap(), i)
    /// });
    /// let grid = SweepGrid::build(world, 10.0, items)?;
    /// assert_eq!(grid.len(), 100);
    /// // Slot 0 holds the leftmost element of the lowest band.
    /// let first = grid.iter().next().unwrap();
    /// assert_eq!((first.handle.slot(), *first.value), (0, 99));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn build<I>(world: Aabb<S>, band_height: S, items: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (Aabb<S>, T)>,
    {
        let mut grid = Self::new(world, band_height)?;
        let (boxes, values): (Vec<_>, Vec<_>) = items.into_iter().unzip();
        grid.fill(boxes, values)?;
        Ok(grid)
    }

    /// [`SweepGrid::build`] with the world and band height [`SweepGrid::auto_sampled`] would
    /// choose for the items' boxes: from an even stride of at most 16,384 of them
    /// (issue 47: where the bulk of a million boxes lies, from all of them, took longer than
    /// the build), standing for all.
    ///
    /// # Errors
    /// As [`SweepGrid::build`].
    ///
    /// ```
    /// use spatix::{Aabb, Point, SpatialQuery, SweepGrid};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(100.0, 100.0))?;
    /// let items = (0..50).map(|i| (Aabb::point(Point::new(i as f64 * 2.0, 50.0)).unwrap(), i));
    /// let grid = SweepGrid::build_auto(world, items)?;
    /// assert_eq!(grid.len(), 50);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn build_auto<I>(world: Aabb<S>, items: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = (Aabb<S>, T)>,
    {
        let (boxes, values): (Vec<_>, Vec<_>) = items.into_iter().unzip();
        let step = boxes.len().div_ceil(AUTO_SAMPLE).max(1);
        let sample: Vec<Aabb<S>> = boxes.iter().step_by(step).copied().collect();
        let (world, height) = auto_layout(&world, &sample, boxes.len())?;
        let mut grid = Self::new(world, height)?;
        grid.fill(boxes, values)?;
        Ok(grid)
    }

    /// Lays out an empty grid's elements from its input order: slot `i` holds `boxes[i]` and
    /// `values[i]`.
    fn fill(&mut self, boxes: Vec<Aabb<S>>, values: Vec<T>) -> Result<(), Error> {
        let n = boxes.len();
        if n >= NIL as usize {
            return Err(Error::CapacityExceeded);
        }
        if !boxes.iter().all(Aabb::is_valid) {
            return Err(Error::InvalidAabb);
        }
        let count = self.bands.len();
        // Counting sort of the slots by band.
        let band: Vec<u32> = boxes.iter().map(|b| self.band_of(b.min.y)).collect();
        let mut starts = vec![0u32; count + 1];
        for &b in &band {
            starts[b as usize + 1] += 1;
        }
        for b in 0..count {
            starts[b + 1] += starts[b];
        }
        let mut order = vec![0u32; n];
        {
            let mut next = starts.clone();
            for (slot, &b) in band.iter().enumerate() {
                order[next[b as usize] as usize] = slot as u32;
                next[b as usize] += 1;
            }
        }
        for b in 0..count {
            let segment = &mut order[starts[b] as usize..starts[b + 1] as usize];
            segment.sort_unstable_by(|&a, &b| {
                boxes[a as usize]
                    .min
                    .x
                    .partial_cmp(&boxes[b as usize].min.x)
                    .unwrap_or(core::cmp::Ordering::Equal)
            });
        }
        // The compacted layout, then gaps spread by `relay`. The arrays get room for twice
        // its gaps (the layout of a growing grid), so that a band running out of room later
        // is laid out again in them rather than doubling them.
        let total = n + n / (GAP_EVERY / 2) + count;
        self.boxes = Vec::with_capacity(total);
        self.owners = Vec::with_capacity(total);
        self.values = Vec::with_capacity(total);
        // Slots are numbered in storage order, so that the slot table is read and written
        // nearly in the order frames walk the elements.
        self.boxes.extend(order.iter().map(|&i| boxes[i as usize]));
        self.owners.extend(0..n as u32);
        self.positions = (0..n as u32).collect();
        let mut rank = vec![0u32; n];
        for (p, &i) in order.iter().enumerate() {
            rank[i as usize] = p as u32;
        }
        self.values.resize_with(n, || None);
        for (i, value) in values.into_iter().enumerate() {
            self.values[rank[i] as usize] = Some(value);
        }
        self.generations = vec![self.salt; n];
        self.starts = starts;
        self.len = n;
        self.laid_len = n;
        self.relay(None);
        // The room reserved above, written once now: resident from the build on, as
        // `memory_bytes` counts it, rather than taken from the system page by page when a
        // later layout first reaches into it.
        touch_spare(&mut self.boxes, || gap_box(-S::INFINITY));
        touch_spare(&mut self.owners, || NIL);
        touch_spare(&mut self.values, || None);
        for b in 0..count {
            self.bands[b] = self.measure(b);
        }
        self.max_reach = self.bands.iter().map(|b| b.reach).max().unwrap_or(0);
        Ok(())
    }
}

/// The frame update in parallel parts ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)).
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::UpdateParts<S, T> for SweepGrid<S, T> {
    /// The bands cut into runs, as for the pair pass, walked in parallel; the few elements
    /// that leave their run are placed afterwards.
    fn update_in_parts<F: crate::par::MoveFn<S, T>>(&mut self, f: F) -> Result<(), crate::Error>
    where
        T: Send,
    {
        self.par_update_runs(f)
    }
}

/// Writes `gap()` into every position of `v`'s capacity beyond its length, leaving its length
/// as it is (the values written are gaps, which own nothing, so none needs dropping).
fn touch_spare<E>(v: &mut Vec<E>, gap: impl Fn() -> E) {
    for position in v.spare_capacity_mut() {
        position.write(gap());
    }
}

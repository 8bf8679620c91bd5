//! The pair pass: a sweep along `x` inside each band, then a merged sweep of each band with
//! the band above it, and each element that reaches further up against the bands it reaches
//! (as a query). Each element is in exactly one band, so each
//! pair is met once: inside its lower element's band, or from the lower band of the two.

use core::ops::ControlFlow;

use super::SweepGrid;
use crate::base::handle::NIL;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Aabb, Item, Scalar};

/// Whether two boxes known to overlap along `x` overlap along `y` (a [`gap_box`](super::gap_box)
/// overlaps nothing: its `min.y` is infinite and its `max.y` minus infinity).
#[inline(always)]
fn meet_y<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    (b.min.y <= a.max.y) & (a.min.y <= b.max.y)
}

/// How many boxes after one the pair sweep tests without a branch.
const WINDOW: usize = 2;

/// How many hits the pair sweep keeps before reporting them.
const PENDING: usize = 256;

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The pairs whose lower element (by band) is in one of `bands`.
    #[inline(never)]
    pub(super) fn pairs_of_bands<F>(
        &self,
        bands: core::ops::Range<usize>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut hits = PendingHits::new();
        for b in bands {
            let range = self.range(b);
            self.sweep_within(range.start, range.end, &mut hits, visit)?;
            let reach = self.bands[b].reach as usize;
            if reach >= 1 && b + 1 < self.bands.len() {
                self.sweep_across(range.clone(), self.range(b + 1), &mut hits, visit)?;
            }
            if reach >= 2 {
                self.pairs_of_tall(b, &mut hits, visit)?;
            }
        }
        hits.flush(self, visit)
    }

    /// The pairs of band `b`'s tall elements (those reaching two bands up or more) with the
    /// elements of those bands: each tall element against the run of each band it reaches
    /// that may overlap it along `x` (found as a query would). Sweeping whole bands against
    /// each other instead would walk every band a tall element reaches, for each band that
    /// holds one.
    fn pairs_of_tall<F>(&self, b: usize, hits: &mut PendingHits, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for p in self.range(b) {
            let e = &self.boxes[p];
            if self.owners[p] == NIL {
                continue;
            }
            let top = self.band_of(e.max.y) as usize;
            for c in b + 2..=top {
                let end = self.range(c).end;
                for q in self.first_reaching(c, e.min.x)..end {
                    let f = &self.boxes[q];
                    if f.min.x > e.max.x {
                        break;
                    }
                    if f.intersects(e) {
                        hits.push(p, q, self, visit)?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs inside positions `start..end` (sorted by `min.x`): each box against the
    /// boxes after it that start within its `x` extent.
    #[inline]
    fn sweep_within<F>(
        &self,
        start: usize,
        end: usize,
        hits: &mut PendingHits,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for i in start..end {
            self.pairs_after(i, i + 1, end, hits, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// The pairs across two disjoint sorted runs of positions: both are walked in merged
    /// `min.x` order, and each box is tested against the boxes of the other run from its
    /// current head on, while they start within its `x` extent. (The merge picks the run
    /// to advance without a branch: which one it is cannot be predicted.)
    #[inline]
    fn sweep_across<F>(
        &self,
        lower: core::ops::Range<usize>,
        upper: core::ops::Range<usize>,
        hits: &mut PendingHits,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let (mut i, mut j) = (lower.start, upper.start);
        while i < lower.end && j < upper.end {
            let lower_first = self.boxes[i].min.x <= self.boxes[j].min.x;
            let (current, other, other_end) = if lower_first {
                (i, j, upper.end)
            } else {
                (j, i, lower.end)
            };
            self.pairs_after(current, other, other_end, hits, visit)?;
            i += usize::from(lower_first);
            j += usize::from(!lower_first);
        }
        ControlFlow::Continue(())
    }

    /// The pairs of the box at position `at` with the boxes at `from..end` (sorted by
    /// `min.x`, none starting left of it) that start within its `x` extent and meet it along
    /// `y`, added to `hits`. The first [`WINDOW`] are tested and recorded without a branch (a
    /// box overlaps fewer than one other along `x` on average, so where its run ends, and
    /// whether a test hits, cannot be predicted); the rest, if the run goes on, one by one.
    #[inline(always)]
    fn pairs_after<F>(
        &self,
        at: usize,
        from: usize,
        end: usize,
        hits: &mut PendingHits,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if from >= end {
            return ControlFlow::Continue(());
        }
        if hits.len + WINDOW > PENDING {
            hits.flush(self, visit)?;
        }
        let boxes = &self.boxes;
        let a = &boxes[at];
        let last = end - 1;
        for k in 0..WINDOW {
            let j = from + k;
            let b = &boxes[j.min(last)];
            let hit = (j <= last) & (b.min.x <= a.max.x) & meet_y(a, b);
            hits.pending[hits.len] = (at as u32, j as u32);
            hits.len += usize::from(hit);
        }
        let next = from + WINDOW;
        if next <= end && boxes[next - 1].min.x <= a.max.x {
            for (j, b) in boxes[..end].iter().enumerate().skip(next) {
                if b.min.x > a.max.x {
                    break;
                }
                if meet_y(a, b) {
                    hits.push(at, j, self, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Pairs<S, T> for SweepGrid<S, T> {
    /// Every intersecting pair once (`for_each_pair`).
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, mut visit: F) -> ControlFlow<()> {
        self.pairs_of_bands(0..self.bands.len(), &mut visit)
    }
}

/// PendingHits found but not yet reported (positions), so that the tests record them without a
/// branch, and their elements are looked up together.
struct PendingHits {
    pending: [(u32, u32); PENDING],
    len: usize,
}

impl PendingHits {
    fn new() -> Self {
        Self {
            pending: [(0, 0); PENDING],
            len: 0,
        }
    }

    /// Adds the hit of positions `a` and `b`, reporting the pending ones first if they fill
    /// the buffer.
    #[inline]
    fn push<S: Scalar, T, F>(
        &mut self,
        a: usize,
        b: usize,
        grid: &SweepGrid<S, T>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if self.len == PENDING {
            self.flush(grid, visit)?;
        }
        self.pending[self.len] = (a as u32, b as u32);
        self.len += 1;
        ControlFlow::Continue(())
    }

    /// Reports the pending hits: the items of a few dozen are looked up in one tight loop
    /// before any is reported, so that their cache misses overlap.
    fn flush<S: Scalar, T, F>(&mut self, grid: &SweepGrid<S, T>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        const CHUNK: usize = 32;
        let n = core::mem::take(&mut self.len);
        for chunk in self.pending[..n].chunks(CHUNK) {
            let mut items = [None; CHUNK];
            for (item, &(a, b)) in items.iter_mut().zip(chunk) {
                *item = Some((grid.item(a as usize), grid.item(b as usize)));
            }
            for &(a, b) in items.iter().flatten() {
                visit(a, b)?;
            }
        }
        ControlFlow::Continue(())
    }
}

/// Parts: runs of bands of about equal numbers of positions. A run owns the pairs whose lower
/// element is in its bands, so the runs need no coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for SweepGrid<S, T> {
    type Part = core::ops::Range<usize>;
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>, _: &mut ()) {
        self.band_runs(target, parts);
    }

    fn pairs_of_part<F>(&self, run: &Self::Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs_of_bands(run.clone(), visit)
    }
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The bands cut into at most `parts` consecutive runs of about equal numbers of
    /// positions, in place of what `runs` held.
    #[cfg(feature = "rayon")]
    pub(super) fn band_runs(&self, parts: usize, runs: &mut Vec<core::ops::Range<usize>>) {
        let count = self.bands.len();
        let total = self.starts[count] as usize;
        let per = total.div_ceil(parts.max(1)).max(1);
        runs.clear();
        let mut first = 0;
        for b in 0..count {
            if (self.starts[b + 1] as usize) - (self.starts[first] as usize) >= per
                || b + 1 == count
            {
                runs.push(first..b + 1);
                first = b + 1;
            }
        }
    }
}

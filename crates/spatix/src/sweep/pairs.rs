//! The pair pass: a sweep along `x` inside each band, then a merged sweep of each band with
//! every band above it that its elements reach. Each element is in exactly one band, so each
//! pair is met once: inside its lower element's band, or from the lower band of the two.

use core::ops::ControlFlow;

use super::SweepGrid;
use crate::{Aabb, Item, Scalar};

/// Whether two boxes known to overlap along `x` overlap along `y` (a [`gap`](super::gap)
/// overlaps nothing: its `min.y` is infinite and its `max.y` minus infinity).
#[inline]
fn meet_y<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    b.min.y <= a.max.y && a.min.y <= b.max.y
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// Every intersecting pair once (`for_each_pair`).
    pub(super) fn pairs_impl<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs_of_bands(0..self.bands.len(), &mut visit)
    }

    /// The pairs whose lower element (by band) is in one of `bands`.
    pub(super) fn pairs_of_bands<F>(
        &self,
        bands: core::ops::Range<usize>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for b in bands {
            let range = self.range(b);
            self.sweep_within(range.start, range.end, visit)?;
            let last = (b + self.bands[b].reach as usize).min(self.bands.len() - 1);
            for c in b + 1..=last {
                let other = self.range(c);
                self.sweep_across(range.clone(), other, visit)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs inside positions `start..end` (sorted by `min.x`).
    #[inline]
    fn sweep_within<F>(&self, start: usize, end: usize, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let boxes = &self.boxes[..end];
        for i in start..end {
            let a = &boxes[i];
            for (j, b) in boxes.iter().enumerate().skip(i + 1) {
                if b.min.x > a.max.x {
                    break;
                }
                if meet_y(a, b) {
                    visit(self.item(i), self.item(j))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs across two disjoint sorted runs of positions: both are walked in merged
    /// `min.x` order, and each box is tested against the boxes of the other run that start
    /// after it while they start within its `x` extent.
    #[inline]
    fn sweep_across<F>(
        &self,
        lower: core::ops::Range<usize>,
        upper: core::ops::Range<usize>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let boxes = &self.boxes;
        let (mut i, mut j) = (lower.start, upper.start);
        while i < lower.end && j < upper.end {
            if boxes[i].min.x <= boxes[j].min.x {
                let a = &boxes[i];
                for (k, b) in boxes[j..upper.end].iter().enumerate() {
                    if b.min.x > a.max.x {
                        break;
                    }
                    if meet_y(a, b) {
                        visit(self.item(i), self.item(j + k))?;
                    }
                }
                i += 1;
            } else {
                let a = &boxes[j];
                for (k, b) in boxes[i..lower.end].iter().enumerate() {
                    if b.min.x > a.max.x {
                        break;
                    }
                    if meet_y(a, b) {
                        visit(self.item(i + k), self.item(j))?;
                    }
                }
                j += 1;
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T: Sync> crate::ParallelPairs<S, T> for SweepGrid<S, T>
where
    S: Sync,
{
    /// Splits the bands into runs of about equal numbers of positions (eight per thread) and
    /// sweeps the runs in parallel; a run owns the pairs whose lower element is in its bands,
    /// so the runs need no coordination.
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
    {
        use rayon::prelude::*;
        let parts = rayon::current_num_threads() * 8;
        let runs = self.band_runs(parts);
        runs.par_iter().try_for_each(|run| {
            let mut visit = &visit;
            self.pairs_of_bands(run.clone(), &mut visit)
        })
    }
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The bands cut into at most `parts` consecutive runs of about equal numbers of
    /// positions.
    #[cfg(feature = "rayon")]
    pub(super) fn band_runs(&self, parts: usize) -> Vec<core::ops::Range<usize>> {
        let count = self.bands.len();
        let total = self.starts[count] as usize;
        let per = total.div_ceil(parts.max(1)).max(1);
        let mut runs = Vec::with_capacity(parts + 1);
        let mut first = 0;
        for b in 0..count {
            if (self.starts[b + 1] as usize) - (self.starts[first] as usize) >= per
                || b + 1 == count
            {
                runs.push(first..b + 1);
                first = b + 1;
            }
        }
        runs
    }
}

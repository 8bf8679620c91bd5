//! The sweep grid's shape: its bands, and what a search tells its probe of them.

use core::ops::ControlFlow;

use super::SweepGrid;
use crate::base::handle::NIL;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind, Watch};
use crate::{Aabb, Scalar};

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The union of the boxes of band `b`'s elements, and how many there are (`None` for an
    /// empty band).
    fn band_extent(&self, b: usize) -> Option<(Aabb<S>, usize)> {
        let mut extent: Option<(Aabb<S>, usize)> = None;
        for p in self.range(b) {
            if self.owners[p] != NIL {
                let e = self.boxes[p];
                extent = Some(extent.map_or((e, 1), |(all, n)| (all.union(&e), n + 1)));
            }
        }
        extent
    }

    /// Tells `watch` that a search entered band `b` (with its box as
    /// [`do_visit_regions`](Regions::do_visit_regions) reports it; empty bands are not told).
    #[inline]
    pub(super) fn watch_band<W: Watch<S>>(&self, watch: &mut W, b: usize) {
        if W::ACTIVE {
            if let Some((bounds, _)) = self.band_extent(b) {
                watch.region(|| bounds);
            }
        }
    }

    /// Tells `watch` that a search tested the element at position `p` (none for a hole).
    #[inline]
    pub(super) fn watch_position<W: Watch<S>>(&self, watch: &mut W, p: usize) {
        if W::ACTIVE && self.owners[p] != NIL {
            watch.candidate(|| self.handle_at(p));
        }
    }
}

impl<S: Scalar, T> Regions<S> for SweepGrid<S, T> {
    /// Every band that holds elements, bottom up: the union of its elements' boxes (a band's
    /// rows are open-ended at the world's bottom and top, its elements are not), depth 0,
    /// and how many elements it holds (each element is in one band: that of its `min.y`).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        for b in 0..self.bands.len() {
            if let Some((bounds, elements)) = self.band_extent(b) {
                visit(&Region {
                    bounds,
                    depth: 0,
                    kind: RegionKind::Band,
                    elements,
                })?;
            }
        }
        ControlFlow::Continue(())
    }
}

//! Area queries, k-nearest search and ray casts. Regular loose cells (boxes within reach of
//! their squares) are found by position; irregular ones through the tight cells they are
//! listed in, each handled only in the one tight cell that owns a reference point of it (the
//! same rule as the elements of the uniform grid). Every element is in one loose cell, so it
//! is met exactly once.

use core::ops::ControlFlow;

use super::LooseGrid;
use crate::base::handle::NIL;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::{Aabb, Item, Neighbor, Scalar};

impl<S: Scalar, T> LooseGrid<S, T> {
    /// Calls `visit(slot, box)` for every element of loose cell `cell`.
    #[inline]
    pub(super) fn for_each_element(&self, cell: usize, mut visit: impl FnMut(u32, &Aabb<S>)) {
        let mut at = self.heads[cell];
        while at != NIL {
            let link = self.elements.link(at);
            visit(link.item, &link.data);
            at = link.next;
        }
    }

    /// Calls `visit(slot)` for every element of loose cell `cell` whose box meets `area`.
    #[inline]
    fn visit_in<F>(
        &self,
        cell: usize,
        area: &Aabb<S>,
        watch: &mut impl Watch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        watch.region(|| self.region(cell));
        let mut at = self.heads[cell];
        while at != NIL {
            let link = self.elements.link(at);
            at = link.next;
            watch.candidate(|| self.slots.handle(link.item));
            if link.data.intersects(area) {
                visit(self.slots.item(link.item))?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Calls `consider(cell, region, tight)` for every loose cell that may own a reference
    /// point in loose cell `(cx, cy)`: the regular cells around it holding elements (`tight`
    /// is `None`), and the irregular cells listed in the tight cells sharing points with it
    /// (`tight` is that tight cell, also to match). A caller handles a cell only where both
    /// match its reference point, so each once.
    fn candidates(
        &self,
        cx: u32,
        cy: u32,
        mut consider: impl FnMut(usize, Aabb<S>, Option<(u32, u32)>),
    ) {
        for (x, y) in self.block(cx, cy, self.own_radius).cells() {
            let cell = self.loose.index(x, y);
            if self.heads[cell] != NIL {
                let square = self.loose.square(x, y);
                let b = &self.boxes[cell];
                if !self.is_irregular(b, &square) {
                    consider(cell, self.region_of(b, &square), None);
                }
            }
        }
        self.irregular_near(cx, cy, |cell, tx, ty| {
            consider(cell, self.region(cell), Some((tx, ty)));
        });
    }
}

impl<S: Scalar, T> Searches<S, T> for LooseGrid<S, T> {
    /// The regular loose cells near `area`, each once; then the irregular ones listed in
    /// the tight cells under `area`, each in the tight cell holding the lower-left corner of
    /// (listing box ∩ area): the later of the two starting columns, and of the two rows.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        for (cx, cy) in self.loose_around(area).cells() {
            let cell = self.loose.index(cx, cy);
            if self.heads[cell] == NIL {
                continue;
            }
            let square = self.loose.square(cx, cy);
            let b = &self.boxes[cell];
            if !self.is_irregular(b, &square) && self.region_of(b, &square).intersects(area) {
                self.visit_in(cell, area, watch, &mut visit)?;
            }
        }
        if self.tight.irregular == 0 {
            return ControlFlow::Continue(());
        }
        let t = &self.tight.lattice;
        let q = t.range(area);
        for (tx, ty) in q.cells() {
            for cell in self.tight.listed(tx, ty) {
                let cell = cell as usize;
                if !self.region(cell).intersects(area) {
                    continue;
                }
                let (x0, y0) = self.listing_start(cell);
                if x0.max(q.x0) == tx && y0.max(q.y0) == ty {
                    self.visit_in(cell, area, watch, &mut visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Rings of loose cells outward from the point's. A loose cell is searched (if its region
    /// is close enough to hold a candidate) only from the loose cell owning the point of its
    /// region nearest to the query point; an irregular one, found through the tight cells
    /// sharing points with that loose cell, also only from the tight cell owning it.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let mut search = workspace.begin_exact(k);
            let (l, t) = (&self.loose, &self.tight.lattice);
            let rings = l.rings(point);
            for r in 0..=rings.last {
                if rings.settled(r, 0.0, search.bound()) || search.has_all(self.slots.len()) {
                    break;
                }
                rings.cells(r, |cx, cy| {
                    let consider = |cell: usize, region: Aabb<S>, tight: Option<(u32, u32)>| {
                        if region.distance_key(point) > search.bound() {
                            return;
                        }
                        let q = region.closest_point(point);
                        if l.owns(q, cx, cy) && tight.is_none_or(|(tx, ty)| t.owns(q, tx, ty)) {
                            watch.region(|| region);
                            self.for_each_element(cell, |slot, e| {
                                watch.candidate(|| self.slots.handle(slot));
                                let d = e.distance_key(point);
                                if d <= search.bound() {
                                    search.offer(self.slots.handle(slot), d);
                                }
                            });
                        }
                    };
                    self.candidates(cx, cy, consider);
                });
            }
        }
        workspace.finish()
    }

    /// The lattice's conservative walk over the loose cells along the ray
    /// ([`Lattice::cast`]). A loose cell is searched only from the loose cell owning the
    /// (clamped) point where the ray enters its region (an irregular one also only from the
    /// tight cell owning it), and its elements' hits are recorded with their exact entry.
    ///
    /// [`Lattice::cast`]: crate::grid::lattice::Lattice::cast
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let (l, t) = (&self.loose, &self.tight.lattice);
        l.cast(ray, workspace, &self.slots, visit, |cx, cy, search| {
            let consider = |cell: usize, region: Aabb<S>, tight: Option<(u32, u32)>| {
                let Some(entry) = region.entry_unchecked(ray) else {
                    return;
                };
                let q = l.world.closest_point(region.entry_point(ray, entry));
                if l.owns(q, cx, cy) && tight.is_none_or(|(tx, ty)| t.owns(q, tx, ty)) {
                    watch.region(|| region);
                    self.for_each_element(cell, |slot, e| {
                        watch.candidate(|| self.slots.handle(slot));
                        if let Some(at) = e.entry_unchecked(ray) {
                            search.push_hit(at, slot);
                        }
                    });
                }
            };
            self.candidates(cx, cy, consider);
        })
    }
}

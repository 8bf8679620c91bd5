//! Area queries, k-nearest search and ray casts.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::base::handle::NIL;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::{Aabb, Neighbor, Scalar};

impl<S: Scalar, T> Searches<S, T> for UniformGrid<S, T> {
    /// Walks the cells under `area`. An element is filed in several cells, so it is reported
    /// only from the cell holding the lower-left corner of (element ∩ area): the first cell of
    /// its range, pushed up to the first cell of the query's range.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        let q = self.lattice.range(area);
        for cy in q.y0..=q.y1 {
            let pool = self.pools.of_row(cy);
            for cx in q.x0..=q.x1 {
                watch.region(|| self.lattice.square(cx, cy));
                let mut at = self.cells[self.lattice.index(cx, cy)];
                while at != NIL {
                    let link = pool.link(at);
                    at = link.next;
                    watch.candidate(|| self.slots.handle(link.item));
                    let b = self.slots.aabb(link.item);
                    if b.intersects(area)
                        && self.lattice.col(b.min.x).max(q.x0) == cx
                        && self.lattice.row(b.min.y).max(q.y0) == cy
                    {
                        visit(self.slots.item(link.item))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Ring search outward from the point's (clamped) cell. An element is considered only in
    /// the cell of the nearest point of its box to the query point (clamped into the grid, so
    /// always a cell it is filed in); the search stops when the k-th best distance is no more
    /// than a lower bound on the distance to anything in the rings not yet searched, or once
    /// every element is among the best (`k` at least `len`).
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let mut search = workspace.begin_exact(k);
            let l = &self.lattice;
            let rings = l.rings(point);
            for r in 0..=rings.last {
                if rings.settled(r, 0.0, search.bound()) || search.has_all(self.slots.len()) {
                    break;
                }
                rings.cells(r, |cx, cy| {
                    watch.region(|| l.square(cx, cy));
                    for slot in self.pools.of_row(cy).items(self.cells[l.index(cx, cy)]) {
                        watch.candidate(|| self.slots.handle(slot));
                        let b = self.slots.aabb(slot);
                        let d = b.distance_key(point);
                        if d <= search.bound() && l.cell_of(b.closest_point(point)) == (cx, cy) {
                            search.offer(self.slots.handle(slot), d);
                        }
                    }
                });
            }
        }
        workspace.finish()
    }

    /// A walk along the ray over every cell it may cross ([`Lattice::cast`]). An element is
    /// recorded only by the cell owning the (clamped) point where the ray enters it; a
    /// recorded hit is reported once nothing left to walk could hold an earlier one.
    ///
    /// [`Lattice::cast`]: crate::grid::lattice::Lattice::cast
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let l = &self.lattice;
        l.cast(ray, workspace, &self.slots, visit, |cx, cy, search| {
            watch.region(|| l.square(cx, cy));
            for slot in self.pools.of_row(cy).items(self.cells[l.index(cx, cy)]) {
                watch.candidate(|| self.slots.handle(slot));
                let b = self.slots.aabb(slot);
                if let Some(t) = b.entry_unchecked(ray) {
                    let q = l.world.closest_point(b.entry_point(ray, t));
                    if l.owns(q, cx, cy) {
                        search.push_hit(t, slot);
                    }
                }
            }
        })
    }
}

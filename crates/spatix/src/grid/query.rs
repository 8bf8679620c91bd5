//! Area queries, k-nearest search and ray casts.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::handle::NIL;
use crate::{Aabb, Item, Neighbor, Point, Ray, Scalar, Workspace};

impl<S: Scalar, T> UniformGrid<S, T> {
    /// Walks the cells under `area`. An element is filed in several cells, so it is reported
    /// only from the cell holding the lower-left corner of (element ∩ area): the first cell of
    /// its range, pushed up to the first cell of the query's range.
    pub(super) fn query_area<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() {
            return ControlFlow::Continue(());
        }
        let l = &self.lattice;
        let q = l.range(area);
        for (cx, cy) in q.cells() {
            let mut at = self.cells[l.index(cx, cy)];
            while at != NIL {
                let link = self.pool.link(at);
                at = link.next;
                let b = self.slots.aabb(link.item);
                if b.intersects(area)
                    && l.col(b.min.x).max(q.x0) == cx
                    && l.row(b.min.y).max(q.y0) == cy
                {
                    visit(self.slots.item(link.item))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Ring search outward from the point's (clamped) cell. An element is considered only in
    /// the cell of the nearest point of its box to the query point (clamped into the grid, so
    /// always a cell it is filed in).
    pub(super) fn nearest_rings<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        {
            let mut search = workspace.begin();
            if k > 0 && point.is_finite() && self.slots.len() > 0 {
                let l = &self.lattice;
                l.rings(point, |cx, cy| {
                    for slot in self.pool.items(self.cells[l.index(cx, cy)]) {
                        let b = self.slots.aabb(slot);
                        let d = b.distance_2_to_point(point);
                        if d <= search.bound(k) && l.owns(b.closest_point(point), cx, cy) {
                            search.offer(k, self.slots.handle(slot), d);
                        }
                    }
                    search.bound(k)
                });
            }
        }
        workspace.finish()
    }

    /// The lattice's conservative walk along the ray; an element is recorded only by the cell
    /// owning the (clamped) point where the ray enters it.
    pub(super) fn raycast_impl<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let mut search = workspace.begin_ray();
        if !ray.is_valid() || self.slots.len() == 0 {
            return ControlFlow::Continue(());
        }
        let l = &self.lattice;
        l.walk_ray(
            ray,
            &mut search,
            &self.slots,
            &mut visit,
            |cx, cy, search| {
                for slot in self.pool.items(self.cells[l.index(cx, cy)]) {
                    let b = self.slots.aabb(slot);
                    if let Some(t) = b.entry_unchecked(ray) {
                        if l.owns(l.world.closest_point(b.entry_point(ray, t)), cx, cy) {
                            search.push_hit(t, slot);
                        }
                    }
                }
            },
        )
    }
}

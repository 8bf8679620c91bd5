//! Every query over the three parts: each part answers for its elements, whose values (their
//! layered slots) name them in the layered slot table. Elements of the static part marked
//! gone are skipped.

use core::ops::ControlFlow;

use super::Layered;
use crate::contract::{Cast, Hits, Nearest};
use crate::search::nearest::Search;
use crate::{Aabb, Item, Neighbor, Point, Scalar, SpatialIndex, SpatialQuery, StaticIndex};

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    pub(super) fn query_impl<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.agents.query(area, |e| visit(self.item(e.value)))?;
        self.large.query(area, |e| visit(self.item(e.value)))?;
        self.statics.query(area, |e| {
            if self.is_built(&e) {
                visit(self.item(e.value))
            } else {
                ControlFlow::Continue(())
            }
        })
    }

    /// The best `k` of each part's `k` nearest (searched in the nested workspace; in the
    /// static part, `k` more than the elements marked gone there).
    pub(super) fn nearest_impl<'w>(&self, nearest: Nearest<'w, S>) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let (mut search, nested) = workspace.begin_nested(k);
            let found = self.agents.nearest(point, k, nested);
            self.offer_all(&self.agents, point, found, &mut search, |_| true);
            let found = self.large.nearest(point, k, nested);
            self.offer_all(&self.large, point, found, &mut search, |_| true);
            let found = self
                .statics
                .nearest(point, k.saturating_add(self.dead), nested);
            self.offer_all(&self.statics, point, found, &mut search, |e| {
                self.is_built(e)
            });
        }
        workspace.finish()
    }

    /// Offers the neighbours a part found that `keep` accepts to the merged search, under
    /// their layered handles.
    fn offer_all<P: SpatialQuery<S, u32>>(
        &self,
        part: &P,
        point: Point<S>,
        found: &[Neighbor<S>],
        search: &mut Search<'_, S>,
        keep: impl Fn(&Item<'_, S, u32>) -> bool,
    ) {
        // Offered by key, recomputed from the box: distances beyond MAX are all infinite,
        // keys still rank them.
        for n in found {
            if let Some(e) = part.get(n.handle).filter(&keep) {
                search.offer(self.slots.handle(*e.value), e.aabb.distance_key(point));
            }
        }
    }

    /// Every part's hits (cast in the nested workspace), reported in order of entry.
    pub(super) fn raycast_impl<F: Hits<S, T>>(&self, cast: Cast<'_, S, F>) -> ControlFlow<()> {
        let Cast(ray, workspace, mut visit) = cast;
        let (mut search, nested) = workspace.begin_ray_nested();
        let mut record = |e: Item<'_, S, u32>, t: S| {
            search.push_hit(t, *e.value);
            ControlFlow::Continue(())
        };
        let _ = self.agents.raycast_all(ray, nested, &mut record);
        let _ = self.large.raycast_all(ray, nested, &mut record);
        let _ = self.statics.raycast_all(ray, nested, |e, t| {
            if self.is_built(&e) {
                record(e, t)
            } else {
                ControlFlow::Continue(())
            }
        });
        search.report_until(S::INFINITY, &self.slots, &mut visit)
    }
}

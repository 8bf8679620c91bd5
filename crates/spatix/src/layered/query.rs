//! Every query over the three parts: each part answers for its elements, whose values (their
//! layered slots) name them in the layered slot table. Elements of the static part marked
//! gone are skipped.

use core::ops::ControlFlow;

use super::{Layered, Part};
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::nearest::Search;
use crate::{Aabb, Item, Neighbor, Point, Scalar, SpatialIndex, SpatialQuery, StaticIndex};

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
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
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Searches<S, T> for Layered<S, T, A, L, St>
{
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        let agents = (&self.agents, Part::Agents);
        self.part_query(agents, area, watch, |e| visit(self.item(e.value)))?;
        let large = (&self.large, Part::Large);
        self.part_query(large, area, watch, |e| visit(self.item(e.value)))?;
        let statics = (&self.statics, Part::Static);
        self.part_query(statics, area, watch, |e| {
            if self.is_built(&e) {
                visit(self.item(e.value))
            } else {
                ControlFlow::Continue(())
            }
        })
    }

    /// The best `k` of each part's `k` nearest (searched in the nested workspace; in the
    /// static part, `k` more than the elements marked gone there).
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let (mut search, nested) = workspace.begin_nested(k);
            let agents = (&self.agents, Part::Agents);
            let found = self.part_nearest(agents, point, k, nested, watch);
            self.offer_all(&self.agents, point, found, &mut search, |_| true);
            let large = (&self.large, Part::Large);
            let found = self.part_nearest(large, point, k, nested, watch);
            self.offer_all(&self.large, point, found, &mut search, |_| true);
            let statics = (&self.statics, Part::Static);
            let found =
                self.part_nearest(statics, point, k.saturating_add(self.dead), nested, watch);
            self.offer_all(&self.statics, point, found, &mut search, |e| {
                self.is_built(e)
            });
        }
        workspace.finish()
    }

    /// Every part's hits (cast in the nested workspace), reported in order of entry.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, mut visit) = cast;
        let (mut search, nested) = workspace.begin_ray_nested();
        let mut record = |e: Item<'_, S, u32>, t: S| {
            search.push_hit(t, *e.value);
            ControlFlow::Continue(())
        };
        let agents = (&self.agents, Part::Agents);
        let _ = self.part_raycast(agents, ray, nested, watch, &mut record);
        let large = (&self.large, Part::Large);
        let _ = self.part_raycast(large, ray, nested, watch, &mut record);
        let statics = (&self.statics, Part::Static);
        let _ = self.part_raycast(statics, ray, nested, watch, |e, t| {
            if self.is_built(&e) {
                record(e, t)
            } else {
                ControlFlow::Continue(())
            }
        });
        search.report_until(S::INFINITY, &self.slots, &mut visit)
    }
}

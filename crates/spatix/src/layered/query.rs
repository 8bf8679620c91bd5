//! Every query over the three parts: each part answers for its elements, whose values (their
//! layered slots) name them in the layered slot table; pairs across parts are found by
//! querying one part with the boxes of the other. Elements of the static part marked gone
//! are skipped.

use core::ops::ControlFlow;

use super::Layered;
use crate::index::{Cast, Hits, Nearest};
use crate::nearest::Search;
use crate::{Aabb, Item, Neighbor, Point, Scalar, SpatialIndex, SpatialQuery, StaticIndex};

impl<S, T, A, L, St> Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: StaticIndex<S, u32>,
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

    /// Each part's own pairs, then the pairs across each two parts.
    pub(super) fn pairs_impl<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut report = |a: Item<'_, S, u32>, b: Item<'_, S, u32>| {
            visit(self.item(a.value), self.item(b.value))
        };
        self.agents.for_each_pair(&mut report)?;
        self.large.for_each_pair(&mut report)?;
        across(&self.agents, &self.large, &mut report)?;
        // The static part's elements come second in each of its pairs.
        let mut built = |a: Item<'_, S, u32>, b: Item<'_, S, u32>| {
            if self.is_built(&b) {
                report(a, b)
            } else {
                ControlFlow::Continue(())
            }
        };
        across(&self.agents, &self.statics, &mut built)?;
        across(&self.large, &self.statics, &mut built)?;
        self.statics.for_each_pair(|a, b| {
            if self.is_built(&a) {
                built(a, b)
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

/// Every intersecting pair of an element of `p` and one of `q`: each element of the smaller
/// of the two is a query on the other.
fn across<S, P, Q, F>(p: &P, q: &Q, report: &mut F) -> ControlFlow<()>
where
    S: Scalar,
    P: SpatialQuery<S, u32>,
    Q: SpatialQuery<S, u32>,
    F: FnMut(Item<'_, S, u32>, Item<'_, S, u32>) -> ControlFlow<()>,
{
    if p.len() <= q.len() {
        for a in p.iter() {
            q.query(&a.aabb, |b| report(a, b))?;
        }
    } else {
        for b in q.iter() {
            p.query(&b.aabb, |a| report(a, b))?;
        }
    }
    ControlFlow::Continue(())
}

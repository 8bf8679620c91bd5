//! The layered index's shape (its three parts, each with its own regions), and how a probed
//! search reaches the parts: through their probed forms, with their handles told as the
//! layered index's.

use core::ops::ControlFlow;

use super::{Layered, Part};
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind, Relay, Watch};
use crate::{
    Aabb, Handle, Item, Neighbor, Point, Ray, Scalar, SpatialIndex, SpatialQuery, StaticIndex,
    Workspace,
};

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    /// The layered handle of the element a part names by `handle`, if that element is still
    /// the layered index's (the static part keeps removed elements until its next build).
    fn outer_handle<P: SpatialQuery<S, u32>>(
        &self,
        part: &P,
        which: Part,
        handle: Handle,
    ) -> Option<Handle> {
        let e = part.get(handle)?;
        let slot = *e.value;
        let route = self.routes.get(slot as usize)?;
        (route.part == which && route.inner == handle && self.slots.is_live(slot))
            .then(|| self.slots.handle(slot))
    }

    /// `part.query`, or with a probe attached, `part.query_probed` telling the probe what the
    /// part looked at.
    pub(super) fn part_query<W: Watch<S>, P: SpatialQuery<S, u32>>(
        &self,
        (part, which): (&P, Part),
        area: &Aabb<S>,
        watch: &mut W,
        visit: impl FnMut(Item<'_, S, u32>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if W::ACTIVE {
            let handle = |h| self.outer_handle(part, which, h);
            part.query_probed(area, &mut Relay { watch, handle }, visit)
        } else {
            part.query(area, visit)
        }
    }

    /// `part.nearest`, or with a probe attached, `part.nearest_probed`.
    pub(super) fn part_nearest<'w, W: Watch<S>, P: SpatialQuery<S, u32>>(
        &self,
        (part, which): (&P, Part),
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        if W::ACTIVE {
            let handle = |h| self.outer_handle(part, which, h);
            part.nearest_probed(point, k, workspace, &mut Relay { watch, handle })
        } else {
            part.nearest(point, k, workspace)
        }
    }

    /// `part.raycast_all`, or with a probe attached, `part.raycast_all_probed`.
    pub(super) fn part_raycast<W: Watch<S>, P: SpatialQuery<S, u32>>(
        &self,
        (part, which): (&P, Part),
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        watch: &mut W,
        visit: impl FnMut(Item<'_, S, u32>, S) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if W::ACTIVE {
            let handle = |h| self.outer_handle(part, which, h);
            part.raycast_all_probed(ray, workspace, &mut Relay { watch, handle }, visit)
        } else {
            part.raycast_all(ray, workspace, visit)
        }
    }
}

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Regions<S> for Layered<S, T, A, L, St>
{
    /// Each part that holds elements, agents first, then larger elements, then static ones:
    /// a [`RegionKind::Part`] over the union of its elements' boxes (depth 0, listing none
    /// itself), then the part's own regions. The static part's regions count the elements
    /// removed from it since its last build until `maintain` rebuilds it.
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        part_regions(&self.agents, &mut visit)?;
        part_regions(&self.large, &mut visit)?;
        part_regions(&self.statics, &mut visit)
    }
}

/// A part's [`RegionKind::Part`] region and then its own regions (nothing for an empty part).
fn part_regions<S: Scalar, P: SpatialQuery<S, u32>>(
    part: &P,
    visit: &mut impl FnMut(&Region<S>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut boxes = part.iter().map(|e| e.aabb);
    let Some(first) = boxes.next() else {
        return ControlFlow::Continue(());
    };
    visit(&Region {
        bounds: boxes.fold(first, |all, b| all.union(&b)),
        depth: 0,
        kind: RegionKind::Part,
        elements: 0,
    })?;
    part.visit_regions(visit)
}

//! Every structure behind one type per scalar: [`Erased`] (dynamic) and [`ErasedStatic`]
//! (built once) keep the structure in a box, behind object-safe traits whose visitors are
//! `&mut dyn FnMut`, and implement the contract by forwarding to it. The suite's drivers
//! (the harness, the bulk, adversarial and extreme-world tests) are then compiled once per
//! scalar, and each structure's own code once, for the visitors of this file: the suite's
//! build pays for the structures, not for structures × drivers.
//!
//! The forwarding is one call per method and one per visited element; it changes no answer
//! (each method reaches the structure's own, overridden defaults included), so the oracle
//! sees the structure itself.

use core::ops::ControlFlow;

use spatix::{
    Aabb, Error, Handle, Item, Iter, Neighbor, Point, Probe, Ray, RayHit, Region, Scalar,
    SpatialIndex, SpatialQuery, Workspace,
};

/// A visitor of elements.
type Visit<'v, S> = &'v mut dyn FnMut(Item<'_, S, u64>) -> ControlFlow<()>;
/// A visitor of pairs.
type VisitPairs<'v, S> = &'v mut dyn FnMut(Item<'_, S, u64>, Item<'_, S, u64>) -> ControlFlow<()>;
/// A visitor of ray hits.
type VisitHits<'v, S> = &'v mut dyn FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>;
/// The frame's move of one element.
type Move<'f, S> = &'f mut dyn FnMut(Handle, &mut u64, &Aabb<S>) -> Aabb<S>;
/// A visitor of regions.
type VisitRegions<'v, S> = &'v mut dyn FnMut(&Region<S>) -> ControlFlow<()>;

/// A probe behind a reference: what the structure's probed searches are given.
struct ProbeRef<'p, S>(&'p mut dyn Probe<S>);

impl<S: Scalar> Probe<S> for ProbeRef<'_, S> {
    fn region(&mut self, bounds: &Aabb<S>) {
        self.0.region(bounds);
    }

    fn candidate(&mut self, handle: Handle) {
        self.0.candidate(handle);
    }
}

/// [`SpatialQuery`], object-safe.
trait QueryObject<S: Scalar>: Sync {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, u64>>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
    fn iter(&self) -> Iter<'_, S, u64>;
    fn query(&self, area: &Aabb<S>, visit: Visit<'_, S>) -> ControlFlow<()>;
    fn for_each_pair(&self, visit: VisitPairs<'_, S>) -> ControlFlow<()>;
    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>];
    fn within(&self, point: Point<S>, radius: S, visit: Visit<'_, S>) -> ControlFlow<()>;
    fn raycast_all(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: VisitHits<'_, S>,
    ) -> ControlFlow<()>;
    fn raycast(&self, ray: &Ray<S>, workspace: &mut Workspace<S>) -> Option<RayHit<S>>;
    fn visit_regions(&self, visit: VisitRegions<'_, S>) -> ControlFlow<()>;
    fn query_probed(
        &self,
        area: &Aabb<S>,
        probe: &mut dyn Probe<S>,
        visit: Visit<'_, S>,
    ) -> ControlFlow<()>;
    fn nearest_probed<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        probe: &mut dyn Probe<S>,
    ) -> &'w [Neighbor<S>];
    fn raycast_all_probed(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        probe: &mut dyn Probe<S>,
        visit: VisitHits<'_, S>,
    ) -> ControlFlow<()>;
    fn memory_bytes(&self) -> usize;
    fn check_invariants(&self) -> Result<(), Error>;
}

impl<S: Scalar, I: SpatialQuery<S, u64> + Sync> QueryObject<S> for I {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, u64>> {
        SpatialQuery::get(self, handle)
    }

    fn len(&self) -> usize {
        SpatialQuery::len(self)
    }

    fn is_empty(&self) -> bool {
        SpatialQuery::is_empty(self)
    }

    fn iter(&self) -> Iter<'_, S, u64> {
        SpatialQuery::iter(self)
    }

    fn query(&self, area: &Aabb<S>, visit: Visit<'_, S>) -> ControlFlow<()> {
        SpatialQuery::query(self, area, visit)
    }

    fn for_each_pair(&self, visit: VisitPairs<'_, S>) -> ControlFlow<()> {
        SpatialQuery::for_each_pair(self, visit)
    }

    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        SpatialQuery::nearest(self, point, k, workspace)
    }

    fn within(&self, point: Point<S>, radius: S, visit: Visit<'_, S>) -> ControlFlow<()> {
        SpatialQuery::within(self, point, radius, visit)
    }

    fn raycast_all(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: VisitHits<'_, S>,
    ) -> ControlFlow<()> {
        SpatialQuery::raycast_all(self, ray, workspace, visit)
    }

    fn raycast(&self, ray: &Ray<S>, workspace: &mut Workspace<S>) -> Option<RayHit<S>> {
        SpatialQuery::raycast(self, ray, workspace)
    }

    fn visit_regions(&self, visit: VisitRegions<'_, S>) -> ControlFlow<()> {
        SpatialQuery::visit_regions(self, visit)
    }

    fn query_probed(
        &self,
        area: &Aabb<S>,
        probe: &mut dyn Probe<S>,
        visit: Visit<'_, S>,
    ) -> ControlFlow<()> {
        SpatialQuery::query_probed(self, area, &mut ProbeRef(probe), visit)
    }

    fn nearest_probed<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        probe: &mut dyn Probe<S>,
    ) -> &'w [Neighbor<S>] {
        SpatialQuery::nearest_probed(self, point, k, workspace, &mut ProbeRef(probe))
    }

    fn raycast_all_probed(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        probe: &mut dyn Probe<S>,
        visit: VisitHits<'_, S>,
    ) -> ControlFlow<()> {
        SpatialQuery::raycast_all_probed(self, ray, workspace, &mut ProbeRef(probe), visit)
    }

    fn memory_bytes(&self) -> usize {
        SpatialQuery::memory_bytes(self)
    }

    fn check_invariants(&self) -> Result<(), Error> {
        SpatialQuery::check_invariants(self)
    }
}

/// [`SpatialIndex`], object-safe.
trait IndexObject<S: Scalar>: QueryObject<S> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error>;
    fn remove(&mut self, handle: Handle) -> Option<u64>;
    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error>;
    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64>;
    fn update_all(&mut self, f: Move<'_, S>) -> Result<(), Error>;
    fn clear(&mut self);
    fn maintain(&mut self);
}

impl<S: Scalar, I: SpatialIndex<S, u64> + Sync> IndexObject<S> for I {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        SpatialIndex::insert(self, aabb, value)
    }

    fn remove(&mut self, handle: Handle) -> Option<u64> {
        SpatialIndex::remove(self, handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        SpatialIndex::update(self, handle, aabb)
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64> {
        SpatialIndex::value_mut(self, handle)
    }

    fn update_all(&mut self, f: Move<'_, S>) -> Result<(), Error> {
        SpatialIndex::update_all(self, f)
    }

    fn clear(&mut self) {
        SpatialIndex::clear(self);
    }

    fn maintain(&mut self) {
        SpatialIndex::maintain(self);
    }
}

/// A dynamic structure behind [`IndexObject`].
pub(crate) struct Erased<S: Scalar>(Box<dyn IndexObject<S>>);

impl<S: Scalar> Erased<S> {
    /// `index`, boxed.
    pub(crate) fn new(index: impl SpatialIndex<S, u64> + Sync + 'static) -> Self {
        Self(Box::new(index))
    }
}

/// A static structure behind [`QueryObject`].
pub(crate) struct ErasedStatic<S: Scalar>(Box<dyn QueryObject<S>>);

impl<S: Scalar> ErasedStatic<S> {
    /// `index`, boxed.
    pub(crate) fn new(index: impl SpatialQuery<S, u64> + Sync + 'static) -> Self {
        Self(Box::new(index))
    }
}

/// `SpatialQuery` for `$ty`, whose `.0` is a box of a [`QueryObject`].
macro_rules! erased_query {
    ($ty:ident) => {
        impl<S: Scalar> SpatialQuery<S, u64> for $ty<S> {
            fn get(&self, handle: Handle) -> Option<Item<'_, S, u64>> {
                self.0.get(handle)
            }

            fn len(&self) -> usize {
                self.0.len()
            }

            fn is_empty(&self) -> bool {
                self.0.is_empty()
            }

            fn iter(&self) -> Iter<'_, S, u64> {
                self.0.iter()
            }

            fn query<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
            {
                self.0.query(area, &mut visit)
            }

            fn for_each_pair<F>(&self, mut visit: F) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>, Item<'_, S, u64>) -> ControlFlow<()>,
            {
                self.0.for_each_pair(&mut visit)
            }

            fn nearest<'w>(
                &self,
                point: Point<S>,
                k: usize,
                workspace: &'w mut Workspace<S>,
            ) -> &'w [Neighbor<S>] {
                self.0.nearest(point, k, workspace)
            }

            fn within<F>(&self, point: Point<S>, radius: S, mut visit: F) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
            {
                self.0.within(point, radius, &mut visit)
            }

            fn raycast_all<F>(
                &self,
                ray: &Ray<S>,
                workspace: &mut Workspace<S>,
                mut visit: F,
            ) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
            {
                self.0.raycast_all(ray, workspace, &mut visit)
            }

            fn raycast(&self, ray: &Ray<S>, workspace: &mut Workspace<S>) -> Option<RayHit<S>> {
                self.0.raycast(ray, workspace)
            }

            fn visit_regions<F>(&self, mut visit: F) -> ControlFlow<()>
            where
                F: FnMut(&Region<S>) -> ControlFlow<()>,
            {
                self.0.visit_regions(&mut visit)
            }

            fn query_probed<P: Probe<S>, F>(
                &self,
                area: &Aabb<S>,
                probe: &mut P,
                mut visit: F,
            ) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
            {
                self.0.query_probed(area, probe, &mut visit)
            }

            fn nearest_probed<'w, P: Probe<S>>(
                &self,
                point: Point<S>,
                k: usize,
                workspace: &'w mut Workspace<S>,
                probe: &mut P,
            ) -> &'w [Neighbor<S>] {
                self.0.nearest_probed(point, k, workspace, probe)
            }

            fn raycast_all_probed<P: Probe<S>, F>(
                &self,
                ray: &Ray<S>,
                workspace: &mut Workspace<S>,
                probe: &mut P,
                mut visit: F,
            ) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
            {
                self.0.raycast_all_probed(ray, workspace, probe, &mut visit)
            }

            fn memory_bytes(&self) -> usize {
                self.0.memory_bytes()
            }

            fn check_invariants(&self) -> Result<(), Error> {
                self.0.check_invariants()
            }
        }
    };
}

erased_query!(Erased);
erased_query!(ErasedStatic);

impl<S: Scalar> SpatialIndex<S, u64> for Erased<S> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        self.0.insert(aabb, value)
    }

    fn remove(&mut self, handle: Handle) -> Option<u64> {
        self.0.remove(handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        self.0.update(handle, aabb)
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64> {
        self.0.value_mut(handle)
    }

    fn update_all<F>(&mut self, mut f: F) -> Result<(), Error>
    where
        F: FnMut(Handle, &mut u64, &Aabb<S>) -> Aabb<S>,
    {
        self.0.update_all(&mut f)
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn maintain(&mut self) {
        self.0.maintain();
    }
}

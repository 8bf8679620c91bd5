//! `Layered` with static elements, as the suite's operations can drive it: the suite inserts
//! through the trait, so this adapter sends every third element (by value) through
//! `Layered::insert_static` instead. Those wait in the moving parts until the suite's
//! `Maintain` builds them into the static part; removals and updates of built ones mark them
//! gone there until the next build; clears empty it. Everything else is `Layered`'s own.

use core::ops::ControlFlow;

use spatix::{
    Aabb, Error, Handle, Item, Iter, Layered, Neighbor, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, Workspace,
};

/// A `Layered` index whose every third element (value divisible by 3) is static.
pub(crate) struct ThirdStatic<S: Scalar>(pub(crate) Layered<S, u64>);

impl<S: Scalar> SpatialQuery<S, u64> for ThirdStatic<S> {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, u64>> {
        self.0.get(handle)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn iter(&self) -> Iter<'_, S, u64> {
        self.0.iter()
    }

    fn query<F>(&self, area: &Aabb<S>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
    {
        self.0.query(area, visit)
    }

    fn for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>, Item<'_, S, u64>) -> ControlFlow<()>,
    {
        self.0.for_each_pair(visit)
    }

    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        self.0.nearest(point, k, workspace)
    }

    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
    {
        self.0.raycast_all(ray, workspace, visit)
    }

    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }

    fn check_invariants(&self) -> Result<(), Error> {
        self.0.check_invariants()
    }
}

impl<S: Scalar> SpatialIndex<S, u64> for ThirdStatic<S> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        if value % 3 == 0 {
            self.0.insert_static(aabb, value)
        } else {
            self.0.insert(aabb, value)
        }
    }

    fn remove(&mut self, handle: Handle) -> Option<u64> {
        self.0.remove(handle)
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64> {
        self.0.value_mut(handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        self.0.update(handle, aabb)
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn maintain(&mut self) {
        self.0.maintain();
    }
}

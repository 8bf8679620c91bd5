//! `ParallelPairs::par_update_all` joins the suite: a structure wrapped so that its
//! `update_all` runs as `par_update_all`, everything else forwarded unchanged. The harness's
//! `f` (which records its calls, and need not be `Send`) is asked first, on the calling
//! thread, for every element's new box and value; the parallel pass then stores them, and must
//! visit each element exactly once with its current box.

use core::ops::ControlFlow;
use std::collections::HashMap;
use std::sync::Mutex;

use spatix::{
    Aabb, Error, Handle, Item, Iter, Neighbor, ParallelPairs, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, Workspace,
};

/// `I` with its frames run on rayon's threads.
pub(crate) struct ParallelFrames<I>(pub(crate) I);

impl<S: Scalar, T, I: SpatialQuery<S, T>> SpatialQuery<S, T> for ParallelFrames<I> {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.0.get(handle)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn iter(&self) -> Iter<'_, S, T> {
        self.0.iter()
    }

    fn query<F>(&self, area: &Aabb<S>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.0.query(area, visit)
    }

    fn for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
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

    fn within<F>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.0.within(point, radius, visit)
    }

    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
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

impl<S: Scalar, I: ParallelPairs<S, u64>> SpatialIndex<S, u64> for ParallelFrames<I> {
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
        let current: Vec<(Handle, Aabb<S>)> =
            self.0.iter().map(|item| (item.handle, item.aabb)).collect();
        let mut planned = HashMap::with_capacity(current.len());
        for (handle, aabb) in current {
            let mut value = *self.0.value_mut(handle).expect("a listed handle is live");
            let new = f(handle, &mut value, &aabb);
            planned.insert(handle, (aabb, new, value));
        }
        let visited = Mutex::new(Vec::with_capacity(planned.len()));
        let result = self.0.par_update_all(|handle, value, aabb| {
            visited.lock().unwrap().push(handle);
            let Some(&(old, new, planned_value)) = planned.get(&handle) else {
                panic!("par_update_all visited {handle:?}, which is not live");
            };
            assert_eq!(
                *aabb, old,
                "par_update_all gave {handle:?} a box it does not have"
            );
            *value = planned_value;
            new
        });
        let mut visited = visited.into_inner().unwrap();
        visited.sort_unstable();
        let mut expected: Vec<Handle> = planned.into_keys().collect();
        expected.sort_unstable();
        assert_eq!(
            visited, expected,
            "par_update_all must visit every element once"
        );
        result
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    fn maintain(&mut self) {
        self.0.maintain();
    }
}

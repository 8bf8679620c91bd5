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

forward_query!(impl<S: Scalar, I: SpatialQuery<S, u64>> SpatialQuery<S, u64> for ParallelFrames<I>);

impl<S: Scalar, I: ParallelPairs<S, u64> + SpatialIndex<S, u64>> SpatialIndex<S, u64>
    for ParallelFrames<I>
{
    forward_index_methods!();

    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        self.0.insert(aabb, value)
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
}

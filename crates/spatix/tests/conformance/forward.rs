//! The conformance adapters' forwarding: each adapter wraps a structure (`self.0`) and changes
//! one or two operations; these macros write the rest, so that every adapter forwards the
//! same way.

/// `impl … SpatialQuery<S, u64> for …` (the header given) forwarding every method to `self.0`.
macro_rules! forward_query {
    ($($header:tt)*) => {
        $($header)* {
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

            fn within<F>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
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
                F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
            {
                self.0.raycast_all(ray, workspace, visit)
            }

            fn visit_regions<F>(&self, visit: F) -> ControlFlow<()>
            where
                F: FnMut(&::spatix::Region<S>) -> ControlFlow<()>,
            {
                self.0.visit_regions(visit)
            }

            fn query_probed<P: ::spatix::Probe<S>, F>(
                &self,
                area: &Aabb<S>,
                probe: &mut P,
                visit: F,
            ) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>) -> ControlFlow<()>,
            {
                self.0.query_probed(area, probe, visit)
            }

            fn nearest_probed<'w, P: ::spatix::Probe<S>>(
                &self,
                point: Point<S>,
                k: usize,
                workspace: &'w mut Workspace<S>,
                probe: &mut P,
            ) -> &'w [Neighbor<S>] {
                self.0.nearest_probed(point, k, workspace, probe)
            }

            fn raycast_all_probed<P: ::spatix::Probe<S>, F>(
                &self,
                ray: &Ray<S>,
                workspace: &mut Workspace<S>,
                probe: &mut P,
                visit: F,
            ) -> ControlFlow<()>
            where
                F: FnMut(Item<'_, S, u64>, S) -> ControlFlow<()>,
            {
                self.0.raycast_all_probed(ray, workspace, probe, visit)
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

/// Inside `impl SpatialIndex<S, u64> for …`: `remove`, `value_mut`, `update`, `clear` and
/// `maintain` forwarded to `self.0` (the adapter writes `insert`, and `update_all` if it
/// changes it).
macro_rules! forward_index_methods {
    () => {
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
    };
}

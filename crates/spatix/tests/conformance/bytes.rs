//! Byte forms join the suite: a structure wrapped so that, every few insertions and removals
//! and at every `maintain`, it is saved to bytes and replaced by the structure loaded from
//! them. The loaded one must save to the same bytes and hold the same elements under the same
//! handles; from then on the harness checks it, not the original, against the oracle: its
//! answers, its handles (stale ones included, and slots reused after loading) and its
//! invariants at every later step.

use core::ops::ControlFlow;

use spatix::{
    Aabb, ByteForm, Error, Handle, Item, Iter, Neighbor, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, Workspace,
};

/// `I`, reloaded from its bytes every few changes (the count of changes so far beside it).
pub(crate) struct ThroughBytes<I>(pub(crate) I, usize);

impl<I> ThroughBytes<I> {
    pub(crate) fn new(index: I) -> Self {
        Self(index, 0)
    }
}

/// Every how many insertions, removals and updates the structure is reloaded, at least (and
/// at most once per as many changes as it has elements, so that reloading costs each change
/// O(1) and the bulk tests stay fast).
const EVERY: usize = 5;

impl<I: ByteForm> ThroughBytes<I> {
    /// Replaces the structure with the one loaded from its bytes, after checking the two.
    fn reload<S: Scalar>(&mut self)
    where
        I: SpatialQuery<S, u64>,
    {
        let bytes = self.0.to_bytes();
        let loaded = I::from_bytes(&bytes).unwrap_or_else(|e| panic!("its bytes refused: {e}"));
        assert!(
            loaded.to_bytes() == bytes,
            "the loaded structure saves differently"
        );
        let elements = |index: &I| {
            let mut all: Vec<(Handle, Aabb<S>, u64)> = index
                .iter()
                .map(|item| (item.handle, item.aabb, *item.value))
                .collect();
            all.sort_by_key(|e| e.0);
            all
        };
        assert!(
            elements(&loaded) == elements(&self.0),
            "the loaded structure holds other elements or handles"
        );
        self.0 = loaded;
    }

    /// Counts a change, reloading after [`EVERY`] of them or as many as there are elements.
    fn count<S: Scalar>(&mut self)
    where
        I: SpatialQuery<S, u64>,
    {
        self.1 += 1;
        if self.1 >= EVERY.max(self.0.len()) {
            self.1 = 0;
            self.reload();
        }
    }
}

forward_query!(impl<S: Scalar, I: SpatialQuery<S, u64>> SpatialQuery<S, u64> for ThroughBytes<I>);

impl<S: Scalar, I: SpatialIndex<S, u64> + ByteForm> SpatialIndex<S, u64> for ThroughBytes<I> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        self.count();
        self.0.insert(aabb, value)
    }

    fn remove(&mut self, handle: Handle) -> Option<u64> {
        self.count();
        self.0.remove(handle)
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut u64> {
        self.0.value_mut(handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        self.count();
        self.0.update(handle, aabb)
    }

    fn update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        F: FnMut(Handle, &mut u64, &Aabb<S>) -> Aabb<S>,
    {
        self.0.update_all(f)
    }

    fn clear(&mut self) {
        self.0.clear();
        self.reload();
    }

    fn maintain(&mut self) {
        self.0.maintain();
        self.reload();
    }
}

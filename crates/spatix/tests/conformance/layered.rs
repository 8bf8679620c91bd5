//! `Layered` with static elements, as the suite's operations can drive it: the suite inserts
//! through the trait, so this adapter sends every third element (by value) through
//! `Layered::insert_static` instead. Those wait in the moving parts until the suite's
//! `Maintain` builds them into the static part; removals and updates of built ones mark them
//! gone there until the next build; clears empty it. Everything else is `Layered`'s own.

use core::ops::ControlFlow;

use spatix::{
    Aabb, ByteForm, Error, Handle, Item, Iter, Layered, Neighbor, Point, Ray, Scalar, SpatialIndex,
    SpatialQuery, Workspace,
};

/// A `Layered` index whose every third element (value divisible by 3) is static.
pub(crate) struct ThirdStatic<S: Scalar>(pub(crate) Layered<S, u64>);

forward_query!(impl<S: Scalar> SpatialQuery<S, u64> for ThirdStatic<S>);

impl<S: Scalar> SpatialIndex<S, u64> for ThirdStatic<S> {
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        if value % 3 == 0 {
            self.0.insert_static(aabb, value)
        } else {
            self.0.insert(aabb, value)
        }
    }

    forward_index_methods!();
}

/// The byte form is the layered index's own: the wrapper holds nothing else.
impl<S: Scalar> ByteForm for ThirdStatic<S> {
    const NAME: &'static str = <Layered<S, u64> as ByteForm>::NAME;

    fn to_bytes(&self) -> Vec<u8> {
        self.0.to_bytes()
    }

    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Layered::from_bytes(bytes).map(ThirdStatic)
    }
}

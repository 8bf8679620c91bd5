//! Helpers shared by the unit tests of several structures.

use core::ops::ControlFlow;

use crate::{Aabb, SpatialQuery};

/// Sorted values of the elements `query` reports; fails on a duplicate.
pub(crate) fn found<I: SpatialQuery<f64, u32>>(index: &I, area: &Aabb<f64>) -> Vec<u32> {
    let mut v = Vec::new();
    let _ = index.query(area, |e| {
        v.push(*e.value);
        ControlFlow::Continue(())
    });
    v.sort_unstable();
    assert!(v.windows(2).all(|w| w[0] != w[1]), "duplicate in {v:?}");
    v
}

/// Sorted value pairs `for_each_pair` reports, each ordered; fails on a duplicate.
pub(crate) fn pairs<I: SpatialQuery<f64, u32>>(index: &I) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    let _ = index.for_each_pair(|a, b| {
        v.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    v.sort_unstable();
    assert!(v.windows(2).all(|w| w[0] != w[1]), "duplicate pair");
    v
}

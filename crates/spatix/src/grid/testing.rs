//! Helpers shared by the grids' unit tests.

use core::ops::ControlFlow;

use crate::{Aabb, Point, SpatialQuery};

/// A box from its corners (valid by construction in the tests).
pub(crate) fn bx(x0: f64, y0: f64, x1: f64, y1: f64) -> Aabb<f64> {
    Aabb::new(Point::new(x0, y0), Point::new(x1, y1)).unwrap()
}

/// The value pairs `for_each_pair` reports, each as (smaller, larger), sorted.
pub(crate) fn pairs<I: SpatialQuery<f64, u32>>(index: &I) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let _ = index.for_each_pair(|a, b| {
        out.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    out.sort_unstable();
    out
}

/// The values `query` reports, sorted.
pub(crate) fn query<I: SpatialQuery<f64, u32>>(index: &I, area: &Aabb<f64>) -> Vec<u32> {
    let mut out = Vec::new();
    let _ = index.query(area, |item| {
        out.push(*item.value);
        ControlFlow::Continue(())
    });
    out.sort_unstable();
    out
}

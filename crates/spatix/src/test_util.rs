//! Helpers shared by the unit tests of the structures.

use core::ops::ControlFlow;

use crate::{Aabb, Point, Scalar, SpatialIndex, SpatialQuery};
use spatix_workload::Rng;

/// A box from its corners (valid by construction in the tests).
pub(crate) fn bx(x0: f64, y0: f64, x1: f64, y1: f64) -> Aabb<f64> {
    Aabb::new(Point::new(x0, y0), Point::new(x1, y1)).unwrap()
}

/// Sorted values of the elements `query` reports; fails on a duplicate or a break.
pub(crate) fn found<S: Scalar, I: SpatialQuery<S, u32>>(index: &I, area: &Aabb<S>) -> Vec<u32> {
    let mut v = Vec::new();
    let flow = index.query(area, |e| {
        v.push(*e.value);
        ControlFlow::Continue(())
    });
    assert_eq!(flow, ControlFlow::Continue(()));
    v.sort_unstable();
    assert!(v.windows(2).all(|w| w[0] != w[1]), "duplicate in {v:?}");
    v
}

/// Sorted value pairs `for_each_pair` reports, each ordered; fails on a duplicate, a pair
/// whose boxes do not meet, or a break.
pub(crate) fn pairs<S: Scalar, I: SpatialQuery<S, u32>>(index: &I) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    let flow = index.for_each_pair(|a, b| {
        assert!(
            a.aabb.intersects(&b.aabb),
            "{:?} and {:?} do not meet",
            a.aabb,
            b.aabb
        );
        v.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    assert_eq!(flow, ControlFlow::Continue(()));
    v.sort_unstable();
    assert!(v.windows(2).all(|w| w[0] != w[1]), "duplicate pair");
    v
}

/// `n` boxes 0.01 wide, reproducibly spread over `[0, 1000]²`: tiny elements, sparse.
pub(crate) fn dust(n: usize) -> Vec<Aabb<f64>> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            bx(x, y, x + 0.01, y + 0.01)
        })
        .collect()
}

/// The index's heap bytes per element once it holds `boxes`.
pub(crate) fn bytes_per_element<I: SpatialIndex<f64, u32>>(
    mut index: I,
    boxes: &[Aabb<f64>],
) -> usize {
    for (i, b) in boxes.iter().enumerate() {
        index.insert(*b, i as u32).unwrap();
    }
    index.maintain();
    index.check_invariants().unwrap();
    index.memory_bytes() / boxes.len()
}

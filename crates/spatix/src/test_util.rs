//! Helpers shared by the unit tests of the structures.

use core::ops::ControlFlow;

use crate::{
    Aabb, BruteForce, Error, Handle, Neighbor, Point, Ray, Scalar, SpatialIndex, SpatialQuery,
    Workspace,
};
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

/// `v` in `S`, saturated at ±MAX (so that `f64` extremes stay finite in `f32`).
fn saturated<S: Scalar>(v: f64) -> S {
    S::from_f64(v.clamp(-S::MAX.to_f64(), S::MAX.to_f64()))
}

/// `[-MAX, MAX]²`: a world whose width and height overflow `S`.
pub(crate) fn widest<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(-S::MAX, -S::MAX),
        max: Point::new(S::MAX, S::MAX),
    }
}

/// Boxes at the ends of `S`'s range, among a few ordinary ones: points at the corners of the
/// plane and at 1e300 (MAX in `f32`), boxes from -MAX to MAX (wider than MAX), as wide as MAX,
/// half as wide, far out on one side, subnormal points and boxes, and boxes near the origin
/// that meet the large ones.
pub(crate) fn extreme_boxes<S: Scalar>() -> Vec<Aabb<S>> {
    let m = f64::MAX;
    let q = S::MAX.to_f64() * 0.25;
    let tiny = S::MIN_POSITIVE.to_f64() / 1024.0; // subnormal
    let boxes = [
        (-m, -m, -m, -m),
        (m, m, m, m),
        (-m, m, -m, m),
        (m, -m, m, -m),
        (1e300, 1e300, 1e300, 1e300),
        (-m, -1.0, m, 1.0),
        (-1.0, -m, 1.0, m),
        (-m, -m, m, m),
        (-2.0 * q, -2.0 * q, 2.0 * q, 2.0 * q),
        (-q, -q, q, q),
        (q, q, 4.0 * q, 4.0 * q),
        (q, 0.0, 2.0 * q, 1.0),
        (-4.0 * q, q, -3.0 * q, 2.0 * q),
        (tiny, tiny, tiny, tiny),
        (tiny, 0.0, 3.0 * tiny, tiny),
        (-tiny, -tiny, 0.0, 0.0),
        (0.0, 0.0, 0.0, 0.0),
        (0.0, 0.0, 1.0, 1.0),
        (0.5, 0.5, 2.0, 2.0),
        (-3.0, -3.0, -2.0, -2.0),
    ];
    boxes
        .iter()
        .map(|&(x0, y0, x1, y1)| Aabb {
            min: Point::new(saturated(x0), saturated(y0)),
            max: Point::new(saturated(x1), saturated(y1)),
        })
        .collect()
}

/// Checks every read of `index` against `oracle` (both holding the same elements under the
/// same values): pairs, queries by each stored box and by the whole plane, nearest and within
/// around each box's corner, rays from the corners of the plane and the origin; and the
/// structural check.
fn assert_reads_match<S: Scalar, I: SpatialQuery<S, u32>>(
    index: &I,
    oracle: &BruteForce<S, u32>,
    when: &str,
) {
    index.check_invariants().unwrap();
    assert_eq!(pairs(index), pairs(oracle), "pairs {when}");
    let mut ws = Workspace::new();
    let mut ws_oracle = Workspace::new();
    let origin = Point::new(S::ZERO, S::ZERO);
    let areas = oracle.iter().map(|e| e.aabb).chain([widest()]);
    for area in areas {
        assert_eq!(found(index, &area), found(oracle, &area), "{area:?} {when}");
        let p = area.min;
        for k in [1, 3, oracle.len() + 1] {
            let near = |n: &[Neighbor<S>]| n.iter().map(|n| n.distance).collect::<Vec<_>>();
            assert_eq!(
                near(index.nearest(p, k, &mut ws)),
                near(oracle.nearest(p, k, &mut ws_oracle)),
                "{k} nearest {p:?} {when}"
            );
        }
        for radius in [S::ZERO, S::ONE, S::MAX] {
            assert_eq!(
                within(index, p, radius),
                within(oracle, p, radius),
                "within {radius:?} of {p:?} {when}"
            );
        }
    }
    let m = S::MAX;
    let rays = [
        (origin, Point::new(S::ONE, S::ONE)),
        (origin, Point::new(-S::ONE, S::HALF)),
        (Point::new(-m, -m), Point::new(S::ONE, S::ONE)),
        (Point::new(m, S::ZERO), Point::new(-S::ONE, S::ZERO)),
        (Point::new(S::ZERO, -m), Point::new(S::ZERO, S::ONE)),
    ];
    for (from, direction) in rays {
        let ray = Ray::new(from, direction, S::INFINITY).unwrap();
        assert_eq!(
            hits(index, &ray, &mut ws),
            hits(oracle, &ray, &mut ws_oracle),
            "ray {ray:?} {when}"
        );
    }
}

/// Sorted values of the elements within `radius` of `p`.
fn within<S: Scalar, I: SpatialQuery<S, u32>>(index: &I, p: Point<S>, radius: S) -> Vec<u32> {
    let mut v = Vec::new();
    let _ = index.within(p, radius, |e| {
        v.push(*e.value);
        ControlFlow::Continue(())
    });
    v.sort_unstable();
    v
}

/// The values and entries of a ray's hits, by entry then value.
fn hits<S: Scalar, I: SpatialQuery<S, u32>>(
    index: &I,
    ray: &Ray<S>,
    ws: &mut Workspace<S>,
) -> Vec<(u32, S)> {
    let mut v = Vec::new();
    let _ = index.raycast_all(ray, ws, |e, t| {
        v.push((*e.value, t));
        ControlFlow::Continue(())
    });
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then(a.0.cmp(&b.0)));
    v
}

/// Inserts `boxes` (each under its index) into `index` and into the oracle and compares every
/// read ([`assert_reads_match`]); again after each element moved onto the next one's box,
/// after a small shift, after `maintain`, and after half of them are removed. Boxes the index
/// refuses as too large (a bound it declares) must be refused the same way on every insert
/// and update, changing nothing.
pub(crate) fn assert_matches_oracle<S: Scalar, I: SpatialIndex<S, u32>>(
    index: &mut I,
    boxes: &[Aabb<S>],
) {
    let mut oracle = BruteForce::new();
    let mut live: Vec<(Handle, Handle, usize)> = Vec::new();
    let mut refused = vec![false; boxes.len()];
    for (i, b) in boxes.iter().enumerate() {
        match index.insert(*b, i as u32) {
            Ok(h) => live.push((h, oracle.insert(*b, i as u32).unwrap(), i)),
            Err(e) => {
                assert_eq!(e, Error::BoxTooLarge, "{b:?}");
                refused[i] = true;
            }
        }
    }
    assert_eq!(index.len(), live.len());
    assert_reads_match(index, &oracle, "after the inserts");
    for &(h, ho, i) in &live {
        let to = (i + 1) % boxes.len();
        let got = index.update(h, boxes[to]);
        if refused[to] {
            assert_eq!(got, Err(Error::BoxTooLarge), "{:?}", boxes[to]);
        } else {
            got.unwrap();
            oracle.update(ho, boxes[to]).unwrap();
        }
    }
    assert_reads_match(index, &oracle, "after the moves");
    for &(h, ho, _) in &live {
        let b = oracle.get(ho).unwrap().aabb;
        let step = S::ONE;
        let shifted = Aabb {
            min: Point::new(b.min.x + step, b.min.y - step),
            max: Point::new(b.max.x + step, b.max.y - step),
        };
        match index.update(h, shifted) {
            Ok(()) => oracle.update(ho, shifted).unwrap(),
            Err(e) => assert_eq!(e, Error::BoxTooLarge, "{shifted:?}"),
        }
    }
    assert_reads_match(index, &oracle, "after the shifts");
    index.maintain();
    assert_reads_match(index, &oracle, "after maintain");
    for &(h, ho, i) in live.iter().step_by(2) {
        assert_eq!(index.remove(h), Some(i as u32));
        oracle.remove(ho);
    }
    index.maintain();
    assert_reads_match(index, &oracle, "after the removals");
}

/// The CLI's case of three boxes, one of them far out at 1e300: the bulk of them, the world
/// the CLI declares, has an area that overflows `f64`.
pub(crate) fn one_box_far_out() -> [Aabb<f64>; 3] {
    [
        bx(0.0, 0.0, 1.0, 1.0),
        bx(0.5, 0.5, 2.0, 2.0),
        bx(1e300, 1e300, 1e300, 1e300),
    ]
}

/// A frame's move for the parallel frame tests, drawn from the handle and the frame: mostly
/// small, some far, some out of the world, one in fifty invalid (NaN); the value counts the
/// calls.
#[cfg(feature = "rayon")]
pub(crate) fn frame_move(frame: u64) -> impl Fn(Handle, &mut u64, &Aabb<f64>) -> Aabb<f64> {
    move |h: Handle, value: &mut u64, b: &Aabb<f64>| {
        *value += 1;
        let r = u64::from(h.slot()).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ frame;
        let (dx, dy) = match r % 50 {
            0 => (f64::NAN, 0.0),
            1 => (300.0, -250.0),
            2 => (-80.0, 90.0),
            _ => (
                ((r >> 8) % 21) as f64 / 10.0 - 1.0,
                ((r >> 16) % 21) as f64 / 10.0 - 1.0,
            ),
        };
        Aabb {
            min: Point::new(b.min.x + dx, b.min.y + dy),
            max: Point::new(b.max.x + dx, b.max.y + dy),
        }
    }
}

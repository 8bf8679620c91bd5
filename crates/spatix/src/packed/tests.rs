//! Tests of the packed index: its mechanics (curve, sort, packing, self-check), and seeded
//! property tests of every query against `BruteForce` on every kind of data.

use core::ops::ControlFlow;
use std::collections::HashSet;

#[cfg(feature = "rayon")]
use super::build::{CHUNK, par_order};
use super::build::{Counts, Curve, Keys, hilbert};
use super::{PackedConfig, PackedIndex};
use crate::base::slots::StaticSlots;
use crate::bytes::resealed;
use crate::test_util::{found, pairs};
use crate::{
    Aabb, BruteForce, ByteForm, ByteValue, Error, Handle, Point, Quadtree, Ray, Scalar,
    SpatialIndex, SpatialQuery, Workspace,
};
use spatix_workload::Rng;

fn bx<S: Scalar>(x0: f64, y0: f64, x1: f64, y1: f64) -> Aabb<S> {
    Aabb::new(
        Point::new(S::from_f64(x0), S::from_f64(y0)),
        Point::new(S::from_f64(x1), S::from_f64(y1)),
    )
    .unwrap()
}

fn numbered<S: Scalar>(boxes: &[Aabb<S>]) -> impl Iterator<Item = (Aabb<S>, u32)> + '_ {
    boxes.iter().copied().zip(0..)
}

// ---------------------------------------------------------------------------------------
// The curve and the sort.

#[test]
fn hilbert_curve_fills_the_first_square_cell_by_neighbouring_cell() {
    // The curve starts at (0, 0), so its first 4^8 cells are the 256 × 256 square there,
    // each exactly once, and consecutive cells share a side.
    let mut at = vec![None; 1 << 16];
    for y in 0..256u32 {
        for x in 0..256u32 {
            let d = hilbert(x, y) as usize;
            assert!(d < 1 << 16, "cell ({x}, {y}) has index {d}");
            assert!(at[d].replace((x, y)).is_none(), "index {d} used twice");
        }
    }
    assert_eq!(at[0], Some((0, 0)));
    for d in 1..at.len() {
        let ((x0, y0), (x1, y1)) = (at[d - 1].unwrap(), at[d].unwrap());
        assert_eq!(
            x0.abs_diff(x1) + y0.abs_diff(y1),
            1,
            "indices {} and {d}",
            d - 1
        );
    }
}

#[test]
fn hilbert_curve_is_a_curve_over_the_whole_grid() {
    // Sampled over the full 2^16 grid: distinct cells get distinct indices, and stepping
    // along the curve by one from any cell reaches a neighbour.
    let mut rng = Rng::new(11);
    let mut cells = std::collections::HashMap::new();
    for _ in 0..20_000 {
        let (x, y) = (rng.below(1 << 16) as u32, rng.below(1 << 16) as u32);
        let d = hilbert(x, y);
        let neighbours = [
            (x.wrapping_sub(1), y),
            (x + 1, y),
            (x, y.wrapping_sub(1)),
            (x, y + 1),
        ];
        let next = neighbours
            .iter()
            .filter(|&&(a, b)| a < 1 << 16 && b < 1 << 16)
            .filter(|&&(a, b)| hilbert(a, b).abs_diff(d) == 1)
            .count();
        let ends = u32::from(d == 0) + u32::from(d == u32::MAX);
        assert_eq!(next as u32 + ends, 2, "cell ({x}, {y}) at {d}");
        let cell = *cells.entry(d).or_insert((x, y));
        assert_eq!(cell, (x, y), "two cells at index {d}");
    }
    assert_eq!(
        hilbert(0xFFFF, 0),
        u32::MAX,
        "the curve ends at the other bottom corner"
    );
}

#[test]
fn radix_sort_orders_by_key_then_index() {
    let mut rng = Rng::new(5);
    let spreads = [
        (0, 1u64),
        (1, 1),
        (2, 1 << 32),
        (100, 1),
        (5000, 1 << 32),
        (5000, 7),
    ];
    let more = [
        (5000, 1 << 16),
        (5000, 0x0100_0000),
        (70_000, 1 << 20),
        // Runs of the parallel sort: a bucket per run at most, one bucket, one digit.
        (100_003, 1 << 32),
        (100_003, 0x0100_0001),
        (100_003, 2),
    ];
    for (n, spread) in spreads.into_iter().chain(more) {
        // Some key sets share digits (small spreads): those passes are skipped.
        let offset = rng.next_u64() % (1 << 32);
        let raw: Vec<u32> = (0..n)
            .map(|_| ((rng.next_u64() % spread + offset) % (1 << 32)) as u32)
            .collect();
        let keys: Vec<u64> = raw
            .iter()
            .zip(0..)
            .map(|(&k, i)| u64::from(k) << 32 | i)
            .collect();
        let mut expected: Vec<u32> = (0..n as u32).collect();
        expected.sort_by_key(|&i| (raw[i as usize], i));
        let sorted = Keys {
            keys: keys.clone(),
            counts: histograms(&keys),
        }
        .into_order();
        assert_eq!(sorted, expected, "n = {n}, spread = {spread}");
        #[cfg(feature = "rayon")]
        {
            let runs: Vec<Counts> = keys.chunks(CHUNK).map(histograms).collect();
            for threads in [1, 2] {
                // The values (here each element's index, doubled) follow their keys.
                let values = (0..n as u64).map(|i| Some(2 * i)).collect();
                let (sorted, values) =
                    pool(threads).install(|| par_order(keys.clone(), &runs, values));
                assert_eq!(sorted, expected, "n = {n}, spread = {spread}, parallel");
                let doubled: Vec<u64> = expected.iter().map(|&i| 2 * u64::from(i)).collect();
                assert_eq!(
                    values, doubled,
                    "n = {n}, spread = {spread}, parallel values"
                );
            }
        }
    }
}

fn histograms(keys: &[u64]) -> Counts {
    let mut counts = Counts::default();
    for &key in keys {
        counts.add(key);
    }
    counts
}

// ---------------------------------------------------------------------------------------
// Layout.

#[test]
fn levels_pack_runs_of_node_size() {
    let boxes: Vec<Aabb<f64>> = (0..17)
        .map(|i| bx(f64::from(i), 0.0, f64::from(i), 1.0))
        .collect();
    let index = PackedIndex::with_config(numbered(&boxes), PackedConfig { node_size: 4 }).unwrap();
    assert_eq!(index.levels, [0, 5, 7, 8]);
    let mut per_level = [0usize; 4];
    index.traverse(|_, level, elements| per_level[level as usize] += elements);
    assert_eq!(per_level, [0, 17, 17, 17]);
    assert_eq!(*index.root().unwrap(), bx(0.0, 0.0, 16.0, 1.0));
    index.check_invariants().unwrap();

    let one = PackedIndex::build([(bx::<f32>(1.0, 2.0, 3.0, 4.0), 0)]).unwrap();
    assert_eq!(
        (one.levels.as_slice(), one.nodes.len()),
        ([0, 1].as_slice(), 1)
    );
    let none = PackedIndex::<f32, ()>::build([]).unwrap();
    assert_eq!(
        (none.levels.as_slice(), none.nodes.len()),
        ([0].as_slice(), 0)
    );
    none.check_invariants().unwrap();
}

#[test]
fn boxes_are_stored_in_curve_order_so_leaves_are_compact() {
    // A 128 × 128 grid of points, given in a scrambled order: sorted along the curve, each
    // leaf of 16 points covers a 4 × 4 block (area 9), so the leaves' areas add up to about
    // 9 per 16 points; in input order they would span the whole grid.
    let mut rng = Rng::new(3);
    let mut cells: Vec<(f64, f64)> = (0..128 * 128)
        .map(|i| (f64::from(i % 128), f64::from(i / 128)))
        .collect();
    for i in (1..cells.len()).rev() {
        cells.swap(i, rng.below(i + 1));
    }
    let boxes: Vec<Aabb<f64>> = cells.iter().map(|&(x, y)| bx(x, y, x, y)).collect();
    let index = PackedIndex::build(numbered(&boxes)).unwrap();
    let mut leaf_area = 0.0;
    index.traverse(|b, level, _| {
        if level == 1 {
            leaf_area += b.size().x * b.size().y;
        }
    });
    assert_eq!(leaf_area, 9.0 * 1024.0);
    // Handles still name the input: element i is cell i of the scrambled list.
    for (i, b) in boxes.iter().enumerate() {
        let item = index.get(index.handle(i).unwrap()).unwrap();
        assert_eq!((item.aabb, *item.value), (*b, i as u32));
    }
}

#[test]
fn memory_is_boxes_values_two_maps_and_the_nodes() {
    let mut rng = Rng::new(9);
    let boxes: Vec<Aabb<f32>> = (0..10_000)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
            bx(x, y, x + 2.0, y + 2.0)
        })
        .collect();
    let index = PackedIndex::build(numbered(&boxes)).unwrap();
    let nodes = 625 + 40 + 3 + 1;
    let expected = 10_000 * (16 + 4 + 4 + 4) + nodes * 16 + 5 * 4;
    assert_eq!(index.memory_bytes(), expected);
}

// ---------------------------------------------------------------------------------------
// Errors, handles and the self-check.

#[test]
fn invalid_input_builds_nothing() {
    let good = bx::<f64>(0.0, 0.0, 1.0, 1.0);
    let bad = [
        Aabb {
            min: Point::new(f64::NAN, 0.0),
            max: Point::new(1.0, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 0.0),
            max: Point::new(f64::INFINITY, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 2.0),
            max: Point::new(1.0, 1.0),
        },
    ];
    for b in bad {
        let r = PackedIndex::build([(good, 0), (b, 1), (good, 2)]);
        assert_eq!(r.err(), Some(Error::InvalidAabb));
    }
    for node_size in [0, 1, 65, u32::MAX] {
        let r = PackedIndex::with_config([(good, 0)], PackedConfig { node_size });
        assert!(matches!(r, Err(Error::InvalidParameter(_))), "{node_size}");
    }
}

#[test]
fn handles_of_other_structures_are_rejected() {
    let boxes = [bx::<f32>(0.0, 0.0, 1.0, 1.0), bx(2.0, 2.0, 3.0, 3.0)];
    let a = PackedIndex::build(numbered(&boxes)).unwrap();
    let b = PackedIndex::build(numbered(&boxes)).unwrap();
    let mut tree = Quadtree::new(bx(0.0, 0.0, 4.0, 4.0)).unwrap();
    let foreign = tree.insert(boxes[0], 0u32).unwrap();
    let h = a.handle(1).unwrap();
    assert_eq!(*a.get(h).unwrap().value, 1);
    assert!(b.get(h).is_none(), "a handle of another packed index");
    assert!(a.get(foreign).is_none(), "a quadtree's handle");
    assert!(
        a.get(Handle::from_bits(u64::from(h.to_bits() as u32 + 7)))
            .is_none()
    );
    assert!(a.handle(2).is_none());
    let slots: Vec<u32> = a.iter().map(|item| item.handle.slot()).collect();
    assert_eq!(slots, [0, 1], "iter walks slot (input) order");
}

#[test]
fn check_invariants_catches_broken_trees() {
    let mut rng = Rng::new(2);
    let boxes: Vec<Aabb<f64>> = (0..300)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
            bx(x, y, x + 1.0, y + 1.0)
        })
        .collect();
    let index = PackedIndex::with_config(numbered(&boxes), PackedConfig { node_size: 4 }).unwrap();
    index.check_invariants().unwrap();
    let broken = |why: &str, f: &dyn Fn(&mut PackedIndex<f64, u32>)| {
        let mut copy = index.clone();
        f(&mut copy);
        assert!(copy.check_invariants().is_err(), "not caught: {why}");
    };
    broken("a grown node", &|t| t.nodes[3].max.x += 1.0);
    broken("a shrunk root", &|t| {
        t.nodes.last_mut().unwrap().min.y += 0.5
    });
    broken("two elements swapped", &|t| {
        let (a, b) = (10, 200);
        t.elements.boxes.swap(a, b);
        t.elements.slots.swap(a, b);
        t.elements
            .positions
            .swap(t.elements.slots[a] as usize, t.elements.slots[b] as usize);
    });
    broken("an element listed twice", &|t| {
        t.elements.slots[7] = t.elements.slots[8]
    });
    broken("a level missing", &|t| {
        t.levels.pop();
    });
    broken("a moved element box", &|t| {
        t.elements.boxes[0].max.x += 500.0
    });
    broken("a node size that does not match", &|t| {
        t.config.node_size = 5
    });
    broken("a level above the root", &|t| {
        t.nodes.push(*t.nodes.last().unwrap());
        t.levels.push(t.nodes.len() as u32);
    });
}

// ---------------------------------------------------------------------------------------
// Seeded property tests against the oracle.

/// The kinds of data every query is checked on.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Uniform,
    Clustered,
    Coincident,
    /// Boxes far apart and far from the origin, up to a quarter of the scalar's range.
    Far,
    /// A few huge boxes among many tiny ones ("dragons among hobbits").
    HugeAndTiny,
    /// Integer corners and zero sizes: points, lines and boxes that only touch.
    Degenerate,
}

const KINDS: [Kind; 6] = [
    Kind::Uniform,
    Kind::Clustered,
    Kind::Coincident,
    Kind::Far,
    Kind::HugeAndTiny,
    Kind::Degenerate,
];

fn random_box<S: Scalar>(kind: Kind, rng: &mut Rng, centre: (f64, f64)) -> Aabb<S> {
    let (cx, cy, hx, hy) = match kind {
        Kind::Uniform => (
            rng.range(0.0, 100.0),
            rng.range(0.0, 100.0),
            rng.range(0.0, 3.0),
            rng.range(0.0, 3.0),
        ),
        Kind::Clustered => {
            let c = [(20.0, 30.0), (70.0, 60.0), (50.0, 50.0)][rng.below(3)];
            (
                c.0 + 4.0 * rng.normal(),
                c.1 + 4.0 * rng.normal(),
                rng.range(0.0, 1.5),
                rng.range(0.0, 1.5),
            )
        }
        Kind::Coincident => (centre.0, centre.1, 1.0, 0.5),
        Kind::Far => {
            let reach = S::MAX.to_f64() / 4.0;
            let far = |rng: &mut Rng| match rng.below(3) {
                0 => rng.range(-reach, reach),
                1 => rng.range(-1e6, 1e6),
                _ => rng.range(0.0, 100.0),
            };
            let (x, y) = (far(rng), far(rng));
            let h = [0.0, 1.0, 1e5, reach / 8.0][rng.below(4)];
            (x, y, h * rng.unit(), h * rng.unit())
        }
        Kind::HugeAndTiny => {
            let h = if rng.below(20) == 0 {
                rng.range(20.0, 60.0)
            } else {
                rng.range(0.0, 0.5)
            };
            (
                rng.range(0.0, 100.0),
                rng.range(0.0, 100.0),
                h,
                h * rng.range(0.2, 1.0),
            )
        }
        Kind::Degenerate => {
            let i = |rng: &mut Rng| rng.below(12) as f64;
            let (x, y) = (i(rng), i(rng));
            return bx(
                x,
                y,
                x + [0.0, 1.0][rng.below(2)],
                y + [0.0, 1.0, 2.0][rng.below(3)],
            );
        }
    };
    bx(cx - hx, cy - hy, cx + hx, cy + hy)
}

/// A query area: small, large, a point, an element's own box, everything, or touching.
fn random_area<S: Scalar>(kind: Kind, rng: &mut Rng, boxes: &[Aabb<S>]) -> Aabb<S> {
    match rng.below(6) {
        0 if !boxes.is_empty() => boxes[rng.below(boxes.len())],
        1 => Aabb {
            min: Point::new(-S::MAX, -S::MAX),
            max: Point::new(S::MAX, S::MAX),
        },
        2 if !boxes.is_empty() => {
            // Touching an element's right side from outside.
            let b = boxes[rng.below(boxes.len())];
            Aabb {
                min: Point::new(b.max.x, b.min.y),
                max: Point::new(b.max.x + S::ONE, b.max.y),
            }
        }
        3 => {
            let p = random_box::<S>(kind, rng, (50.0, 50.0)).min;
            Aabb { min: p, max: p }
        }
        _ => {
            let a = random_box::<S>(kind, rng, (50.0, 50.0));
            let grow = S::from_f64(rng.range(0.0, 20.0));
            Aabb {
                min: Point::new(a.min.x - grow, a.min.y - grow),
                max: Point::new(a.max.x + grow, a.max.y + grow),
            }
        }
    }
}

fn random_point<S: Scalar>(kind: Kind, rng: &mut Rng) -> Point<S> {
    match rng.below(8) {
        0 => Point::new(S::from_f64(-1e9), S::from_f64(3e9)),
        1 => Point::new(S::INFINITY, S::ZERO),
        _ => random_box::<S>(kind, rng, (50.0, 50.0)).max,
    }
}

fn random_ray<S: Scalar>(kind: Kind, rng: &mut Rng) -> Ray<S> {
    let origin = random_point::<S>(kind, rng);
    let angle = rng.range(0.0, core::f64::consts::TAU);
    let direction = match rng.below(5) {
        0 => Point::new(S::ONE, S::ZERO),
        1 => Point::new(S::ZERO, -S::ONE),
        2 => Point::new(S::ZERO, S::ZERO),
        _ => Point::new(
            S::from_f64(angle.cos() * 3.0),
            S::from_f64(angle.sin() * 3.0),
        ),
    };
    let max_t = [S::INFINITY, S::ZERO, S::from_f64(rng.range(0.0, 40.0))][rng.below(3)];
    Ray {
        origin,
        direction,
        max_t,
    }
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

fn within_ids<S: Scalar, I: SpatialQuery<S, u32>>(index: &I, p: Point<S>, r: S) -> Vec<u32> {
    let mut ids = Vec::new();
    let _ = index.within(p, r, |item| {
        ids.push(*item.value);
        ControlFlow::Continue(())
    });
    sorted(ids)
}

/// Every hit as (t, id), in the order reported.
fn ray_hits<S: Scalar, I: SpatialQuery<S, u32>>(
    index: &I,
    ray: &Ray<S>,
    ws: &mut Workspace<S>,
) -> Vec<(S, u32)> {
    let mut hits = Vec::new();
    let _ = index.raycast_all(ray, ws, |item, t| {
        hits.push((t, *item.value));
        ControlFlow::Continue(())
    });
    hits
}

/// Calls of a visitor that breaks at once, and what the query returned.
fn stops(run: impl FnOnce(&mut usize) -> ControlFlow<()>) -> (usize, ControlFlow<()>) {
    let mut calls = 0;
    let flow = run(&mut calls);
    (calls, flow)
}

fn assert_stops_at_once(calls: usize, flow: ControlFlow<()>, matches: usize, what: &str) {
    let want = if matches == 0 {
        (0, ControlFlow::Continue(()))
    } else {
        (1, ControlFlow::Break(()))
    };
    assert_eq!(
        (calls, flow),
        want,
        "{what}: early stop with {matches} matches"
    );
}

/// Builds the index and the oracle from the same boxes and compares every query.
fn compare<S: Scalar>(kind: Kind, boxes: &[Aabb<S>], node_size: u32, rng: &mut Rng) {
    let context = format!("{kind:?}, {} boxes, node size {node_size}", boxes.len());
    let config = PackedConfig { node_size };
    let index = PackedIndex::with_config(numbered(boxes), config).unwrap();
    index
        .check_invariants()
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    let mut oracle = BruteForce::new();
    for (b, i) in numbered(boxes) {
        oracle.insert(b, i).unwrap();
    }
    assert_eq!(index.len(), boxes.len());
    assert_eq!(index.iter().len(), boxes.len());
    for (i, item) in index.iter().enumerate() {
        assert_eq!(
            (item.handle, *item.value, item.aabb),
            (index.handle(i).unwrap(), i as u32, boxes[i])
        );
    }

    let found_pairs = pairs(&index);
    assert_eq!(found_pairs, pairs(&oracle), "{context}: pairs");
    let (calls, flow) = stops(|calls| {
        index.for_each_pair(|_, _| {
            *calls += 1;
            ControlFlow::Break(())
        })
    });
    assert_stops_at_once(calls, flow, found_pairs.len(), &context);

    let (mut ws, mut ws_oracle) = (Workspace::new(), Workspace::new());
    for _ in 0..12 {
        let area = random_area(kind, rng, boxes);
        let ids = found(&index, &area);
        assert_eq!(ids, found(&oracle, &area), "{context}: query {area:?}");
        assert!(
            ids.windows(2).all(|w| w[0] != w[1]),
            "{context}: reported twice"
        );
        let (calls, flow) = stops(|calls| {
            index.query(&area, |_| {
                *calls += 1;
                ControlFlow::Break(())
            })
        });
        assert_stops_at_once(calls, flow, ids.len(), &context);

        let p = random_point::<S>(kind, rng);
        for k in [0, 1, 8, 64, boxes.len() + 3] {
            let got = index.nearest(p, k, &mut ws).to_vec();
            let want = oracle.nearest(p, k, &mut ws_oracle);
            let d = |v: &[crate::Neighbor<S>]| v.iter().map(|n| n.distance).collect::<Vec<_>>();
            assert_eq!(d(&got), d(want), "{context}: nearest {k} to {p:?}");
            let ids: HashSet<u32> = got
                .iter()
                .map(|n| *index.get(n.handle).unwrap().value)
                .collect();
            assert_eq!(ids.len(), got.len(), "{context}: a neighbour twice");
            for n in &got {
                assert_eq!(
                    index.get(n.handle).unwrap().aabb.distance_to_point(p),
                    n.distance
                );
            }
        }
        let r = [
            S::ZERO,
            S::ONE,
            S::from_f64(rng.range(0.0, 30.0)),
            S::INFINITY,
            -S::ONE,
        ][rng.below(5)];
        assert_eq!(
            within_ids(&index, p, r),
            within_ids(&oracle, p, r),
            "{context}: within {r:?} of {p:?}"
        );

        let ray = random_ray::<S>(kind, rng);
        let hits = ray_hits(&index, &ray, &mut ws);
        assert!(
            hits.windows(2).all(|w| w[0].0 <= w[1].0),
            "{context}: hits out of order"
        );
        let mut got: Vec<_> = hits.iter().map(|&(t, id)| (id, t)).collect();
        let mut want: Vec<_> = ray_hits(&oracle, &ray, &mut ws_oracle)
            .iter()
            .map(|&(t, id)| (id, t))
            .collect();
        got.sort_unstable_by_key(|h| h.0);
        want.sort_unstable_by_key(|h| h.0);
        assert_eq!(got, want, "{context}: ray {ray:?}");
        let first = index.raycast(&ray, &mut ws).map(|h| h.t);
        assert_eq!(
            first,
            oracle.raycast(&ray, &mut ws_oracle).map(|h| h.t),
            "{context}: first hit"
        );
        let (calls, flow) = stops(|calls| {
            index.raycast_all(&ray, &mut ws, |_, _| {
                *calls += 1;
                ControlFlow::Break(())
            })
        });
        assert_stops_at_once(calls, flow, hits.len(), &context);
    }
}

fn property_tests<S: Scalar>(seed: u64) {
    let mut rng = Rng::new(seed);
    for kind in KINDS {
        for n in [0, 1, 2, 3, 15, 16, 17, 63, 64, 65, 200, 1000] {
            let node_size = [2, 3, 4, 16, 64][rng.below(5)];
            let centre = (rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
            let boxes: Vec<Aabb<S>> = (0..n).map(|_| random_box(kind, &mut rng, centre)).collect();
            compare(kind, &boxes, node_size, &mut rng);
        }
    }
}

#[test]
fn every_query_matches_the_oracle_f32() {
    for seed in 0..6 {
        property_tests::<f32>(seed);
    }
}

#[test]
fn every_query_matches_the_oracle_f64() {
    for seed in 100..106 {
        property_tests::<f64>(seed);
    }
}

#[test]
fn larger_sets_match_the_oracle_with_every_node_size() {
    let mut rng = Rng::new(77);
    for node_size in [2, 5, 16, 33, 64] {
        for kind in [Kind::Uniform, Kind::HugeAndTiny, Kind::Degenerate] {
            let boxes: Vec<Aabb<f32>> = (0..4000)
                .map(|_| random_box(kind, &mut rng, (0.0, 0.0)))
                .collect();
            compare(kind, &boxes, node_size, &mut rng);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The parallel build: the same index as the serial one.

#[cfg(feature = "rayon")]
fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// Asserts that `par_with_config` builds what `with_config` builds from `boxes` (element by
/// element in storage order: boxes, values, handles' slots; then the nodes and levels), or
/// fails the same way, on one and on two threads.
#[cfg(feature = "rayon")]
fn par_build_matches<S: Scalar>(boxes: &[Aabb<S>], node_size: u32, what: &str) {
    let config = PackedConfig { node_size };
    let serial = PackedIndex::with_config(numbered(boxes), config);
    for threads in [1, 2] {
        let context = format!(
            "{what}: {} boxes, node size {node_size}, {threads} threads",
            boxes.len()
        );
        let parallel =
            pool(threads).install(|| PackedIndex::par_with_config(numbered(boxes), config));
        let (serial, parallel) = match (&serial, parallel) {
            (Ok(serial), Ok(parallel)) => (serial, parallel),
            (serial, parallel) => {
                assert_eq!(parallel.err(), serial.as_ref().err().cloned(), "{context}");
                continue;
            }
        };
        parallel
            .check_invariants()
            .unwrap_or_else(|e| panic!("{context}: {e:?}"));
        // Element by element in storage (curve) order: box, value and handle's slot.
        let (a, b) = (&parallel.elements, &serial.elements);
        assert_eq!(a.len(), b.len(), "{context}");
        for p in 0..a.len() {
            assert_eq!(
                (a.boxes[p], a.values[p], a.slots[p]),
                (b.boxes[p], b.values[p], b.slots[p]),
                "{context}: position {p}"
            );
        }
        assert!(a.positions == b.positions, "{context}: positions differ");
        assert!(parallel.nodes == serial.nodes, "{context}: nodes differ");
        assert_eq!(parallel.levels, serial.levels, "{context}");
        let handle = parallel.handle(boxes.len() / 2);
        assert_eq!(
            handle.and_then(|h| parallel.get(h)).map(|item| *item.value),
            handle.map(|h| h.slot()),
            "{context}"
        );
    }
}

#[cfg(feature = "rayon")]
#[test]
fn par_build_is_the_serial_build_on_every_kind_of_data() {
    let mut rng = Rng::new(24);
    let sizes = [
        0,
        1,
        2,
        17,
        255,
        256,
        257,
        CHUNK - 1,
        CHUNK,
        CHUNK + 1,
        2 * CHUNK + 17,
    ];
    for kind in KINDS {
        for n in sizes {
            let node_size = [2, 3, 16, 64][rng.below(4)];
            let centre = (rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
            let boxes: Vec<Aabb<f32>> =
                (0..n).map(|_| random_box(kind, &mut rng, centre)).collect();
            par_build_matches(&boxes, node_size, &format!("{kind:?}"));
        }
    }
    for kind in [Kind::Uniform, Kind::Clustered, Kind::Far] {
        let boxes: Vec<Aabb<f64>> = (0..100_000)
            .map(|_| random_box(kind, &mut rng, (0.0, 0.0)))
            .collect();
        par_build_matches(&boxes, 16, &format!("{kind:?}, f64"));
    }
}

#[cfg(feature = "rayon")]
#[test]
fn par_build_is_the_serial_build_with_equal_keys_and_strays() {
    let mut rng = Rng::new(25);
    let n = 3 * CHUNK + 5;
    // Coincident points at two places: two keys (and two buckets) for every box.
    let two: Vec<Aabb<f32>> = (0..n)
        .map(|_| {
            let x = [1.0, 2.0][rng.below(2)];
            bx(x, 3.0, x, 3.0)
        })
        .collect();
    par_build_matches(&two, 16, "two points");
    // Strays among uniform boxes: the curve spans the bulk, the strays take the border cells.
    let strays = [1e30, f64::from(f32::MAX), -f64::from(f32::MAX)];
    let boxes: Vec<Aabb<f32>> = (0..n)
        .map(|i| {
            if i % 997 == 0 {
                let (x, y) = (strays[rng.below(3)], strays[rng.below(3)]);
                bx(x, y, x, y)
            } else {
                random_box(Kind::Uniform, &mut rng, (0.0, 0.0))
            }
        })
        .collect();
    par_build_matches(&boxes, 16, "strays");
    // Extreme boxes spanning the whole range.
    let max = f64::from(f32::MAX);
    let mut spans = boxes.clone();
    spans[7] = bx(-max, -max, max, max);
    spans[CHUNK] = bx(-max, 0.0, -max, max);
    par_build_matches(&spans, 8, "spans");
}

#[cfg(feature = "rayon")]
#[test]
fn par_build_fails_as_the_serial_build() {
    let mut rng = Rng::new(26);
    let good: Vec<Aabb<f32>> = (0..2 * CHUNK + 3)
        .map(|_| random_box(Kind::Uniform, &mut rng, (0.0, 0.0)))
        .collect();
    let bad = [
        Aabb {
            min: Point::new(f32::NAN, 0.0),
            max: Point::new(1.0, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 0.0),
            max: Point::new(f32::INFINITY, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 2.0),
            max: Point::new(1.0, 1.0),
        },
    ];
    for at in [0, 1, CHUNK - 1, CHUNK, good.len() - 1] {
        let mut boxes = good.clone();
        boxes[at] = bad[at % 3];
        boxes[good.len() - 1 - at / 2] = bad[(at + 1) % 3];
        par_build_matches(&boxes, 16, &format!("invalid at {at}"));
        let r = pool(2).install(|| PackedIndex::par_build(numbered(&boxes)));
        assert_eq!(r.err(), Some(Error::InvalidAabb), "invalid at {at}");
    }
    for node_size in [0, 1, 65] {
        let r = PackedIndex::par_with_config(numbered(&good), PackedConfig { node_size });
        assert!(matches!(r, Err(Error::InvalidParameter(_))), "{node_size}");
    }
}

// ---------------------------------------------------------------------------------------
// The byte form.

/// `n` boxes of every size around a field of 100 × 100, numbered.
fn field<S: Scalar>(n: usize, seed: u64) -> Vec<Aabb<S>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
            let (w, h) = (rng.range(0.0, 3.0), rng.range(0.0, 0.5));
            bx(x, y, x + w, y + h)
        })
        .collect()
}

/// Saving and loading gives the same index: the same bytes again, the same elements under
/// the same handles, the same nodes and the same answers, for both scalars, two value types
/// and every node size; a later build of the same boxes does not take the handles.
#[test]
fn bytes_load_the_same_index() {
    fn check<S: Scalar, T: ByteValue + Clone + PartialEq + core::fmt::Debug>(
        boxes: &[Aabb<S>],
        value: impl Fn(u32) -> T,
        node_size: u32,
    ) {
        let config = PackedConfig { node_size };
        let items = || boxes.iter().copied().zip((0..).map(&value));
        let index = PackedIndex::with_config(items(), config).unwrap();
        let bytes = index.to_bytes();
        let loaded = PackedIndex::<S, T>::from_bytes(&bytes).unwrap();
        loaded.check_invariants().unwrap();
        assert_eq!(loaded.check_curve_order(), Ok(()));
        assert_eq!(loaded.to_bytes(), bytes);
        assert_eq!((loaded.len(), loaded.config()), (boxes.len(), config));
        for (i, item) in index.iter().enumerate() {
            assert_eq!(loaded.handle(i), Some(item.handle));
            let again = loaded.get(item.handle).unwrap();
            assert_eq!((again.aabb, again.value), (item.aabb, item.value));
        }
        let nodes = |index: &PackedIndex<S, T>| {
            let mut nodes = Vec::new();
            index.traverse(|aabb, level, below| nodes.push((*aabb, level, below)));
            nodes
        };
        assert_eq!(nodes(&loaded), nodes(&index));
        let numbered = PackedIndex::with_config(numbered(boxes), config).unwrap();
        let reloaded = PackedIndex::<S, u32>::from_bytes(&numbered.to_bytes()).unwrap();
        let mut rng = Rng::new(boxes.len() as u64);
        for kind in [Kind::Uniform, Kind::HugeAndTiny] {
            let area = random_area(kind, &mut rng, boxes);
            assert_eq!(found(&reloaded, &area), found(&numbered, &area));
        }
        assert_eq!(pairs(&reloaded), pairs(&numbered));
        let rebuilt = PackedIndex::with_config(items(), config).unwrap();
        if let Some(item) = index.iter().next() {
            assert!(rebuilt.get(item.handle).is_none());
        }
    }
    for n in [0, 1, 17, 1000, 20_000] {
        let boxes: Vec<Aabb<f64>> = field(n, 21);
        let narrow: Vec<Aabb<f32>> = field(n, 21);
        for node_size in [16, 2, 5] {
            check(&boxes, |i| i, node_size);
            check(&boxes, |i| u64::from(i).to_le_bytes(), node_size);
            check(&narrow, |i| i, node_size);
            check(&narrow, |i| [i as u8; 8], node_size);
        }
    }
}

/// Elements stored out of the curve's order (two in one leaf swapped, the nodes still exact
/// unions) load and pass the self-check: the order decides only how fast queries are, and
/// every answer is the same. The build's own order check catches the swap.
#[test]
fn bytes_in_another_order_load_and_answer_the_same() {
    let boxes: Vec<Aabb<f64>> = field(300, 22);
    let index = PackedIndex::with_config(numbered(&boxes), PackedConfig { node_size: 8 }).unwrap();
    let mut swapped = index.clone();
    let e = &mut swapped.elements;
    let (a, b) = (0..7)
        .map(|p| (p, p + 1))
        .find(|&(a, b)| index.curve.key(&e.boxes[a]) < index.curve.key(&e.boxes[b]))
        .expect("two keys differ in the first leaf");
    e.boxes.swap(a, b);
    e.values.swap(a, b);
    e.slots.swap(a, b);
    e.positions.swap(e.slots[a] as usize, e.slots[b] as usize);
    let loaded = PackedIndex::<f64, u32>::from_bytes(&swapped.to_bytes()).unwrap();
    loaded.check_invariants().unwrap();
    assert!(
        loaded
            .check_curve_order()
            .unwrap_err()
            .contains("out of curve order")
    );
    let mut rng = Rng::new(23);
    for _ in 0..50 {
        let area = random_area(Kind::Uniform, &mut rng, &boxes);
        assert_eq!(found(&loaded, &area), found(&index, &area));
    }
    assert_eq!(pairs(&loaded), pairs(&index));
    for i in 0..boxes.len() {
        let h = index.handle(i).unwrap();
        assert_eq!(loaded.get(h).map(|item| *item.value), Some(i as u32));
    }
}

/// Each check of loading refuses what it is for, saying what is wrong: the index's arrays
/// changed one way at a time and saved as they are.
#[test]
fn every_check_of_loading_can_fail() {
    let boxes: Vec<Aabb<f64>> = field(100, 24);
    let index = PackedIndex::with_config(numbered(&boxes), PackedConfig { node_size: 4 }).unwrap();
    let refused = |why: &str, expected: &str, change: &dyn Fn(&mut PackedIndex<f64, u32>)| {
        let mut copy = index.clone();
        change(&mut copy);
        match PackedIndex::<f64, u32>::from_bytes(&copy.to_bytes()) {
            Err(Error::Corrupt(text)) => assert!(
                text.contains(expected),
                "{why}: {text:?} does not say {expected:?}"
            ),
            other => panic!("{why}: {other:?}"),
        }
    };
    refused("a node size of 1", "configuration", &|t| {
        t.config.node_size = 1
    });
    refused("a node size of 65", "configuration", &|t| {
        t.config.node_size = 65
    });
    refused("another node size", "level 1 has", &|t| {
        t.config.node_size = 5
    });
    refused("a NaN box", "invalid box", &|t| {
        t.elements.boxes[3].min.x = f64::NAN
    });
    refused("an infinite box", "invalid box", &|t| {
        t.elements.boxes[99].max.y = f64::INFINITY
    });
    refused("an inverted box", "invalid box", &|t| {
        let b = &mut t.elements.boxes[50];
        (b.min.x, b.max.x) = (b.max.x + 1.0, b.min.x);
    });
    refused("a slot out of range", "position 7 holds slot 100", &|t| {
        t.elements.slots[7] = 100
    });
    refused("a slot held twice", "whose position is not", &|t| {
        t.elements.slots[7] = t.elements.slots[8]
    });
    refused(
        "positions not the slots' inverse",
        "whose position is not",
        &|t| t.elements.positions.swap(0, 1),
    );
    refused("a slot missing", "slots", &|t| {
        t.elements.slots.pop();
    });
    refused("a value missing", "values", &|t| {
        t.elements.values.pop();
    });
    refused("a grown node", "not the union", &|t| {
        t.nodes[3].max.x += 1.0
    });
    refused(
        "a node not containing its children",
        "not the union",
        &|t| t.nodes[0].min.y += 0.25,
    );
    refused("a shrunk root", "not the union", &|t| {
        t.nodes.last_mut().unwrap().max.y -= 0.5
    });
    refused("a level missing", "the levels end", &|t| {
        t.levels.pop();
    });
    refused("a level too many", "level 5 is above the root", &|t| {
        let end = *t.levels.last().unwrap();
        t.levels.push(end + 1);
        t.nodes.push(t.nodes[t.nodes.len() - 1]);
    });
    refused("levels not from 0", "start at 0", &|t| t.levels[0] = 1);
    refused("a level past the nodes", "spans", &|t| {
        *t.levels.last_mut().unwrap() += 1
    });
    refused("a node too many", "the levels end", &|t| {
        t.nodes.push(t.nodes[0])
    });
    refused("34 level offsets", "level offsets", &|t| {
        t.levels = (0..34).collect()
    });
    refused("nodes for no element", "levels end", &|t| {
        t.elements =
            StaticSlots::from_parts(Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0).unwrap();
        t.levels = vec![0];
    });
    // The curve (four `f64` after the 33-byte header, the node size and the generation): an
    // origin that is not finite, or a scale that is negative or NaN.
    let bytes = index.to_bytes();
    let parts = index.curve.parts();
    for (part, bad) in [(0, f64::NAN), (1, f64::INFINITY), (2, -1.0), (3, f64::NAN)] {
        let at = 33 + 8 + 8 * part;
        assert_eq!(bytes[at..at + 8], parts[part].to_le_bytes());
        let mut changed = bytes.clone();
        changed[at..at + 8].copy_from_slice(&bad.to_le_bytes());
        match PackedIndex::<f64, u32>::from_bytes(&resealed(&changed)) {
            Err(Error::Corrupt(text)) => assert!(text.contains("the curve"), "{text}"),
            other => panic!("curve part {part} = {bad}: {other:?}"),
        }
    }
    assert!(Curve::from_parts([0.0, 0.0, f64::INFINITY, 0.0]).is_some());
}

/// Bad bytes are an error, never a panic: every truncation, every byte changed (two ways),
/// bytes of another scalar, value type or structure, and lying lengths. A change that still
/// decodes gives an index that checks out and saves to the changed bytes.
#[test]
fn bad_bytes_are_refused() {
    let boxes: Vec<Aabb<f64>> = field(40, 25);
    let items = boxes.iter().map(|&b| (b, 7u16));
    let bytes = PackedIndex::with_config(items, PackedConfig { node_size: 4 })
        .unwrap()
        .to_bytes();
    let corrupt = |r: Result<PackedIndex<f64, u16>, Error>| matches!(r, Err(Error::Corrupt(_)));
    for cut in 0..bytes.len() {
        assert!(
            corrupt(PackedIndex::from_bytes(&bytes[..cut])),
            "cut at {cut}"
        );
        // Cut short with the checksum made right, so that the sections' checks refuse it.
        let resealed = resealed(&bytes[..cut]);
        assert!(corrupt(PackedIndex::from_bytes(&resealed)), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(corrupt(PackedIndex::from_bytes(&longer)));
    for at in 0..bytes.len() {
        for flip in [0x01, 0xFF] {
            let mut changed = bytes.clone();
            changed[at] ^= flip;
            // As changed, refused by the checksum (or, in the magic and the version, before
            // it); with the checksum made right, by the checks behind it, or loaded.
            match PackedIndex::<f64, u16>::from_bytes(&changed) {
                Err(Error::Corrupt(text)) => assert!(
                    at < 8 || text.contains("checksum mismatch"),
                    "byte {at} ^ {flip:#x}: {text}"
                ),
                other => panic!("byte {at} ^ {flip:#x}: {other:?}"),
            }
            let changed = resealed(&changed);
            match PackedIndex::<f64, u16>::from_bytes(&changed) {
                Ok(index) => {
                    index.check_invariants().unwrap();
                    assert_eq!(index.to_bytes(), changed, "byte {at} ^ {flip:#x}");
                }
                Err(e) => assert!(matches!(e, Error::Corrupt(_)), "{e:?}"),
            }
        }
    }
    let other = |r: Result<(), Error>| matches!(r, Err(Error::Corrupt(_)));
    assert!(other(PackedIndex::<f32, u16>::from_bytes(&bytes).map(drop)));
    assert!(other(PackedIndex::<f64, u32>::from_bytes(&bytes).map(drop)));
    assert!(other(PackedIndex::<f64, i16>::from_bytes(&bytes).map(drop)));
    let tree = crate::KdTree::build([(Point::new(1.0f64, 2.0), 7u16)]).unwrap();
    assert!(corrupt(PackedIndex::from_bytes(&tree.to_bytes())));
    // The count of boxes (after the 33-byte header, the node size, the generation and the
    // curve), then of the slots (after the boxes, which start at the next multiple of 64),
    // set to 2^64 - 1 and to one more than there are: refused
    // before anything is allocated for them.
    let at = 33 + 4 + 4 + 32;
    assert_eq!(bytes[at..at + 8], 40u64.to_le_bytes(), "the box count");
    let slots = (at + 8).next_multiple_of(64) + 40 * 32;
    assert_eq!(
        bytes[slots..slots + 8],
        40u64.to_le_bytes(),
        "the slot count"
    );
    for count in [at, slots] {
        for lie in [u64::MAX, 41, 1 << 40] {
            let mut lying = bytes.clone();
            lying[count..count + 8].copy_from_slice(&lie.to_le_bytes());
            let lying = resealed(&lying);
            assert!(corrupt(PackedIndex::from_bytes(&lying)), "{lie} at {count}");
        }
    }
}

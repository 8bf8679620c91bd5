//! Unit tests of the sweep grid's own machinery (the conformance suite covers the contract).

use core::ops::ControlFlow;

use super::SweepGrid;
use crate::test_util::{found, pairs};
use crate::{Aabb, Point, SpatialIndex, SpatialQuery};

fn square(x: f64, y: f64, half: f64) -> Aabb<f64> {
    Aabb::from_center_half_extents(Point::new(x, y), Point::new(half, half)).unwrap()
}

fn world() -> Aabb<f64> {
    Aabb::new(Point::new(0.0, 0.0), Point::new(100.0, 100.0)).unwrap()
}

#[test]
fn crowding_one_band_lays_everything_out_again_and_keeps_every_handle() {
    let mut grid = SweepGrid::new(world(), 10.0).unwrap();
    let handles: Vec<_> = (0..500u32)
        .map(|i| grid.insert(square(f64::from(i % 97), 5.0, 0.5), i).unwrap())
        .collect();
    grid.check_invariants().unwrap();
    assert_eq!(
        grid.range(0).len(),
        grid.owners.len() - (1..10).map(|b| grid.range(b).len()).sum::<usize>()
    );
    for (i, &h) in handles.iter().enumerate() {
        assert_eq!(*grid.get(h).unwrap().value, i as u32);
    }
    let area = square(10.0, 5.0, 0.5);
    let expected: Vec<u32> = (0..500).filter(|i| (9..=11).contains(&(i % 97))).collect();
    assert_eq!(found(&grid, &area), expected);
}

#[test]
fn update_all_refuses_invalid_boxes_and_moves_the_rest() {
    let mut grid = SweepGrid::new(world(), 10.0).unwrap();
    let a = grid.insert(square(5.0, 5.0, 1.0), 0u32).unwrap();
    let b = grid.insert(square(50.0, 5.0, 1.0), 1).unwrap();
    let result = grid.update_all(|h, value, old| {
        *value += 10;
        if h == a {
            Aabb {
                min: Point::new(f64::NAN, 0.0),
                max: old.max,
            }
        } else {
            square(50.0, 95.0, 1.0)
        }
    });
    assert_eq!(result, Err(crate::Error::InvalidAabb));
    grid.check_invariants().unwrap();
    assert_eq!(grid.get(a).unwrap().aabb, square(5.0, 5.0, 1.0));
    assert_eq!(grid.get(b).unwrap().aabb, square(50.0, 95.0, 1.0));
    assert_eq!(
        (*grid.get(a).unwrap().value, *grid.get(b).unwrap().value),
        (10, 11)
    );
}

#[test]
fn update_all_calls_each_element_once_whatever_band_it_jumps_to() {
    let mut grid = SweepGrid::new(world(), 5.0).unwrap();
    for i in 0..200u32 {
        grid.insert(
            square(f64::from(i % 20) * 5.0, f64::from(i / 20) * 10.0, 1.0),
            i,
        )
        .unwrap();
    }
    let mut seen = vec![0u32; 200];
    grid.update_all(|_, value, old| {
        seen[*value as usize] += 1;
        let y = 100.0 - old.center().y; // up or down, far
        square(old.center().x, y, 1.0)
    })
    .unwrap();
    assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    grid.check_invariants().unwrap();
    grid.maintain();
    grid.check_invariants().unwrap();
    assert_eq!(grid.len(), 200);
    let mut n = 0;
    let _ = grid.for_each_pair(|_, _| {
        n += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(n, 0);
}

#[test]
fn tall_elements_reach_the_bands_above_and_are_paired_there() {
    let mut grid = SweepGrid::new(world(), 2.0).unwrap();
    grid.insert(
        Aabb::new(Point::new(10.0, 0.0), Point::new(11.0, 90.0)).unwrap(),
        0u32,
    )
    .unwrap();
    grid.insert(square(10.5, 80.0, 0.5), 1).unwrap();
    grid.insert(square(10.5, 95.0, 0.5), 2).unwrap();
    assert_eq!(pairs(&grid), [(0, 1)]);
    assert_eq!(found(&grid, &square(10.5, 50.0, 0.1)), [0]);
    assert_eq!(grid.bands[0].reach, 45);
}

#[test]
fn build_matches_inserting_one_by_one() {
    let items: Vec<_> = (0..300u32)
        .map(|i| {
            (
                square(f64::from(i * 37 % 100), f64::from(i * 53 % 100), 2.0),
                i,
            )
        })
        .collect();
    let built = SweepGrid::build(world(), 4.0, items.iter().copied()).unwrap();
    built.check_invariants().unwrap();
    let mut inserted = SweepGrid::new(world(), 4.0).unwrap();
    for &(b, v) in &items {
        inserted.insert(b, v).unwrap();
    }
    assert_eq!(pairs(&built), pairs(&inserted));
    // Slots follow storage order: the lowest band's leftmost element is slot 0.
    let first = built.iter().next().unwrap();
    assert_eq!(
        (first.handle.slot(), first.aabb.min),
        (0, Point::new(-2.0, -2.0))
    );
    let mut values: Vec<u32> = built.iter().map(|e| *e.value).collect();
    values.sort_unstable();
    assert_eq!(values, (0..300).collect::<Vec<_>>());
    let bad = [(
        Aabb {
            min: Point::new(1.0, 1.0),
            max: Point::new(0.0, 2.0),
        },
        0u32,
    )];
    assert!(SweepGrid::build(world(), 4.0, bad).is_err());
}

/// The parallel frame leaves exactly the state of the serial one: every element's box and
/// value, refusals included, over frames with many elements changing band (bands thinner
/// than the elements), jumping far, leaving the world, and refused.
#[cfg(feature = "rayon")]
#[test]
fn par_update_all_leaves_the_state_of_update_all() {
    use crate::Error;
    use crate::ParallelPairs;
    use crate::test_util::frame_move;

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    let mut serial = SweepGrid::new(world(), 0.5).unwrap();
    let mut handles = Vec::new();
    for i in 0..20_000u64 {
        let (x, y) = ((i * 37 % 1000) as f64 / 10.0, (i * 91 % 997) as f64 / 10.0);
        handles.push(serial.insert(square(x, y, 0.3), 0).unwrap());
    }
    let mut parallel = serial.clone();
    for frame in 0..6 {
        let expected = serial.update_all(frame_move(frame));
        let got = pool.install(|| parallel.par_update_all(frame_move(frame)));
        assert_eq!(expected, Err(Error::InvalidAabb));
        assert_eq!(got, expected);
        parallel.check_invariants().unwrap();
        for &h in &handles {
            let (a, b) = (serial.get(h).unwrap(), parallel.get(h).unwrap());
            assert_eq!((a.aabb, *a.value), (b.aabb, *b.value));
            assert_eq!(*b.value, frame + 1, "one call per element and frame");
        }
        assert_eq!(handle_pairs(&serial), handle_pairs(&parallel));
    }
}

/// Every intersecting pair, as sorted pairs of handles.
#[cfg(feature = "rayon")]
fn handle_pairs<T>(grid: &SweepGrid<f64, T>) -> Vec<(crate::Handle, crate::Handle)> {
    let mut v = Vec::new();
    let _ = grid.for_each_pair(|a, b| {
        v.push((a.handle.min(b.handle), a.handle.max(b.handle)));
        ControlFlow::Continue(())
    });
    v.sort_unstable();
    v
}

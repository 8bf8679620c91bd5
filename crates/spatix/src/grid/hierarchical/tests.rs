//! The hierarchical grid's mechanics: levels by size, one entry per element whatever its
//! size, pairs across levels, levels allocated on use, best-first nearest across levels.

use super::HierarchicalGrid;
use crate::base::pool::ListPool;
use crate::test_util::{
    assert_matches_oracle, bx, bytes_per_element, dust, extreme_boxes, one_box_far_out, pairs,
    widest,
};
use crate::{Aabb, BruteForce, Point, Scalar, SpatialIndex, SpatialQuery, Workspace};
use spatix_workload::Rng;

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 1000.0, 1000.0)
}

#[test]
fn levels_grow_by_the_factor_up_to_one_cell_over_the_world() {
    let grid = HierarchicalGrid::<f64, ()>::new(world(), 4.0).unwrap();
    let cells: Vec<f64> = (0..grid.levels())
        .map(|l| grid.cell_size(l).unwrap())
        .collect();
    assert_eq!(cells, [4.0, 16.0, 64.0, 256.0, 1000.0]);
    let top = &grid.inner.levels[grid.levels() - 1];
    assert_eq!((top.lattice.cols, top.lattice.rows), (1, 1));
    assert!(top.fit.is_infinite());
    assert!(HierarchicalGrid::<f64, ()>::with_factor(world(), 4.0, 17).is_err());
    assert!(HierarchicalGrid::<f64, ()>::new(world(), 0.0).is_err());
    assert!(HierarchicalGrid::<f64, ()>::new(world(), f64::NAN).is_err());
    // Too fine for 2^28 cells at the finest level.
    assert!(HierarchicalGrid::<f64, ()>::new(world(), 0.01).is_err());
}

#[test]
fn each_element_goes_to_the_level_that_fits_it() {
    let mut grid = HierarchicalGrid::new(world(), 4.0).unwrap(); // fits 2, 8, 32, 128, any
    let cases = [
        (bx(1.0, 1.0, 1.0, 1.0), 0),
        (bx(1.0, 1.0, 3.0, 2.0), 0),
        (bx(1.0, 1.0, 3.5, 2.0), 1),
        (bx(1.0, 1.0, 2.0, 10.0), 2),
        (bx(500.0, 1.0, 530.0, 2.0), 2),
        (bx(1.0, 1.0, 101.0, 2.0), 3),
        (bx(-5000.0, -5000.0, 5000.0, 5000.0), 4),
    ];
    for (i, (b, level)) in cases.iter().enumerate() {
        let h = grid.insert(*b, i).unwrap();
        assert_eq!(grid.level_of(h), Some(*level), "{b:?}");
    }
    assert_eq!(
        (0..5)
            .map(|l| grid.level_len(l).unwrap())
            .collect::<Vec<_>>(),
        [2, 1, 2, 1, 1]
    );
    grid.check_invariants().unwrap();
}

#[test]
fn a_dragon_is_one_entry_not_hundreds() {
    let mut grid = HierarchicalGrid::new(world(), 4.0).unwrap();
    for i in 0..100 {
        let x = f64::from(i) * 9.0;
        grid.insert(bx(x, 10.0, x + 1.0, 11.0), i).unwrap();
    }
    // Over 30 x 30 finest cells.
    let dragon = grid.insert(bx(0.0, 0.0, 120.0, 120.0), 1000).unwrap();
    assert_eq!(grid.inner.pools().map(ListPool::in_use).sum::<usize>(), 101);
    assert_eq!(grid.level_of(dragon), Some(3));
    // It meets the 14 hobbits under it, each once.
    let found = pairs(&grid);
    assert_eq!(found.len(), 14);
    assert!(found.iter().all(|&(a, b)| b == 1000 && a < 14));
    grid.check_invariants().unwrap();
}

#[test]
fn pairs_across_and_within_levels_match_the_oracle() {
    let mut grid = HierarchicalGrid::with_factor(world(), 2.0, 2).unwrap();
    let mut oracle = BruteForce::new();
    let mut rng = Rng::new(21);
    for i in 0..2000 {
        let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        // Sizes over five orders of magnitude, so every level is used.
        let s = 10f64.powf(rng.range(-2.0, 3.0));
        let b = bx(x, y, x + s, y + s * rng.range(0.1, 1.0));
        grid.insert(b, i).unwrap();
        oracle.insert(b, i).unwrap();
    }
    assert!((0..grid.levels()).all(|l| grid.level_len(l).unwrap() > 0));
    assert_eq!(pairs(&grid), pairs(&oracle));
    grid.check_invariants().unwrap();
}

#[test]
fn a_growing_element_moves_up_a_level() {
    let mut grid = HierarchicalGrid::new(world(), 4.0).unwrap();
    let h = grid.insert(bx(10.0, 10.0, 11.0, 11.0), 1).unwrap();
    grid.insert(bx(40.0, 40.0, 41.0, 41.0), 2).unwrap();
    assert_eq!(grid.level_of(h), Some(0));
    grid.update(h, bx(10.0, 10.0, 50.0, 50.0)).unwrap();
    assert_eq!(grid.level_of(h), Some(3));
    assert_eq!((grid.level_len(0), grid.level_len(3)), (Some(1), Some(1)));
    assert_eq!(pairs(&grid), [(1, 2)]);
    grid.update(h, bx(10.0, 10.0, 10.5, 10.5)).unwrap();
    assert_eq!(grid.level_of(h), Some(0));
    assert!(pairs(&grid).is_empty());
    grid.check_invariants().unwrap();
}

#[test]
fn unused_levels_and_rows_hold_no_cells() {
    let mut grid = HierarchicalGrid::new(world(), 1.0).unwrap();
    let empty = grid.memory_bytes();
    // The finest level alone has a million cells; none is allocated yet.
    assert!(empty < 100_000, "{empty} bytes before any element");
    grid.insert(bx(5.0, 5.0, 5.2, 5.2), 0).unwrap();
    grid.insert(bx(5.0, 5.0, 300.0, 300.0), 1).unwrap();
    let level = &grid.inner.levels[0];
    assert_eq!(level.head_rows(), 1, "one row of the finest level");
    assert!(
        grid.inner.levels[1..]
            .iter()
            .filter(|l| l.len == 0)
            .all(|l| l.head_rows() == 0)
    );
    assert!(grid.memory_bytes() < empty + 20_000);
    grid.check_invariants().unwrap();
}

#[test]
fn nearest_searches_levels_best_first() {
    let mut grid = HierarchicalGrid::new(world(), 4.0).unwrap();
    let mut rng = Rng::new(4);
    for i in 0..5000 {
        let (x, y) = (rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        grid.insert(bx(x, y, x + 1.0, y + 1.0), i).unwrap();
    }
    // A dragon whose box comes nearer to the query point than any hobbit, though its corner
    // is far away.
    let dragon = grid.insert(bx(200.0, 200.0, 499.9, 499.9), 9999).unwrap();
    let mut ws = Workspace::new();
    let best = grid.nearest(Point::new(500.0, 500.0), 1, &mut ws);
    assert_eq!(best[0].handle, dragon);
    let near = grid.nearest(Point::new(900.0, 900.0), 3, &mut ws).to_vec();
    let mut oracle = BruteForce::new();
    for item in grid.iter() {
        oracle.insert(item.aabb, *item.value).unwrap();
    }
    let mut ws_oracle = Workspace::new();
    let want = oracle.nearest(Point::new(900.0, 900.0), 3, &mut ws_oracle);
    let d = |n: &[crate::Neighbor<f64>]| n.iter().map(|n| n.distance).collect::<Vec<_>>();
    assert_eq!(d(&near), d(want));
}

#[test]
fn moving_hobbits_stay_in_their_cell_until_maintain() {
    let mut grid = HierarchicalGrid::new(world(), 8.0).unwrap(); // fits 4 in cells of 8
    let h = grid.insert(bx(9.0, 9.0, 10.0, 10.0), 1).unwrap();
    let home = grid.inner.home.get(h.slot());
    grid.update(h, bx(16.5, 9.0, 17.5, 10.0)).unwrap(); // half a unit into the next cell
    assert_eq!(grid.inner.home.get(h.slot()), home);
    grid.check_invariants().unwrap();
    grid.maintain();
    assert_ne!(grid.inner.home.get(h.slot()), home);
    grid.check_invariants().unwrap();
}

#[test]
fn auto_keeps_memory_in_proportion_to_sparse_tiny_boxes() {
    // Finest cells twice the size of the dust would be 4096 x 4096, every row in use: over
    // 3 KB per element. A finest cell per element or so is about 4 bytes each.
    let boxes = dust(20_000);
    let bytes = bytes_per_element(HierarchicalGrid::auto(world(), &boxes).unwrap(), &boxes);
    assert!(bytes < 100, "{bytes} bytes per element");
    let sampled = HierarchicalGrid::auto_sampled(world(), &boxes[..100], boxes.len()).unwrap();
    let bytes = bytes_per_element(sampled, &boxes);
    assert!(bytes < 100, "{bytes} bytes per element from a sample");
}

#[test]
fn extreme_worlds_and_boxes_match_the_oracle() {
    fn check<S: Scalar>() {
        let boxes = extreme_boxes::<S>();
        // Over [-MAX, MAX]² (its width overflows): finest cells of 1/256 of MAX, by factors
        // of 4 and of 2, and levels sized by `auto` from the extreme boxes themselves.
        let finest = S::MAX * S::from_f64(1.0 / 256.0);
        let mut grids = [
            HierarchicalGrid::new(widest(), finest).unwrap(),
            HierarchicalGrid::with_factor(widest(), finest, 2).unwrap(),
        ];
        for grid in &mut grids {
            assert_eq!(grid.world(), widest());
            assert_matches_oracle(grid, &boxes);
        }
        // `auto` cuts its world to where the boxes lie.
        let mut grid = HierarchicalGrid::auto(widest(), &boxes).unwrap();
        assert_matches_oracle(&mut grid, &boxes);
    }
    check::<f32>();
    check::<f64>();
}

#[test]
fn auto_sizes_itself_for_one_box_far_out() {
    // The CLI's world for three boxes, one of them at 1e300: the bulk of the sample, whose
    // area overflows f64. The finest cells grow until they are few, instead of being refused.
    let three = one_box_far_out();
    let world = Aabb::bulk_of(&three).unwrap();
    let mut grid = HierarchicalGrid::auto_sampled(world, &three, 3).unwrap();
    assert!(grid.cell_size(0).unwrap() > 1e298);
    assert_matches_oracle(&mut grid, &three);
}

#[test]
fn a_world_whose_side_is_no_f32_takes_the_catch_all_in_one_cell() {
    // The side, 3167.83..., rounds down to an f32 short of the world: the catch-all level's
    // cell was that rounded side, the world took two of them, and the grid was refused.
    let world = Aabb::new(
        Point::new(-2.695_895_4f32, -2.812_833_3),
        Point::new(3_165.135_3, 3_165.046_4),
    )
    .unwrap();
    let grid = HierarchicalGrid::<f32, u32>::new(world, world.size().x / 64.0).unwrap();
    assert_eq!(grid.levels(), 5);
}

//! The point grid's mechanics: one node per element carrying its corner, the bound refusing
//! larger boxes, moves that stay in their cell until `maintain`, pairs across cell borders.

use super::PointGrid;
use crate::base::pool::ListPool;
use crate::test_util::{
    assert_matches_oracle, bx, bytes_per_element, dust, extreme_boxes, found, one_box_far_out,
    pairs, widest,
};
use crate::{Aabb, BruteForce, Error, Point, Scalar, SpatialIndex, SpatialQuery};
use spatix_workload::Rng;

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 100.0, 100.0)
}

#[test]
fn boxes_over_the_bound_are_refused_and_nothing_changes() {
    let mut grid = PointGrid::new(world(), 2.0).unwrap();
    let h = grid.insert(bx(10.0, 10.0, 14.0, 14.0), 1).unwrap(); // exactly 2 x 2.0
    assert_eq!(
        grid.insert(bx(10.0, 10.0, 14.5, 11.0), 2),
        Err(Error::BoxTooLarge)
    );
    assert_eq!(
        grid.insert(bx(10.0, 10.0, 11.0, 14.5), 3),
        Err(Error::BoxTooLarge)
    );
    assert_eq!(grid.len(), 1);
    assert_eq!(
        grid.update(h, bx(50.0, 50.0, 60.0, 51.0)),
        Err(Error::BoxTooLarge)
    );
    assert_eq!(grid.get(h).unwrap().aabb, bx(10.0, 10.0, 14.0, 14.0));
    assert_eq!(found(&grid, &bx(12.0, 12.0, 12.0, 12.0)), [1]);
    assert!(found(&grid, &bx(55.0, 50.0, 56.0, 51.0)).is_empty());
    assert!(grid.fits(&bx(0.0, 0.0, 4.0, 4.0)) && !grid.fits(&bx(0.0, 0.0, 4.1, 1.0)));
    grid.check_invariants().unwrap();
}

#[test]
fn bad_parameters_are_refused() {
    for bound in [-1.0, f64::NAN, f64::INFINITY, f64::MAX] {
        assert!(matches!(
            PointGrid::<f64, ()>::new(world(), bound),
            Err(Error::InvalidParameter(_))
        ));
    }
    // Cells must be at least twice the bound.
    assert!(PointGrid::<f64, ()>::with_cell_size(world(), 2.0, 3.9).is_err());
    assert!(PointGrid::<f64, ()>::with_cell_size(world(), 2.0, 4.1).is_ok());
    let inverted = Aabb {
        min: Point::new(1.0, 1.0),
        max: Point::new(0.0, 0.0),
    };
    assert!(PointGrid::<f64, ()>::new(inverted, 1.0).is_err());
    // Points only, in a world of no area: still a usable grid.
    let mut dot = PointGrid::new(bx(5.0, 5.0, 5.0, 5.0), 0.0).unwrap();
    dot.insert(bx(5.0, 5.0, 5.0, 5.0), 1).unwrap();
    dot.insert(bx(9.0, 5.0, 9.0, 5.0), 2).unwrap();
    assert_eq!(
        dot.insert(bx(5.0, 5.0, 5.5, 5.0), 3),
        Err(Error::BoxTooLarge)
    );
    assert_eq!(found(&dot, &bx(0.0, 0.0, 10.0, 10.0)), [1, 2]);
}

#[test]
fn each_element_is_one_node_carrying_its_corner() {
    // Cells of the smallest size allowed: most boxes overlap several cells, yet each is
    // listed once, by its lower-left corner.
    let mut grid = PointGrid::with_cell_size(world(), 1.5, 3.01).unwrap();
    let mut rng = Rng::new(3);
    for i in 0..500 {
        let (x, y) = (rng.range(0.0, 97.0), rng.range(0.0, 97.0));
        let (w, h) = (rng.range(0.0, 3.0), rng.range(0.0, 3.0));
        grid.insert(bx(x, y, x + w, y + h), i).unwrap();
    }
    let inner = &grid.inner;
    assert_eq!(inner.pools().map(ListPool::in_use).sum::<usize>(), 500);
    for item in grid.iter() {
        let place = inner.filed(item.handle.slot());
        let pool = inner.levels[place.level].pool(place.cy);
        let node = pool.link(inner.node_of.get(item.handle.slot()));
        assert_eq!(node.item, item.handle.slot());
        assert_eq!(node.data, item.aabb.min);
    }
    grid.check_invariants().unwrap();
}

#[test]
fn a_move_within_the_overhang_writes_only_the_box_and_the_corner() {
    let mut grid = PointGrid::with_cell_size(world(), 1.0, 10.0).unwrap();
    let h = grid.insert(bx(12.0, 12.0, 13.0, 13.0), 7).unwrap();
    grid.insert(bx(15.0, 15.0, 16.0, 16.0), 8).unwrap();
    grid.maintain();
    let home = grid.inner.home.get(h.slot());
    let relinked =
        |grid: &PointGrid<f64, u32>| grid.inner.pools().map(ListPool::relinked).sum::<usize>();
    let before = relinked(&grid);
    // Into the next cell, by less than the overhang allowed (cells of 10 for boxes up to 2).
    grid.update(h, bx(20.5, 12.0, 21.5, 13.0)).unwrap();
    assert_eq!(grid.inner.home.get(h.slot()), home, "stays in its cell");
    assert_eq!(relinked(&grid), before, "no list changes");
    assert!(grid.inner.levels[0].overhang >= 0.5);
    let pool = grid.inner.levels[0].pool(1);
    let node = pool.link(grid.inner.node_of.get(h.slot()));
    assert_eq!(node.data, Point::new(20.5, 12.0));
    grid.check_invariants().unwrap();
    // Found where it is now, from every side, before maintain.
    assert_eq!(found(&grid, &bx(21.0, 12.5, 25.0, 12.5)), [7]);
    assert_eq!(found(&grid, &bx(16.0, 12.5, 20.5, 20.0)), [7, 8]);
    assert!(found(&grid, &bx(12.0, 12.0, 13.0, 13.0)).is_empty());
    // maintain re-files it in its corner's cell and the overhang is gone.
    grid.maintain();
    assert_ne!(grid.inner.home.get(h.slot()), home);
    assert_eq!(grid.inner.levels[0].overhang, 0.0);
    grid.check_invariants().unwrap();
    assert_eq!(found(&grid, &bx(21.0, 12.5, 25.0, 12.5)), [7]);
}

#[test]
fn a_move_beyond_the_overhang_refiles_at_once() {
    let mut grid = PointGrid::with_cell_size(world(), 1.0, 10.0).unwrap();
    let h = grid.insert(bx(12.0, 12.0, 13.0, 13.0), 7).unwrap();
    let home = grid.inner.home.get(h.slot());
    grid.update(h, bx(80.0, 80.0, 81.0, 81.0)).unwrap();
    assert_ne!(grid.inner.home.get(h.slot()), home);
    assert_eq!(grid.inner.levels[0].overhang, 0.0);
    grid.check_invariants().unwrap();
    assert_eq!(found(&grid, &bx(80.5, 80.5, 90.0, 90.0)), [7]);
}

#[test]
fn pairs_across_every_neighbouring_cell_are_found_once() {
    // Cells of 10: a box at the top right of cell (1, 1), touched by boxes filed in the cells
    // east, north and north-east of it and in its own cell; and a box at the top left of the
    // same cell touched by one filed north-west of it.
    let mut grid = PointGrid::with_cell_size(world(), 1.0, 10.0).unwrap();
    let boxes = [
        bx(19.0, 19.0, 20.0, 20.0), // cell (1, 1)
        bx(20.0, 18.0, 21.0, 19.0), // east, touching a corner
        bx(19.5, 20.0, 20.5, 21.0), // north
        bx(20.0, 20.0, 21.0, 21.0), // north-east, touching a corner
        bx(18.0, 20.0, 19.0, 21.0), // north, touching a corner
        bx(17.0, 19.5, 19.0, 19.6), // same cell
        bx(19.0, 17.0, 19.5, 19.0), // same cell
        bx(10.5, 19.0, 11.5, 20.0), // cell (1, 1)
        bx(9.5, 20.0, 10.5, 21.0),  // north-west of it
    ];
    for (i, b) in boxes.iter().enumerate() {
        grid.insert(*b, i as u32).unwrap();
    }
    let mut oracle = BruteForce::new();
    for item in grid.iter() {
        oracle.insert(item.aabb, *item.value).unwrap();
    }
    let got = pairs(&grid);
    assert_eq!(got, pairs(&oracle));
    for pair in [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (7, 8)] {
        assert!(got.contains(&pair), "{pair:?} missing from {got:?}");
    }
}

#[test]
fn empty_rows_are_released_by_maintain() {
    let mut grid = PointGrid::with_cell_size(world(), 1.0, 10.0).unwrap();
    let h = grid.insert(bx(5.0, 55.0, 6.0, 56.0), 1).unwrap();
    let level = &grid.inner.levels[0];
    assert!(
        level.row_heads(5).is_some(),
        "the row of the element is allocated"
    );
    assert_eq!((0..10).filter(|&r| level.row_heads(r).is_some()).count(), 1);
    grid.update(h, bx(5.0, 5.0, 6.0, 6.0)).unwrap();
    grid.maintain();
    let level = &grid.inner.levels[0];
    assert!(level.row_heads(5).is_none(), "released once empty");
    assert!(level.row_heads(0).is_some());
    grid.check_invariants().unwrap();
    // A released row is reused: heads for two rows were ever made.
    grid.update(h, bx(5.0, 95.0, 6.0, 96.0)).unwrap();
    grid.maintain();
    assert_eq!(grid.inner.levels[0].head_rows(), 2);
    grid.check_invariants().unwrap();
}

#[test]
fn auto_leaves_room_for_moving_boxes() {
    // In f32, the same half extent gives a box 5.39999 wide at x = 100 and 5.40039 wide at
    // x = 5000: a bound of exactly the sample's largest would refuse the box once it moved.
    let world = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1e4, 1e4)).unwrap();
    let at = |c: f32| Aabb::from_center_half_extents(Point::new(c, c), Point::new(2.7, 2.7));
    let (near, far) = (at(100.3).unwrap(), at(5000.1).unwrap());
    assert!(far.size().x > near.size().x);
    let mut grid = PointGrid::auto(world, &[near]).unwrap();
    let h = grid.insert(near, ()).unwrap();
    grid.update(h, far).unwrap();
    grid.check_invariants().unwrap();
}

#[test]
fn out_of_world_elements_are_found_and_paired() {
    let mut grid = PointGrid::new(world(), 1.0).unwrap();
    grid.insert(bx(-50.0, 50.0, -49.0, 51.0), 1).unwrap();
    grid.insert(bx(-49.5, 50.5, -48.5, 51.5), 2).unwrap();
    grid.insert(bx(1e9, 1e9, 1e9 + 1.0, 1e9 + 1.0), 3).unwrap();
    grid.insert(bx(99.5, 99.5, 100.5, 100.5), 4).unwrap();
    assert_eq!(pairs(&grid), [(1, 2)]);
    assert_eq!(found(&grid, &bx(-60.0, 40.0, -40.0, 60.0)), [1, 2]);
    assert_eq!(found(&grid, &bx(1e9, 1e9, 2e9, 2e9)), [3]);
    assert_eq!(found(&grid, &bx(100.0, 100.0, 200.0, 200.0)), [4]);
    grid.check_invariants().unwrap();
}

#[test]
fn auto_keeps_memory_in_proportion_to_sparse_tiny_boxes() {
    // Cells twice the size of the dust would be a 4096 x 4096 grid, every row in use: over
    // 3 KB per element. A cell per element or so is about 4 bytes each.
    let boxes = dust(20_000);
    let world = bx(0.0, 0.0, 1000.0, 1000.0);
    let bytes = bytes_per_element(PointGrid::auto(world, &boxes).unwrap(), &boxes);
    assert!(bytes < 100, "{bytes} bytes per element");
    let sampled = PointGrid::auto_sampled(world, &boxes[..100], boxes.len()).unwrap();
    let bytes = bytes_per_element(sampled, &boxes);
    assert!(bytes < 100, "{bytes} bytes per element from a sample");
}

#[test]
fn extreme_worlds_and_boxes_match_the_oracle() {
    fn check<S: Scalar>() {
        let boxes = extreme_boxes::<S>();
        // Over [-MAX, MAX]² (its width overflows): bounds of a quarter of MAX (boxes up to
        // half of MAX wide), of 4 and of 0 (points only); the larger boxes are refused.
        for bound in [S::MAX * S::from_f64(0.25), S::from_f64(4.0), S::ZERO] {
            let mut grid = PointGrid::new(widest(), bound).unwrap();
            assert_eq!(grid.world(), widest());
            assert_matches_oracle(&mut grid, &boxes);
        }
        // Sized by `auto` from the extreme boxes themselves.
        let mut grid = PointGrid::auto(widest(), &boxes).unwrap();
        assert_matches_oracle(&mut grid, &boxes);
    }
    check::<f32>();
    check::<f64>();
}

#[test]
fn auto_sizes_itself_for_one_box_far_out() {
    // The CLI's world for three boxes, one of them at 1e300: the bulk of the sample, whose
    // area overflows f64. The cells grow until they are few, instead of being refused.
    let three = one_box_far_out();
    let world = Aabb::bulk_of(&three).unwrap();
    let mut grid = PointGrid::auto_sampled(world, &three, 3).unwrap();
    let (cols, rows) = grid.dims();
    assert!(cols * rows <= 16, "{cols} x {rows} cells");
    assert_matches_oracle(&mut grid, &three);
}

#[test]
fn a_narrow_room_for_overhang_still_passes_the_self_check() {
    // Cells of 8.01 for boxes up to 8 leave a room of about 0.01 for overhang: a slack taken
    // relative to that room was below an ulp of the cell, and the self-check's sum of reach,
    // overhangs and margins rounded past the cell on an empty grid.
    let world = bx(
        -2.695_895_317_798_471_7,
        -2.812_833_145_270_625,
        3_249.370_874_613_153_3,
        3_250.127_820_291_978_4,
    );
    let grid = PointGrid::<f64, u32>::with_cell_size(world, 4.0, 8.01).unwrap();
    grid.check_invariants().unwrap();
}

//! Focused unit tests, each compared with `BruteForce`.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::base::pool::{BAND_SCATTERED_AFTER_AT_LEAST, ListPool};
use crate::grid::lattice::RINGS_WALKED;
use crate::test_util::{bx, found, pairs};
use crate::{
    Aabb, BruteForce, Error, Handle, HierarchicalGrid, LooseGrid, Point, PointGrid, SpatialIndex,
    SpatialQuery, Workspace,
};
use spatix_workload::Rng;

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 100.0, 100.0)
}

/// Distances `nearest` reports, after checking that they are ascending and true.
fn nearest_distances<I: SpatialIndex<f64, u32>>(index: &I, p: Point<f64>, k: usize) -> Vec<f64> {
    let mut ws = Workspace::new();
    let found = index.nearest(p, k, &mut ws);
    assert!(found.windows(2).all(|w| w[0].distance <= w[1].distance));
    let mut handles: Vec<Handle> = found.iter().map(|n| n.handle).collect();
    handles.sort_unstable();
    handles.dedup();
    assert_eq!(handles.len(), found.len(), "duplicate neighbour");
    for n in found {
        let item = index.get(n.handle).expect("a live neighbour");
        assert_eq!(item.aabb.distance_to_point(p), n.distance);
    }
    found.iter().map(|n| n.distance).collect()
}

/// A grid and the oracle fed the same operations; element `i` has value `i`.
struct Twin {
    grid: UniformGrid<f64, u32>,
    brute: BruteForce<f64, u32>,
    handles: Vec<Option<(Handle, Handle)>>,
}

impl Twin {
    fn new(grid: UniformGrid<f64, u32>) -> Self {
        Self {
            grid,
            brute: BruteForce::new(),
            handles: Vec::new(),
        }
    }

    fn insert(&mut self, aabb: Aabb<f64>) -> u32 {
        let id = self.handles.len() as u32;
        let g = self.grid.insert(aabb, id).unwrap();
        let b = self.brute.insert(aabb, id).unwrap();
        self.handles.push(Some((g, b)));
        self.grid.check_invariants().unwrap();
        id
    }

    fn update(&mut self, id: u32, aabb: Aabb<f64>) {
        let (g, b) = self.handles[id as usize].unwrap();
        self.grid.update(g, aabb).unwrap();
        self.brute.update(b, aabb).unwrap();
        self.grid.check_invariants().unwrap();
    }

    fn remove(&mut self, id: u32) {
        let (g, b) = self.handles[id as usize].take().unwrap();
        assert_eq!(self.grid.remove(g), Some(id));
        assert_eq!(self.brute.remove(b), Some(id));
        self.grid.check_invariants().unwrap();
    }

    fn live(&self) -> Vec<u32> {
        (0..self.handles.len() as u32)
            .filter(|&id| self.handles[id as usize].is_some())
            .collect()
    }

    fn assert_query(&self, area: &Aabb<f64>) -> Vec<u32> {
        let mine = found(&self.grid, area);
        assert_eq!(mine, found(&self.brute, area), "query {area:?}");
        mine
    }

    fn assert_pairs(&self) -> usize {
        let mine = pairs(&self.grid);
        assert_eq!(mine, pairs(&self.brute));
        mine.len()
    }

    fn assert_nearest(&self, p: Point<f64>, k: usize) -> usize {
        let found = nearest_distances(&self.grid, p, k);
        assert_eq!(
            found,
            nearest_distances(&self.brute, p, k),
            "nearest {p:?} k={k}"
        );
        found.len()
    }

    /// Every kind of query at a few places, inside and outside the world.
    fn assert_all(&self) {
        assert_eq!(self.grid.len(), self.brute.len());
        self.assert_pairs();
        let areas = [
            bx(0.0, 0.0, 100.0, 100.0),
            bx(-1e6, -1e6, 1e6, 1e6),
            bx(25.0, 25.0, 35.0, 45.0),
            bx(95.0, -20.0, 140.0, 10.0),
            bx(-50.0, -50.0, -10.0, -10.0),
            bx(150.0, 150.0, 150.0, 150.0),
            bx(50.0, 50.0, 50.0, 50.0),
        ];
        for area in &areas {
            self.assert_query(area);
        }
        let points = [
            Point::new(50.0, 50.0),
            Point::new(0.0, 0.0),
            Point::new(-70.0, 30.0),
            Point::new(130.0, 180.0),
            Point::new(99.9, 0.1),
        ];
        for p in points {
            for k in [1, 3, 10, 1000] {
                self.assert_nearest(p, k);
            }
        }
    }
}

#[test]
fn new_computes_dimensions_and_rejects_bad_parameters() {
    let grid = UniformGrid::<f64, ()>::new(bx(-10.0, 0.0, 10.0, 5.0), 3.0).unwrap();
    assert_eq!(grid.dims(), (7, 2));
    assert_eq!(grid.cell_size(), 3.0);
    assert_eq!(grid.world(), bx(-10.0, 0.0, 10.0, 5.0));
    // A world of no area still has one cell.
    let flat = UniformGrid::<f64, ()>::new(bx(1.0, 1.0, 1.0, 1.0), 1.0).unwrap();
    assert_eq!(flat.dims(), (1, 1));
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-320] {
        assert!(matches!(
            UniformGrid::<f64, ()>::new(world(), bad),
            Err(Error::InvalidParameter(_))
        ));
    }
    let inverted = Aabb {
        min: Point::new(1.0, 0.0),
        max: Point::new(0.0, 1.0),
    };
    assert!(matches!(
        UniformGrid::<f64, ()>::new(inverted, 1.0),
        Err(Error::InvalidParameter(_))
    ));
    assert!(matches!(
        UniformGrid::<f64, ()>::new(world(), 1e-3),
        Err(Error::InvalidParameter(_))
    ));
    assert!(UniformGrid::<f64, ()>::new(bx(0.0, 0.0, 16384.0, 16384.0), 1.0).is_ok());
    assert!(UniformGrid::<f64, ()>::new(bx(0.0, 0.0, 16385.0, 16384.0), 1.0).is_err());
}

#[test]
fn auto_picks_sensible_cells() {
    let empty = UniformGrid::<f32, ()>::auto(
        Aabb::new(Point::new(0.0, 0.0), Point::new(640.0, 320.0)).unwrap(),
        &[],
    )
    .unwrap();
    assert_eq!(empty.cell_size(), 10.0);
    assert_eq!(empty.dims(), (64, 32));

    // Boxes of extent 2: cells 12 times larger.
    let boxes: Vec<_> = (0..2500)
        .map(|i| {
            let (x, y) = ((i % 50) as f64 * 2.0, (i / 50) as f64 * 2.0);
            bx(x, y, x + 2.0, y + 2.0)
        })
        .collect();
    let grid = UniformGrid::<f64, ()>::auto(world(), &boxes).unwrap();
    assert_eq!(grid.cell_size(), 24.0);

    // Points: about four per cell of the 98 x 98 they span (cells of 3.92 over the world).
    let points: Vec<_> = boxes.iter().map(|b| Aabb::point(b.min).unwrap()).collect();
    let grid = UniformGrid::<f64, ()>::auto(world(), &points).unwrap();
    assert_eq!(grid.dims(), (26, 26));

    // Few elements: at most four cells each. Invalid boxes are ignored.
    let nan = Aabb {
        min: Point::new(f64::NAN, 0.0),
        max: Point::new(1.0, 1.0),
    };
    let grid = UniformGrid::<f64, ()>::auto(world(), &[bx(1.0, 1.0, 1.1, 1.1), nan]).unwrap();
    assert!(grid.dims().0 * grid.dims().1 <= 4);

    // A degenerate world and a huge one still give a valid grid.
    let dot = UniformGrid::<f64, ()>::auto(bx(5.0, 5.0, 5.0, 5.0), &points).unwrap();
    assert_eq!(dot.dims(), (1, 1));
    let huge = UniformGrid::<f64, ()>::auto(bx(0.0, 0.0, 1e12, 1e12), &points[..1]).unwrap();
    assert!(huge.dims().0 * huge.dims().1 <= 4);
    let tiny = vec![Aabb::point(Point::new(1.0, 1.0)).unwrap(); 100_000];
    let dense = UniformGrid::<f64, ()>::auto(bx(0.0, 0.0, 1e6, 1.0), &tiny).unwrap();
    assert!(dense.dims().0 as usize * dense.dims().1 as usize <= 1 << 28);
    assert!(UniformGrid::<f64, ()>::auto(Aabb::default(), &[]).is_ok());
    let line = UniformGrid::<f64, ()>::auto(bx(0.0, 0.0, 640.0, 0.0), &points).unwrap();
    assert_eq!(line.dims(), (64, 1));
    // A world wider than MAX: `auto` lays its cells over the part within ±MAX/4 (the rest
    // goes to the border cells); an explicit cell size over all of it is refused.
    let widest = bx(-f64::MAX, -1.0, f64::MAX, 1.0);
    let cut = UniformGrid::<f64, ()>::auto(widest, &points).unwrap();
    assert!(cut.dims().0 as usize * cut.dims().1 as usize <= points.len());
    assert!(UniformGrid::<f64, ()>::new(widest, 1e300).is_err());
    let widest = Aabb::new(Point::new(-f32::MAX, -1.0), Point::new(f32::MAX, 1.0)).unwrap();
    let huge = UniformGrid::<f32, ()>::auto(widest, &[]).unwrap();
    assert_eq!(huge.dims(), (64, 1));
}

#[test]
fn auto_sampled_sizes_cells_and_memory_for_the_total() {
    // 10,000 points on a lattice, of which every 23rd is sampled (every column among them).
    let points: Vec<_> = (0..10_000)
        .map(|i| Aabb::point(Point::new((i % 100) as f64, (i / 100) as f64)).unwrap())
        .collect();
    let sample: Vec<_> = points.iter().step_by(23).copied().collect();
    let full = UniformGrid::<f64, u32>::auto(world(), &points).unwrap();
    let sampled = UniformGrid::<f64, u32>::auto_sampled(world(), &sample, points.len()).unwrap();
    assert_eq!(sampled.cell_size(), full.cell_size());
    assert!(
        UniformGrid::<f64, u32>::auto(world(), &sample)
            .unwrap()
            .cell_size()
            > full.cell_size()
    );

    // Room is reserved for the total: filling the grid allocates nothing more (but the ring
    // buffer its list compaction keeps for reuse).
    let mut grid = sampled;
    let before = grid.memory_bytes();
    for (i, p) in points.iter().enumerate() {
        grid.insert(*p, i as u32).unwrap();
    }
    let windows: usize = grid.pools.pools().iter().map(ListPool::window_bytes).sum();
    assert_eq!(grid.memory_bytes() - windows, before);
    grid.check_invariants().unwrap();

    // A total smaller than the sample counts the sample.
    let small = UniformGrid::<f64, u32>::auto_sampled(world(), &points, 3).unwrap();
    assert_eq!(small.cell_size(), full.cell_size());
}

#[test]
fn touching_edges_and_corners_count() {
    let mut t = Twin::new(UniformGrid::new(world(), 10.0).unwrap());
    // Boxes on cell boundaries, touching along edges and at corners.
    let a = t.insert(bx(0.0, 0.0, 10.0, 10.0));
    let b = t.insert(bx(10.0, 0.0, 20.0, 10.0));
    let c = t.insert(bx(20.0, 10.0, 30.0, 20.0));
    let d = t.insert(bx(10.0, 10.0, 10.0, 10.0));
    let e = t.insert(bx(30.0, 30.0, 40.0, 40.0));
    assert_eq!(t.assert_pairs(), 4); // a-b, a-d, b-c, b-d
    assert_eq!(t.assert_query(&bx(20.0, 20.0, 30.0, 30.0)), [c, e]);
    assert_eq!(t.assert_query(&bx(10.0, 10.0, 10.0, 10.0)), [a, b, d]);
    assert_eq!(t.assert_query(&bx(40.0, 40.0, 50.0, 50.0)), [e]);
    assert_eq!(
        t.assert_query(&bx(40.1, 40.0, 50.0, 50.0)),
        Vec::<u32>::new()
    );
    assert_eq!(t.assert_nearest(Point::new(10.0, 10.0), 3), 3);
    t.assert_all();
}

#[test]
fn elements_outside_the_world_are_found_from_inside_and_outside() {
    let mut t = Twin::new(UniformGrid::new(world(), 10.0).unwrap());
    let far_right = t.insert(bx(150.0, 40.0, 160.0, 50.0));
    let far_left_below = t.insert(bx(-300.0, -300.0, -200.0, -250.0));
    let straddling = t.insert(bx(95.0, 95.0, 120.0, 120.0));
    let around_world = t.insert(bx(-10.0, -10.0, 110.0, 110.0));
    let inside = t.insert(bx(50.0, 50.0, 51.0, 51.0));
    // From inside the world, up to its edge.
    assert_eq!(
        t.assert_query(&bx(90.0, 90.0, 100.0, 100.0)),
        [straddling, around_world]
    );
    // From outside, away from the element's clamped cells' other residents.
    assert_eq!(t.assert_query(&bx(155.0, 0.0, 170.0, 45.0)), [far_right]);
    assert_eq!(
        t.assert_query(&bx(101.0, 40.0, 140.0, 50.0)),
        [around_world]
    );
    assert_eq!(
        t.assert_query(&bx(-250.0, -260.0, -240.0, -240.0)),
        [far_left_below]
    );
    assert_eq!(
        t.assert_query(&bx(-1000.0, -1000.0, -500.0, -500.0)),
        Vec::<u32>::new()
    );
    assert_eq!(
        t.assert_query(&bx(-1e9, -1e9, 1e9, 1e9)),
        [far_right, far_left_below, straddling, around_world, inside]
    );
    // A query covering only a corner outside the world.
    assert_eq!(
        t.assert_query(&bx(105.0, 105.0, 106.0, 106.0)),
        [straddling, around_world]
    );
    t.assert_all();
    // Moving between outside positions that clamp to the same cells, and back inside.
    t.update(far_right, bx(170.0, 41.0, 180.0, 49.0));
    t.update(far_left_below, bx(10.0, 10.0, 12.0, 12.0));
    t.assert_all();
    t.remove(around_world);
    t.assert_all();
}

#[test]
fn a_dragon_among_hobbits() {
    let mut t = Twin::new(UniformGrid::new(world(), 5.0).unwrap());
    let mut rng = Rng::new(11);
    for _ in 0..300 {
        let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
        t.insert(bx(x, y, x + 1.0, y + 1.0));
    }
    let dragon = t.insert(bx(-5.0, 10.0, 105.0, 80.0));
    let entries: usize = {
        let mut n = 0;
        t.grid.for_each_cell(|_, count| n += count);
        n
    };
    assert!(entries >= 300 + 20 * 14);
    t.assert_all();
    t.update(dragon, bx(-5.0, 11.0, 105.0, 81.0));
    t.assert_all();
    t.update(dragon, bx(40.0, 40.0, 60.0, 60.0));
    t.assert_all();
    t.remove(dragon);
    t.assert_all();
}

#[test]
fn coincident_points_give_every_pair_once() {
    let mut grid = UniformGrid::new(world(), 10.0).unwrap();
    for i in 0..1000u32 {
        grid.insert(Aabb::point(Point::new(33.0, 33.0)).unwrap(), i)
            .unwrap();
    }
    grid.check_invariants().unwrap();
    let mut n = 0usize;
    let mut seen = vec![false; 1000 * 1000];
    let _ = grid.for_each_pair(|a, b| {
        let (x, y) = (
            *a.value.min(b.value) as usize,
            *a.value.max(b.value) as usize,
        );
        assert!(x != y && !seen[x * 1000 + y]);
        seen[x * 1000 + y] = true;
        n += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(n, 499_500);
}

#[test]
fn crowded_cells_pair_correctly() {
    // Cells are gathered in batches and over-full cells paired in blocks; try counts around
    // those sizes, with boxes that share several cells so that the reference-cell rule
    // matters, both in one spot and spread along a row of cells.
    for n in [2, 63, 64, 65, 129, 255, 256, 257, 520] {
        for spread in [10.0, 90.0] {
            let mut t = Twin::new(UniformGrid::new(world(), 10.0).unwrap());
            let mut rng = Rng::new(n as u64);
            for _ in 0..n {
                let (x, y) = (rng.range(5.0, 5.0 + spread), rng.range(15.0, 25.0));
                t.insert(bx(x, y, x + rng.range(0.0, 3.0), y + rng.range(0.0, 3.0)));
            }
            t.assert_pairs();
            t.assert_query(&bx(19.0, 19.0, 21.0, 21.0));
        }
    }
}

#[test]
fn update_fast_path_touches_no_cell() {
    let mut t = Twin::new(UniformGrid::new(world(), 10.0).unwrap());
    let a = t.insert(bx(11.0, 11.0, 13.0, 13.0));
    let b = t.insert(bx(8.0, 8.0, 14.0, 14.0)); // four cells
    let before = (t.grid.cells.clone(), t.grid.pools.clone());
    t.update(a, bx(12.0, 11.0, 18.0, 19.0)); // the same cell
    t.update(b, bx(9.0, 9.0, 12.0, 12.0)); // the same four
    let after = (t.grid.cells.clone(), t.grid.pools.clone());
    assert_eq!(before.0, after.0);
    for (was, is) in before.1.pools().iter().zip(after.1.pools()) {
        assert_eq!(was.allocated(), is.allocated());
        assert!((0..was.allocated() as u32).all(|at| was.link(at).item == is.link(at).item));
    }
    assert_eq!(
        t.grid.get(t.handles[a as usize].unwrap().0).unwrap().aabb,
        bx(12.0, 11.0, 18.0, 19.0)
    );
    assert_eq!(t.assert_pairs(), 1);
    t.assert_all();
    t.update(b, bx(12.0, 12.0, 14.0, 14.0)); // down to one cell
    assert_eq!(nodes(&t.grid), (2, 5));
    t.update(a, bx(95.0, 95.0, 99.0, 99.0));
    assert_eq!(t.assert_pairs(), 0);
    t.assert_all();
}

#[test]
fn stale_and_foreign_handles_change_nothing() {
    let mut grid = UniformGrid::new(world(), 10.0).unwrap();
    let a = grid.insert(bx(1.0, 1.0, 2.0, 2.0), 1u32).unwrap();
    let b = grid.insert(bx(3.0, 3.0, 4.0, 4.0), 2u32).unwrap();
    assert_eq!(grid.remove(a), Some(1));
    assert_eq!(grid.remove(a), None);
    assert!(grid.get(a).is_none());
    assert_eq!(
        grid.update(a, bx(5.0, 5.0, 6.0, 6.0)),
        Err(Error::StaleHandle)
    );
    let c = grid.insert(bx(7.0, 7.0, 8.0, 8.0), 3u32).unwrap();
    assert_eq!(c.slot(), a.slot());
    assert!(grid.get(a).is_none());
    assert_eq!(grid.remove(a), None);
    grid.check_invariants().unwrap();

    let mut other = UniformGrid::new(world(), 10.0).unwrap();
    let foreign = other.insert(bx(1.0, 1.0, 2.0, 2.0), 9u32).unwrap();
    assert!(grid.get(foreign).is_none());
    assert_eq!(
        grid.update(foreign, bx(0.0, 0.0, 1.0, 1.0)),
        Err(Error::StaleHandle)
    );
    assert_eq!(grid.remove(Handle::from_bits(u64::MAX)), None);
    assert_eq!(grid.len(), 2);
    grid.check_invariants().unwrap();

    grid.clear();
    grid.check_invariants().unwrap();
    assert!(grid.is_empty() && grid.get(b).is_none() && grid.get(c).is_none());
    assert_eq!(
        grid.update(b, bx(0.0, 0.0, 1.0, 1.0)),
        Err(Error::StaleHandle)
    );
    assert_eq!(found(&grid, &world()), Vec::<u32>::new());
    let d = grid.insert(bx(1.0, 1.0, 2.0, 2.0), 4u32).unwrap();
    assert_eq!(found(&grid, &world()), [4]);
    assert_eq!(grid.get(d).map(|item| *item.value), Some(4));
    grid.check_invariants().unwrap();
}

#[test]
fn invalid_boxes_and_areas_are_rejected_without_change() {
    let mut grid = UniformGrid::new(world(), 10.0).unwrap();
    let a = grid.insert(bx(1.0, 1.0, 2.0, 2.0), 1u32).unwrap();
    let nan = f64::NAN;
    let bad = [
        Aabb {
            min: Point::new(nan, 0.0),
            max: Point::new(1.0, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 0.0),
            max: Point::new(f64::INFINITY, 1.0),
        },
        Aabb {
            min: Point::new(f64::NEG_INFINITY, 0.0),
            max: Point::new(1.0, 1.0),
        },
        Aabb {
            min: Point::new(2.0, 0.0),
            max: Point::new(1.0, 1.0),
        },
        Aabb {
            min: Point::new(0.0, 2.0),
            max: Point::new(1.0, 1.0),
        },
    ];
    let memory = grid.memory_bytes();
    for b in bad {
        assert_eq!(grid.insert(b, 2), Err(Error::InvalidAabb));
        assert_eq!(grid.update(a, b), Err(Error::InvalidAabb));
        assert_eq!(found(&grid, &b), Vec::<u32>::new());
        grid.check_invariants().unwrap();
    }
    assert_eq!(grid.len(), 1);
    assert_eq!(grid.get(a).unwrap().aabb, bx(1.0, 1.0, 2.0, 2.0));
    assert_eq!(grid.memory_bytes(), memory);
    // Huge but finite boxes and areas are fine.
    let huge = grid.insert(bx(-1e300, -1e300, 1e300, 1e300), 3).unwrap();
    assert_eq!(found(&grid, &bx(-1e308, 5.0, -1e299, 6.0)), [3]);
    assert_eq!(pairs(&grid), [(1, 3)]);
    grid.remove(huge);
    grid.check_invariants().unwrap();
    let mut ws = Workspace::new();
    assert!(grid.nearest(Point::new(nan, 1.0), 3, &mut ws).is_empty());
    assert!(
        grid.nearest(Point::new(1.0, f64::INFINITY), 3, &mut ws)
            .is_empty()
    );
    assert!(grid.nearest(Point::new(1.0, 1.0), 0, &mut ws).is_empty());
    let mut n = 0;
    let _ = grid.within(Point::new(1.0, 1.0), nan, |_| {
        n += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(n, 0);
}

#[test]
fn nearest_with_more_wanted_than_stored() {
    let mut t = Twin::new(UniformGrid::new(world(), 10.0).unwrap());
    assert_eq!(t.assert_nearest(Point::new(5.0, 5.0), 4), 0);
    t.insert(bx(10.0, 10.0, 11.0, 11.0));
    t.insert(bx(80.0, 90.0, 85.0, 95.0));
    t.insert(bx(200.0, 0.0, 201.0, 1.0));
    t.insert(bx(40.0, 40.0, 60.0, 60.0));
    for p in [
        Point::new(5.0, 5.0),
        Point::new(50.0, 50.0),
        Point::new(-1e4, 3.0),
        Point::new(1e5, 1e5),
    ] {
        assert_eq!(t.assert_nearest(p, 10), 4);
        assert_eq!(t.assert_nearest(p, 2), 2);
    }
}

#[test]
fn nearest_near_cell_edges_matches_the_oracle() {
    // Points on a lattice aligned with the cells, queried from cell edges and corners: the
    // ring bounds must not cut off equally near or nearer elements.
    for cell in [1.0, 3.0, 7.0] {
        let mut t = Twin::new(UniformGrid::new(bx(0.0, 0.0, 30.0, 30.0), cell).unwrap());
        for i in 0..=30 {
            for j in (0..=30).step_by(3) {
                t.insert(Aabb::point(Point::new(f64::from(i), f64::from(j))).unwrap());
            }
        }
        for p in [
            (7.0, 7.0),
            (3.0, 6.0),
            (0.0, 0.0),
            (30.0, 30.0),
            (14.5, 13.5),
            (31.0, -2.0),
        ] {
            for k in [1, 2, 5, 9, 40] {
                t.assert_nearest(Point::new(p.0, p.1), k);
            }
        }
    }
}

#[test]
fn nearest_in_a_world_of_huge_cells() {
    // Squared distances overflow `f32`: the search must still return k elements.
    let world = Aabb::new(Point::new(-3e38f32, -3e38), Point::new(3e38, 3e38)).unwrap();
    let mut grid = UniformGrid::new(world, 1e37).unwrap();
    let far = grid
        .insert(Aabb::point(Point::new(2e38, 2e38)).unwrap(), 0u32)
        .unwrap();
    let near = grid
        .insert(Aabb::point(Point::new(0.0, 0.0)).unwrap(), 1u32)
        .unwrap();
    grid.check_invariants().unwrap();
    let mut ws = Workspace::new();
    let found = grid.nearest(Point::new(-2e38, -2e38), 2, &mut ws);
    assert_eq!(found.len(), 2);
    assert!(found.iter().any(|n| n.handle == far) && found.iter().any(|n| n.handle == near));
}

#[test]
fn random_operations_match_the_oracle() {
    let mut rng = Rng::new(2024);
    for cell in [3.0, 10.0, 37.0] {
        let mut t = Twin::new(UniformGrid::new(world(), cell).unwrap());
        let random_box = |rng: &mut Rng| {
            let (x, y) = (rng.range(-30.0, 130.0), rng.range(-30.0, 130.0));
            let size = if rng.unit() < 0.1 { 40.0 } else { 4.0 };
            bx(x, y, x + rng.range(0.0, size), y + rng.range(0.0, size))
        };
        for step in 0..600 {
            let live = t.live();
            match rng.below(10) {
                0..=3 => {
                    t.insert(random_box(&mut rng));
                }
                4..=6 if !live.is_empty() => {
                    let id = live[rng.below(live.len())];
                    let b = t.grid.get(t.handles[id as usize].unwrap().0).unwrap().aabb;
                    let (dx, dy) = (rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
                    t.update(
                        id,
                        bx(b.min.x + dx, b.min.y + dy, b.max.x + dx, b.max.y + dy),
                    );
                }
                7 if !live.is_empty() => {
                    let id = live[rng.below(live.len())];
                    let b = random_box(&mut rng);
                    t.update(id, b);
                }
                8 if !live.is_empty() => t.remove(live[rng.below(live.len())]),
                9 if rng.unit() < 0.3 => {
                    t.grid.maintain();
                    t.grid.check_invariants().unwrap();
                }
                _ => {
                    let area = random_box(&mut rng);
                    t.assert_query(&area);
                    let p = Point::new(rng.range(-50.0, 150.0), rng.range(-50.0, 150.0));
                    t.assert_nearest(p, 1 + rng.below(8));
                }
            }
            if step % 50 == 0 {
                t.assert_all();
            }
        }
        t.assert_all();
    }
}

#[test]
fn visitors_stop_early() {
    let mut grid = UniformGrid::new(world(), 10.0).unwrap();
    for i in 0..20u32 {
        let x = f64::from(i) * 4.0;
        grid.insert(bx(x, 0.0, x + 30.0, 30.0), i).unwrap();
    }
    let mut n = 0;
    let flow = grid.query(&world(), |_| {
        n += 1;
        ControlFlow::Break(())
    });
    assert_eq!((flow, n), (ControlFlow::Break(()), 1));
    let mut n = 0;
    let flow = grid.for_each_pair(|_, _| {
        n += 1;
        if n == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!((flow, n), (ControlFlow::Break(()), 3));
}

#[test]
fn cells_and_memory_are_reported() {
    let mut grid = UniformGrid::new(bx(0.0, 0.0, 25.0, 10.0), 10.0).unwrap();
    let empty = grid.memory_bytes();
    assert!(empty >= 3 * size_of::<u32>());
    grid.insert(bx(5.0, 5.0, 15.0, 6.0), 0u32).unwrap();
    grid.insert(bx(-5.0, 12.0, -4.0, 13.0), 1u32).unwrap();
    let mut cells = Vec::new();
    grid.for_each_cell(|cell, count| cells.push((cell.min.x, cell.max.x, count)));
    assert_eq!(cells, [(0.0, 10.0, 2), (10.0, 20.0, 1), (20.0, 30.0, 0)]);
    assert!(grid.memory_bytes() > empty);
}

/// Nodes in use and allocated, over every band.
fn nodes(grid: &UniformGrid<f64, u32>) -> (usize, usize) {
    let pools = grid.pools.pools();
    (
        pools.iter().map(ListPool::in_use).sum(),
        pools.iter().map(ListPool::allocated).sum(),
    )
}

/// Walking band `band`'s cells in order reads its nodes 0, 1, 2, ...
fn assert_packed(grid: &UniformGrid<f64, u32>, band: usize) {
    let pool = &grid.pools.pools()[band];
    let band_cells = (grid.lattice.cols as usize) << grid.pools.shift();
    let mut expected = 0;
    for &head in grid.cells.chunks(band_cells).nth(band).unwrap() {
        let mut at = head;
        while at != crate::base::handle::NIL {
            assert_eq!(at, expected);
            expected += 1;
            at = pool.link(at).next;
        }
    }
    assert_eq!(expected as usize, pool.in_use());
}

#[test]
fn maintain_packs_the_lists_in_cell_order() {
    let mut t = Twin::new(UniformGrid::new(world(), 7.0).unwrap());
    let mut rng = Rng::new(5);
    for _ in 0..400 {
        let (x, y) = (rng.range(-10.0, 110.0), rng.range(-10.0, 110.0));
        t.insert(bx(x, y, x + rng.range(0.0, 9.0), y + rng.range(0.0, 9.0)));
    }
    for round in 0..6 {
        // Churn: moves, removals and insertions leave the nodes scattered, with free ones.
        for id in t.live() {
            match rng.below(8) {
                0 => t.remove(id),
                1 => {
                    t.insert(bx(50.0, 50.0, 50.0 + f64::from(round), 60.0));
                }
                _ => {
                    let (x, y) = (rng.range(-10.0, 110.0), rng.range(-10.0, 110.0));
                    t.update(
                        id,
                        bx(x, y, x + rng.range(0.0, 9.0), y + rng.range(0.0, 9.0)),
                    );
                }
            }
        }
        t.grid.maintain();
        t.grid.check_invariants().unwrap();
        for band in 0..t.grid.pools.pools().len() {
            assert_packed(&t.grid, band);
        }
        t.assert_all();
        t.grid.maintain(); // nothing changed: a no-op
        t.grid.check_invariants().unwrap();
    }
}

#[test]
fn lists_are_packed_without_maintain_once_enough_moved() {
    let mut t = Twin::new(UniformGrid::new(world(), 2.0).unwrap());
    let mut rng = Rng::new(9);
    let mut random_box = || {
        let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
        bx(x, y, x + 1.5, y + 1.5)
    };
    for _ in 0..1500 {
        t.insert(random_box());
    }
    let mut packs = 0;
    let mut was = vec![0; t.grid.pools.pools().len()];
    for id in t.live().into_iter().cycle().take(4000) {
        t.update(id, random_box());
        for (band, pool) in t.grid.pools.pools().iter().enumerate() {
            let (relinked, in_use) = (pool.relinked(), pool.in_use());
            assert!(2 * relinked < in_use.max(BAND_SCATTERED_AFTER_AT_LEAST));
            if relinked == 0 && was[band] > 0 {
                packs += 1;
                assert_packed(&t.grid, band);
            }
            was[band] = relinked;
        }
    }
    assert!(packs >= 2 * was.len(), "{packs} packs");
    t.grid.maintain();
    for band in 0..was.len() {
        assert_packed(&t.grid, band);
    }
    t.assert_all();
}

/// Rings of cells walked by `nearest(point, k)` on `index` holding `boxes`, after checking
/// its answer against `BruteForce`.
fn rings_walked<I: SpatialIndex<f64, u32>>(
    mut index: I,
    boxes: &[Aabb<f64>],
    point: Point<f64>,
    k: usize,
) -> u64 {
    let mut brute = BruteForce::new();
    for (i, b) in boxes.iter().enumerate() {
        index.insert(*b, i as u32).unwrap();
        brute.insert(*b, i as u32).unwrap();
    }
    let before = RINGS_WALKED.with(|n| n.get());
    let found = nearest_distances(&index, point, k);
    let walked = RINGS_WALKED.with(|n| n.get()) - before;
    assert_eq!(found, nearest_distances(&brute, point, k), "k = {k}");
    walked
}

#[test]
fn nearest_with_k_past_len_stops_once_every_element_is_found() {
    // Cells of about 1 over [0, 1000]²: 500 rings from the centre to the border, every
    // element within 20 rings of it.
    let world = bx(0.0, 0.0, 1000.0, 1000.0);
    let boxes: Vec<_> = [
        (480.0, 500.0),
        (515.0, 490.0),
        (500.0, 519.0),
        (505.0, 505.0),
    ]
    .iter()
    .map(|&(x, y)| bx(x, y, x + 0.25, y + 0.25))
    .collect();
    let centre = Point::new(500.0, 500.0);
    for k in [boxes.len(), boxes.len() + 1, 100] {
        let walked = [
            rings_walked(UniformGrid::new(world, 1.0).unwrap(), &boxes, centre, k),
            rings_walked(LooseGrid::new(world, 1.0).unwrap(), &boxes, centre, k),
            rings_walked(PointGrid::new(world, 0.25).unwrap(), &boxes, centre, k),
            rings_walked(
                HierarchicalGrid::new(world, 1.0).unwrap(),
                &boxes,
                centre,
                k,
            ),
        ];
        assert!(walked.iter().all(|&w| w <= 25), "k = {k}: {walked:?} rings");
    }
}

/// `build` holds what inserting one by one holds (dragons, out-of-world boxes and points
/// included), its lists are laid out in cell order, and it keeps working after random
/// updates, removals and inserts; every step checked against `BruteForce`.
#[test]
fn bulk_build_then_mutations_match_the_oracle() {
    let mut rng = Rng::new(41);
    let mut items = Vec::new();
    for i in 0..600u32 {
        let (x, y) = (rng.range(-20.0, 120.0), rng.range(-20.0, 120.0));
        let half = if i % 50 == 0 {
            30.0
        } else {
            rng.range(0.0, 2.0)
        };
        items.push((bx(x - half, y - half, x + half, y + half), i));
    }
    assert_eq!(
        UniformGrid::build(
            world(),
            [
                (bx(0.0, 0.0, 1.0, 1.0), 0),
                (
                    Aabb {
                        min: Point::new(2.0, 0.0),
                        max: Point::new(1.0, 1.0)
                    },
                    1
                )
            ]
        )
        .err(),
        Some(Error::InvalidAabb)
    );
    let mut grid = UniformGrid::build(world(), items.iter().copied()).unwrap();
    assert_eq!(
        grid.pools.relinked(),
        0,
        "built lists are laid out in cell order"
    );
    let mut oracle = BruteForce::new();
    let mut handles = Vec::new();
    for (b, v) in &items {
        handles.push((oracle.insert(*b, *v).unwrap(), grid.slots.handle(*v)));
    }
    let compare = |grid: &UniformGrid<f64, u32>, oracle: &BruteForce<f64, u32>| {
        grid.check_invariants().unwrap();
        assert_eq!(pairs(grid), pairs(oracle));
        for area in [
            world(),
            bx(-50.0, -50.0, 10.0, 10.0),
            bx(40.0, 40.0, 60.0, 45.0),
        ] {
            assert_eq!(found(grid, &area), found(oracle, &area));
        }
    };
    compare(&grid, &oracle);
    for step in 0..300 {
        let i = rng.below(handles.len());
        let (ho, hg) = handles[i];
        match step % 3 {
            0 | 1 => {
                let (x, y) = (rng.range(-10.0, 110.0), rng.range(-10.0, 110.0));
                let b = bx(x, y, x + rng.range(0.0, 4.0), y + rng.range(0.0, 4.0));
                assert_eq!(grid.update(hg, b), oracle.update(ho, b));
            }
            _ => {
                assert_eq!(grid.remove(hg), oracle.remove(ho));
                let b = bx(50.0, 50.0, 51.0, 51.0);
                let v = 1000 + step;
                handles[i] = (oracle.insert(b, v).unwrap(), grid.insert(b, v).unwrap());
            }
        }
        if step % 50 == 0 {
            grid.maintain();
            compare(&grid, &oracle);
        }
    }
    compare(&grid, &oracle);
}

#[cfg(feature = "rayon")]
/// The lists of every band, node by node (`next`, `item`), and the cells' heads.
fn lists(grid: &UniformGrid<f64, u64>) -> (Vec<u32>, Vec<Vec<(u32, u32)>>) {
    let pools = grid.pools.pools().iter();
    let nodes = pools.map(|p| p.nodes().iter().map(|l| (l.next, l.item)).collect());
    (grid.cells.clone(), nodes.collect())
}

/// The parallel frame leaves exactly the state of the serial one: every element's box and
/// value, every cell's head and every band's nodes, refusals included, over frames with many
/// elements changing cells, within and across bands (cells smaller than the elements, many
/// bands of one row), jumping far, leaving the world, and refused; then `maintain` on both.
#[cfg(feature = "rayon")]
#[test]
fn par_update_all_leaves_the_state_of_update_all() {
    use crate::test_util::frame_move;
    use crate::{Error, ParallelPairs};

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    // 200 rows of 200 cells: seven bands of 32 rows.
    let mut serial = UniformGrid::new(world(), 0.5).unwrap();
    let mut handles = Vec::new();
    for i in 0..20_000u64 {
        let (x, y) = ((i * 37 % 1000) as f64 / 10.0, (i * 91 % 997) as f64 / 10.0);
        handles.push(serial.insert(bx(x, y, x + 0.6, y + 0.6), 0).unwrap());
    }
    assert!(serial.pools.pools().len() > 4);
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
        assert!(lists(&serial) == lists(&parallel), "frame {frame}");
        if frame % 2 == 1 {
            serial.maintain();
            pool.install(|| parallel.maintain());
            assert!(lists(&serial) == lists(&parallel), "maintain after {frame}");
        }
    }
}

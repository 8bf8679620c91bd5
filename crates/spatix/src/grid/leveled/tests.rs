//! The engine's passes that run band by band on rayon's threads leave the state the same
//! passes leave on one thread, node by node.

use super::{Leveled, OnLeveled};
use crate::base::handle::NIL;
use crate::test_util::{bx, frame_move};
use crate::{Aabb, Error, HierarchicalGrid, ParallelPairs, Point, PointGrid, SpatialIndex};

/// One band's row table and heads, and its nodes (`next`, `item`, and the corner of a node in
/// use: a free node's is never read).
type BandState = (Vec<u32>, Vec<u32>, Vec<(u32, u32, Option<Point<f64>>)>);

/// Every band's lists, node by node, and every slot's node and home cell.
fn state(inner: &Leveled<f64, u64>) -> (Vec<BandState>, Vec<(u32, u32)>) {
    let bands = inner.levels.iter().flat_map(|level| &level.bands);
    let bands = bands.map(|band| {
        let nodes = band.pool.nodes().iter();
        let nodes = nodes.map(|l| (l.next, l.item, (l.item != NIL).then_some(l.data)));
        let nodes = nodes.collect();
        (band.rows.clone(), band.heads.clone(), nodes)
    });
    let slots = (0..inner.node_of.len() as u32).map(|s| (inner.node_of.get(s), inner.home.get(s)));
    (bands.collect(), slots.collect())
}

/// Frames of `par_update_all` and `maintain` on four threads against `update_all` and
/// `maintain` on one, from `grid` filled with `boxes`: refusals, boxes and values, and every
/// band's nodes equal after each step.
fn parallel_frames_leave_the_serial_state<G>(mut serial: G, boxes: &[Aabb<f64>])
where
    G: OnLeveled<S = f64, T = u64>
        + SpatialIndex<f64, u64>
        + ParallelPairs<f64, u64>
        + Clone
        + Send,
{
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let (one, four) = (pool(1), pool(4));
    let handles: Vec<_> = boxes
        .iter()
        .map(|&b| serial.insert(b, 0).unwrap())
        .collect();
    let bands = serial.leveled().levels.iter().map(|l| l.bands.len());
    assert!(bands.max().unwrap() > 4, "a level of several bands");
    let mut parallel = serial.clone();
    for frame in 0..10 {
        let expected = one.install(|| serial.update_all(frame_move(frame)));
        let got = four.install(|| parallel.par_update_all(frame_move(frame)));
        assert_eq!(expected, Err(Error::InvalidAabb));
        assert_eq!(got, expected);
        for &h in &handles {
            let (a, b) = (serial.get(h).unwrap(), parallel.get(h).unwrap());
            assert_eq!((a.aabb, *a.value), (b.aabb, *b.value));
        }
        assert!(
            state(serial.leveled()) == state(parallel.leveled()),
            "frame {frame}"
        );
        if frame % 4 != 3 {
            one.install(|| serial.maintain());
            four.install(|| parallel.maintain());
            assert!(
                state(serial.leveled()) == state(parallel.leveled()),
                "maintain {frame}"
            );
        }
        serial.check_invariants().unwrap();
        parallel.check_invariants().unwrap();
    }
}

/// 20,000 boxes over the world `(0, 0)..(100, 100)`, up to `most` wide and high.
fn boxes(most: f64) -> Vec<Aabb<f64>> {
    (0..20_000u64)
        .map(|i| {
            let (x, y) = ((i * 37 % 1000) as f64 / 10.0, (i * 91 % 997) as f64 / 10.0);
            let size = most * ((i * 13 % 17) as f64 + 1.0) / 17.0;
            bx(x, y, x + size, y + size)
        })
        .collect()
}

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 100.0, 100.0)
}

#[test]
fn a_point_grids_parallel_frames_leave_the_serial_state() {
    // 295 rows of 295 cells: five bands of 64 rows.
    let grid = PointGrid::with_cell_size(world(), 0.15, 0.34).unwrap();
    parallel_frames_leave_the_serial_state(grid, &boxes(0.28));
}

#[test]
fn a_hierarchical_grids_parallel_frames_leave_the_serial_state() {
    let grid = HierarchicalGrid::new(world(), 0.34).unwrap();
    parallel_frames_leave_the_serial_state(grid, &boxes(8.0));
}

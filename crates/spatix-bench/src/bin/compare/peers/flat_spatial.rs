//! The flat_spatial adapter ([`CRATE`] says how it is used).

use flat_spatial::aabbgrid::AABBGridHandle;
use flat_spatial::{AABB, AABBGrid, Grid};
use spatix::{Aabb, Point};

use super::{BoxIndex, Crate, Moves, PointIndex, over_queries};
use crate::check::Tally;

/// flat_spatial, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "flat_spatial",
    version: "0.6.1",
    how: "flat_spatial: `AABBGrid` for boxes (eager `set_aabb` updates, so a frame updates in \
         place) and `Grid` for points. Cell size from its README's rule, \"an average of 10-20 \
         objects per cell\" (15 here), which also puts cells at the magnitude of the 50 × 50 \
         queries as its API docs advise. Boxes implement its `AABB` trait, overriding the \
         provided `intersects`: the default compares centre distance with summed extents in f32, \
         which misjudges nearly touching boxes at coordinates near 10^4 (the cross-check caught \
         it missing a pair in 320k at 1M agents); the override is the exact closed test every \
         other structure uses. Neither grid has a pair pass: pairs are one `query_visitor` per \
         element keeping pairs with first value < second. Neither has k-nearest; radius queries \
         use `Grid::query_around` (which returns handles: each hit's value is read with `get`). \
         flat_spatial has no parallel query of its own; with `--threads` the queries (all \
         `&self` on a `Sync` grid) run rayon over the queries, the harness's shared wrapper.",
};

/// Objects per cell the README recommends (10-20).
const PER_CELL: f64 = 15.0;

/// The cell side giving [`PER_CELL`] elements per cell on average in `world`.
fn cell_size(world: &Aabb<f32>, n: usize) -> i32 {
    let area = f64::from(world.size().x) * f64::from(world.size().y);
    (area * PER_CELL / n.max(1) as f64).sqrt().round().max(1.0) as i32
}

/// A box in the form flat_spatial's `AABB` trait reads.
#[derive(Clone, Copy)]
struct Bx {
    ll: [f32; 2],
    ur: [f32; 2],
}

impl From<&Aabb<f32>> for Bx {
    fn from(b: &Aabb<f32>) -> Self {
        Self {
            ll: [b.min.x, b.min.y],
            ur: [b.max.x, b.max.y],
        }
    }
}

impl AABB for Bx {
    type V2 = [f32; 2];

    fn ll(&self) -> [f32; 2] {
        self.ll
    }

    fn ur(&self) -> [f32; 2] {
        self.ur
    }

    /// The exact closed test. The trait's default compares sums of coordinates (centre
    /// distance against summed extents) in f32, which misjudges nearly touching boxes at
    /// coordinates near 10^4: the cross-check caught it missing 1 pair in 320k at 1M agents.
    fn intersects(&self, b: &Self) -> bool {
        self.ll[0] <= b.ur[0]
            && b.ll[0] <= self.ur[0]
            && self.ll[1] <= b.ur[1]
            && b.ll[1] <= self.ur[1]
    }
}

/// An `AABBGrid` updated in place.
#[derive(Default)]
pub(crate) struct Boxes {
    grid: Option<AABBGrid<u32, Bx>>,
    handles: Vec<AABBGridHandle>,
    /// Whether queries run rayon over the queries (`--threads` above 1).
    parallel: bool,
}

impl Boxes {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            ..Self::default()
        }
    }

    fn grid(&self) -> &AABBGrid<u32, Bx> {
        self.grid.as_ref().expect("built before use")
    }
}

impl BoxIndex for Boxes {
    fn name(&self) -> String {
        "flat_spatial AABBGrid".into()
    }

    fn moves(&self) -> Moves {
        Moves::Update
    }

    fn build(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let mut grid = AABBGrid::new(cell_size(world, boxes.len()));
        self.handles.clear();
        self.handles.reserve(boxes.len());
        for (i, b) in boxes.iter().enumerate() {
            self.handles.push(grid.insert(Bx::from(b), i as u32));
        }
        self.grid = Some(grid);
    }

    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let grid = self.grid.as_mut().expect("built before use");
        for (&handle, b) in self.handles.iter().zip(boxes) {
            grid.set_aabb(handle, Bx::from(b));
        }
    }

    fn pairs(&mut self, tally: &mut Tally) {
        let grid = self.grid();
        for &handle in &self.handles {
            let object = grid.get(handle).expect("every handle is live");
            let i = object.obj;
            grid.query_visitor(object.aabb, |_, _, &j| {
                if i < j {
                    tally.pair(i, j);
                }
            });
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let grid = self.grid();
        over_queries::tally(self.parallel, squares, tally, |squares, tally| {
            for square in squares {
                grid.query_visitor(Bx::from(square), |_, _, &value| tally.hit(value));
            }
        });
    }
}

/// A point `Grid`.
#[derive(Default)]
pub(crate) struct Points {
    grid: Option<Grid<u32, [f32; 2]>>,
    /// Whether queries run rayon over the queries (`--threads` above 1).
    parallel: bool,
}

impl Points {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            ..Self::default()
        }
    }
}

impl PointIndex for Points {
    fn name(&self) -> String {
        "flat_spatial Grid".into()
    }

    fn build(&mut self, world: &Aabb<f32>, points: &[Point<f32>]) {
        let mut grid = Grid::new(cell_size(world, points.len()));
        for (i, p) in points.iter().enumerate() {
            grid.insert([p.x, p.y], i as u32);
        }
        self.grid = Some(grid);
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let grid = self.grid.as_ref().expect("built before use");
        over_queries::tally(self.parallel, queries, tally, |queries, tally| {
            for q in queries {
                for (handle, _) in grid.query_around([q.x, q.y], radius) {
                    let (_, &value) = grid.get(handle).expect("a found handle is live");
                    tally.hit(value);
                }
            }
        });
        true
    }
}

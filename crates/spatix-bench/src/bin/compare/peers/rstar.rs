//! The rstar adapter ([`CRATE`] says how it is used).

use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};
use spatix::{Aabb, Point};

use super::{BoxIndex, Crate, Moves, PointIndex, over_queries};
use crate::check::Tally;

/// rstar, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "rstar",
    version: "0.14.0",
    how: "rstar (R*-tree): `RTree::bulk_load` (its documented fast construction, \"significantly\" \
         faster than inserting one by one), which is also how a frame follows moving boxes: a \
         rebuild is far cheaper than removing and re-inserting every element. Pairs: its \
         self-join `intersection_candidates_with_other_tree(&tree)`, which yields every ordered \
         pair and each element with itself; the adapter keeps pairs with first value < second. \
         Queries: `locate_in_envelope_intersecting`, `nearest_neighbor_iter(..).take(k)` (the \
         documented kNN method), `locate_within_distance(point, r²)`. rstar has no parallel query of its own; with \
         `--threads` the queries (all `&self` on a `Sync` tree) run rayon over the queries, \
         the harness's shared wrapper.",
};

type Rect = GeomWithData<Rectangle<[f32; 2]>, u32>;
type Pt = GeomWithData<[f32; 2], u32>;

fn rect(i: usize, b: &Aabb<f32>) -> Rect {
    GeomWithData::new(
        Rectangle::from_corners([b.min.x, b.min.y], [b.max.x, b.max.y]),
        i as u32,
    )
}

fn envelope(b: &Aabb<f32>) -> AABB<[f32; 2]> {
    AABB::from_corners([b.min.x, b.min.y], [b.max.x, b.max.y])
}

/// An `RTree` of rectangles, rebuilt by bulk loading every frame.
#[derive(Default)]
pub(crate) struct Boxes {
    tree: RTree<Rect>,
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
}

impl BoxIndex for Boxes {
    fn name(&self) -> String {
        "rstar RTree".into()
    }

    fn moves(&self) -> Moves {
        Moves::Rebuild
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.tree = RTree::bulk_load(boxes.iter().enumerate().map(|(i, b)| rect(i, b)).collect());
    }

    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        for (a, b) in self
            .tree
            .intersection_candidates_with_other_tree(&self.tree)
        {
            if a.data < b.data {
                tally.pair(a.data, b.data);
            }
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let tree = &self.tree;
        over_queries::tally(self.parallel, squares, tally, |squares, tally| {
            for square in squares {
                for hit in tree.locate_in_envelope_intersecting(envelope(square)) {
                    tally.hit(hit.data);
                }
            }
        });
    }
}

/// An `RTree` of points.
#[derive(Default)]
pub(crate) struct Points {
    tree: RTree<Pt>,
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
        "rstar RTree".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        self.tree = RTree::bulk_load(
            points
                .iter()
                .enumerate()
                .map(|(i, p)| GeomWithData::new([p.x, p.y], i as u32))
                .collect(),
        );
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let tree = &self.tree;
        over_queries::extend(self.parallel, queries, out, |queries, out| {
            for q in queries {
                out.extend(
                    tree.nearest_neighbor_iter([q.x, q.y])
                        .take(k)
                        .map(|p| p.data),
                );
            }
        });
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let tree = &self.tree;
        over_queries::tally(self.parallel, queries, tally, |queries, tally| {
            for q in queries {
                for p in tree.locate_within_distance([q.x, q.y], radius * radius) {
                    tally.hit(p.data);
                }
            }
        });
        true
    }
}

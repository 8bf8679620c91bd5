//! The geo-index adapter ([`CRATE`] says how it is used).

use geo_index::kdtree::{KDTree, KDTreeBuilder, KDTreeIndex};
use geo_index::rtree::sort::HilbertSort;
use geo_index::rtree::{RTree, RTreeBuilder, RTreeIndex};
use spatix::{Aabb, Point};

use super::{BoxIndex, Crate, Moves, PointIndex, over_queries};
use crate::check::Tally;

/// geo-index, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "geo-index",
    version: "0.4.0",
    how: "geo-index (immutable, flatbush-style packed trees): `RTree` built with `RTreeBuilder` \
         and `finish::<HilbertSort>()` (its docs' example), so a frame rebuilds it; `KDTree` \
         built with `KDTreeBuilder` for points. Pairs: the self-join \
         `intersection_candidates_with_other_tree` (every ordered pair and each element with \
         itself; pairs with first index < second kept). Queries: `RTree::search` (returns a `Vec` \
         per call: its only form); on points (zero-size boxes in the `RTree`: the `KDTree` has no \
         k-nearest) `RTree::neighbors(x, y, Some(k), None)` and `neighbors(x, y, None, Some(r²))` \
         (its default metric is the squared distance, and the limit is in the metric's units); \
         `KDTree::within`. geo-index has no parallel query of its own; with `--threads` the \
         queries (all `&self` on a `Sync` tree) run rayon over the queries, the harness's \
         shared wrapper.",
};

fn rtree(boxes: impl ExactSizeIterator<Item = [f32; 4]>) -> RTree<f32> {
    let mut builder = RTreeBuilder::<f32>::new(boxes.len() as u32);
    for [x0, y0, x1, y1] in boxes {
        builder.add(x0, y0, x1, y1);
    }
    builder.finish::<HilbertSort>()
}

/// An `RTree<f32>` of boxes, rebuilt every frame.
#[derive(Default)]
pub(crate) struct Boxes {
    tree: Option<RTree<f32>>,
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

    fn tree(&self) -> &RTree<f32> {
        self.tree.as_ref().expect("built before use")
    }
}

impl BoxIndex for Boxes {
    fn name(&self) -> String {
        "geo-index RTree".into()
    }

    fn moves(&self) -> Moves {
        Moves::Rebuild
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.tree = Some(rtree(
            boxes.iter().map(|b| [b.min.x, b.min.y, b.max.x, b.max.y]),
        ));
    }

    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        let tree = self.tree();
        for (a, b) in tree.intersection_candidates_with_other_tree(tree) {
            if a < b {
                tally.pair(a, b);
            }
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let tree = self.tree();
        over_queries::tally(self.parallel, squares, tally, |squares, tally| {
            for s in squares {
                for i in tree.search(s.min.x, s.min.y, s.max.x, s.max.y) {
                    tally.hit(i);
                }
            }
        });
    }
}

/// An `RTree<f32>` of zero-size boxes.
#[derive(Default)]
pub(crate) struct RTreePoints {
    tree: Option<RTree<f32>>,
    /// Whether queries run rayon over the queries (`--threads` above 1).
    parallel: bool,
}

impl RTreePoints {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            ..Self::default()
        }
    }
}

impl PointIndex for RTreePoints {
    fn name(&self) -> String {
        "geo-index RTree".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        self.tree = Some(rtree(points.iter().map(|p| [p.x, p.y, p.x, p.y])));
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let tree = self.tree.as_ref().expect("built before use");
        over_queries::extend(self.parallel, queries, out, |queries, out| {
            for q in queries {
                out.extend(tree.neighbors(q.x, q.y, Some(k), None));
            }
        });
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let tree = self.tree.as_ref().expect("built before use");
        over_queries::tally(self.parallel, queries, tally, |queries, tally| {
            for q in queries {
                for i in tree.neighbors(q.x, q.y, None, Some(radius * radius)) {
                    tally.hit(i);
                }
            }
        });
        true
    }
}

/// A `KDTree<f32>`, for radius queries.
#[derive(Default)]
pub(crate) struct KdPoints {
    tree: Option<KDTree<f32>>,
    /// Whether queries run rayon over the queries (`--threads` above 1).
    parallel: bool,
}

impl KdPoints {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            ..Self::default()
        }
    }
}

impl PointIndex for KdPoints {
    fn name(&self) -> String {
        "geo-index KDTree".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        let mut builder = KDTreeBuilder::<f32>::new(points.len() as u32);
        for p in points {
            builder.add(p.x, p.y);
        }
        self.tree = Some(builder.finish());
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let tree = self.tree.as_ref().expect("built before use");
        over_queries::tally(self.parallel, queries, tally, |queries, tally| {
            for q in queries {
                for i in tree.within(q.x, q.y, radius) {
                    tally.hit(i);
                }
            }
        });
        true
    }
}

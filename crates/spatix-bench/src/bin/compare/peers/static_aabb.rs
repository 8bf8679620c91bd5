//! The static_aabb2d_index adapter ([`CRATE`] says how it is used).

use spatix::{Aabb, Point};
use static_aabb2d_index::{
    Control, NeighborPriorityQueue, StaticAABB2DIndex, StaticAABB2DIndexBuilder,
};

use super::{BoxIndex, Crate, Moves, PointIndex, over_queries};
use crate::check::Tally;

/// static_aabb2d_index, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "static_aabb2d_index",
    version: "2.1.0",
    how: "static_aabb2d_index (a port of flatbush: a packed Hilbert R-tree, immutable): built with \
         `StaticAABB2DIndexBuilder`, so a frame rebuilds it. No pair pass: pairs are one query \
         per element keeping pairs with first index < second. Queries use the `_with_stack` / \
         `_with_queue` forms its docs suggest for repeated calls (no allocation per call): \
         `visit_query_with_stack`, and for points (zero-size boxes) `visit_neighbors_with_queue`, \
         which visits items in order of distance until the visitor breaks: after `k` items for \
         k-nearest, past `r²` for radius queries (it has no radius query of its own). It has no \
         parallel query of its own; with `--threads` the queries (all `&self` on a `Sync` \
         index) run rayon over the queries, the harness's shared wrapper, each chunk with a \
         stack or queue of its own (one thread's queries reuse one stack or queue).",
};

fn build(boxes: impl ExactSizeIterator<Item = [f32; 4]>) -> StaticAABB2DIndex<f32> {
    let mut builder = StaticAABB2DIndexBuilder::new(boxes.len());
    for [x0, y0, x1, y1] in boxes {
        builder.add(x0, y0, x1, y1);
    }
    builder
        .build()
        .expect("as many boxes as announced, all finite")
}

/// A `StaticAABB2DIndex<f32>` of boxes, rebuilt every frame.
#[derive(Default)]
pub(crate) struct Boxes {
    index: Option<StaticAABB2DIndex<f32>>,
    /// The pair pass's stack.
    stack: Vec<usize>,
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
        "static_aabb2d_index".into()
    }

    fn moves(&self) -> Moves {
        Moves::Rebuild
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.index = Some(build(
            boxes.iter().map(|b| [b.min.x, b.min.y, b.max.x, b.max.y]),
        ));
    }

    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        let index = self.index.as_ref().expect("built before use");
        // Boxes in the index's (Hilbert) order, each with its insertion index.
        for (b, &i) in index.item_boxes().iter().zip(index.item_indices()) {
            let mut visit = |j: usize| {
                if i < j {
                    tally.pair(i as u32, j as u32);
                }
                Control::<()>::Continue
            };
            index.visit_query_with_stack(
                b.min_x,
                b.min_y,
                b.max_x,
                b.max_y,
                &mut visit,
                &mut self.stack,
            );
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let index = self.index.as_ref().expect("built before use");
        over_queries::tally(self.parallel, squares, tally, |squares, tally| {
            let mut stack = Vec::new();
            for s in squares {
                let mut visit = |i: usize| {
                    tally.hit(i as u32);
                    Control::<()>::Continue
                };
                index.visit_query_with_stack(
                    s.min.x, s.min.y, s.max.x, s.max.y, &mut visit, &mut stack,
                );
            }
        });
    }
}

/// A `StaticAABB2DIndex<f32>` of zero-size boxes.
#[derive(Default)]
pub(crate) struct Points {
    index: Option<StaticAABB2DIndex<f32>>,
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
        "static_aabb2d_index".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        self.index = Some(build(points.iter().map(|p| [p.x, p.y, p.x, p.y])));
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let index = self.index.as_ref().expect("built before use");
        over_queries::extend(self.parallel, queries, out, |queries, out| {
            let mut queue = NeighborPriorityQueue::new();
            for q in queries {
                let mut left = k;
                let mut visit = |i: usize, _distance_2: f32| {
                    out.push(i as u32);
                    left -= 1;
                    if left == 0 {
                        Control::Break(())
                    } else {
                        Control::Continue
                    }
                };
                index.visit_neighbors_with_queue(q.x, q.y, &mut visit, &mut queue);
            }
        });
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let index = self.index.as_ref().expect("built before use");
        let radius_2 = radius * radius;
        over_queries::tally(self.parallel, queries, tally, |queries, tally| {
            let mut queue = NeighborPriorityQueue::new();
            for q in queries {
                let mut visit = |i: usize, distance_2: f32| {
                    if distance_2 > radius_2 {
                        return Control::Break(());
                    }
                    tally.hit(i as u32);
                    Control::Continue
                };
                index.visit_neighbors_with_queue(q.x, q.y, &mut visit, &mut queue);
            }
        });
        true
    }
}

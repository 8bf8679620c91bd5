//! The parry2d adapter ([`CRATE`] says how it is used).

use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhLeafUpdateStatus, BvhWorkspace};
use spatix::Aabb;

use super::{BoxIndex, Crate, Moves, over_queries};
use crate::check::Tally;

/// parry2d, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "parry2d",
    version: "0.31.1",
    how: "parry2d's `Bvh` (the binary BVH that replaced `Qbvh`), as its docs describe for a \
         dynamic scene: built with `Bvh::from_leaves(BvhBuildStrategy::Binned, ..)` (the strategy \
         they recommend for general use); each frame `insert_or_update_partially(aabb, i, 0.0)` \
         for every element, then one `refit` (their \"batch updates\" tip), and \
         `optimize_incremental` every 5th frame (\"every 5-10 frames\"), timed as its maintain phase. One `BvhWorkspace` is \
         reused throughout. Pairs: `traverse_bvtt_single_tree::<false>` (the tree against itself, \
         each pair once). With `--threads` (its `parallel` feature): \
         `insert_or_update_batch_partially_parallel` of every element, `refit_parallel` and \
         `traverse_bvtt_single_tree_parallel::<false>` (the same pairs, returned as a list). \
         Queries: `intersect_aabb`; parry has no parallel query of its own, so with `--threads` \
         the queries (`&self` on a `Sync` tree) run rayon over the queries, the harness's \
         shared wrapper. The `Bvh` has no k-nearest or radius query, \
         so it has no point workloads.",
};

/// Frames between two `optimize_incremental` calls.
const OPTIMIZE_EVERY: u32 = 5;

fn aabb(b: &Aabb<f32>) -> ParryAabb {
    ParryAabb::new(Vector::new(b.min.x, b.min.y), Vector::new(b.max.x, b.max.y))
}

/// A `Bvh` updated in place every frame; updated, refitted and paired in parallel above one
/// thread.
pub(crate) struct Boxes {
    parallel: bool,
    bvh: Bvh,
    workspace: BvhWorkspace,
    frames: u32,
    /// The parallel update's input and statuses, reused from frame to frame.
    updates: Vec<(ParryAabb, u32, f32)>,
    statuses: Vec<BvhLeafUpdateStatus>,
}

impl Boxes {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            bvh: Bvh::default(),
            workspace: BvhWorkspace::default(),
            frames: 0,
            updates: Vec::new(),
            statuses: Vec::new(),
        }
    }
}

impl BoxIndex for Boxes {
    fn name(&self) -> String {
        "parry2d Bvh".into()
    }

    fn moves(&self) -> Moves {
        Moves::Update
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let leaves: Vec<ParryAabb> = boxes.iter().map(aabb).collect();
        self.bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
        self.frames = 0;
    }

    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        if self.parallel {
            self.updates.clear();
            self.updates
                .extend(boxes.iter().zip(0..).map(|(b, i)| (aabb(b), i, 0.0)));
            self.bvh
                .insert_or_update_batch_partially_parallel(&self.updates, &mut self.statuses);
            self.bvh.refit_parallel(&mut self.workspace);
        } else {
            for (i, b) in boxes.iter().enumerate() {
                self.bvh.insert_or_update_partially(aabb(b), i as u32, 0.0);
            }
            self.bvh.refit(&mut self.workspace);
        }
    }

    /// Every [`OPTIMIZE_EVERY`] frames, `optimize_incremental`.
    fn maintain(&mut self) -> bool {
        self.frames += 1;
        if self.frames.is_multiple_of(OPTIMIZE_EVERY) {
            self.bvh.optimize_incremental(&mut self.workspace);
        }
        true
    }

    fn pairs(&mut self, tally: &mut Tally) {
        if self.parallel {
            for (a, b) in self.bvh.traverse_bvtt_single_tree_parallel::<false>() {
                tally.pair(a, b);
            }
        } else {
            self.bvh
                .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| {
                    tally.pair(a, b)
                });
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let bvh = &self.bvh;
        over_queries::tally(self.parallel, squares, tally, |squares, tally| {
            for square in squares {
                let area = aabb(square);
                for hit in bvh.intersect_aabb(&area) {
                    tally.hit(hit);
                }
            }
        });
    }
}

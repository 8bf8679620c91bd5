//! The broccoli adapter ([`CRATE`] says how it is used).

use broccoli::aabb::pin::AabbPin;
use broccoli::axgeom::Rect;
use broccoli::{Tree, TreeData};
use broccoli_rayon::build::RayonBuildPar;
use broccoli_rayon::queries::colfind::RayonQueryPar;
use spatix::Aabb;

use super::{BoxIndex, Crate, Moves};
use crate::check::Tally;

/// broccoli, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "broccoli",
    version: "6.3.0",
    how: "broccoli (a kd-tree / sweep-and-prune hybrid for broad phase): its README says the tree \
         is rebuilt every frame (\"Do I have to rebuild the tree every time? Yes\"), so a frame \
         rebuilds it. Elements use the direct `(Rect<f32>, u32)` layout (small, `ManySwap`). The \
         tree borrows its elements, so the adapter keeps `get_tree_data()` after building and \
         re-attaches with `Tree::from_tree_data` (the documented way to keep a tree outside \
         lifetimes) before each pass. Pairs: `find_colliding_pairs`. With `--threads`, its rayon \
         companion crate broccoli-rayon: `Tree::par_new` builds and \
         `par_find_colliding_pairs_acc_closure` finds the pairs, a tally per task, added at the \
         end. Queries: \
         `find_all_intersect_rect`, whose test is open (a box that only touches the rectangle is \
         not found: the cross-check caught it), so the adapter widens each rectangle by one ulp \
         on every side, which on floats makes the open test exactly the closed one. Queries \
         stay serial with `--threads`: the query needs the tree by `&mut` (and broccoli-rayon \
         has no parallel rectangle query), so no rayon over the queries. No point \
         workloads (its k-nearest is not what the crate is for).",
};

fn rect(b: &Aabb<f32>) -> Rect<f32> {
    broccoli::rect(b.min.x, b.max.x, b.min.y, b.max.y)
}

/// A broccoli `Tree` over `(Rect<f32>, u32)`, rebuilt every frame; built and paired in
/// parallel (broccoli-rayon) above one thread.
pub(crate) struct Boxes {
    parallel: bool,
    elements: Vec<(Rect<f32>, u32)>,
    data: Option<TreeData<f32>>,
}

impl Boxes {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            parallel: threads > 1,
            elements: Vec::new(),
            data: None,
        }
    }

    fn tree(&mut self) -> Tree<'_, (Rect<f32>, u32)> {
        Tree::from_tree_data(
            &mut self.elements,
            self.data.as_ref().expect("built before use"),
        )
    }
}

impl BoxIndex for Boxes {
    fn name(&self) -> String {
        "broccoli Tree".into()
    }

    fn moves(&self) -> Moves {
        Moves::Rebuild
    }

    fn build(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.elements.clear();
        self.elements
            .extend(boxes.iter().enumerate().map(|(i, b)| (rect(b), i as u32)));
        let tree = if self.parallel {
            Tree::par_new(&mut self.elements)
        } else {
            Tree::new(&mut self.elements)
        };
        self.data = Some(tree.get_tree_data());
    }

    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        if self.parallel {
            let found = self.tree().par_find_colliding_pairs_acc_closure(
                Tally::default(),
                |_| Tally::default(),
                |one, other| one.merge(other),
                |one, a, b| one.pair(*a.unpack_inner(), *b.unpack_inner()),
            );
            tally.merge(found);
        } else {
            self.tree().find_colliding_pairs(|a, b| {
                tally.pair(*a.unpack_inner(), *b.unpack_inner());
            });
        }
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let mut tree = self.tree();
        for square in squares {
            // Its rectangle query is open (a box that only touches the rectangle is not
            // found); widened by one ulp on every side, the open test is exactly the closed one.
            let mut area = broccoli::rect(
                square.min.x.next_down(),
                square.max.x.next_up(),
                square.min.y.next_down(),
                square.max.y.next_up(),
            );
            tree.find_all_intersect_rect(AabbPin::from_mut(&mut area), |_, hit| {
                tally.hit(*hit.unpack_inner());
            });
        }
    }
}

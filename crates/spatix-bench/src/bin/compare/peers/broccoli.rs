//! The broccoli adapter ([`CRATE`] says how it is used).

use broccoli::aabb::pin::AabbPin;
use broccoli::axgeom::Rect;
use broccoli::{Tree, TreeData};
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
         lifetimes) before each pass. Pairs: `find_colliding_pairs`; queries: \
         `find_all_intersect_rect`, whose test is open (a box that only touches the rectangle is \
         not found: the cross-check caught it), so the adapter widens each rectangle by one ulp \
         on every side, which on floats makes the open test exactly the closed one. No point \
         workloads (its k-nearest is not what the crate is for).",
};

fn rect(b: &Aabb<f32>) -> Rect<f32> {
    broccoli::rect(b.min.x, b.max.x, b.min.y, b.max.y)
}

/// A broccoli `Tree` over `(Rect<f32>, u32)`, rebuilt every frame.
#[derive(Default)]
pub(crate) struct Boxes {
    elements: Vec<(Rect<f32>, u32)>,
    data: Option<TreeData<f32>>,
}

impl Boxes {
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
        self.data = Some(Tree::new(&mut self.elements).get_tree_data());
    }

    fn moved(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.build(world, boxes);
    }

    fn pairs(&mut self, tally: &mut Tally) {
        self.tree().find_colliding_pairs(|a, b| {
            tally.pair(*a.unpack_inner(), *b.unpack_inner());
        });
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

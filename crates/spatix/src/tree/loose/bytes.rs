//! The loose quadtree's byte form: its world and configuration, then the slot table; loading
//! files every live element by its centre again, growing the loose boxes as insertion does.

use super::LooseQuadtree;
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, byte_form};
use crate::contract::Validates;
use crate::{Error, Scalar};

byte_form!(LooseQuadtree);

impl<S: Scalar, T> Refile for LooseQuadtree<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"looseqt\0";

    crate::tree::tree_config_form!();

    /// Each element is in one leaf; the nodes are counted as leaves split, and loading stops
    /// once they pass what the input allows.
    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        self.leaves = vec![NIL; slots.capacity()];
        self.entries = vec![NIL; slots.capacity()];
        self.slots = slots;
        let live: Vec<u32> = self.slots.live_slots().collect();
        for slot in live {
            let aabb = *self.slots.aabb(slot);
            self.file(0, slot, &aabb, self.centre(&aabb));
            r.allow(self.base.nodes.len() as f64, "the tree's nodes")?;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.do_check_invariants()
    }
}

//! The MX-CIF quadtree's byte form: its world and configuration, then the slot table;
//! loading places every live element again, at the smallest node that contains it.

use super::{MxCifQuadtree, Place};
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, byte_form};
use crate::contract::Validates;
use crate::tree::Frame;
use crate::{Error, Scalar};

byte_form!(MxCifQuadtree);

impl<S: Scalar, T> Refile for MxCifQuadtree<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"mxcif\0\0\0";

    crate::tree::tree_config_form!();

    /// Each element is in one node; the nodes are counted as leaves split, and loading stops
    /// once they pass what the input allows. The runs are compacted once every element is
    /// placed (compaction finds runs through their elements' places).
    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        self.places = vec![Place::default(); slots.capacity()];
        self.slots = slots;
        let live: Vec<u32> = self.slots.live_slots().collect();
        for slot in live {
            let aabb = *self.slots.aabb(slot);
            self.place(slot, aabb, Frame::root(self.base.world));
            r.allow(self.base.nodes.len() as f64, "the tree's nodes")?;
        }
        self.compact_if_fragmented();
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.do_check_invariants()
    }
}

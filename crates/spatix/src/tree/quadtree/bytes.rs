//! The quadtree's byte form: its world and configuration, then the slot table; loading files
//! every live element again, splitting leaves as insertion does.

use super::Quadtree;
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, byte_form};
use crate::contract::Validates;
use crate::tree::Frame;
use crate::{Error, Scalar};

byte_form!(Quadtree);

impl<S: Scalar, T> Refile for Quadtree<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"quadtree";

    crate::tree::tree_config_form!();

    /// An element is listed in every leaf its box overlaps: the nodes and entries are
    /// counted as they grow, and loading stops once they pass what the input allows.
    fn file_all(&mut self, slots: Slots<S, T>, r: &Reader<'_>) -> Result<(), Error> {
        self.homes = vec![Frame::default(); slots.capacity()];
        self.slots = slots;
        let live: Vec<u32> = self.slots.live_slots().collect();
        for slot in live {
            let filed = self.filed_box(self.slots.aabb(slot));
            self.refile(slot, Frame::root(self.base.world), None, Some(filed));
            let size = self.links.in_use() + self.base.nodes.len();
            r.allow(size as f64, "the tree's nodes and entries")?;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.do_check_invariants()
    }
}

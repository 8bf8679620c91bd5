//! The full structural self-check.

use super::{Group, LooseQuadtree, nothing};
use crate::contract::Validates;
use crate::tree::{BRANCH, check_tree, fail};
use crate::{Error, Scalar};

impl<S: Scalar, T> Validates for LooseQuadtree<S, T> {
    /// Checks the tree shape, the stored regions and group records, the leaf lists and counts, that
    /// every element is listed once, in the leaf owning its clamped centre, that every loose
    /// box encloses its elements and its children's boxes, and the free lists.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        let n_nodes = self.base.nodes.len();
        if self.loose.len() != n_nodes
            || self.regions.len() != n_nodes
            || self.groups.len() != n_nodes.saturating_sub(1) / 4
        {
            return fail(format!(
                "{n_nodes} nodes, but {} loose boxes, {} regions and {} group records",
                self.loose.len(),
                self.regions.len(),
                self.groups.len()
            ));
        }
        let mut listed_in = vec![None; self.leaves.len()];
        // A leaf splits whenever it overflows and may: elements go down by their centres,
        // one node each, so splitting never copies them.
        check_tree(
            &self.base,
            &self.links,
            |_, _| true,
            |f, entries| {
                let at = f.node as usize;
                if self.regions[at] != f.reach() {
                    return fail(format!("node {at} stores the wrong region"));
                }
                let loose = self.loose[at];
                if !loose.is_valid() && loose != nothing() {
                    return fail(format!("node {at} has a malformed loose box {loose:?}"));
                }
                let node = self.base.nodes[at];
                if node.count == BRANCH {
                    let g = node.first_child as usize;
                    let record = Group {
                        parent: f.node,
                        depth: u32::from(f.depth) + 1,
                    };
                    if self.groups[(g - 1) / 4] != record {
                        return fail(format!(
                            "group {g} does not record its parent {at} and depth"
                        ));
                    }
                    if let Some(c) = (g..g + 4).find(|&c| !loose.contains(&self.loose[c])) {
                        return fail(format!("branch {at}'s loose box misses child {c}'s"));
                    }
                }
                for &(entry, link) in entries {
                    let e = link.item;
                    if !self.slots.is_live(e) {
                        return fail(format!("leaf {at} lists dead slot {e}"));
                    }
                    if let Some(other) = listed_in[e as usize].replace(at) {
                        return fail(format!(
                            "slot {e} is listed in leaf {other} and in leaf {at}"
                        ));
                    }
                    if self.leaves[e as usize] != f.node || self.entries[e as usize] != entry {
                        return fail(format!(
                            "slot {e} is listed in leaf {at}, node {entry}, but records leaf {}, node {}",
                            self.leaves[e as usize], self.entries[e as usize]
                        ));
                    }
                    let b = self.slots.aabb(e);
                    if link.data != *b {
                        return fail(format!("node {entry}'s copy of slot {e}'s box is stale"));
                    }
                    if !f.owns(self.centre(b)) {
                        return fail(format!(
                            "leaf {at} lists slot {e}, whose centre is elsewhere"
                        ));
                    }
                    if !loose.contains(b) {
                        return fail(format!("leaf {at}'s loose box misses slot {e}'s box"));
                    }
                }
                Ok(())
            },
        )?;
        if let Some(item) = self
            .slots
            .iter()
            .find(|item| listed_in[item.handle.slot() as usize].is_none())
        {
            return fail(format!("slot {} is in no leaf", item.handle.slot()));
        }
        Ok(())
    }
}

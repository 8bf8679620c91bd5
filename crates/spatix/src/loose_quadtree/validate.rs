//! The full structural self-check.

use super::{Group, LooseQuadtree, nothing};
use crate::quad::check_free_groups;
use crate::quadtree::{BRANCH, FREE, Frame};
use crate::{Error, Scalar};

fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar, T> LooseQuadtree<S, T> {
    /// Checks the tree shape, the stored regions and group records, the leaf lists and counts, that
    /// every element is listed once, in the leaf owning its clamped centre, that every loose
    /// box encloses its elements and its children's boxes, and the free lists.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.slots.check()?;
        let n_nodes = self.nodes.len();
        if n_nodes == 0 || (n_nodes - 1) % 4 != 0 {
            return fail(format!("{n_nodes} nodes is not a root plus groups of four"));
        }
        if self.loose.len() != n_nodes
            || self.regions.len() != n_nodes
            || self.groups.len() != (n_nodes - 1) / 4
        {
            return fail(format!(
                "{n_nodes} nodes, but {} loose boxes, {} regions and {} group records",
                self.loose.len(),
                self.regions.len(),
                self.groups.len()
            ));
        }
        let mut reached = vec![false; n_nodes];
        let mut listed_in = vec![None; self.leaves.len()];
        let mut listed = 0usize;
        let mut stack = vec![Frame::root(self.world)];
        while let Some(f) = stack.pop() {
            let at = f.node as usize;
            if std::mem::replace(&mut reached[at], true) {
                return fail(format!("node {at} is reachable twice"));
            }
            if u32::from(f.depth) > self.config.max_depth {
                return fail(format!("node {at} is deeper than max_depth"));
            }
            if self.regions[at] != f.reach() {
                return fail(format!("node {at} stores the wrong region"));
            }
            let loose = self.loose[at];
            if !loose.is_valid() && loose != nothing() {
                return fail(format!("node {at} has a malformed loose box {loose:?}"));
            }
            let node = self.nodes[at];
            if node.count == BRANCH {
                let g = node.first_child as usize;
                if g == 0 || (g - 1) % 4 != 0 || g + 4 > n_nodes {
                    return fail(format!("branch {at} points at bad child group {g}"));
                }
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
                stack.extend(f.children(node.first_child));
                continue;
            }
            if node.count == FREE {
                return fail(format!("free node {at} is reachable"));
            }
            let entries: Vec<_> = self
                .walk(node.first_child)
                .take(self.links.allocated() + 1)
                .collect();
            if entries.len() != node.count as usize {
                return fail(format!(
                    "leaf {at} counts {} but lists {}",
                    node.count,
                    entries.len()
                ));
            }
            if node.count > self.config.max_elements && f.can_split(self.config.max_depth) {
                return fail(format!("leaf {at} overflows, yet could split"));
            }
            for &(entry, link) in &entries {
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
            listed += entries.len();
        }
        check_free_groups(
            &reached,
            self.free_group,
            |i| self.nodes[i].first_child,
            |i| self.nodes[i].count == FREE,
        )?;
        if let Some(item) = self
            .slots
            .iter()
            .find(|item| listed_in[item.handle.slot() as usize].is_none())
        {
            return fail(format!("slot {} is in no leaf", item.handle.slot()));
        }
        if self.links.in_use() != listed {
            return fail(format!(
                "{} element nodes in use, {listed} listed",
                self.links.in_use()
            ));
        }
        if self.links.free_len()? + self.links.in_use() != self.links.allocated() {
            return fail("element nodes leaked from the pool".into());
        }
        Ok(())
    }
}

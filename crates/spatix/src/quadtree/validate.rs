//! The full structural self-check.

use super::mutate::FREE;
use super::{BRANCH, Quadtree};
use crate::quad::{Frame, check_free_groups};
use crate::{Aabb, Error, Scalar};

fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar, T> Quadtree<S, T> {
    /// Checks the tree shape, the leaf lists, the counts, the free lists and the homes.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.slots.check()?;
        let n_nodes = self.nodes.len();
        if n_nodes == 0 || (n_nodes - 1) % 4 != 0 {
            return fail(format!("{n_nodes} nodes is not a root plus groups of four"));
        }
        let mut reached = vec![false; n_nodes];
        let mut occurrences = vec![0u32; self.homes.len()];
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
            let node = self.nodes[at];
            if node.count == BRANCH {
                let g = node.first_child as usize;
                if g == 0 || (g - 1) % 4 != 0 || g + 4 > n_nodes {
                    return fail(format!("branch {at} points at bad child group {g}"));
                }
                stack.extend(f.children(node.first_child));
                continue;
            }
            if node.count == FREE {
                return fail(format!("free node {at} is reachable"));
            }
            let items: Vec<u32> = self
                .links
                .items(node.first_child)
                .take(self.links.allocated() + 1)
                .collect();
            if items.len() != node.count as usize {
                return fail(format!(
                    "leaf {at} counts {} but lists {}",
                    node.count,
                    items.len()
                ));
            }
            if node.count > self.config.max_elements && f.can_split(self.config.max_depth) {
                return fail(format!("leaf {at} overflows, yet could split"));
            }
            for &e in &items {
                if !self.slots.is_live(e) {
                    return fail(format!("leaf {at} lists dead slot {e}"));
                }
                if !self.filed_box(self.slots.aabb(e)).intersects(&f.aabb) {
                    return fail(format!(
                        "leaf {at} lists slot {e}, which does not overlap it"
                    ));
                }
                occurrences[e as usize] += 1;
            }
            let mut sorted = items.clone();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return fail(format!("leaf {at} lists slot {} twice", w[0]));
            }
            listed += items.len();
        }
        check_free_groups(
            &reached,
            self.free_group,
            |g| self.nodes[g].first_child,
            |i| self.nodes[i].count == FREE,
        )?;
        if self.links.in_use() != listed {
            return fail(format!(
                "{} element nodes in use, {listed} listed",
                self.links.in_use()
            ));
        }
        if self.links.free_len()? + self.links.in_use() != self.links.allocated() {
            return fail("element nodes leaked from the pool".into());
        }
        for item in self.slots.iter() {
            let e = item.handle.slot();
            let filed = self.filed_box(item.aabb);
            let expected = self.count_leaves(&filed);
            let found = occurrences[e as usize];
            if found != expected {
                return fail(format!(
                    "slot {e} is listed in {found} leaves, overlaps {expected}"
                ));
            }
            let home = self.homes[e as usize];
            if !home.fits(&filed)
                || self
                    .nodes
                    .get(home.node as usize)
                    .is_none_or(|n| n.count == FREE)
                || !reached[home.node as usize]
            {
                return fail(format!("slot {e}'s home {} does not hold it", home.node));
            }
        }
        Ok(())
    }

    /// How many leaves a (clamped) box overlaps.
    fn count_leaves(&self, c: &Aabb<S>) -> u32 {
        let mut n = 0;
        let mut stack = vec![Frame::root(self.world)];
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
            if node.count == BRANCH {
                stack.extend(
                    f.children(node.first_child)
                        .into_iter()
                        .filter(|ch| c.intersects(&ch.aabb)),
                );
            } else {
                n += 1;
            }
        }
        n
    }
}

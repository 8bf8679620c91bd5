//! The full structural self-check.

use super::Quadtree;
use crate::base::pool::Link;
use crate::contract::Validates;
use crate::tree::{BRANCH, FREE, Frame, check_tree, fail};
use crate::{Aabb, Error, Scalar};

impl<S: Scalar, T> Quadtree<S, T> {
    /// How many leaves a (clamped) box overlaps.
    fn count_leaves(&self, c: &Aabb<S>) -> u32 {
        let mut n = 0;
        let mut stack = vec![Frame::root(self.base.world)];
        while let Some(f) = stack.pop() {
            let node = self.base.nodes[f.node as usize];
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

impl<S: Scalar, T> Validates for Quadtree<S, T> {
    /// Checks the tree shape, the leaf lists, the counts, the free lists and the homes.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        let mut occurrences = vec![0u32; self.homes.len()];
        let separates = |f: &Frame<S>, entries: &[(u32, Link)]| {
            f.separates(
                entries
                    .iter()
                    .map(|(_, l)| self.filed_box(self.slots.aabb(l.item))),
            )
        };
        let reached = check_tree(&self.base, &self.links, separates, |f, entries| {
            let at = f.node;
            for &(_, link) in entries {
                let e = link.item;
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
            let mut sorted: Vec<u32> = entries.iter().map(|(_, link)| link.item).collect();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return fail(format!("leaf {at} lists slot {} twice", w[0]));
            }
            Ok(())
        })?;
        for item in self.slots.iter() {
            let e = item.handle.slot();
            let filed = self.filed_box(&item.aabb);
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
                    .base
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
}
